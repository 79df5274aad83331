#!/bin/sh
# What a distribution's packaging build does with the Makefile:
# - CPPFLAGS, CFLAGS and LDFLAGS given on the command line or in the environment
#   (dpkg-buildpackage exports dpkg-buildflags) reach every compile and link line
#   and add to ours: -Iinclude, the definitions, -std=c11, the warnings (-Werror
#   included) and a SAN build's sanitizers stay; CFLAGS replaces the default -O2.
#   Shown on `make -n` of every kind of target (objects, the binary, a unit test,
#   a test tool, a bench) and one real compile (here, in make test).
# - `make check` fails when a library or tool is missing, naming its Debian
#   package, and never calls apt-get or sudo; `make test` installs it (both with
#   apt-get and sudo replaced by recorders first on PATH).
# - PACKAGING_FULL=1 (make check-packaging, run by CI): the whole build, unit
#   tests and test tools included, with Debian 12's dpkg-buildflags
#   (hardening=+all) and NDEBUG, into a temporary directory; every unit test
#   passes, the binary runs and carries RELRO, BIND_NOW, the stack protector and
#   _FORTIFY_SOURCE's checked calls.
# Every make here runs in its own temporary BUILD: nothing of the caller's build
# is touched.
# A make test started below: not again.
[ -n "${PACKAGING_NESTED:-}" ] && { echo "1..0 # SKIP run by the make test this test started"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
RAMPART=${RAMPART:-unused} # lib.sh wants it; the builds here make their own
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)

# The flags of the brief check (as a packager would type them) and of the full
# build (Debian 12's `DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags`).
cppflags="-DNDEBUG"
cflags="-O1 -g -fstack-protector-strong -Wformat -Werror=format-security"
ldflags="-Wl,-z,relro -Wl,-z,now"
deb_cppflags="-Wdate-time -D_FORTIFY_SOURCE=2 -DNDEBUG"
deb_cflags="-g -O2 -ffile-prefix-map=$root=. -fstack-protector-strong -Wformat \
-Werror=format-security"
deb_ldflags="-Wl,-z,relro -Wl,-z,now"

# pmake ARGS...: make in the repository, none of a calling make's settings (make
# test SAN=1 ...) inherited; output in $tmp/out, $tmp/err, status in $status.
pmake() {
    (
        unset MAKEFLAGS MFLAGS MAKELEVEL CPPFLAGS CFLAGS LDFLAGS LDLIBS
        make --no-print-directory -C "$root" "$@"
    ) >"$tmp/out" 2>"$tmp/err"
    status=$?
}

# has_all LINE WORDS: every word of WORDS is a whole word of LINE.
has_all() {
    for w in $2; do
        case " $1 " in *" $w "*) ;; *) return 1 ;; esac
    done
}

# lines_have FILE WORDS: every compiler line of FILE that compiles a .c file has
# WORDS (the lines without are kept in $tmp/out for the report); at least one.
lines_have() {
    grep -E '^cc .*[.]c( |$)' "$1" >"$tmp/lines"
    [ -s "$tmp/lines" ] || return 1
    : >"$tmp/bad"
    while IFS= read -r line; do
        has_all "$line" "$2" || printf '%s\n' "$line" >>"$tmp/bad"
    done <"$tmp/lines"
    cp "$tmp/bad" "$tmp/out"
    [ ! -s "$tmp/bad" ]
}

b="$tmp/b"
unit=$(ls "$root"/tests/unit/test_*.c | head -n 1)
unit="$b/tests/$(basename "$unit" .c)"
tool=$(ls "$root"/tests/tools/*.c | head -n 1)
tool="$b/tools/$(basename "$tool" .c)"
bench=$(ls "$root"/tests/bench/*.c | head -n 1)
bench="$b/bench/$(basename "$bench" .c)"
ours="-Iinclude -D_GNU_SOURCE -std=c11 -Wall -Wextra -Werror -MMD -MP"

# ---- flags on the command line ----
pmake -n SAN= CC=cc BUILD="$b" CPPFLAGS="$cppflags" CFLAGS="$cflags" LDFLAGS="$ldflags" \
    "$b/rampart" "$unit" "$tool" "$bench"
cp "$tmp/out" "$tmp/n.cmdline"
nsrc=$(cd "$root" && ls src/core/*.c src/core/*/*.c src/cli/*.c src/serve/*.c sync/*.c \
    ui/*/*.c src/main.c | wc -l)
check "make -n: the build's every object ($nsrc) and link, plus a test, a tool and a bench" \
    sh -c '[ "$0" -eq 0 ] && [ "$(grep -c "^cc .* -c " "$1")" -eq "$2" ] &&
           [ "$(grep -c "^cc " "$1")" -eq $(($2 + 4)) ]' "$status" "$tmp/n.cmdline" "$nsrc"
check "command-line CPPFLAGS/CFLAGS: on every compiler line, with ours (-Iinclude, -Werror ...)" \
    lines_have "$tmp/n.cmdline" "$ours $cppflags $cflags"
check "... CFLAGS replaces the default optimisation (no -O2)" \
    sh -c '! grep "^cc " "$0" | grep -q -e " -O2 "' "$tmp/n.cmdline"
grep "^cc .* -o $b/rampart " "$tmp/n.cmdline" >"$tmp/link"
grep -e "-o $unit " -e "-o $tool " -e "-o $bench " "$tmp/n.cmdline" >>"$tmp/link"
check "command-line LDFLAGS: on every link line (binary, test, tool, bench), with the libraries" \
    sh -c '[ "$(grep -c . "$0")" -eq 4 ] && ! grep -v -e "-Wl,-z,relro -Wl,-z,now" "$0" &&
           grep "rampart " "$0" | grep -q -e "-lcurl .*-lpthread"' "$tmp/link"
line=$(grep "^cc .*/src/main.o" "$tmp/n.cmdline")
check "ours first, then the builder's: -Iinclude before -DNDEBUG, -Werror before -O1" \
    sh -c 'case "$0" in *" -Iinclude "*" -DNDEBUG "*" -Werror "*" -O1 "*) exit 0;; esac; exit 1' \
    " $line "

# ---- flags in the environment (how dpkg-buildpackage passes them) ----
(
    unset MAKEFLAGS MFLAGS MAKELEVEL
    CPPFLAGS="$deb_cppflags" CFLAGS="$deb_cflags" LDFLAGS="$deb_ldflags" \
        make --no-print-directory -C "$root" -n SAN= CC=cc BUILD="$b" "$b/rampart" "$unit"
) >"$tmp/n.env" 2>"$tmp/err"
status=$?
env_ok() { [ "$status" -eq 0 ] && lines_have "$tmp/n.env" "$ours $deb_cppflags $deb_cflags"; }
check "environment CPPFLAGS/CFLAGS (dpkg-buildflags): on every compiler line, with ours" env_ok
check "environment LDFLAGS: on the link lines" sh -c \
    '[ "$(grep -e "-o $1/rampart " -e "-o $2 " "$0" | grep -c -e "-Wl,-z,relro -Wl,-z,now")" -eq 2 ]' \
    "$tmp/n.env" "$b" "$unit"

# ---- a sanitizer build keeps its sanitizers whatever CFLAGS/LDFLAGS say ----
pmake -n SAN=1 CC=cc BUILD="$tmp/s" CFLAGS="-O1 -g" LDFLAGS="$ldflags" "$tmp/s/rampart"
san_ok() {
    grep -e "-o $tmp/s/rampart " "$tmp/out" | grep -q -e "-fsanitize=address,undefined" &&
        lines_have "$tmp/out" "-fsanitize=address,undefined"
}
check "SAN=1 with CFLAGS and LDFLAGS given: -fsanitize on every compile and link line" san_ok

# ---- one real compile with the packager's flags: clean under -Werror ----
pmake SAN= CC=cc BUILD="$b" CPPFLAGS="$deb_cppflags" CFLAGS="$deb_cflags" LDFLAGS="$deb_ldflags" \
    "$b/src/main.o"
check "src/main.c compiles with Debian's flags, -Werror kept, no warning" \
    sh -c '[ "$0" -eq 0 ] && [ -s "$1" ] && ! grep -q "warning:" "$2"' \
    "$status" "$b/src/main.o" "$tmp/err"

# ---- make check never installs; make test does ----
# apt-get and sudo replaced by recorders; a module and a tool that exist nowhere;
# CC=false so that a target that went on to build would stop at once.
mkdir -p "$tmp/shim"
for t in apt-get sudo; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\n[ "%s" = sudo ] && exec "$@"\nexit 0\n' \
        "$t" "$tmp/installs" "$t" >"$tmp/shim/$t"
    chmod 755 "$tmp/shim/$t"
done
fake_libs="ncursesw=libncurses-dev rampart-no-such-module=librampart-no-such-dev"
fake_tools="sh=dash rampart-no-such-tool=rampart-no-such-tool-deb"
deps_make() {
    (
        PATH="$tmp/shim:$PATH" PACKAGING_NESTED=1
        export PATH PACKAGING_NESTED
        pmake "$@" SAN= CC=false BUILD="$tmp/nb" LIB_DEBS="$fake_libs" TOOL_DEBS="$fake_tools"
        echo "$status" >"$tmp/status"
    )
    status=$(cat "$tmp/status")
}
deps_make check
check "make check, a library and a tool missing: fails, naming each and its Debian package" \
    sh -c '[ "$0" -ne 0 ] &&
           grep -q "rampart-no-such-module (Debian package librampart-no-such-dev)" "$1" &&
           grep -q "rampart-no-such-tool (Debian package rampart-no-such-tool-deb)" "$1" &&
           grep -q "apt-get install librampart-no-such-dev rampart-no-such-tool-deb" "$1" &&
           ! grep -q "ncursesw\|dash" "$1"' "$status" "$tmp/err"
check "... and installs nothing: no apt-get, no sudo, nothing built" \
    sh -c '[ ! -e "$0" ] && [ ! -e "$1" ]' "$tmp/installs" "$tmp/nb"
deps_make test
cp "$tmp/installs" "$tmp/out" 2>/dev/null
check "make test, the same missing: runs apt-get install with the Debian packages" \
    sh -c '[ "$0" -ne 0 ] && grep -q "^apt-get install .*librampart-no-such-dev" "$1" &&
           grep -q "^apt-get install .*rampart-no-such-tool-deb" "$1"' "$status" "$tmp/installs"

# ---- the whole build with a distribution's flags (make check-packaging) ----
[ -n "${PACKAGING_FULL:-}" ] || { checks_done; exit 0; }
f="$tmp/full"
units=$(cd "$root" && for t in tests/unit/test_*.c; do printf '%s ' "$f/tests/$(basename "$t" .c)"; done)
tools=$(cd "$root" && for t in tests/tools/*.c; do printf '%s ' "$f/tools/$(basename "$t" .c)"; done)
start=$(date +%s)
# shellcheck disable=SC2086 # the lists are words
pmake -j2 SAN= BUILD="$f" CPPFLAGS="$deb_cppflags" CFLAGS="$deb_cflags" LDFLAGS="$deb_ldflags" \
    "$f/rampart" $units $tools
echo "# the build took $(($(date +%s) - start)) s"
check "the whole build, unit tests and tools, with Debian's flags: no error, no warning" \
    sh -c '[ "$0" -eq 0 ] && ! grep -q "warning:" "$1"' "$status" "$tmp/err"
"$f/rampart" --version >"$tmp/out" 2>"$tmp/err"
status=$?
check "the binary runs: --version" sh -c '[ "$0" -eq 0 ] && grep -q "^rampart [0-9]" "$1"' \
    "$status" "$tmp/out"
if command -v readelf >/dev/null 2>&1; then
    { readelf -lW "$f/rampart"; readelf -dW "$f/rampart"; readelf --dyn-syms -W "$f/rampart"; } \
        >"$tmp/elf" 2>"$tmp/err"
    check "hardened as asked: RELRO, BIND_NOW, stack protector, _FORTIFY_SOURCE's checked calls" \
        sh -c 'grep -q GNU_RELRO "$0" && grep -q "BIND_NOW\|FLAGS_1.*NOW" "$0" &&
               grep -q __stack_chk_fail "$0" && grep -q "__[a-z]*_chk" "$0"' "$tmp/elf"
fi
start=$(date +%s)
for t in $units; do
    "$t" >"$tmp/out" 2>&1
    status=$?
    check "unit test $(basename "$t") passes in the packaging build" status_is 0
done
echo "# the unit tests took $(($(date +%s) - start)) s"
checks_done
exit 0

# rampart — see README.md. `make run` and `make test` install missing Debian
# packages first (make deps), so a fresh machine needs nothing else; `make check`
# runs the same tests but never installs anything (a packaging build).

PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0
# Where `make install` puts things (all under PREFIX unless given).
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/rampart
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
INSTALL     ?= install

# What the build and the tests need, as NAME=DEBIAN-PACKAGE pairs: the libraries
# (pkg-config modules) and the tools the tests and benchmarks run (`command -v`).
# One table for both uses: `make deps` installs the packages, `make check` names
# the missing ones.
LIB_DEBS  := ncursesw=libncurses-dev libcurl=libcurl4-openssl-dev sqlite3=libsqlite3-dev \
             jansson=libjansson-dev cmocka=libcmocka-dev libmicrohttpd=libmicrohttpd-dev \
             yaml-0.1=libyaml-dev zlib=zlib1g-dev
TOOL_DEBS := tmux=tmux curl=curl sqlite3=sqlite3 man=man-db python3=python3 nginx=nginx zsh=zsh
PKGS      := $(foreach p,$(LIB_DEBS),$(firstword $(subst =, ,$(p))))
DEB_PKGS  := pkg-config $(foreach p,$(LIB_DEBS),$(lastword $(subst =, ,$(p))))
DEB_TOOLS := $(foreach p,$(TOOL_DEBS),$(lastword $(subst =, ,$(p))))
# make fuzz only: clang and its libFuzzer runtime.
DEB_FUZZ  := clang libclang-rt-14-dev
# What `make lint` and `make valgrind` run, installed by them when missing.
DEB_LINT  := cppcheck clang-tidy
DEB_VALGRIND := valgrind

SAN ?=
# OPT is the default CFLAGS of each build (a builder's CFLAGS replace it);
# SANFLAGS and LDSAN stay whatever CFLAGS and LDFLAGS are given.
ifeq ($(SAN),fuzz)
# Library objects for the libFuzzer targets (make fuzz sets CC=clang).
BUILD    ?= build-fuzz
OPT      := -O1 -g
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
LDSAN    := -fsanitize=fuzzer,address,undefined
else ifeq ($(SAN),1)
BUILD    ?= build-san
OPT      := -O1 -g
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDSAN    := -fsanitize=address,undefined
# The kill -9 test's rounds find the same races in either build; the plain build
# runs the full 50, the sanitizer build (three times slower) fewer.
CRASH_ENV := CRASH_ROUNDS=15
else
BUILD    ?= build
OPT      := -O2 -g
SANFLAGS :=
LDSAN    :=
endif

CC      ?= cc
# Warnings are errors in every build of ours; a packager who wants a newer
# compiler's new warnings not to fail the build passes WERROR= (or -Wno-error).
WERROR  ?= -Werror
WARN    := -std=c11 -Wall -Wextra $(WERROR) -Wshadow -Wpointer-arith -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2
# -Wconversion on our own sources; tests use cmocka macros that trip it.
WCONV   := -Wconversion -Wno-sign-conversion
DEFS    := -D_GNU_SOURCE -DRAMPART_VERSION=\"$(VERSION)\"
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs ncursesw libcurl sqlite3 jansson libmicrohttpd yaml-0.1 zlib 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

# CPPFLAGS, CFLAGS, LDFLAGS and LDLIBS belong to whoever builds: the command line
# (make CFLAGS=...) or the environment (a packaging tool's dpkg-buildflags). The
# build uses ALL_*: ours first, then theirs, so theirs add to ours (and can
# override an option), and -Iinclude, the warnings and the sanitizers are never
# lost. CFLAGS alone has a default, the build's optimisation.
CFLAGS  ?= $(OPT)
ALL_CPPFLAGS := -Iinclude $(DEFS) $(CPPFLAGS)
ALL_CFLAGS   := $(WARN) $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP $(CFLAGS)
# Our own sources: -Wconversion too, before the builder's flags.
CONV_CFLAGS  := $(WARN) $(WCONV) $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP $(CFLAGS)
ALL_LDFLAGS  := $(LDSAN) $(LDFLAGS)
ALL_LDLIBS   := $(PKG_LIBS) -lpthread -lm $(LDLIBS)

LIB_SRC  := $(wildcard src/core/*.c) $(wildcard src/core/*/*.c) $(wildcard src/cli/*.c) $(wildcard src/serve/*.c) \
            $(wildcard sync/*.c) $(wildcard ui/*/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
LIB      := $(BUILD)/librampart.a
BIN      := $(BUILD)/rampart

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
# Helpers the e2e tests run (tests/tools/*.c: the agent's slow-header client).
TOOL_BIN  := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(wildcard tests/tools/*.c))
# libFuzzer targets (tests/fuzz/README.md): FUZZ_SECONDS each, FUZZ_JOBS at once.
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2

.PHONY: all run test check check-packaging bench soak fuzz fuzz-build fuzz-prepare lint lint-deps \
        valgrind install uninstall clean deps deps-check deps-verify help

all: $(BIN)

help:
	@echo "make run        install what is missing, build, and show rampart"
	@echo "make test       install what is missing, build, run every test (SAN=1: ASan+UBSan)"
	@echo "make check      the same tests, installing nothing: names missing Debian packages"
	@echo "make check-packaging  build with a distribution's CPPFLAGS/CFLAGS/LDFLAGS, check it"
	@echo "make bench      benchmarks (figures, not pass/fail), written to BENCHMARKS.md"
	@echo "make fuzz       every libFuzzer target FUZZ_SECONDS=$(FUZZ_SECONDS) s, ASan+UBSan"
	@echo "make install    PREFIX=$(PREFIX) DESTDIR= BINDIR= MANDIR= ... (make uninstall)"
	@echo "make deps       apt-get install the Debian packages the build needs"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CONV_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(CMOCKA_LIBS) $(ALL_LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CONV_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(ALL_LDLIBS)

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CONV_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# Recursive make after deps-check: pkg-config flags above are read when make
# starts, so a run that just installed packages needs a fresh parse.
run: deps-check
	@$(MAKE) --no-print-directory all
	@BIN=$(BIN) sh tests/run-default.sh

test: deps-check
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(TOOL_BIN)
	@$(CRASH_ENV) sh tests/run.sh $(BUILD)

# The same tests for a packaging build: what is missing is named, not installed.
check: deps-verify
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(TOOL_BIN)
	@$(CRASH_ENV) sh tests/run.sh $(BUILD)

# The whole build, unit tests and test tools included, with the flags a
# distribution passes (tests/e2e/packaging.sh: Debian's dpkg-buildflags with
# hardening=+all, and NDEBUG) in a temporary directory; the unit tests pass and
# the binary runs hardened. Too long for make test (about 30 s on 2 cores): CI runs it.
check-packaging: deps-verify
	@PACKAGING_FULL=1 sh tests/e2e/packaging.sh | \
	    awk '{ print } /^not ok/ { bad++ } END { if (bad) print bad " failed"; exit (bad ? 1 : 0) }'

bench: deps-check
	@$(MAKE) --no-print-directory SAN= BUILD=build $(BENCH_SRC:tests/bench/%.c=build/bench/%) build/rampart \
	    build/tools/maxrss
	@sh tests/bench/run.sh build

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_http.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Isrc/serve $(CONV_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(ALL_LDLIBS)

fuzz-build: $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

# Each target for FUZZ_SECONDS from its seed corpus; a crash fails (input kept).
# fuzz-prepare: the toolchain and the targets, without running them (CI overlaps
# it with lint: neither runs a test, so sharing the cores cannot make one flaky).
fuzz-prepare: deps-check
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return (int)(d && n) * 0; }\n' | \
	    $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null || \
	    $(MAKE) --no-print-directory DEB_PKGS= DEB_TOOLS="$(DEB_FUZZ)" deps
	@$(MAKE) --no-print-directory SAN=fuzz CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) fuzz-build

fuzz: fuzz-prepare
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

# Static analysis of every product source: cppcheck in one process (with -j it
# skips its whole-program pass, which follows a NULL into a callee; suppressions
# with reasons in .cppcheck-suppressions) and clang-tidy (checks and exclusions
# in .clang-tidy), two files at a time, one file per clang-tidy process (clang-tidy 14's va_list
# checker carries state from one file to the next and then flags every
# va_start/vsnprintf pair). compile_commands.json is written from the flags above.
LINT_SRC := $(LIB_SRC) src/main.c
lint-deps:
	@command -v cppcheck >/dev/null 2>&1 && command -v clang-tidy >/dev/null 2>&1 || \
	    $(MAKE) --no-print-directory DEB_PKGS= DEB_TOOLS="$(DEB_LINT)" deps

lint: lint-deps
	@mkdir -p $(BUILD)
	@{ echo '['; sep=''; for f in $(LINT_SRC); do \
	    printf '%s{"directory":"%s","file":"%s","arguments":["cc","-Iinclude","-D_GNU_SOURCE",' "$$sep" "$(CURDIR)" "$$f"; \
	    printf '"-DRAMPART_VERSION=\\"$(VERSION)\\"","-std=c11"'; \
	    for a in $(PKG_CFLAGS); do printf ',"%s"' "$$a"; done; \
	    printf ',"-c","%s"]}\n' "$$f"; sep=','; \
	  done; echo ']'; } >$(BUILD)/compile_commands.json
	cppcheck --enable=warning,performance,portability --error-exitcode=1 --quiet \
	    --std=c11 -Iinclude -D_GNU_SOURCE --inline-suppr \
	    --suppressions-list=.cppcheck-suppressions $(LINT_SRC)
	echo $(LINT_SRC) | tr ' ' '\n' | xargs -P2 -n1 clang-tidy -p $(BUILD) --quiet 2>/dev/null

# The unit tests under valgrind (a plain -O2 build; valgrind and ASan do not mix):
# no leak, no invalid access, no uninitialised read (errors inside libraries we do
# not own would go in tests/valgrind.supp, with a reason; none so far).
valgrind:
	@command -v valgrind >/dev/null 2>&1 || \
	    $(MAKE) --no-print-directory DEB_PKGS= DEB_TOOLS="$(DEB_VALGRIND)" deps
	@$(MAKE) --no-print-directory SAN= $(BIN) $(UNIT_BIN) # test_api_serve runs rampart
	@echo $(UNIT_BIN) | tr ' ' '\n' | xargs -P2 -I{} sh -c 'echo "valgrind {}"; \
	    valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	        --error-exitcode=1 --suppressions=tests/valgrind.supp {} >{}.valgrind.log 2>&1 || \
	        { tail -n 40 {}.valgrind.log; exit 1; }' 

# The kill -9 crash test, many more rounds than CI runs.
soak: all
	@RAMPART=$(abspath $(BIN)) CRASH_ROUNDS=500 sh tests/e2e/crash.sh

# One line per missing dependency: "NAME DEBIAN-PACKAGE" (nothing when all is
# there). The compiler counts too: a packaging chroot may lack it.
define missing_deps
command -v $(firstword $(CC)) >/dev/null 2>&1 || echo "$(firstword $(CC)) build-essential"; \
command -v pkg-config >/dev/null 2>&1 || echo "pkg-config pkg-config"; \
for p in $(LIB_DEBS); do \
    pkg-config --exists $${p%%=*} 2>/dev/null || echo "$${p%%=*} $${p#*=}"; \
done; \
for t in $(TOOL_DEBS); do \
    command -v $${t%%=*} >/dev/null 2>&1 || [ -x /usr/sbin/$${t%%=*} ] || echo "$${t%%=*} $${t#*=}"; \
done
endef

# make test, make run: install what is missing (apt-get, sudo when not root).
deps-check:
	@missing=$$($(missing_deps)); \
	if [ -n "$$missing" ]; then $(MAKE) --no-print-directory deps; fi

# make check: fail, naming the Debian packages, when something is missing; never
# install (a packaging build has no network and no sudo).
deps-verify:
	@missing=$$($(missing_deps)); \
	if [ -n "$$missing" ]; then \
	    echo "make check: missing what the build or the tests need:" >&2; \
	    echo "$$missing" | while read -r what deb; do \
	        echo "    $$what (Debian package $$deb)" >&2; done; \
	    echo "Install them: apt-get install $$(echo "$$missing" | cut -d' ' -f2 | sort -u | \
	        tr '\n' ' ')(or make deps). make check never installs anything." >&2; \
	    exit 1; \
	fi

deps:
	@sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	echo "Installing Debian packages: $(DEB_PKGS) $(DEB_TOOLS)"; \
	$$sudo apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends \
	    build-essential $(DEB_PKGS) $(DEB_TOOLS)

# The files installed, as DEST=SOURCE pairs (every one 0644 but the binary):
# the man pages rampart.1 and assets/rampart-*.7 among them.
MAN7_PAGES    := $(sort $(wildcard assets/rampart-*.7))
INSTALL_FILES := $(MANDIR)/man1/rampart.1=assets/rampart.1 \
                 $(foreach p,$(MAN7_PAGES),$(MANDIR)/man7/$(notdir $(p))=$(p)) \
                 $(BASHCOMPDIR)/rampart=assets/rampart.bash-completion \
                 $(ZSHCOMPDIR)/_rampart=assets/_rampart \
                 $(DOCDIR)/config.example=assets/config.example \
                 $(DOCDIR)/nginx-fleet.conf=assets/nginx-fleet.conf \
                 $(USERUNITDIR)/rampart-agent.service=$(BUILD)/rampart-agent.service \
                 $(USERUNITDIR)/rampart-agent.socket=assets/rampart-agent.socket \
                 $(USERUNITDIR)/rampart-sync.service=$(BUILD)/rampart-sync.service \
                 $(USERUNITDIR)/rampart-sync.timer=assets/rampart-sync.timer

# The service units name the installed binary: written from their templates at
# each install (BINDIR may differ from the last one).
install: $(BIN)
	sed 's|@BINDIR@|$(BINDIR)|g' assets/rampart-agent.service >$(BUILD)/rampart-agent.service
	sed 's|@BINDIR@|$(BINDIR)|g' assets/rampart-sync.service >$(BUILD)/rampart-sync.service
	$(INSTALL) -d -m 0755 '$(DESTDIR)$(BINDIR)'
	$(INSTALL) -m 0755 $(BIN) '$(DESTDIR)$(BINDIR)/rampart'
	@set -e; for pair in $(INSTALL_FILES); do \
	    dest='$(DESTDIR)'$${pair%%=*}; \
	    echo "$(INSTALL) -m 0644 $${pair#*=} $$dest"; \
	    $(INSTALL) -d -m 0755 "$${dest%/*}"; \
	    $(INSTALL) -m 0644 "$${pair#*=}" "$$dest"; \
	done

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/rampart'
	@for pair in $(INSTALL_FILES); do \
	    echo "rm -f $(DESTDIR)$${pair%%=*}"; rm -f '$(DESTDIR)'$${pair%%=*}; \
	done
	@rmdir '$(DESTDIR)$(DOCDIR)' 2>/dev/null || true

clean:
	rm -rf build build-san build-*

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)

/*
 * `rampart export --policy ID --format FORMAT`: one policy's rules in force as a
 * host enforces them itself (rampart/hostrules.h), from the cache; to standard
 * output, to a file replaced atomically, or kept in step with --watch.
 *
 * --watch: a host that follows the policy. The cache's change counter (SQLite's
 * data_version, which moves when another connection commits: a sync, an edit)
 * is looked at every --interval seconds while the process sleeps in
 * sigtimedwait, so it never spins and SIGINT/SIGTERM end it at once.
 * When the counter moved, the policy is rendered again; only a rendering that
 * differs from what FILE holds is written (atomically) and followed by --exec.
 *
 * --exec runs without a shell: its words are split as rampart/words.h says (quotes
 * group, a backslash escapes) and handed to execvp. A shell would re-read whatever the
 * command names (a path with a space, a '$') each time; a user who wants one
 * says so with sh -c '...'.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_object.h"
#include "rampart/buf.h"
#include "rampart/hostrules.h"
#include "rampart/termsafe.h"
#include "rampart/validate.h"
#include "rampart/words.h"

enum { INTERVAL_DEFAULT = 2, INTERVAL_MAX = 3600 };

typedef struct export_args {
    const char *policy;
    hostrules_format format;
    hostrules_opts opts;
    const char *output;   /* NULL: standard output */
    const char *exec;     /* --exec COMMAND, split into words (no shell) */
    int interval_s;       /* --watch: seconds between looks at the cache */
    bool allow_empty;
    bool no_ssh_check;    /* write even what would drop this SSH session's client */
} export_args;

static int export_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command export_command = {
    "export", export_cmd,
    "[--policy ipp_ID] --format nftables|nginx|iptables|ip6tables|json|csv [--output FILE] "
    "[--name NAME] [--port PORTS|--all-ports|--no-hook] [--no-ssh-check] [--allow-empty] "
    "[--watch [--interval S] [--exec CMD]]",
    "Write a policy's rules for a host to enforce itself (firewall, web server).",
    "The rules in force are the ones 'rampart check' decides with; every format gives\n"
    "its decision: an address is allowed only when an allow rule covers it and no\n"
    "deny rule does.\n\n"
    "Formats:\n"
    "  nftables    table inet NAME: interval sets allow_v4, allow_v6, deny_v4, deny_v6\n"
    "              (each merged into the fewest prefixes), chain decide (drop on a\n"
    "              deny set, accept on an allow set, drop the rest) and chain guard\n"
    "              on the input hook (loopback and established connections pass;\n"
    "              --port limits it to those destination ports). 'nft -f FILE'\n"
    "              replaces the table at once.\n"
    "  nginx       deny lines, then allow lines, then 'deny all;' (nginx takes the\n"
    "              first match): include it in an http, server or location block\n"
    "  iptables    an iptables-restore file of chain NAME, IPv4 rules (no ipset):\n"
    "              load it with 'iptables-restore --noflush', then jump to the chain\n"
    "  ip6tables   the same for the IPv6 rules\n"
    "  json, csv   the ordered rules: action, cidr, family, id, state, description\n\n"
    "Options:\n"
    "  --policy ID      the IP policy (ipp_ID); default: the policy setting (config\n"
    "                   file, per profile, or RAMPART_POLICY), named on stderr\n"
    "  --format FORMAT  one of the above\n"
    "  --output FILE    write FILE (a temporary file renamed over it: readers never\n"
    "                   see half of it; an existing file keeps its mode)\n"
    "  --name NAME      the nftables table or iptables chain (default rampart)\n"
    "  --port PORTS     nftables: guard only these TCP/UDP ports (80,443,8000-8100)\n"
    "  --all-ports      nftables: guard every port, on purpose (new SSH sessions too)\n"
    "  --no-hook        nftables: the sets and chain decide only, no chain on the\n"
    "                   input hook (jump to decide from a chain of yours)\n"
    "                   (nftables needs one of these three: a file that drops every new\n"
    "                   connection by default would lock an admin out over SSH)\n"
    "  --no-ssh-check   write even a hooked chain that drops this SSH session's\n"
    "                   client (SSH_CONNECTION) on its port: refused otherwise\n"
    "  --allow-empty    write even when the policy has no rules in force here (the\n"
    "                   output then refuses every address)\n"
    "  --watch          keep FILE in step with the cache: look every --interval\n"
    "                   seconds (default 2) whether the cache changed (a sync, an\n"
    "                   edit), rewrite FILE when the output changed, and run --exec;\n"
    "                   until SIGINT or SIGTERM\n"
    "  --exec CMD       with --watch: run CMD after FILE is written (and once at the\n"
    "                   start), e.g. 'nft -f /etc/rampart.nft'. CMD is split into words\n"
    "                   ('...' and \"...\" group, \\ escapes) and run without a shell;\n"
    "                   a word {} stands for FILE. For a pipeline, write sh -c '...'.\n\n"
    "Exit status: 0 written; 2 bad usage; 3 the policy has no rules in force here\n"
    "(nothing written, unless --allow-empty); 1 a file or the cache failed.\n",
    .min_operands = 0, .max_operands = 0};

/* This SSH session's client address and the server's port, from SSH_CONNECTION
 * ("client cport server sport") or SSH_CLIENT ("client cport sport"); false when
 * this is no SSH session. An IPv4-mapped client is given as IPv4. */
static bool ssh_session(char *client, size_t size, unsigned *port)
{
    const char *conn = getenv("SSH_CONNECTION"), *cl = getenv("SSH_CLIENT");
    char ip[64], a[64];
    unsigned p = 0;
    if (!(conn && sscanf(conn, "%63s %*u %63s %u", ip, a, &p) == 3) &&
        !(cl && sscanf(cl, "%63s %*u %u", ip, &p) == 2))
        return false;
    const char *v4 = strncmp(ip, "::ffff:", 7) == 0 && strchr(ip + 7, '.') ? ip + 7 : ip;
    snprintf(client, size, "%s", v4);
    *port = p;
    return p > 0;
}

/* Whether the export would drop new connections from this SSH session's
 * client: refused for a hooked nftables chain (unless --no-ssh-check), said
 * beside the iptables hint. CLI_GO_ON, or the exit status after saying why. */
static int ssh_check(cli_ctx *ctx, const export_args *a, const hostrules_set *set)
{
    char client[64];
    unsigned port;
    bool allowed = true;
    bool xtables = a->format == HOSTRULES_IPTABLES || a->format == HOSTRULES_IP6TABLES;
    bool hooked = a->format == HOSTRULES_NFTABLES && !a->opts.no_hook;
    if ((!hooked && !xtables) || a->no_ssh_check || !ssh_session(client, sizeof client, &port) ||
        !hostrules_decide(set, client, &allowed) || allowed)
        return CLI_GO_ON;
    if (hooked && !hostrules_ports_cover(a->opts.ports, port))
        return CLI_GO_ON;
    if (xtables) {
        termsafe_fprintf(ctx->err, "%s: note: the policy drops %s, this SSH session's client: "
                         "do not send port %u to chain %s, or you are locked out of the next "
                         "session\n", ctx->program, client, port,
                         a->opts.name ? a->opts.name : HOSTRULES_NAME_DEFAULT);
        return CLI_GO_ON;
    }
    termsafe_fprintf(ctx->err, "%s: nothing written: this export would drop new connections "
                     "from %s to port %u, this SSH session's (SSH_CONNECTION): loading it "
                     "locks you out of the next session. Allow that address in the policy, "
                     "leave port %u out of --port, or pass --no-ssh-check\n",
                     ctx->program, client, port, port);
    return CLI_EXIT_USAGE;
}

/* Render the policy from the cache into `out` (emptied first). *rules receives
 * the rules in force. Returns CLI_GO_ON (cli_object.h), or the exit status after
 * printing why (a policy with no rules in force is CLI_EXIT_NOT_FOUND unless
 * allow_empty: a file that refuses every address is seldom what was meant). */
static int export_render(cli_ctx *ctx, store *st, const export_args *a, buf_t *out,
                         size_t *rules)
{
    hostrules_set set = {0};
    error_info e = {0};
    buf_reset(out);
    error_code rc = hostrules_load(st, a->policy, &set, &e);
    if (rc == ERROR_OK && set.count == 0 && !a->allow_empty) {
        hostrules_free(&set);
        fprintf(ctx->err, "%s: policy %s has no rules in force in this cache: nothing "
                "written (an empty export refuses every address; --allow-empty writes it)\n",
                ctx->program, a->policy);
        return CLI_EXIT_NOT_FOUND;
    }
    if (rc == ERROR_OK) {
        int refused = ssh_check(ctx, a, &set);
        if (refused != CLI_GO_ON) {
            hostrules_free(&set);
            return refused;
        }
        rc = hostrules_render(&set, a->format, &a->opts, out, &e);
    }
    size_t left = hostrules_left_out(&set, a->format);
    *rules = set.count;
    hostrules_free(&set);
    if (rc != ERROR_OK)
        return cli_fail(ctx, &e);
    if (left)
        fprintf(ctx->err,
                "%s: %zu IPv%d rules are not in the %s export: export --format %s too\n",
                ctx->program, left, a->format == HOSTRULES_IPTABLES ? 6 : 4,
                hostrules_format_name(a->format),
                a->format == HOSTRULES_IPTABLES ? "ip6tables" : "iptables");
    return CLI_GO_ON;
}

static bool write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* What --output may replace: nothing, or a regular file of ours (never through
 * a link, never another user's file). *mode: the mode to keep (its permission
 * bits, never a set-id or sticky bit); 0600 for a new file. */
static bool target_ok(cli_ctx *ctx, const char *path, mode_t *mode)
{
    struct stat sb;
    *mode = 0600;
    if (lstat(path, &sb) != 0)
        return true; /* a new file (or a path the rename will judge) */
    const char *why = S_ISLNK(sb.st_mode)      ? "is a symbolic link: --output writes a "
                                                 "file, never through a link (give the "
                                                 "path it points to)"
                      : !S_ISREG(sb.st_mode)   ? "is not a regular file"
                      : sb.st_uid != geteuid() ? "belongs to another user: rampart does not "
                                                 "replace it (remove it, or write elsewhere)"
                                               : NULL;
    if (!why) {
        *mode = sb.st_mode & 0777;
        return true;
    }
    termsafe_fprintf(ctx->err, "%s: --output: %s %s\n", ctx->program, path, why);
    return false;
}

/* Write `len` bytes to `path` through a temporary file in its directory renamed
 * over it (readers never see half a file), keeping an existing file's mode.
 * Prints why and returns false on failure. */
static bool export_write(cli_ctx *ctx, const char *path, const char *data, size_t len)
{
    mode_t mode;
    if (!target_ok(ctx, path, &mode))
        return false;
    char dir[4096], tmp[4200];
    /* The temporary file beside the target, so the rename stays on one file system;
     * dirname() may change its argument, hence the copy. */
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dirname(dir), slash ? slash + 1 : path);
    int fd = mkstemp(tmp);
    bool ok = fd >= 0 && write_all(fd, data, len);
    ok = ok && fchmod(fd, mode) == 0;
    ok = ok && fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) == 0)
        return true;
    int saved = errno;
    if (fd >= 0)
        unlink(tmp);
    error_info e;
    error_set(&e, ERROR_IO, "cannot write %s: %s", path, strerror(saved));
    cli_fail(ctx, &e);
    return false;
}

/* ---- --watch ---- */

/* --exec's words (rampart/words.h), "{}" replaced by the file. */
static error_code exec_parse(const char *text, const char *file, words *c, error_info *err)
{
    if (words_split(text, c, err) != ERROR_OK)
        return error_prefix(err, "--exec");
    for (size_t i = 0; i < c->argc; i++) {
        if (strcmp(c->argv[i], "{}") == 0)
            c->argv[i] = (char *)file;
    }
    return ERROR_OK;
}

/* Run the command and wait for it; its status is reported on stderr. */
static void exec_run(cli_ctx *ctx, const words *c, const sigset_t *old)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, old, NULL);
        config_scrub_secret_env();
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0)
        fprintf(ctx->err, "%s: --exec: cannot start it: %s\n", ctx->program, strerror(errno));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fprintf(ctx->err, "%s: --exec: the command was not found or could not run "
                "(exit 127)\n", ctx->program);
    else if (WIFEXITED(status))
        fprintf(ctx->err, "%s: --exec: exit status %d\n", ctx->program, WEXITSTATUS(status));
    else
        fprintf(ctx->err, "%s: --exec: ended by signal %d\n", ctx->program,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* What FILE holds now (empty when it does not exist), so an unchanged rendering
 * is not written again after a restart. */
static void read_current(const char *path, buf_t *into)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(into, chunk, n);
    fclose(f);
}

typedef struct watch {
    cli_ctx *ctx;
    store *st;
    const export_args *a;
    words cmd;
    sigset_t stop, old;
    buf_t now, last;
} watch;

/* One look after the cache moved (or at the start): CLI_GO_ON to go on. */
static int refresh(watch *w, bool first)
{
    size_t rules = 0;
    int rc = export_render(w->ctx, w->st, w->a, &w->now, &rules);
    if (rc == CLI_EXIT_NOT_FOUND)
        return CLI_GO_ON; /* the last file stays; said on stderr */
    if (rc != CLI_GO_ON)
        return rc;
    bool changed = w->now.len != w->last.len ||
                   (w->now.len && memcmp(w->now.data, w->last.data, w->now.len) != 0);
    if (changed) {
        if (!export_write(w->ctx, w->a->output, w->now.data, w->now.len))
            return CLI_EXIT_FAILURE;
        buf_reset(&w->last);
        buf_append(&w->last, w->now.data, w->now.len);
        fprintf(w->ctx->err, "%s: export: wrote %zu rules\n", w->ctx->program, rules);
    }
    if ((changed || first) && w->cmd.argv)
        exec_run(w->ctx, &w->cmd, &w->old);
    return CLI_GO_ON;
}

static int watch_loop(watch *w)
{
    long long seen = 0;
    for (bool first = true;; first = false) {
        long long version = 0;
        error_info e = {0};
        if (store_data_version(w->st, &version, &e) != ERROR_OK)
            return cli_fail(w->ctx, &e);
        if (first || version != seen) {
            seen = version;
            int rc = refresh(w, first);
            if (rc != CLI_GO_ON)
                return rc;
        }
        struct timespec wait = {w->a->interval_s, 0};
        int sig = sigtimedwait(&w->stop, NULL, &wait);
        if (sig == SIGINT || sig == SIGTERM)
            return CLI_EXIT_OK;
    }
}

/* --watch: until SIGINT or SIGTERM. Returns the exit status. */
static int export_watch(cli_ctx *ctx, store *st, const export_args *a)
{
    watch w = {.ctx = ctx, .st = st, .a = a};
    error_info e = {0};
    if (a->exec && exec_parse(a->exec, a->output, &w.cmd, &e) != ERROR_OK) {
        return cli_fail(ctx, &e);
    }
    read_current(a->output, &w.last);
    cli_serving_block(&w.stop, &w.old);
    int rc = watch_loop(&w);
    sigprocmask(SIG_SETMASK, &w.old, NULL);
    words_free(&w.cmd);
    buf_free(&w.now);
    buf_free(&w.last);
    return rc;
}

/* ---- options ---- */

typedef struct export_words {
    const char *policy, *format, *interval;
    bool watch;
    bool all_ports;
} export_words;

static int check_interval(cli_ctx *ctx, const char *path, const char *text, int *out)
{
    *out = INTERVAL_DEFAULT;
    if (!text)
        return CLI_GO_ON;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < 1 || v > INTERVAL_MAX)
        return cli_usage_error(ctx, path, "--interval: whole seconds from 1 to %d",
                               INTERVAL_MAX);
    *out = (int)v;
    return CLI_GO_ON;
}

static int check_args(cli_ctx *ctx, const char *path, const export_words *w,
                      export_args *a)
{
    if (!w->format)
        return cli_usage_missing(ctx, path, "--format is required");
    error_info e = {0};
    if (!hostrules_format_parse(w->format, &a->format))
        return cli_usage_error(ctx, path, "--format: one of nftables, nginx, iptables, "
                               "ip6tables, json, csv");
    if ((a->opts.name && hostrules_name_check(a->opts.name, &e) != ERROR_OK) ||
        (a->opts.ports && hostrules_ports_check(a->opts.ports, &e) != ERROR_OK))
        return cli_usage_error(ctx, path, "%s", e.msg);
    bool nft = a->format == HOSTRULES_NFTABLES;
    if ((a->opts.ports || w->all_ports || a->opts.no_hook) && !nft)
        return cli_usage_error(ctx, path, "--port, --all-ports and --no-hook go with --format "
                               "nftables (nginx and iptables rules apply where you include or "
                               "jump to them)");
    if ((a->opts.ports != NULL) + w->all_ports + a->opts.no_hook > 1)
        return cli_usage_error(ctx, path, "--port, --all-ports and --no-hook exclude each "
                               "other");
    if (nft && !a->opts.ports && !w->all_ports && !a->opts.no_hook)
        return cli_usage_error(ctx, path, "--format nftables guards inbound traffic: say "
                               "which: --port PORTS (e.g. --port 443), --all-ports to guard "
                               "every port on purpose (new SSH sessions included), or "
                               "--no-hook for the sets and chains alone");
    if (w->watch && !a->output)
        return cli_usage_error(ctx, path, "--watch needs --output FILE");
    if ((a->exec || w->interval) && !w->watch)
        return cli_usage_error(ctx, path, "--exec and --interval go with --watch");
    int rc = check_interval(ctx, path, w->interval, &a->interval_s);
    if (rc == CLI_GO_ON && !(a->policy = cli_policy(ctx, path, w->policy, true)))
        rc = CLI_EXIT_USAGE;
    return rc;
}

static int export_once(cli_ctx *ctx, store *st, const export_args *a)
{
    buf_t out = {0};
    size_t rules = 0;
    int rc = export_render(ctx, st, a, &out, &rules);
    if (rc == CLI_GO_ON && a->output)
        rc = export_write(ctx, a->output, out.data, out.len) ? CLI_EXIT_OK
                                                                 : CLI_EXIT_FAILURE;
    else if (rc == CLI_GO_ON)
        rc = fwrite(out.data, 1, out.len, ctx->out) == out.len ? CLI_EXIT_OK
                                                               : CLI_EXIT_FAILURE;
    buf_free(&out);
    return rc;
}

/* --format's choices (a cli_choices_fn). */
static void format_choices(FILE *out, const void *unused)
{
    (void)unused;
    for (int f = 0; f < HOSTRULES_FORMAT_COUNT; f++)
        fprintf(out, "%s\n", hostrules_format_name((hostrules_format)f));
}

static int export_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    export_words w = {0};
    export_args a = {0};
    const cli_opt opts[] = {
        {"policy", CLI_OPT_STRING, &w.policy},   {"format", CLI_OPT_CHOICE, &(cli_choice){&w.format, format_choices, NULL}},
        {"output", CLI_OPT_STRING, &a.output},   {"name", CLI_OPT_STRING, &a.opts.name},
        {"port", CLI_OPT_STRING, &a.opts.ports}, {"allow-empty", CLI_OPT_FLAG, &a.allow_empty},
        {"watch", CLI_OPT_FLAG, &w.watch},       {"interval", CLI_OPT_STRING, &w.interval},
        {"exec", CLI_OPT_STRING, &a.exec},
        {"all-ports", CLI_OPT_FLAG, &w.all_ports}, {"no-hook", CLI_OPT_FLAG, &a.opts.no_hook},
        {"no-ssh-check", CLI_OPT_FLAG, &a.no_ssh_check},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &export_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    rc = check_args(ctx, path, &w, &a);
    if (rc != CLI_GO_ON)
        return rc;
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    return w.watch ? export_watch(ctx, st, &a) : export_once(ctx, st, &a);
}

int cli_export(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return export_cmd(ctx, path, argc, argv);
}

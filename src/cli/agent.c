/* `rampart agent`: the local endpoint agents fetch their tunnel token from, in the
 * foreground until SIGINT/SIGTERM. See rampart/agent.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rampart/agent.h"
#include "rampart/buf.h"
#include "rampart/cli.h"
#include "rampart/http.h"
#include "rampart/termsafe.h"

enum {
    HELP_MAX = 16384, PATH_MAX_LEN = 4096, RATE_MAX = 1000000, IDLE_MAX = 3600,
    FD_SPEC_MAX = 16 /* "fd:N" */
};

static const char help_head[] =
    "Answers the agents on this machine: their tunnel token (the remote API hands\n"
    "it out once, so only this cache still holds it), whether an address is allowed\n"
    "by a policy, and a read-only mirror of the remote API's GET routes. Runs in the\n"
    "foreground until SIGINT or SIGTERM; audit lines on stderr (never a token).\n"
    "\n"
    "Options:\n"
    "  --listen ADDR      unix:PATH (socket 0600 in a 0700 directory; callers are\n"
    "                     identified by their uid) or tcp:127.0.0.1:PORT, tcp:[::1]:PORT\n"
    "                     (loopback only; PORT 0 picks one; every request needs\n"
    "                     'Authorization: Bearer KEY'), or fd:N (a listening socket\n"
    "                     passed by the service manager). Repeat for several, up to 4.\n"
    "                     Default: unix:%s\n"
    "                     Started by socket activation (LISTEN_FDS, e.g. through\n"
    "                     rampart-agent.socket), it serves the sockets passed instead\n"
    "                     of the default, and any --listen given besides (unless one\n"
    "                     names an fd:N itself).\n"
    "  --key-file PATH    the key TCP clients send, created (0600, random) at first\n"
    "                     use. Default: %s\n"
    "  --allow-uid UID    a uid whose processes may ask over a unix socket (repeat;\n"
    "                     default: yours). Others also need access to the socket.\n"
    "  --rate N           requests per second per caller, bursts of 2N (default %d;\n"
    "                     0: no limit); past it: 429 with Retry-After\n"
    "  --idle-timeout S   close connections idle for S seconds (default %d); a TCP\n"
    "                     connection must also send a whole request head with the\n"
    "                     key within 5 s of accept (or S, if shorter)\n"
    "  --ready-file FILE  once listening, write the addresses (unix:PATH, tcp:ADDR),\n"
    "                     one a line, to FILE for scripts to poll; removed at exit\n"
    "  --max-age S        how long caches may reuse a mirror reply (Cache-Control:\n"
    "                     public, max-age=S, stale-while-revalidate=S; every mirror\n"
    "                     reply has an ETag, and If-None-Match is answered 304).\n"
    "                     Default: the mirror_max_age setting, 30; 0: revalidate\n"
    "                     every time\n"
    "  --public-url URL   the mirror's uris start with URL (where clients reach it\n"
    "                     through a cache in front, e.g. https://fleet.example.org)\n"
    "                     instead of this listener's own address\n"
    "  --mirror-only      serve the read-only mirror and nothing else: no token, no\n"
    "                     check, no /healthz (for a cache or proxy in front of it)\n"
    "\n";

/* After the routes (agent_route_doc_get). */
static const char help_tail[] =
    "\n"
    "Example: curl --unix-socket %s http://localhost/v1/tokens/web\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 when it cannot start (address in use, no\n"
    "cache), 2 for bad usage or an unsafe key file or socket directory.\n";

static int agent_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);

int cli_agent(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return agent_cmd(ctx, path, argc, argv);
}

/* Printable ASCII only: termsafe would show it as it is. */
static bool plain_ascii(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E)
            return false;
    }
    return true;
}

/* The `n` buffers of `v` (changed on the way) with writev(2): one call, unless
 * the kernel takes less. */
static void write_all(int fd, struct iovec *v, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, v, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        size_t done = (size_t)w;
        for (; n > 0 && done >= v->iov_len; v++, n--)
            done -= v->iov_len;
        if (n > 0) {
            v->iov_base = (char *)v->iov_base + done;
            v->iov_len -= done;
        }
    }
}

/* Audit lines from server threads, before the reply leaves: each line whole in one
 * write(2) (names and paths from requests shown through termsafe; a line of
 * printable ASCII, the usual one, is that already), so lines never interleave
 * and no lock is held across the system call (stdio's would make the request
 * threads queue behind each other's writes). stderr is unbuffered, so nothing of
 * stdio's waits to go before it; another stream goes through stdio. */
static void log_line(void *c, const char *line)
{
    cli_ctx *ctx = c;
    size_t len = strlen(line);
    int fd = ctx->err == stderr ? fileno(stderr) : -1;
    if (fd >= 0 && plain_ascii(line, len)) {
        struct iovec iov[2] = {{(void *)line, len}, {"\n", 1}};
        write_all(fd, iov, 2);
        return;
    }
    buf_t b = {0};
    termsafe_append(&b, line, len);
    buf_puts(&b, "\n");
    if (b.failed) {
        buf_free(&b);
        return;
    }
    if (fd >= 0) {
        struct iovec iov[1] = {{b.data, b.len}};
        write_all(fd, iov, 1);
    } else {
        flockfile(ctx->err);
        fwrite(b.data, 1, b.len, ctx->err);
        fflush(ctx->err);
        funlockfile(ctx->err);
    }
    buf_free(&b);
}

/* Write the addresses to FILE in one rename, so a poller never reads half. */
/* The ready file lists every listener, one per line. */
static bool write_ready(cli_ctx *ctx, const char *file, const agent *ag)
{
    char text[AGENT_LISTEN_MAX * (PATH_MAX_LEN + 8)] = "";
    size_t used = 0;
    for (size_t i = 0; agent_address(ag, i) && used < sizeof text; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", agent_address(ag, i));
    return cli_write_ready(ctx, file, text);
}

/* A whole number in 0..max (digits only). */
static bool parse_count(const char *text, long max, long *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 10 || strspn(text, "0123456789") != len)
        return false;
    long v = strtol(text, NULL, 10);
    if (v > max)
        return false;
    *out = v;
    return true;
}

typedef struct agent_flags {
    cli_list listen, uids;
    const char *key_file, *rate, *idle, *ready_file, *max_age, *public_url;
    bool mirror_only;
    char inherited[AGENT_LISTEN_MAX][FD_SPEC_MAX]; /* "fd:N" of the passed sockets */
    size_t ninherited;
} agent_flags;

static bool names_fd(const cli_list *listen)
{
    for (size_t i = 0; i < listen->count; i++) {
        if (strncmp(listen->items[i], "fd:", 3) == 0)
            return true;
    }
    return false;
}

/* Sockets passed by the service manager (socket activation) become listeners,
 * unless --listen names fds itself. The variables are cleared either way, so
 * nothing started from here takes them for its own. */
static bool take_inherited(cli_ctx *ctx, const char *path, agent_flags *f, int *rc)
{
    int first, count;
    error_info e = {0};
    error_code ec = http_listen_fds(&first, &count, &e);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (ec != ERROR_OK) {
        *rc = cli_fail(ctx, &e);
        return false;
    }
    if (names_fd(&f->listen))
        return true;
    if ((size_t)count > AGENT_LISTEN_MAX) {
        *rc = cli_usage_error(ctx, path, "%d sockets passed by the service manager: at most "
                              "%d", count, AGENT_LISTEN_MAX);
        return false;
    }
    for (int i = 0; i < count; i++)
        snprintf(f->inherited[f->ninherited++], FD_SPEC_MAX, "fd:%d", first + i);
    return true;
}

/* Flags -> options; false after printing a usage error into *rc. */
static bool build_options(cli_ctx *ctx, const char *path, const agent_flags *f,
                          agent_options *o, int *rc)
{
    *rc = CLI_EXIT_USAGE;
    if (f->listen.count + f->ninherited > AGENT_LISTEN_MAX) {
        cli_usage_error(ctx, path, "at most %d --listen addresses%s", AGENT_LISTEN_MAX,
                        f->ninherited ? ", sockets passed by the service manager included"
                                      : "");
        return false;
    }
    for (size_t i = 0; i < f->ninherited; i++)
        o->listen[o->nlisten++] = f->inherited[i];
    for (size_t i = 0; i < f->listen.count; i++)
        o->listen[o->nlisten++] = f->listen.items[i];
    if (f->uids.count > AGENT_UIDS_MAX) {
        cli_usage_error(ctx, path, "at most %d --allow-uid values", AGENT_UIDS_MAX);
        return false;
    }
    for (size_t i = 0; i < f->uids.count; i++) {
        if (!parse_count(f->uids.items[i], 0x7FFFFFFF, &o->allow_uids[o->nuids++])) {
            cli_usage_error(ctx, path, "--allow-uid takes a numeric uid (see 'id -u USER')");
            return false;
        }
    }
    long v;
    if (f->rate && !parse_count(f->rate, RATE_MAX, &v)) {
        cli_usage_error(ctx, path, "--rate takes requests per second, 0 to %d (0: no limit)",
                        RATE_MAX);
        return false;
    }
    if (f->rate)
        o->rate_per_s = v == 0 ? AGENT_RATE_UNLIMITED : (unsigned)v;
    if (f->idle && (!parse_count(f->idle, IDLE_MAX, &v) || v == 0)) {
        cli_usage_error(ctx, path, "--idle-timeout takes seconds, 1 to %d", IDLE_MAX);
        return false;
    }
    if (f->idle)
        o->idle_timeout_s = (unsigned)v;
    error_info e = {0};
    if (f->max_age &&
        config_set(&ctx->cfg, CONFIG_MIRROR_MAX_AGE, f->max_age, CONFIG_SRC_FLAG, &e)) {
        cli_usage_error(ctx, path, "--max-age: %s", e.msg);
        return false;
    }
    o->mirror_max_age_s = (unsigned)config_number(&ctx->cfg, CONFIG_MIRROR_MAX_AGE);
    o->public_url = f->public_url;
    o->mirror_only = f->mirror_only;
    o->key_path = f->key_file;
    o->db_path = config_get(&ctx->cfg, CONFIG_DB);
    o->version_header = config_get(&ctx->cfg, CONFIG_VERSION_HEADER);
    o->on_log = log_line;
    o->log_ctx = ctx;
    return true;
}

static int serve(cli_ctx *ctx, const agent_options *o, const char *ready_file)
{
    sigset_t stop, old;
    cli_serving_block(&stop, &old);
    agent *ag;
    error_info e = {0};
    if (agent_start(o, &ag, &e) != ERROR_OK) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return cli_fail(ctx, &e);
    }
    int rc = CLI_EXIT_OK;
    if (ready_file && !write_ready(ctx, ready_file, ag))
        rc = CLI_EXIT_FAILURE;
    int sig = rc == CLI_EXIT_OK ? cli_serving_wait(&stop) : 0;
    agent_stats st;
    agent_stats_get(ag, &st);
    agent_stop(ag);
    if (ready_file && rc == CLI_EXIT_OK)
        unlink(ready_file);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (sig)
        fprintf(ctx->err,
                "stopped (%s): %zu requests, %zu token lookups, %zu refused, %zu policy "
                "index builds\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", st.requests, st.lookups, st.refused,
                st.index_builds);
    return rc;
}

/* A default path (from the environment) or why there is none, as --help shows it:
 * through termsafe, since the help text itself goes out as it is. */
static void help_path(char *out, size_t size, error_code rc, const char *text,
                      const error_info *e)
{
    const char *what = rc == ERROR_OK ? text : e->msg;
    buf_t b = {0};
    buf_puts(&b, rc == ERROR_OK ? "" : "(none: ");
    termsafe_append(&b, what, strlen(what));
    buf_puts(&b, rc == ERROR_OK ? "" : ")");
    snprintf(out, size, "%s", b.failed ? "?" : b.data);
    buf_free(&b);
}

enum { ROUTE_INDENT = 6, HELP_WIDTH = 79 };

/* `text` as words, wrapped at HELP_WIDTH, each line indented ROUTE_INDENT. */
static void put_wrapped(buf_t *b, const char *text)
{
    size_t col = 0;
    while (*text) {
        size_t len = strcspn(text, " ");
        if (col > 0 && col + 1 + len > HELP_WIDTH) {
            buf_puts(b, "\n");
            col = 0;
        }
        buf_puts(b, col == 0 ? "      " : " ");
        col += col == 0 ? ROUTE_INDENT : 1;
        buf_append(b, text, len);
        col += len;
        text += len;
        text += strspn(text, " ");
    }
    buf_puts(b, "\n");
}

/* The routes, from the agent's route table: what each answers. */
static void put_routes(buf_t *b)
{
    buf_puts(b, "Routes (every reply JSON; an error: {\"error_code\", \"status_code\", \"msg\",\n"
                "\"details\"}), with the keys of their reply:\n");
    agent_route_doc r;
    for (size_t i = 0; agent_route_doc_get(i, &r); i++) {
        buf_puts(b, "  ");
        buf_puts(b, r.method);
        buf_puts(b, " ");
        buf_puts(b, r.pattern);
        buf_puts(b, *r.query ? "?" : "");
        buf_puts(b, r.query);
        buf_puts(b, "\n");
        char line[512];
        snprintf(line, sizeof line, "%s; %s", r.reply, r.note);
        put_wrapped(b, line);
    }
}

/* The help: the options (with the defaults here), the routes, the rest. */
static char *build_help(const char *sock, const char *key)
{
    char text[HELP_MAX];
    buf_t b = {0};
    snprintf(text, sizeof text, help_head, sock, key, AGENT_RATE_DEFAULT,
             AGENT_IDLE_TIMEOUT_DEFAULT);
    buf_puts(&b, text);
    put_routes(&b);
    snprintf(text, sizeof text, help_tail, sock);
    buf_puts(&b, text);
    return buf_take(&b);
}

static int agent_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    char sock[PATH_MAX_LEN], key[PATH_MAX_LEN];
    char path_text[PATH_MAX_LEN];
    error_info e = {0};
    error_code rc_path = agent_default_socket(path_text, sizeof path_text,
                                              config_profile(&ctx->cfg), &e);
    help_path(sock, sizeof sock, rc_path, path_text, &e);
    rc_path = agent_default_key_path(path_text, sizeof path_text, &e);
    help_path(key, sizeof key, rc_path, path_text, &e);
    char *help = build_help(sock, key);
    const cli_command cmd = {
        "agent", agent_cmd,
        "[--listen unix:PATH|tcp:127.0.0.1:PORT|fd:N]... [--key-file PATH]\n"
        "       [--allow-uid UID]... [--rate N] [--idle-timeout S] [--ready-file FILE]\n"
        "       [--max-age S] [--public-url URL] [--mirror-only]",
        "Serve tokens, policy checks and a read-only API mirror to local agents.",
        help ? help : "", .min_operands = 0, .max_operands = 0,
    };
    agent_flags f = {0};
    const cli_opt opts[] = {
        {"listen", CLI_OPT_LIST, &f.listen},
        {"key-file", CLI_OPT_STRING, &f.key_file},
        {"allow-uid", CLI_OPT_LIST, &f.uids},
        {"rate", CLI_OPT_STRING, &f.rate},
        {"idle-timeout", CLI_OPT_STRING, &f.idle},
        {"ready-file", CLI_OPT_STRING, &f.ready_file},
        {"max-age", CLI_OPT_STRING, &f.max_age},
        {"public-url", CLI_OPT_STRING, &f.public_url},
        {"mirror-only", CLI_OPT_FLAG, &f.mirror_only},
    };
    int first, rc;
    bool go = cli_parse(ctx, path, &cmd, opts, sizeof opts / sizeof opts[0], argc, argv,
                        &first, &rc);
    free(help); /* only --help and usage errors read it */
    if (!go)
        return rc;
    if (!take_inherited(ctx, path, &f, &rc))
        return rc;
    agent_options o = {.profile = config_profile(&ctx->cfg)};
    if (!build_options(ctx, path, &f, &o, &rc))
        return rc;
    /* Created (and migrated) here if missing: the agent's handles are read-only.
     * Kept open while serving, so the WAL files stay for the readers. */
    if (!cli_store(ctx))
        return ctx->store_exit;
    return serve(ctx, &o, f.ready_file);
}

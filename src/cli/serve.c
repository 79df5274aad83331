/* `rampart serve-api`: the reference server of the remote API, in the foreground
 * until SIGINT/SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/cli.h"
#include "rampart/emulator.h"
#include "rampart/model.h"
#include "rampart/termsafe.h"

#define KEY_ENV CONFIG_SERVE_KEY_ENV

enum { KEY_FILE_MAX = 4096, LOG_PATH_MAX = 200, LOG_CLIENT_MAX = 80 };

static int serve_api(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command serve_command = {
    "serve-api", serve_api,
    "--listen ADDR --db FILE [--api-key-file FILE] [--version-header NAME]\n"
    "       [--accept-missing-version] [--base-url URL] [--faults SPEC] [--ready-file FILE]\n"
    "       [--rate-limit N [--rate-window SECONDS]]",
    "Run the remote API on this machine (reference server, sandbox, tests).",
    "Serves create/get/list/edit (PATCH)/delete of /ip_policy_rules and /credentials,\n"
    "like the production service, kept in its own database. Runs in the foreground\n"
    "until SIGINT or SIGTERM; logs one line per request on stderr:\n"
    "  METHOD PATH STATUS TIMEms [fault=KIND] client=USER-AGENT\n"
    "(client=- without a User-Agent), so requests and 429s can be counted per\n"
    "client of the account.\n"
    "\n"
    "Options:\n"
    "  --listen ADDR        tcp:127.0.0.1:PORT (loopback only; PORT 0 picks a free\n"
    "                       one), tcp:[::1]:PORT, or unix:PATH (socket mode 0600)\n"
    "  --db FILE            the server's own database (created if missing); never\n"
    "                       the cache of 'rampart rules'\n"
    "  --api-key-file FILE  the API key clients must send as 'Authorization: Bearer\n"
    "                       KEY': first line of FILE, which only you may read (0600).\n"
    "                       Without it, the key comes from $" KEY_ENV ".\n"
    "                       Never on the command line: other users can read argv.\n"
    "  --version-header NAME  name of the version header (default Service-Version);\n"
    "                       its value must be 2\n"
    "  --accept-missing-version  accept requests without the version header\n"
    "                       (default: 400)\n"
    "  --base-url URL       base of the uris in replies (default http://ADDR;\n"
    "                       http://localhost for a unix socket)\n"
    "  --ready-file FILE    once listening, write ADDR (\"127.0.0.1:PORT\" or the\n"
    "                       socket path) to FILE, for scripts to poll; removed at exit\n"
    "  --faults SPEC        inject failures for clients' tests (below)\n"
    "  --rate-limit N       answer 429 (no Retry-After) past N requests in a rolling\n"
    "                       window, as the production service does at 120 per 60 s;\n"
    "                       the requests of all clients count together (one account's\n"
    "                       budget), a refused one does not; default: none\n"
    "  --rate-window SECONDS  the rolling window of --rate-limit (1..86400; default\n"
    "                       60); a short one makes a budget test run in seconds\n"
    "  --sandbox            refused: serve-api is a reference server itself\n"
    "\n"
    "Faults: SPEC is ENTRY[,ENTRY]... with ENTRY = OP:KIND@SELECT[:retry-after=S]\n"
    "  OP      create_rule create_cred delete_rule delete_cred list_rules list_creds\n"
    "          get_rule get_cred patch_rule patch_cred any\n"
    "  KIND    drop       done (a create or an edit is committed), then closed with\n"
    "                     no reply\n"
    "          reset      done, then the connection is reset (TCP RST)\n"
    "          truncate   done, then half of the announced body and close\n"
    "          delay=MS   done, then replied MS (1..60000) ms late\n"
    "          trickle=MS done, then the body sent one byte every MS (1..60000) ms\n"
    "                     (a client's low-speed limit), e.g. trickle=1000\n"
    "          403 429 500 502  refused before anything is done; 429 takes\n"
    "                     :retry-after=S for a Retry-After header (none without)\n"
    "  SELECT  N (the Nth request of OP, from 1), N-M, N+ (N and later), every=K\n"
    "  Requests are counted per OP (any: all together) once the key and version\n"
    "  header passed; the first entry selecting a request wins. Example:\n"
    "    create_rule:drop@2,any:429@1:retry-after=2,list_rules:500@3-4\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 when it cannot start (address in use,\n"
    "database), 2 for bad usage.\n",
    .min_operands = 0, .max_operands = 0,
};

int cli_serve_api(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return serve_api(ctx, path, argc, argv);
}

/* The key never comes from argv. Any "--api…" word other than --api-key-file is
 * refused before parsing: getopt would take "--api-key KEY" as an abbreviation of
 * --api-key-file and use the key as a file name. */
static bool key_on_argv(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--api", 5) != 0)
            continue;
        if (strcmp(a, "--api-key-file") == 0 || strncmp(a, "--api-key-file=", 15) == 0)
            continue;
        return true;
    }
    return false;
}

/* First line of a file only the caller can read; heap, wiped by the caller. */
static char *read_key_file(cli_ctx *ctx, const char *file)
{
    /* O_NONBLOCK: a FIFO must not block the open (refused below). */
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        termsafe_fprintf(ctx->err, "%s: --api-key-file: cannot open %s: %s\n", ctx->program,
                         file, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    const char *why = !S_ISREG(st.st_mode)         ? "is not a regular file"
                      : (st.st_mode & 077) != 0    ? "can be read by others: chmod 600 it"
                      : st.st_uid != geteuid()     ? "belongs to another user"
                                                   : NULL;
    char *buf = why ? NULL : calloc(1, KEY_FILE_MAX + 1);
    ssize_t n = buf ? read(fd, buf, KEY_FILE_MAX) : -1;
    close(fd);
    if (why || n < 0) {
        termsafe_fprintf(ctx->err, "%s: --api-key-file: %s %s\n", ctx->program, file,
                         why ? why : "cannot be read");
        free(buf);
        return NULL;
    }
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf;
}

/* The key from --api-key-file, else the environment. */
static char *load_key(cli_ctx *ctx, const char *path, const char *file)
{
    if (file)
        return read_key_file(ctx, file);
    const char *env = getenv(KEY_ENV);
    if (env && *env)
        return strdup(env);
    cli_usage_error(ctx, path, "no API key: set " KEY_ENV " or pass --api-key-file FILE");
    return NULL;
}

/* Control characters of a path must not reach the terminal. */
static void log_line(void *ctx, const char *method, const char *rpath, int status,
                     const char *fault, double ms, const char *client)
{
    cli_ctx *c = ctx;
    /* Method and path come from the client: neutralised like any untrusted text
     * on a terminal (C0, C1, invalid UTF-8). One lock: threads log at once. */
    flockfile(c->err);
    cli_put_cell(c->err, method, 0, 16);
    fputc(' ', c->err);
    cli_put_cell(c->err, rpath, 0, LOG_PATH_MAX);
    fprintf(c->err, " %d %.1fms%s%s client=", status, ms, fault ? " fault=" : "",
            fault ? fault : "");
    cli_put_cell(c->err, client && *client ? client : "-", 0, LOG_CLIENT_MAX);
    fputc('\n', c->err);
    funlockfile(c->err);
}

/* Write ADDR to FILE in one rename, so a poller never reads half of it. */
typedef struct serve_opts {
    const char *listen, *key_file, *version_header, *base_url, *faults, *ready_file;
    const char *rate_limit, *rate_window;
    bool accept_missing;
} serve_opts;

static int run_server(cli_ctx *ctx, const serve_opts *o, const char *key)
{
    emulator_config cfg = {
        .listen = o->listen, .db_path = config_get(&ctx->cfg, CONFIG_DB), .api_key = key,
        .version_header = o->version_header, .accept_missing_version = o->accept_missing,
        .base_url = o->base_url, .faults = o->faults, .log = log_line, .log_ctx = ctx,
        .rate_limit = o->rate_limit ? atoi(o->rate_limit) : 0,
        .rate_window_s = o->rate_window ? atoi(o->rate_window) : 0,
    };
    sigset_t stop, old;
    cli_serving_block(&stop, &old);
    emulator *em;
    error_info e = {0};
    if (emulator_start(&cfg, &em, &e) != ERROR_OK) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return cli_fail(ctx, &e);
    }
    termsafe_fprintf(ctx->err, "listening on %s%s, base URL %s%s%s\n",
                     emulator_is_unix(em) ? "unix:" : "tcp:", emulator_address(em),
                     emulator_base_url(em), o->faults ? ", faults " : "",
                     o->faults ? o->faults : "");
    int rc = CLI_EXIT_OK;
    if (o->ready_file && !cli_write_ready(ctx, o->ready_file, emulator_address(em)))
        rc = CLI_EXIT_FAILURE;
    int sig = rc == CLI_EXIT_OK ? cli_serving_wait(&stop) : 0;
    emulator_stop(em);
    if (o->ready_file && rc == CLI_EXIT_OK)
        unlink(o->ready_file);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (sig)
        fprintf(ctx->err, "stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return rc;
}

static int serve_api(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    if (key_on_argv(argc, argv))
        return cli_usage_error(ctx, path, "the API key is never taken from the command line "
                               "(other users can read it): set " KEY_ENV
                               " or pass --api-key-file FILE (mode 0600)");
    serve_opts o = {0};
    bool sandbox = false; /* its own: refused with the reason */
    const cli_opt opts[] = {
        {"listen", CLI_OPT_STRING, &o.listen},
        {"sandbox", CLI_OPT_FLAG, &sandbox},
        {"api-key-file", CLI_OPT_STRING, &o.key_file},
        {"version-header", CLI_OPT_STRING, &o.version_header},
        {"accept-missing-version", CLI_OPT_FLAG, &o.accept_missing},
        {"base-url", CLI_OPT_STRING, &o.base_url},
        {"faults", CLI_OPT_STRING, &o.faults},
        {"ready-file", CLI_OPT_STRING, &o.ready_file},
        {"rate-limit", CLI_OPT_STRING, &o.rate_limit},
        {"rate-window", CLI_OPT_STRING, &o.rate_window},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &serve_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    if (sandbox || ctx->sandbox_wanted)
        return cli_usage_error(ctx, path, "--sandbox starts a reference server for another "
                               "command; serve-api is one itself (give it --listen and --db)");
    if (o.rate_limit && (strspn(o.rate_limit, "0123456789") != strlen(o.rate_limit) ||
                         !*o.rate_limit || strlen(o.rate_limit) > 6))
        return cli_usage_error(ctx, path, "--rate-limit takes a whole number of requests "
                               "per window (120 per 60 s is the production limit; 0: "
                               "none)");
    if (o.rate_window && (strspn(o.rate_window, "0123456789") != strlen(o.rate_window) ||
                          !*o.rate_window || strlen(o.rate_window) > 5 ||
                          atoi(o.rate_window) < 1 || atoi(o.rate_window) > 86400))
        return cli_usage_error(ctx, path, "--rate-window takes a whole number of seconds "
                               "from 1 to 86400 (default 60, as the production service)");
    if (!o.listen)
        return cli_usage_error(ctx, path, "--listen is required (e.g. --listen "
                               "tcp:127.0.0.1:0)");
    /* The default database is the user's cache: the server must never write there. */
    if (ctx->cfg.sources[CONFIG_DB] != CONFIG_SRC_FLAG)
        return cli_usage_error(ctx, path, "--db FILE is required: the server keeps its own "
                               "database, apart from the cache");
    char *key = load_key(ctx, path, o.key_file);
    if (!key)
        return CLI_EXIT_USAGE;
    rc = run_server(ctx, &o, key);
    model_free_wiped(key);
    return rc;
}

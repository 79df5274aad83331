/*
 * `rampart doctor`: is everything rampart relies on as it should be? One line per
 * check (ok / FAIL / skip, what, how to fix it); each check is a row of one table.
 * Reads only: it opens the cache read-only, creates nothing that is missing, and
 * never prints the API key or a token.
 */
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/agent.h"
#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/fileperm.h"

/* The remote check's patience: a doctor should answer quickly, even offline. */
enum { REMOTE_CONNECT_MS = 5000, REMOTE_TOTAL_MS = 10000, DETAIL_MAX = 1024 };

static int doctor_run(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command doctor_command = {
    "doctor", doctor_run, "[-o table|json|yaml] [--json]",
    "Check the cache, the files rampart trusts and the remote; say how to fix each "
    "problem.",
    "Checks, one line each (ok, FAIL or skip, what was checked, how to fix it):\n"
    "  config file          yours (or root's), not writable by others; private (600)\n"
    "                       when it holds api_key\n"
    "  cache file, -wal, -shm  yours, 0600: they hold tokens\n"
    "  cache directory      yours (or root's), not writable by others\n"
    "  cache identity       a rampart cache (application_id 0x52414D50) of this\n"
    "                       schema version\n"
    "  cache integrity      SQLite's integrity_check over the whole file\n"
    "  agent key file, agent key directory   yours, 0600 / not writable by others\n"
    "  socket directory     the agent socket's: a directory of yours (not a link),\n"
    "                       not writable by others\n"
    "  remote               one listing page of rules with the configured URL and\n"
    "                       key (at most 10 s); skipped with no remote configured\n"
    "Changes nothing: the cache is opened read-only (SQLite may leave its -wal and\n"
    "-shm files beside it, 0600), nothing missing is created. Never prints the API\n"
    "key or a token.\n\n"
    "Options:\n"
    "  -o, --output FORMAT   table (the default: the lines above), json (a JSON\n"
    "                        array of {\"check\", \"status\" (ok, fail, skip),\n"
    "                        \"detail\"}) or yaml (the same as YAML)\n"
    "  --json                -o json\n\n"
    "Exit status: 0 every check ok or skipped; 1 at least one failed.\n",
    .min_operands = 0, .max_operands = 0};

typedef enum doctor_status { DOCTOR_OK, DOCTOR_FAIL, DOCTOR_SKIP } doctor_status;

typedef struct doctor_result {
    doctor_status status;
    char detail[DETAIL_MAX];
} doctor_result;

/* What the checks share: the cache, once the identity check opened it. */
typedef struct doctor_state {
    cli_ctx *ctx;
    const char *db;      /* "" when there is no database path */
    bool cache_files_ok; /* the permission checks of the cache passed */
    store *st;           /* read-only; NULL when it could not be opened */
} doctor_state;

static void say(doctor_result *r, doctor_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(doctor_result *r, doctor_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    r->status = status;
}

/* fileperm's verdict on `path`: ok with what was found, skip when it is missing
 * (`missing` says why that is fine), FAIL with the fix. */
static doctor_status judge(doctor_result *r, const char *path, fileperm_role role,
                           const char *missing)
{
    error_info e = {0};
    error_code rc = fileperm_check_path(path, role, &e);
    struct stat sb;
    if (rc == ERROR_NOT_FOUND)
        say(r, DOCTOR_SKIP, "%s does not exist%s", path, missing);
    else if (rc != ERROR_OK)
        say(r, DOCTOR_FAIL, "%s", e.msg);
    else if (stat(path, &sb) == 0)
        say(r, DOCTOR_OK, "%s (mode %04o, owner uid %u)", path,
            (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid);
    else
        say(r, DOCTOR_OK, "%s", path);
    return r->status;
}

/* `path` with `suffix` (an empty one: itself) or its directory, into `out`. */
static const char *beside(char *out, size_t size, const char *path, const char *suffix)
{
    snprintf(out, size, "%s%s", path, suffix);
    return out;
}

static const char *dir_of(char *out, size_t size, const char *path)
{
    snprintf(out, size, "%s", path);
    return dirname(out);
}

/* ---- the checks ---------------------------------------------------------- */

static void check_config(doctor_state *d, doctor_result *r)
{
    const config *cfg = &d->ctx->cfg;
    if (d->ctx->config_error.code != ERROR_OK) {
        say(r, DOCTOR_FAIL, "%s", d->ctx->config_error.msg);
        return;
    }
    if (!cfg->config_path[0]) {
        say(r, DOCTOR_SKIP, "no HOME, so no config file");
        return;
    }
    if (!cfg->config_file_found) {
        say(r, DOCTOR_SKIP, "%s does not exist (defaults and the environment only)",
            cfg->config_path);
        return;
    }
    bool holds_key = cfg->config_file_holds_key;
    judge(r, cfg->config_path, holds_key ? FILEPERM_CONFIG_KEY : FILEPERM_CONFIG, "");
}

static bool no_db(doctor_state *d, doctor_result *r)
{
    if (d->db[0])
        return false;
    say(r, DOCTOR_SKIP, "no database path: set RAMPART_DB or pass --db PATH");
    return true;
}

static void check_cache(doctor_state *d, doctor_result *r, const char *suffix,
                        const char *missing)
{
    if (no_db(d, r))
        return;
    char path[CONFIG_VALUE_MAX + 16];
    if (judge(r, beside(path, sizeof path, d->db, suffix), FILEPERM_CACHE, missing) ==
        DOCTOR_FAIL)
        d->cache_files_ok = false;
}

static void check_cache_file(doctor_state *d, doctor_result *r)
{
    check_cache(d, r, "", "");
    /* No cache to check is a failure: a mistyped path must not pass as healthy. */
    if (r->status == DOCTOR_SKIP)
        say(r, DOCTOR_FAIL, "%s does not exist: no cache there (a mistyped --db, RAMPART_DB "
            "or profile?); a command that writes makes it ('%s sync')", d->db,
            d->ctx->program);
}

static void check_cache_wal(doctor_state *d, doctor_result *r)
{
    check_cache(d, r, "-wal", " (none while no rampart has the cache open)");
}

static void check_cache_shm(doctor_state *d, doctor_result *r)
{
    check_cache(d, r, "-shm", " (none while no rampart has the cache open)");
}

static void check_cache_dir(doctor_state *d, doctor_result *r)
{
    char dir[CONFIG_VALUE_MAX];
    if (!no_db(d, r))
        judge(r, dir_of(dir, sizeof dir, d->db), FILEPERM_DATA_DIR,
              ": the first command that writes creates it (0700)");
}

static void check_identity(doctor_state *d, doctor_result *r)
{
    if (no_db(d, r))
        return;
    if (access(d->db, F_OK) != 0) {
        say(r, DOCTOR_SKIP, "no cache yet");
        return;
    }
    if (!d->cache_files_ok) {
        say(r, DOCTOR_SKIP, "not opened: fix the cache's files first (above)");
        return;
    }
    error_info e = {0};
    store_identity id;
    if (store_open(d->db, STORE_READONLY, &d->st, &e) != ERROR_OK ||
        store_identity_get(d->st, &id, &e) != ERROR_OK) {
        say(r, DOCTOR_FAIL, "%s", e.msg);
        return;
    }
    if (id.application_id == 0)
        say(r, DOCTOR_OK, "made by an older rampart (application_id 0: the next command "
            "that writes sets 0x%08X), schema version %d", STORE_APPLICATION_ID,
            id.schema_version);
    else
        say(r, DOCTOR_OK, "a rampart cache (application_id 0x%08lX), schema version %d",
            id.application_id, id.schema_version);
}

static void check_integrity(doctor_state *d, doctor_result *r)
{
    if (!d->st) {
        say(r, DOCTOR_SKIP, "the cache is not open (see above)");
        return;
    }
    char first[256];
    size_t problems = 0;
    error_info e = {0};
    if (store_integrity_check(d->st, first, sizeof first, &problems, &e) != ERROR_OK)
        say(r, DOCTOR_FAIL, "%s", e.msg);
    else if (problems)
        say(r, DOCTOR_FAIL,
            "%s: integrity_check found %zu problem%s (first: %s): keep a copy of the file "
            "(its tokens are kept nowhere else); a sync into a new cache (--db NEW) "
            "brings the rows back, not the tokens",
            d->db, problems, problems == 1 ? "" : "s", first);
    else
        say(r, DOCTOR_OK, "integrity_check: ok");
}

static void check_key_file(doctor_state *d, doctor_result *r)
{
    (void)d;
    char path[CONFIG_PATH_MAX];
    error_info e = {0};
    if (agent_default_key_path(path, sizeof path, &e) != ERROR_OK)
        say(r, DOCTOR_SKIP, "%s", e.msg);
    else
        judge(r, path, FILEPERM_AGENT_KEY, ": the first agent with a TCP listener makes it");
}

static void check_key_dir(doctor_state *d, doctor_result *r)
{
    (void)d;
    char path[CONFIG_PATH_MAX], dir[CONFIG_PATH_MAX];
    error_info e = {0};
    if (agent_default_key_path(path, sizeof path, &e) != ERROR_OK)
        say(r, DOCTOR_SKIP, "%s", e.msg);
    else
        judge(r, dir_of(dir, sizeof dir, path), FILEPERM_DATA_DIR,
              ": the first agent with a TCP listener makes it (0700)");
}

/* The same check an agent makes before it listens there. */
static void check_socket_dir(doctor_state *d, doctor_result *r)
{
    char sock[CONFIG_PATH_MAX], dir[CONFIG_PATH_MAX];
    error_info e = {0};
    if (agent_default_socket(sock, sizeof sock, config_profile(&d->ctx->cfg), &e) != ERROR_OK) {
        say(r, DOCTOR_SKIP, "%s", e.msg);
        return;
    }
    error_code rc = agent_socket_dir_trusted(sock, &e);
    if (rc == ERROR_NOT_FOUND)
        say(r, DOCTOR_SKIP, "%s: the first agent makes it (0700)", e.msg);
    else if (rc != ERROR_OK)
        say(r, DOCTOR_FAIL, "%s", e.msg);
    else
        judge(r, dir_of(dir, sizeof dir, sock), FILEPERM_SOCKET_DIR, "");
}

static const char *remote_hint(sync_failure_kind kind)
{
    switch (kind) {
    case SYNC_FAILURE_AUTH:
        return "the API key was refused: check RAMPART_API_KEY or api_key";
    case SYNC_FAILURE_UNREACHABLE:
    case SYNC_FAILURE_TIMED_OUT:
    case SYNC_FAILURE_CONNECTION_LOST:
        return "check api_url and the network";
    default:
        return "see 'rampart sync --verbose'";
    }
}

static void check_remote(doctor_state *d, doctor_result *r)
{
    config *cfg = &d->ctx->cfg;
    if (!config_remote_configured(cfg)) {
        say(r, DOCTOR_SKIP, "skipped: no remote configured (api_url and api_key)");
        return;
    }
    error_info ke = {0};
    if (config_resolve_key(cfg, false, &ke) != ERROR_OK) {
        say(r, DOCTOR_FAIL, "%s", ke.msg);
        return;
    }
    const char *url = config_get(cfg, CONFIG_API_URL);
    api_config ac = {
        .base_url = url,
        .api_key = config_get(cfg, CONFIG_API_KEY),
        .version_header = config_get(cfg, CONFIG_VERSION_HEADER),
        .connect_timeout_ms = REMOTE_CONNECT_MS,
        .total_timeout_ms = REMOTE_TOTAL_MS,
    };
    api_client *client = NULL;
    error_info e = {0};
    if (api_client_new(&ac, &client, &e) != ERROR_OK) {
        say(r, DOCTOR_FAIL, "%s", e.msg);
        return;
    }
    codec_page page = {0};
    sync_result res = {0};
    sync_outcome out = api_ops()->list_page(client, MODEL_KIND_RULE, NULL, &page, &res);
    api_client_free(client);
    codec_page_free(&page);
    if (out == SYNC_OK)
        say(r, DOCTOR_OK, "%s answered a listing of rules (HTTP %d)", url, res.http_status);
    else
        say(r, DOCTOR_FAIL, "%s: %s (%s): %s", url, res.message,
            sync_failure_name(res.failure), remote_hint(res.failure));
}

typedef void (*doctor_check)(doctor_state *d, doctor_result *r);

static const struct {
    const char *name;
    doctor_check run;
} checks[] = {
    {"config file", check_config},
    {"cache file", check_cache_file},
    {"cache -wal", check_cache_wal},
    {"cache -shm", check_cache_shm},
    {"cache directory", check_cache_dir},
    {"cache identity", check_identity},
    {"cache integrity", check_integrity},
    {"agent key file", check_key_file},
    {"agent key directory", check_key_dir},
    {"socket directory", check_socket_dir},
    {"remote", check_remote},
};

enum { CHECK_COUNT = sizeof checks / sizeof checks[0] };

/* ---- output -------------------------------------------------------------- */

static const char *const status_word[] = {"ok", "FAIL", "skip"};
static const char *const status_json[] = {"ok", "fail", "skip"};

static void put_line(cli_ctx *ctx, const char *name, const doctor_result *r)
{
    fprintf(ctx->out, "%-4s  %-19s  ", status_word[r->status], name);
    cli_put_cell(ctx->out, r->detail, 0, 0); /* paths and messages: no terminal controls */
    fputc('\n', ctx->out);
}

static void put_json(cli_ctx *ctx, size_t i, const char *name, const doctor_result *r)
{
    cli_json_array_sep(ctx, i);
    fputs("{\"check\": ", ctx->out);
    cli_put_json_string(ctx->out, name);
    fprintf(ctx->out, ", \"status\": \"%s\", \"detail\": ", status_json[r->status]);
    cli_put_json_string(ctx->out, r->detail);
    fputc('}', ctx->out);
}

static int doctor_run(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    cli_report_line line;
    if (!cli_report_parse(ctx, path, &doctor_command, NULL, 0, argc, argv, &line))
        return line.exit_code;
    bool document = cli_report_is_document(line.format);
    cli_report report;
    if (document && !cli_report_begin(ctx, &report, line.format))
        return CLI_EXIT_FAILURE;
    doctor_state d = {.ctx = ctx, .db = config_get(&ctx->cfg, CONFIG_DB),
                      .cache_files_ok = true};
    bool failed = false;
    for (size_t i = 0; i < CHECK_COUNT; i++) {
        doctor_result r = {DOCTOR_SKIP, ""};
        checks[i].run(&d, &r);
        failed = failed || r.status == DOCTOR_FAIL;
        if (document)
            put_json(ctx, i, checks[i].name, &r);
        else
            put_line(ctx, checks[i].name, &r);
        fflush(ctx->out); /* the remote check may take seconds: show what is known */
    }
    store_close(d.st);
    int rc = failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    if (!document)
        return rc;
    cli_json_array_end(ctx, CHECK_COUNT);
    return cli_report_end(ctx, &report, rc);
}

int cli_doctor(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return doctor_run(ctx, path, argc, argv);
}

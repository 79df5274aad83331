/*
 * `rampart profiles`: the accounts the config file defines, each as `rampart
 * --profile NAME` would use it (the same environment and flags apply): its remote,
 * where its key comes from (never the key, and key_command is not run), its policy
 * setting, its cache and how long ago that cache last synced. The caches are read through read-only
 * handles and never created: a missing one says "never". Ages are written as the
 * console's header writes them ("12m ago": rampart/duration.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rampart/cli.h"
#include "rampart/duration.h"
#include "rampart/termsafe.h"

static int profiles_run(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command profiles_command = {
    "profiles", profiles_run, "[--json | --names]",
    "The profiles of the config file: remote, key source, policy, cache, last sync.",
    "Each profile is shown as 'rampart --profile NAME' would use it, the environment\n"
    "and flags included; '*' marks the selected one (--profile, RAMPART_PROFILE).\n"
    "'default' is the settings outside any [profile.NAME] section. The caches are only\n"
    "read; key_command is not run.\n"
    "\n"
    "Options:\n"
    "  --json    one JSON array of objects: name, selected, api_url, key_source,\n"
    "            policy (the policy setting, or null), db, last_sync (RFC 3339 or\n"
    "            null), last_sync_age_s, error\n"
    "  --names   the names only, one per line (for shell completion)\n",
    .min_operands = 0, .max_operands = 0};

/* One profile as the listing shows it. */
typedef struct profile_row {
    char name[CONFIG_PROFILE_NAME_MAX + 1];
    bool selected;
    char url[CONFIG_VALUE_MAX];
    const char *key_source; /* "api_key", "key_command", "environment", "none" */
    char policy[CONFIG_VALUE_MAX];             /* the policy setting, "" none */
    char db[CONFIG_VALUE_MAX];
    char last_sync[STORE_META_VALUE_MAX + 1]; /* "" never */
    double age_s;                              /* < 0: unknown */
    char error[ERROR_MSG_MAX];                 /* why the cache could not be read */
} profile_row;

static const char *env_lookup(void *unused, const char *name)
{
    (void)unused;
    return getenv(name);
}

/* Where the key would come from, without running or showing anything: the
 * setting and the place it is set ("api_key (profile)", "key_command (top
 * level)", "environment", "flag", "none", "none (withheld: ...)"). */
static const char *key_source(const config *cfg)
{
    config_key k = config_get(cfg, CONFIG_API_KEY)[0] ? CONFIG_API_KEY : CONFIG_KEY_COMMAND;
    if (!config_get(cfg, k)[0])
        return cfg->key_withheld ? "none (its own api_url: the top level's key is not sent "
                                   "there)"
                                 : "none";
    switch (cfg->sources[k]) {
    case CONFIG_SRC_ENV:
        return "environment";
    case CONFIG_SRC_FLAG:
    case CONFIG_SRC_SANDBOX:
        return "flag";
    case CONFIG_SRC_PROFILE:
        return k == CONFIG_API_KEY ? "api_key (profile)" : "key_command (profile)";
    default:
        return k == CONFIG_API_KEY ? "api_key (top level)" : "key_command (top level)";
    }
}

/* The cache's last sync, read without creating or changing anything. */
static void read_last_sync(profile_row *r)
{
    struct stat sb;
    r->age_s = -1;
    if (!r->db[0] || (stat(r->db, &sb) != 0 && errno == ENOENT))
        return;
    store *st = NULL;
    error_info e = {0};
    error_code rc = store_open(r->db, STORE_READONLY, &st, &e);
    if (rc == ERROR_OK)
        rc = store_meta_get(st, STORE_META_LAST_SYNC, r->last_sync, sizeof r->last_sync, &e);
    store_close(st);
    if (rc == ERROR_NOT_FOUND && st)
        rc = ERROR_OK; /* a cache that never synced */
    if (rc != ERROR_OK) {
        r->last_sync[0] = '\0';
        snprintf(r->error, sizeof r->error, "%s", e.msg);
        return;
    }
    double at;
    if (r->last_sync[0] && duration_parse_time(r->last_sync, &at))
        r->age_s = (double)time(NULL) - at;
}

static error_code load_row(cli_ctx *ctx, const char *name, profile_row *r, error_info *e)
{
    config *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return error_set(e, ERROR_NOMEM, "out of memory");
    error_code rc = config_load_profile(cfg, name, env_lookup, NULL, e);
    if (rc == ERROR_OK)
        rc = config_copy_flags(cfg, &ctx->cfg, e);
    if (rc == ERROR_OK) {
        snprintf(r->name, sizeof r->name, "%s", name);
        r->selected = strcmp(name, config_profile(&ctx->cfg)) == 0;
        snprintf(r->url, sizeof r->url, "%s", config_get(cfg, CONFIG_API_URL));
        r->key_source = key_source(cfg);
        snprintf(r->policy, sizeof r->policy, "%s", config_get(cfg, CONFIG_POLICY));
        snprintf(r->db, sizeof r->db, "%s", config_get(cfg, CONFIG_DB));
        read_last_sync(r);
    }
    config_clear(cfg);
    free(cfg);
    return rc;
}

/* Every profile: "default" first, then the file's in file order. */
static error_code load_rows(cli_ctx *ctx, profile_row **rows, int *n, error_info *e)
{
    config *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return error_set(e, ERROR_NOMEM, "out of memory");
    error_code rc = config_load_profile(cfg, "default", env_lookup, NULL, e);
    int count = cfg->nprofiles + 1;
    profile_row *all = rc == ERROR_OK ? calloc((size_t)count, sizeof *all) : NULL;
    if (rc == ERROR_OK && !all)
        rc = error_set(e, ERROR_NOMEM, "out of memory");
    for (int i = 0; all && rc == ERROR_OK && i < count; i++)
        rc = load_row(ctx, i ? cfg->profiles[i - 1] : "default", &all[i], e);
    *rows = all;
    *n = count;
    config_clear(cfg);
    free(cfg);
    return rc;
}

static void age_text(const profile_row *r, char *buf, size_t size)
{
    char age[DURATION_TEXT_MAX];
    if (r->error[0])
        snprintf(buf, size, "unreadable");
    else if (r->age_s < 0)
        snprintf(buf, size, "never");
    else
        snprintf(buf, size, "%s ago", duration_age(r->age_s, age, sizeof age));
}

enum { COL_NAME, COL_URL, COL_KEY, COL_POLICY, COL_DB, COL_COUNT };

static const char *cell(const profile_row *r, int col)
{
    switch (col) {
    case COL_NAME: return r->name;
    case COL_URL: return r->url[0] ? r->url : "-";
    case COL_KEY: return r->key_source;
    case COL_POLICY: return r->policy[0] ? r->policy : "-";
    default: return r->db[0] ? r->db : "-";
    }
}

static void put_table(cli_ctx *ctx, const profile_row *rows, int n)
{
    static const char *const headers[COL_COUNT] = {"PROFILE", "REMOTE", "KEY", "POLICY",
                                                    "CACHE"};
    int width[COL_COUNT];
    for (int c = 0; c < COL_COUNT; c++) {
        width[c] = (int)strlen(headers[c]);
        for (int i = 0; i < n; i++) {
            int w = (int)termsafe_width(cell(&rows[i], c), strlen(cell(&rows[i], c)));
            width[c] = w > width[c] ? w : width[c];
        }
    }
    fputs("  ", ctx->out);
    for (int c = 0; c < COL_COUNT; c++)
        fprintf(ctx->out, "%-*s  ", width[c], headers[c]);
    fputs("LAST SYNC\n", ctx->out);
    for (int i = 0; i < n; i++) {
        fputs(rows[i].selected ? "* " : "  ", ctx->out);
        for (int c = 0; c < COL_COUNT; c++) {
            cli_put_cell(ctx->out, cell(&rows[i], c), width[c], 0);
            fputs("  ", ctx->out);
        }
        char age[48];
        age_text(&rows[i], age, sizeof age);
        fprintf(ctx->out, "%s\n", age);
    }
}

static void put_json_or_null(FILE *out, const char *s)
{
    if (*s)
        cli_put_json_string(out, s);
    else
        fputs("null", out);
}

static void put_json(cli_ctx *ctx, const profile_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        const profile_row *r = &rows[i];
        cli_json_array_sep(ctx, (size_t)i);
        fputs("{\"name\": ", ctx->out);
        cli_put_json_string(ctx->out, r->name);
        fprintf(ctx->out, ", \"selected\": %s, \"api_url\": ", r->selected ? "true" : "false");
        put_json_or_null(ctx->out, r->url);
        fprintf(ctx->out, ", \"key_source\": \"%s\", \"policy\": ", r->key_source);
        put_json_or_null(ctx->out, r->policy);
        fputs(", \"db\": ", ctx->out);
        put_json_or_null(ctx->out, r->db);
        fputs(", \"last_sync\": ", ctx->out);
        put_json_or_null(ctx->out, r->last_sync);
        if (r->age_s >= 0)
            fprintf(ctx->out, ", \"last_sync_age_s\": %.0f", r->age_s);
        else
            fputs(", \"last_sync_age_s\": null", ctx->out);
        fputs(", \"error\": ", ctx->out);
        put_json_or_null(ctx->out, r->error);
        fputc('}', ctx->out);
    }
    cli_json_array_end(ctx, (size_t)n);
}

/* A cache that could not be read is said on stderr too (the table says "unreadable"). */
static void warn_unreadable(cli_ctx *ctx, const profile_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        if (rows[i].error[0])
            termsafe_fprintf(ctx->err, "%s: profile %s: %s\n", ctx->program, rows[i].name,
                             rows[i].error);
    }
}

static int profiles_run(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool json = false, names = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}, {"names", CLI_OPT_FLAG, &names}};
    int first, rc;
    if (!cli_parse(ctx, path, &profiles_command, opts, 2, argc, argv, &first, &rc))
        return rc;
    if (json && names)
        return cli_usage_error(ctx, path, "--json and --names: choose one");
    profile_row *rows = NULL;
    int n = 0;
    error_info e = {0};
    if (load_rows(ctx, &rows, &n, &e) != ERROR_OK) {
        free(rows);
        return cli_fail(ctx, &e);
    }
    if (names) {
        for (int i = 0; i < n; i++)
            fprintf(ctx->out, "%s\n", rows[i].name);
    } else if (json) {
        put_json(ctx, rows, n);
    } else {
        put_table(ctx, rows, n);
        warn_unreadable(ctx, rows, n);
    }
    free(rows);
    /* The list is how to find the right name: shown even when the selected profile
     * is unknown, then that error. */
    return ctx->config_error.code != ERROR_OK ? cli_fail(ctx, &ctx->config_error)
                                              : CLI_EXIT_OK;
}

int cli_profiles(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return profiles_run(ctx, path, argc, argv);
}

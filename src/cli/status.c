/* `rampart status`: what is cached, in which sync state, where things live and
 * when it last synced; on a follower (read_only), what it follows and how old its
 * data is. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_follower.h"
#include "rampart/cli.h"
#include "rampart/duration.h"

static int status_run(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command status_command = {
    "status", status_run, "[-o table|json|yaml] [--json]",
    "Counts of rules and credentials per sync state, and where data and settings live.",
    "Also when the cache last synced, and how long ago (\"never\" before its first\n"
    "sync); on a follower (read_only = true) instead its upstream and the age of its\n"
    "data: the time since its last complete pull.\n"
    "Options:\n"
    "  -o, --output FORMAT   table (the default: the form above), json (one JSON\n"
    "                        object) or yaml (the same object as YAML)\n"
    "  --json                -o json\n",
    .min_operands = 0, .max_operands = 0};

/* When the cache last completed a pull (STORE_META_LAST_SYNC), and how long ago. */
typedef struct status_pull {
    char when[STORE_META_VALUE_MAX + 1]; /* "" never */
    long long age_s;                     /* -1: never, or not a time we can read */
} status_pull;

/* Rows per kind and sync state. */
typedef struct status_counts {
    size_t of[MODEL_KIND_COUNT][MODEL_STATE_COUNT];
    size_t total[MODEL_KIND_COUNT];
} status_counts;

/* The table's column of a kind: headed by its plural in capitals, one column
 * wider than that and at least 10 wide. */
enum { COLUMN_MIN = 10 };

static int column_width(model_kind kind)
{
    int w = (int)strlen(kind_get(kind)->plural) + 1;
    return w > COLUMN_MIN ? w : COLUMN_MIN;
}

static void put_header(cli_ctx *ctx, model_kind kind)
{
    const char *plural = kind_get(kind)->plural;
    fprintf(ctx->out, " %*s", column_width(kind) - (int)strlen(plural), "");
    for (const char *c = plural; *c; c++)
        fputc(toupper((unsigned char)*c), ctx->out);
}

static error_code gather(store *st, status_counts *c, error_info *e)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        if (store_state_counts(st, (model_kind)k, c->of[k], e) != ERROR_OK)
            return e->code;
        for (int s = 0; s < MODEL_STATE_COUNT; s++)
            c->total[k] += c->of[k][s];
    }
    return ERROR_OK;
}

static void last_pull(store *st, status_pull *p)
{
    p->age_s = -1;
    double t;
    if (store_meta_get(st, STORE_META_LAST_SYNC, p->when, sizeof p->when, NULL) == ERROR_OK &&
        duration_parse_time(p->when, &t)) {
        double age = (double)time(NULL) - t;
        p->age_s = age > 0 ? (long long)age : 0;
    }
}

/* "42s", "5m", "2h", "3d": the console's and `profiles`' ages. */
static void put_age(FILE *out, long long s)
{
    char age[DURATION_TEXT_MAX];
    fputs(duration_age((double)s, age, sizeof age), out);
}

/* Any cache but a follower's (whose "data age" says it): when it last synced,
 * "last sync       2026-11-29T10:02:11Z (3m ago)", or "never". */
static void put_last_sync(cli_ctx *ctx, const status_pull *p)
{
    fputs("last sync       ", ctx->out);
    if (!p->when[0]) {
        fputs("never\n", ctx->out);
        return;
    }
    cli_put_cell(ctx->out, p->when, 0, 0);
    if (p->age_s >= 0) {
        fputs(" (", ctx->out);
        put_age(ctx->out, p->age_s);
        fputs(" ago)", ctx->out);
    }
    fputc('\n', ctx->out);
}

/* A follower's lines: what it follows, read-only, and how old its data is. */
static void put_follower(cli_ctx *ctx, const status_pull *p)
{
    const config *cfg = &ctx->cfg;
    fputs("upstream        ", ctx->out);
    cli_put_cell(ctx->out, config_get(cfg, CONFIG_API_URL)[0] ? config_get(cfg, CONFIG_API_URL)
                                                              : "not configured",
                 0, 0);
    fprintf(ctx->out, " (read-only: pulls only, no local change; read_only from %s)\n",
            config_source_name(cfg->sources[CONFIG_READ_ONLY]));
    fputs("data age        ", ctx->out);
    if (p->age_s < 0) {
        fprintf(ctx->out, "never pulled: run '%s sync'\n", ctx->program);
        return;
    }
    put_age(ctx->out, p->age_s);
    fputs(" (last pull ", ctx->out);
    cli_put_cell(ctx->out, p->when, 0, 0);
    fputs(")\n", ctx->out);
}

static void put_remote(cli_ctx *ctx)
{
    const config *cfg = &ctx->cfg;
    if (!config_remote_configured(cfg)) {
        fprintf(ctx->out,
                "remote          not configured: set RAMPART_API_URL and RAMPART_API_KEY "
                "(or api_url and api_key in the config file); changes stay queued\n");
        return;
    }
    fputs("remote          ", ctx->out);
    cli_put_cell(ctx->out, config_get(cfg, CONFIG_API_URL), 0, 0);
    if (!config_get(cfg, CONFIG_API_KEY)[0]) /* not run here: status needs no key */
        fprintf(ctx->out, " (API key from key_command, set in the %s)\n",
                config_source_name(cfg->sources[CONFIG_KEY_COMMAND]));
    else
        fprintf(ctx->out, " (API key from %s)\n",
                config_source_name(cfg->sources[CONFIG_API_KEY]));
}

/* One line of the table: a state's name (or "total") and a count per kind. */
static void put_counts_line(cli_ctx *ctx, const char *name,
                            const size_t counts[MODEL_KIND_COUNT])
{
    fprintf(ctx->out, "%-16s", name);
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        fprintf(ctx->out, " %*zu", column_width((model_kind)k), counts[k]);
    fputc('\n', ctx->out);
}

/* The configuration's lines (a follower's pull only when `p` is known). */
static void put_config(cli_ctx *ctx, const status_pull *p)
{
    const config *cfg = &ctx->cfg;
    fprintf(ctx->out, "profile         %s\n", config_profile(cfg));
    fputs("database        ", ctx->out);
    cli_put_cell(ctx->out, config_get(cfg, CONFIG_DB), 0, 0);
    fputs("\nconfig file     ", ctx->out);
    cli_put_cell(ctx->out, cfg->config_path, 0, 0);
    fputs(cfg->config_file_found ? "\n" : " (none)\n", ctx->out);
    put_remote(ctx);
    if (p && cli_follower(ctx))
        put_follower(ctx, p);
    else if (p)
        put_last_sync(ctx, p);
    fputs("version header  ", ctx->out);
    cli_put_cell(ctx->out, config_get(cfg, CONFIG_VERSION_HEADER), 0, 0);
    fputc('\n', ctx->out);
}

static void put_human(cli_ctx *ctx, const status_counts *c, const status_pull *p)
{
    put_config(ctx, p);
    fputc('\n', ctx->out);
    fprintf(ctx->out, "%-16s", "STATE");
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        put_header(ctx, (model_kind)k);
    fputc('\n', ctx->out);
    for (int s = 0; s < MODEL_STATE_COUNT; s++) {
        size_t line[MODEL_KIND_COUNT];
        bool any = s == MODEL_STATE_SYNCED; /* shown even for an empty cache */
        for (int k = 0; k < MODEL_KIND_COUNT; k++) {
            line[k] = c->of[k][s];
            any = any || line[k];
        }
        if (any)
            put_counts_line(ctx, model_state_name((model_state)s), line);
    }
    put_counts_line(ctx, "total", c->total);
}

static void put_counts_json(cli_ctx *ctx, const size_t counts[MODEL_STATE_COUNT],
                            size_t total)
{
    fputc('{', ctx->out);
    for (int s = 0; s < MODEL_STATE_COUNT; s++)
        fprintf(ctx->out, "\"%s\": %zu, ", model_state_name((model_state)s), counts[s]);
    fprintf(ctx->out, "\"total\": %zu}", total);
}

static void put_json(cli_ctx *ctx, const status_counts *c, const status_pull *p)
{
    const config *cfg = &ctx->cfg;
    fprintf(ctx->out, "{\"version\": \"%s\", \"profile\": ", RAMPART_VERSION);
    cli_put_json_string(ctx->out, config_profile(cfg));
    fputs(", \"database\": ", ctx->out);
    cli_put_json_string(ctx->out, config_get(cfg, CONFIG_DB));
    fputs(", \"config_file\": ", ctx->out);
    cli_put_json_string(ctx->out, cfg->config_path);
    fprintf(ctx->out, ", \"config_file_found\": %s, \"remote_configured\": %s, \"api_url\": ",
            cfg->config_file_found ? "true" : "false",
            config_remote_configured(cfg) ? "true" : "false");
    cli_put_json_string(ctx->out, config_get(cfg, CONFIG_API_URL));
    fputs(", \"version_header\": ", ctx->out);
    cli_put_json_string(ctx->out, config_get(cfg, CONFIG_VERSION_HEADER));
    fprintf(ctx->out, ", \"read_only\": %s, \"last_pull\": ",
            cli_follower(ctx) ? "true" : "false");
    if (p && p->when[0])
        cli_put_json_string(ctx->out, p->when);
    else
        fputs("null", ctx->out);
    if (p && p->age_s >= 0)
        fprintf(ctx->out, ", \"data_age_s\": %lld", p->age_s);
    else
        fputs(", \"data_age_s\": null", ctx->out);
    fprintf(ctx->out, ", \"cache_found\": %s", c ? "true" : "false");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        fprintf(ctx->out, ", \"%s\": ", kind_get((model_kind)k)->plural);
        if (c)
            put_counts_json(ctx, c->of[k], c->total[k]);
        else
            fputs("null", ctx->out);
    }
    fputs("}\n", ctx->out);
}

static int status_run(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    cli_report_line line;
    if (!cli_report_parse(ctx, path, &status_command, NULL, 0, argc, argv, &line))
        return line.exit_code;
    store *st = cli_store_existing(ctx);
    if (!st) {
        /* No cache (said on stderr): the configuration is still worth showing. */
        cli_report report;
        if (!cli_report_is_document(line.format))
            put_config(ctx, NULL);
        else if (cli_report_begin(ctx, &report, line.format)) {
            put_json(ctx, NULL, NULL);
            cli_report_end(ctx, &report, CLI_EXIT_OK);
        }
        return ctx->store_exit;
    }
    status_counts counts;
    error_info e = {0};
    if (gather(st, &counts, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    status_pull pull;
    last_pull(st, &pull);
    if (!cli_report_is_document(line.format)) {
        put_human(ctx, &counts, &pull);
        return CLI_EXIT_OK;
    }
    cli_report report;
    if (!cli_report_begin(ctx, &report, line.format))
        return CLI_EXIT_FAILURE;
    put_json(ctx, &counts, &pull);
    return cli_report_end(ctx, &report, CLI_EXIT_OK);
}

int cli_status(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return status_run(ctx, path, argc, argv);
}

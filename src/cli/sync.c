/* `rampart sync` and `rampart plan`: push the queue, pull the remote, and show
 * beforehand what a sync would do. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/sync.h"

static int sync_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);
static int plan_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command sync_command = {
    "sync", sync_cmd, "[--push-only|--pull-only] [--rate N] [--verbose] [--json]",
    "Push queued changes to the remote API, then pull its complete listings.",
    "Options:\n"
    "  --push-only   only send the queue (creates, deletes)\n"
    "  --pull-only   only refresh the cache from the remote\n"
    "  --rate N      request budget per minute (default: RAMPART_RATE or 120, the\n"
    "                production limit; 0: unpaced)\n"
    "  --verbose     a line per request settled\n"
    "  --json        print the report as JSON (counts, then \"failure\" and\n"
    "                \"row_failure\": null or {kind, http_status, error_code, msg,\n"
    "                operation_id, retry_after_s, object_kind, object_id})\n"
    "Exit status: 0 when everything converged, 4 when rows are still pending or\n"
    "failed (see 'rampart plan'), 2 when the API key was refused.\n",
    0, 0};

static const cli_command plan_command = {
    "plan", plan_cmd, "[--json]", "Show what the next sync would do; nothing is sent.",
    "Lines start with + (create), - (delete), ~ (a change: an edit to send, or\n"
    "deleted remotely and kept here for review) or ! (needs attention: failed,\n"
    "orphaned, outcome unknown, or a conflict to resolve).\n",
    0, 0};

/* ---- reporting while the engine runs ---- */

typedef struct sync_view {
    cli_ctx *ctx;
    bool tty;
    bool verbose;
    bool drawn; /* a progress line is on screen and must be cleared first */
} sync_view;

static const char *phase_name(sync_phase phase)
{
    static const char *const names[] = {
        [SYNC_PHASE_PUSH] = "push", [SYNC_PHASE_PULL] = "pull",
        [SYNC_PHASE_RECONCILE] = "reconcile", [SYNC_PHASE_WAIT] = "waiting",
        [SYNC_PHASE_DONE] = "done"};
    return names[phase];
}

static void clear_line(sync_view *v)
{
    if (v->drawn)
        fputs("\r\033[K", v->ctx->err);
    v->drawn = false;
}

/* "push   12/40 [######------] eta 30s" on one self-overwriting stderr line. */
static void on_progress(void *ctxp, const sync_progress *p)
{
    sync_view *v = ctxp;
    if (!v->tty)
        return;
    enum { BAR = 24 };
    char bar[BAR + 1];
    size_t full = p->total ? p->done * BAR / p->total : 0;
    for (size_t i = 0; i < BAR; i++)
        bar[i] = i < full ? '#' : '-';
    bar[BAR] = '\0';
    fprintf(v->ctx->err, "\r\033[K%-9s", phase_name(p->phase));
    if (p->phase == SYNC_PHASE_WAIT)
        fprintf(v->ctx->err, " %.0fs (request budget or server rate limit)", p->wait_s);
    else if (p->total)
        fprintf(v->ctx->err, " %zu/%zu [%s]", p->done, p->total, bar);
    else
        fprintf(v->ctx->err, " %zu", p->done);
    if (p->eta_s >= 0 && p->phase != SYNC_PHASE_WAIT)
        fprintf(v->ctx->err, " eta %.0fs", p->eta_s);
    fflush(v->ctx->err);
    v->drawn = true;
}

static void on_log(void *ctxp, sync_log_level level, const char *line)
{
    sync_view *v = ctxp;
    if (level == SYNC_LOG_INFO && !v->verbose)
        return;
    clear_line(v);
    fprintf(v->ctx->err, "%s%s\n", level == SYNC_LOG_ERROR ? "error: "
                                   : level == SYNC_LOG_WARN ? "warning: "
                                                            : "",
            line);
}

/* A failure as JSON: null when there is none. */
static void put_failure_json(cli_ctx *ctx, const sync_failure *f)
{
    if (f->kind == SYNC_FAILURE_NONE) {
        fputs("null", ctx->out);
        return;
    }
    FILE *out = ctx->out;
    fprintf(out, "{\"kind\": \"%s\", \"http_status\": %d, \"error_code\": ",
            sync_failure_name(f->kind), f->http_status);
    cli_put_json_string(out, f->error_code);
    fputs(", \"msg\": ", out);
    cli_put_json_string(out, f->server_msg);
    fputs(", \"operation_id\": ", out);
    cli_put_json_string(out, f->operation_id);
    if (f->retry_after_s >= 0)
        fprintf(out, ", \"retry_after_s\": %.0f", f->retry_after_s);
    else
        fputs(", \"retry_after_s\": null", out);
    if (f->has_object) {
        fprintf(out, ", \"object_kind\": \"%s\", \"object_id\": ",
                kind_get(f->object_kind)->noun);
        cli_put_json_string(out, f->object_id);
    }
    fputc('}', out);
}

static void put_report_json(cli_ctx *ctx, const sync_report *r)
{
    fprintf(ctx->out,
            "{\"converged\": %s, \"created\": %zu, \"deleted\": %zu, \"failed\": %zu, "
            "\"retried\": %zu, \"pulled_rules\": %zu, \"pulled_creds\": %zu, "
            "\"remote_added\": %zu, \"remote_deleted\": %zu, \"refused\": %zu, "
            "\"adopted\": %zu, \"orphans_deleted\": %zu, \"pending\": %zu, "
            "\"updated\": %zu, \"conflicts\": %zu, \"attention\": %zu, "
            "\"auth_failed\": %s, \"error\": ",
            r->converged ? "true" : "false", r->created, r->deleted, r->failed, r->retried,
            r->pulled_rules, r->pulled_creds, r->remote_added, r->remote_deleted, r->refused,
            r->adopted, r->orphans_deleted, r->pending, r->updated, r->conflicts,
            r->attention, r->auth_failed ? "true" : "false");
    cli_put_json_string(ctx->out, r->last_error);
    fputs(", \"failure\": ", ctx->out);
    put_failure_json(ctx, &r->failure);
    fputs(", \"row_failure\": ", ctx->out);
    put_failure_json(ctx, &r->row_failure);
    fputs("}\n", ctx->out);
}

/* What the typed failure adds to the error line: "failure: rejected (HTTP 400,
 * error_code bad_cidr, operation op_…, listing rules)". */
static void put_failure_human(cli_ctx *ctx, const sync_failure *f)
{
    if (f->kind == SYNC_FAILURE_NONE)
        return;
    FILE *out = ctx->err;
    const char *sep = " (";
    fprintf(out, "%s: failure: %s", ctx->program, sync_failure_name(f->kind));
    if (f->http_status) {
        fprintf(out, "%sHTTP %d", sep, f->http_status);
        sep = ", ";
    }
    if (f->error_code[0]) {
        fprintf(out, "%serror_code %s", sep, f->error_code);
        sep = ", ";
    }
    if (f->operation_id[0]) {
        fprintf(out, "%soperation %s", sep, f->operation_id);
        sep = ", ";
    }
    if (f->kind == SYNC_FAILURE_RATE_LIMITED && f->retry_after_s >= 0) {
        fprintf(out, "%sretry after %.0f s", sep, f->retry_after_s);
        sep = ", ";
    }
    if (f->has_object && f->object_id[0]) {
        fprintf(out, "%s%s %s", sep, kind_get(f->object_kind)->noun, f->object_id);
        sep = ", ";
    } else if (f->has_object) {
        fprintf(out, "%slisting %s", sep, kind_get(f->object_kind)->plural);
        sep = ", ";
    }
    fputs(sep[0] == ',' ? ")\n" : "\n", out);
}

static void put_report(cli_ctx *ctx, const sync_report *r)
{
    fprintf(ctx->out, "sync: %zu created, %zu deleted, %zu failed", r->created, r->deleted,
            r->failed);
    if (r->updated)
        fprintf(ctx->out, "; %zu updated", r->updated);
    if (r->conflicts)
        fprintf(ctx->out, "; %zu new conflicts (resolve them: see '%s plan')", r->conflicts,
                ctx->program);
    if (r->pulled_rules || r->pulled_creds)
        fprintf(ctx->out, "; remote has %zu rules, %zu credentials", r->pulled_rules,
                r->pulled_creds);
    if (r->remote_added || r->remote_deleted)
        fprintf(ctx->out, "; %zu new there, %zu deleted there", r->remote_added,
                r->remote_deleted);
    if (r->refused)
        fprintf(ctx->out, "; %zu remote objects refused (see the warnings)", r->refused);
    if (r->adopted)
        fprintf(ctx->out, "; %zu unsure creates found remotely", r->adopted);
    if (r->orphans_deleted)
        fprintf(ctx->out, "; %zu credentials without their token deleted and queued again",
                r->orphans_deleted);
    fputc('\n', ctx->out);
    if (r->pending)
        fprintf(ctx->out, "%zu rows still pending or failed: see '%s plan'\n", r->pending,
                ctx->program);
}

/* ---- running a sync ---- */

static error_code make_client(cli_ctx *ctx, api_client **client, error_info *e)
{
    const config *cfg = &ctx->cfg;
    if (!config_remote_configured(cfg))
        return error_set(e, ERROR_CONFIG,
                         "no remote configured: set RAMPART_API_URL and RAMPART_API_KEY (or "
                         "api_url/api_key in the config file), or try '%s --sandbox sync'",
                         ctx->program);
    api_config ac = {
        .base_url = config_get(cfg, CONFIG_API_URL),
        .api_key = config_get(cfg, CONFIG_API_KEY),
        .version_header = config_get(cfg, CONFIG_VERSION_HEADER),
    };
    return api_client_new(&ac, client, e);
}

int cli_sync_now(cli_ctx *ctx, bool push, bool pull, bool verbose, bool json,
                 sync_report *report)
{
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    api_client *client = NULL;
    error_info e = {0};
    if (make_client(ctx, &client, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    sync_view view = {.ctx = ctx, .tty = isatty(fileno(ctx->err)) == 1, .verbose = verbose};
    sync_options opt = {
        .push = push,
        .pull = pull,
        .rate_per_min = atoi(config_get(&ctx->cfg, CONFIG_RATE)),
        .on_progress = on_progress,
        .on_log = on_log,
        .cb_ctx = &view,
    };
    memset(report, 0, sizeof *report);
    error_code rc = sync_run(st, api_ops(), client, &opt, report, &e);
    api_client_free(client);
    clear_line(&view);
    if (json)
        put_report_json(ctx, report);
    else if (rc == ERROR_OK)
        put_report(ctx, report);
    if (rc != ERROR_OK) {
        /* A refused key is a configuration problem (2); anything else (another
         * sync running, remote unreachable) leaves the cache not converged (4). */
        int code = cli_fail(ctx, &e);
        if (!json)
            put_failure_human(ctx, &report->failure);
        return rc == ERROR_CONFIG ? code : CLI_EXIT_NOT_CONVERGED;
    }
    return report->converged ? CLI_EXIT_OK : CLI_EXIT_NOT_CONVERGED;
}

static int sync_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool push_only = false, pull_only = false, verbose = false, json = false;
    const char *rate = NULL;
    const cli_opt opts[] = {
        {"push-only", CLI_OPT_FLAG, &push_only}, {"pull-only", CLI_OPT_FLAG, &pull_only},
        {"rate", CLI_OPT_STRING, &rate},         {"verbose", CLI_OPT_FLAG, &verbose},
        {"json", CLI_OPT_FLAG, &json},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &sync_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    if (push_only && pull_only)
        return cli_usage_error(ctx, path, "--push-only and --pull-only exclude each other");
    error_info e = {0};
    if (rate && config_set(&ctx->cfg, CONFIG_RATE, rate, CONFIG_SRC_FLAG, &e) != ERROR_OK) {
        error_prefix(&e, "--rate");
        return cli_fail(ctx, &e);
    }
    sync_report report;
    return cli_sync_now(ctx, !pull_only, !push_only, verbose, json, &report);
}

/* ---- plan ---- */

typedef struct plan_view {
    cli_ctx *ctx;
    bool json;
    size_t count[4]; /* + - ! ~ */
} plan_view;

static size_t sign_index(char sign)
{
    return sign == '+' ? 0 : sign == '-' ? 1 : sign == '!' ? 2 : 3;
}

/* The columns that name a row in a plan, after its kind and id: fields of the
 * kind's descriptor by name (kind_value), each padded to `width` and cut at `max`
 * display columns (0: none), `empty` standing for an empty value. */
typedef struct plan_column {
    const char *field;
    int width, max;
    const char *empty;
} plan_column;

enum { PLAN_COLUMNS_MAX = 3 };

static const plan_column plan_columns[MODEL_KIND_COUNT][PLAN_COLUMNS_MAX] = {
    [MODEL_KIND_RULE] = {{"action", 5, 0, ""}, {"cidr", 18, 0, ""}, {"ip_policy_id", 0, 0, ""}},
    [MODEL_KIND_CRED] = {{"description", 30, 30, "-"}},
};

/* One path for every kind: the kind's noun cut to four ("rule", "cred"), the id,
 * then the kind's columns, separated by one space and ended by two. */
static void put_plan_row(cli_ctx *ctx, const model_object *obj)
{
    const kind_desc *d = kind_get(obj->kind);
    fprintf(ctx->out, "%-4.4s %-33s ", d->noun, model_object_id(obj));
    const plan_column *cols = plan_columns[d->kind];
    for (size_t i = 0; i < PLAN_COLUMNS_MAX && cols[i].field; i++) {
        const char *value = kind_value(obj, cols[i].field, NULL, 0);
        if (i > 0)
            fputc(' ', ctx->out);
        cli_put_cell(ctx->out, value[0] ? value : cols[i].empty, cols[i].width, cols[i].max);
    }
    fputs("  ", ctx->out);
}

static void put_plan_human(cli_ctx *ctx, const sync_plan_item *it)
{
    fprintf(ctx->out, "%c ", it->sign);
    put_plan_row(ctx, it->object);
    cli_put_cell(ctx->out, it->why, 0, 0);
    fputc('\n', ctx->out);
}

static void put_plan_json(plan_view *v, const sync_plan_item *it, size_t index)
{
    const kind_desc *d = kind_get(it->object->kind);
    char *obj = d->encode(it->object, CODEC_WITH_STATE);
    cli_json_array_sep(v->ctx, index);
    fprintf(v->ctx->out, "{\"action\": \"%c\", \"kind\": \"%s\", \"why\": ", it->sign,
            d->noun);
    cli_put_json_string(v->ctx->out, it->why);
    fprintf(v->ctx->out, ", \"object\": %s}", obj ? obj : "null");
    free(obj);
}

static error_code plan_item(void *ctxp, const sync_plan_item *it, error_info *err)
{
    (void)err;
    plan_view *v = ctxp;
    size_t index = v->count[0] + v->count[1] + v->count[2] + v->count[3];
    if (v->json)
        put_plan_json(v, it, index);
    else
        put_plan_human(v->ctx, it);
    v->count[sign_index(it->sign)]++;
    return ERROR_OK;
}

static int plan_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    plan_view v = {.ctx = ctx};
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &v.json}};
    int first, rc;
    if (!cli_parse(ctx, path, &plan_command, opts, 1, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    error_info e = {0};
    if (sync_plan(st, plan_item, &v, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    size_t total = v.count[0] + v.count[1] + v.count[2] + v.count[3];
    if (v.json) {
        cli_json_array_end(ctx, total);
        return CLI_EXIT_OK;
    }
    if (total == 0)
        fprintf(ctx->out, "Nothing to do: the cache matches the last sync.\n");
    else
        fprintf(ctx->out,
                "\nPlan: %zu to create, %zu to delete, %zu need attention, %zu to change "
                "or changed remotely.\n",
                v.count[0], v.count[1], v.count[2], v.count[3]);
    return CLI_EXIT_OK;
}

int cli_sync(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return sync_cmd(ctx, path, argc, argv);
}

int cli_plan(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return plan_cmd(ctx, path, argc, argv);
}

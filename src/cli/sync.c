/* `rampart sync` and `rampart plan`: push the queue, pull the remote, and show
 * beforehand what a sync would do. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_follower.h"
#include "cli_object.h"
#include "cli_sync.h"
#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/sync.h"
#include "rampart/termsafe.h"

static int sync_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);
static int plan_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command sync_command = {
    "sync", sync_cmd,
    "[--push-only|--pull-only] [--rate N] [--window S] [--share PCT] [--timeout S] "
    "[--progress] [--verbose] [--json]",
    "Push queued changes to the remote API, then pull its complete listings.",
    "Options:\n"
    "  --push-only    only send the queue (creates, deletes, edits)\n"
    "  --pull-only    only refresh the cache from the remote\n"
    "  --rate N       the account's request budget per window (default: setting rate,\n"
    "                 120, the production limit; 0: unpaced)\n"
    "  --window S     the budget's rolling window in seconds (default: setting window,\n"
    "                 60)\n"
    "  --share PCT    the percent of the budget this sync uses, spread evenly over the\n"
    "                 window; the rest is left to the account's other clients\n"
    "                 (default: setting share, 80)\n"
    "  --timeout S    stop the whole sync after S seconds, between requests; what is\n"
    "                 left waits for the next sync (default: setting timeout, 0: none)\n"
    "  --progress     show the progress line on standard error even when it is not a\n"
    "                 terminal (one line per change; on a terminal it is always shown)\n"
    "  --verbose      a line per request settled\n"
    "  --json         one JSON object per line on standard output: progress events\n"
    "                 {\"event\": \"progress\"|\"wait\"|\"log\", ...} while it runs, then\n"
    "                 the report {\"event\": \"report\", counts, \"failure\" and\n"
    "                 \"row_failure\": null or {kind, http_status, error_code, msg,\n"
    "                 operation_id, retry_after_s, object_kind, object_id}}, always\n"
    "                 the last line (see rampart(1))\n"
    "Every PATCH and DELETE goes right after a look at its object (a GET, in the same\n"
    "budget slot): a change made remotely since this cache saw it is a conflict\n"
    "('rampart plan' shows it, 'resolve' settles it), never overwritten or deleted.\n"
    "On a terminal a progress line shows the phase, done/total, the rate, the ETA and,\n"
    "while the queue waits, a countdown and why (budget, rate limited 429, server\n"
    "error 503 ...). A sync that stops early (--timeout, 429s for give_up_windows\n"
    "windows, the remote unreachable) says what it did, what is left and why.\n"
    "On a follower (read_only = true) it only pulls, asking each page with the\n"
    "entity tag kept from the last pull (If-None-Match: an unchanged page is a 304);\n"
    "--push-only is refused there.\n"
    "Exit status: 0 when everything converged, 4 when rows are still pending or\n"
    "failed (see 'rampart plan') or the sync stopped early, 2 when no remote is\n"
    "configured or the API key was refused.\n",
    0, 0};

static const cli_command plan_command = {
    "plan", plan_cmd, "[--json] [--detailed-exitcode]",
    "Show what the next sync would do; nothing is sent.",
    "Lines start with + (create), - (delete), ~ (a change: an edit to send, or\n"
    "deleted remotely and kept here for review) or ! (needs attention: failed,\n"
    "orphaned, outcome unknown, or a conflict to resolve).\n\n"
    "Options:\n"
    "  --json               a JSON array: {action, kind, why, object} per line\n"
    "  --detailed-exitcode  exit 0 when there is nothing to do, 2 when the plan has\n"
    "                       a line (changes queued, or rows that need attention), 1\n"
    "                       on any error (as Terraform's); without it: 0, or the\n"
    "                       error's own status\n",
    0, 0};

/* ---- the report ---- */

static void put_report_json(cli_ctx *ctx, const sync_report *r)
{
    fprintf(ctx->out,
            "{\"event\": \"report\", \"converged\": %s, \"created\": %zu, \"deleted\": %zu, \"failed\": %zu, "
            "\"retried\": %zu, \"pulled_rules\": %zu, \"pulled_creds\": %zu, "
            "\"remote_added\": %zu, \"remote_deleted\": %zu, \"refused\": %zu, "
            "\"adopted\": %zu, \"orphans_deleted\": %zu, \"pending\": %zu, "
            "\"updated\": %zu, \"conflicts\": %zu, \"attention\": %zu, \"others\": %zu, "
            "\"auth_failed\": %s, \"error\": ",
            r->converged ? "true" : "false", r->created, r->deleted, r->failed, r->retried,
            r->pulled_rules, r->pulled_creds, r->remote_added, r->remote_deleted, r->refused,
            r->adopted, r->orphans_deleted, r->pending, r->updated, r->conflicts,
            r->attention, r->others, r->auth_failed ? "true" : "false");
    cli_put_json_string(ctx->out, r->last_error);
    fputs(", \"failure\": ", ctx->out);
    cli_sync_put_failure_json(ctx->out, &r->failure);
    fputs(", \"row_failure\": ", ctx->out);
    cli_sync_put_failure_json(ctx->out, &r->row_failure);
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
    /* The error code and operation id are the remote's words. */
    fprintf(out, "%s: failure: %s", ctx->program, sync_failure_name(f->kind));
    if (f->http_status) {
        fprintf(out, "%sHTTP %d", sep, f->http_status);
        sep = ", ";
    }
    if (f->error_code[0]) {
        termsafe_fprintf(out, "%serror_code %s", sep, f->error_code);
        sep = ", ";
    }
    if (f->operation_id[0]) {
        termsafe_fprintf(out, "%soperation %s", sep, f->operation_id);
        sep = ", ";
    }
    if (f->kind == SYNC_FAILURE_RATE_LIMITED && f->retry_after_s >= 0) {
        fprintf(out, "%sretry after %.0f s", sep, f->retry_after_s);
        sep = ", ";
    }
    if (f->has_object && f->object_id[0]) {
        termsafe_fprintf(out, "%s%s %s", sep, kind_get(f->object_kind)->noun, f->object_id);
        sep = ", ";
    } else if (f->has_object) {
        fprintf(out, "%slisting %s", sep, kind_get(f->object_kind)->plural);
        sep = ", ";
    }
    fputs(sep[0] == ',' ? ")\n" : "\n", out);
}

/* The report's line; `pending_line`: and the rows still pending (a run that
 * stopped early says that on stderr instead). */
static void put_report(cli_ctx *ctx, const sync_report *r, bool pending_line)
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
    if (r->pending && pending_line)
        fprintf(ctx->out, "%zu rows still pending or failed: see '%s plan'\n", r->pending,
                ctx->program);
    if (r->others)
        fprintf(ctx->out, "%zu other change%s queued or waiting: '%s sync' sends %s, '%s "
                "plan' shows %s\n", r->others, r->others == 1 ? " is" : "s are", ctx->program,
                r->others == 1 ? "it" : "them", ctx->program, r->others == 1 ? "it" : "them");
}

/* A run that stopped before its end: the engine's sentence (last_error) says why,
 * what was done and what is left; this line adds the rows left by state and what
 * to do next, from the typed failure. */
static void put_stopped_early(cli_ctx *ctx, const sync_report *r, double deadline_s,
                              double elapsed_s)
{
    const sync_failure *f = &r->failure;
    fprintf(ctx->err,
            "%s: sync stopped early: %zu rows pending, %zu need attention, nothing lost; ",
            ctx->program, r->pending, r->attention);
    switch (f->kind) {
    case SYNC_FAILURE_TIMED_OUT:
        if (deadline_s > 0 && elapsed_s >= deadline_s)
            fprintf(ctx->err,
                    "its deadline of %.0f s passed: run '%s sync' again (or give it more "
                    "with --timeout or the timeout setting)\n",
                    deadline_s, ctx->program);
        else
            fprintf(ctx->err, "a reply was too slow: run '%s sync' again\n", ctx->program);
        break;
    case SYNC_FAILURE_RATE_LIMITED:
        fprintf(ctx->err,
                "another client spends the account's budget: run '%s sync' again later (the "
                "give_up_windows setting waits longer)\n",
                ctx->program);
        break;
    case SYNC_FAILURE_UNREACHABLE:
        fprintf(ctx->err, "run '%s sync' again once the remote can be reached\n", ctx->program);
        break;
    default:
        fprintf(ctx->err, "see '%s plan', then run '%s sync' again\n", ctx->program,
                ctx->program);
        break;
    }
}

/* ---- running a sync ---- */

void cli_sync_settings(const config *cfg, sync_options *opt, api_config *api)
{
    if (opt) {
        opt->rate_per_min = 0;
        opt->budget = (sync_budget){
            .requests = (int)config_number(cfg, CONFIG_RATE),
            .window_s = (double)config_number(cfg, CONFIG_WINDOW),
            .share = (double)config_number(cfg, CONFIG_SHARE) / 100.0,
            .give_up_windows = (double)config_number(cfg, CONFIG_GIVE_UP),
        };
        opt->deadline_s = (double)config_number(cfg, CONFIG_TIMEOUT);
        opt->max_backoff_s = (double)config_number(cfg, CONFIG_MAX_BACKOFF);
        opt->listing_max = (size_t)config_number(cfg, CONFIG_LISTING_MAX);
        opt->rotate_quiet_s = config_number(cfg, CONFIG_ROTATE_QUIET);
        opt->rotate_keep_s = config_number(cfg, CONFIG_ROTATE_KEEP);
    }
    if (api) {
        long bps = config_number(cfg, CONFIG_LOW_SPEED);
        api->low_speed_bps = bps > 0 ? bps : 1;
        api->low_speed_s = config_number(cfg, CONFIG_LOW_SPEED_TIME);
    }
}

double cli_sync_pace(const config *cfg)
{
    sync_options opt = {.push = true};
    cli_sync_settings(cfg, &opt, NULL);
    double share = opt.budget.share > 0 ? opt.budget.share : 0.8;
    double window = opt.budget.window_s > 0 ? opt.budget.window_s : 60;
    return opt.budget.requests > 0 ? opt.budget.requests * share / window : 0;
}

size_t cli_sync_listing_pages(store *st, size_t more_rules)
{
    size_t rules = 0, creds = 0;
    error_info e = {0};
    store_count(st, MODEL_KIND_RULE, NULL, &rules, &e);
    store_count(st, MODEL_KIND_CRED, NULL, &creds, &e);
    return (rules + more_rules) / 100 + 1 + creds / 100 + 1;
}

void cli_duration(char *buf, size_t size, double s)
{
    if (s < 60)
        snprintf(buf, size, "%.0fs", s < 1 ? 1 : s);
    else if (s < 3600)
        snprintf(buf, size, "%.0fm%02.0fs", (double)(long)(s / 60),
                 s - 60 * (double)(long)(s / 60));
    else
        snprintf(buf, size, "%.0fh%02.0fm", (double)(long)(s / 3600),
                 (s - 3600 * (double)(long)(s / 3600)) / 60);
}

/* The remote and its key, before the cache is opened: a profile whose key
 * command fails gets no empty cache of its own. A key_command runs now, the first
 * moment the key is needed, not before. */
static error_code remote_ready(cli_ctx *ctx, error_info *e)
{
    if (!config_remote_configured(&ctx->cfg) && ctx->cfg.key_withheld)
        return error_set(e, ERROR_CONFIG,
                         "profile %s sets its own api_url but no key: give it api_key or "
                         "key_command in its [profile.%s] section (the top level's key, or "
                         "RAMPART_API_KEY, is never sent to another profile's remote)",
                         config_profile(&ctx->cfg), config_profile(&ctx->cfg));
    if (!config_remote_configured(&ctx->cfg))
        return error_set(e, ERROR_CONFIG,
                         "no remote configured: set RAMPART_API_URL and RAMPART_API_KEY (or "
                         "api_url/api_key in the config file), or try '%s --sandbox sync'",
                         ctx->program);
    return config_resolve_key(&ctx->cfg, false, e);
}

/* A follower's client sends conditional GETs, its pages kept in the cache
 * (`pages` must outlive the client). */
static error_code make_client(cli_ctx *ctx, api_page_cache *pages, api_client **client,
                              error_info *e)
{
    const config *cfg = &ctx->cfg;
    api_config ac = {
        .base_url = config_get(cfg, CONFIG_API_URL),
        .api_key = config_get(cfg, CONFIG_API_KEY),
        .version_header = config_get(cfg, CONFIG_VERSION_HEADER),
    };
    cli_sync_settings(cfg, NULL, &ac);
    if (cli_follower(ctx) && ctx->st) {
        cli_follower_pages(ctx->st, pages);
        ac.pages = pages;
    }
    return api_client_new(&ac, client, e);
}

int cli_sync_run(cli_ctx *ctx, const cli_sync_args *a, sync_report *report)
{
    memset(report, 0, sizeof *report);
    error_info e = {0};
    if (remote_ready(ctx, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    api_client *client = NULL;
    api_page_cache pages;
    if (make_client(ctx, &pages, &client, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    cli_sync_view view;
    cli_sync_view_init(&view, ctx, a->progress, a->verbose, a->json);
    sync_options opt = {
        .push = a->push && !cli_follower(ctx), /* a follower only pulls */
        .pull = a->pull,
        .follower = cli_follower(ctx),
        .on_progress = cli_sync_view_progress,
        .on_log = cli_sync_view_log,
        .cb_ctx = &view,
        /* Another process syncing this cache (the console, a cron job) sends the
         * same queue: wait for it (up to --timeout), then see what is left. */
        .wait_for_lock = true,
        .scoped = a->scoped,
        .only = a->only,
        .only_count = a->only_count,
        .rotate_exec_stderr = true, /* a rotation's command: its output on stderr */
    };
    cli_sync_settings(&ctx->cfg, &opt, NULL);
    error_code rc = sync_run(st, api_ops(), client, &opt, report, &e);
    api_client_free(client);
    cli_sync_view_clear(&view);
    double elapsed = cli_sync_clock() - view.started;
    bool stopped = report->failure.kind != SYNC_FAILURE_NONE && !report->cancelled;
    if (a->json)
        put_report_json(ctx, report);
    else if (rc == ERROR_OK || stopped)
        put_report(ctx, report, !stopped);
    fflush(ctx->out);
    if (rc != ERROR_OK || stopped) {
        /* A refused key is a configuration problem (2); anything else (a deadline,
         * another sync running, remote unreachable) leaves the cache not converged
         * (4). */
        int code = CLI_EXIT_NOT_CONVERGED;
        if (rc != ERROR_OK) {
            code = cli_fail(ctx, &e);
        } else if (report->last_error[0]) {
            fprintf(ctx->err, "%s: ", ctx->program);
            cli_put_cell(ctx->err, report->last_error, 0, 0);
            fputc('\n', ctx->err);
        }
        if (!a->json) {
            put_failure_human(ctx, &report->failure);
            if (stopped && report->failure.kind != SYNC_FAILURE_AUTH)
                put_stopped_early(ctx, report, opt.deadline_s, elapsed);
        }
        return rc == ERROR_CONFIG ? code : CLI_EXIT_NOT_CONVERGED;
    }
    return report->converged ? CLI_EXIT_OK : CLI_EXIT_NOT_CONVERGED;
}

int cli_sync_now(cli_ctx *ctx, bool push, bool pull, bool verbose, bool json,
                 sync_report *report)
{
    cli_sync_args a = {.push = push, .pull = pull, .verbose = verbose, .json = json};
    return cli_sync_run(ctx, &a, report);
}

/* A whole-number flag into its setting: the setting's own check, under the flag's
 * name. */
static bool set_flag(cli_ctx *ctx, const char *flag, const char *value, config_key key,
                     int *exit_code)
{
    error_info e = {0};
    if (!value || config_set(&ctx->cfg, key, value, CONFIG_SRC_FLAG, &e) == ERROR_OK)
        return true;
    error_prefix(&e, "%s", flag);
    *exit_code = cli_fail(ctx, &e);
    return false;
}

static int sync_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    cli_sync_args a = {0};
    bool push_only = false, pull_only = false;
    const char *rate = NULL, *window = NULL, *share = NULL, *timeout = NULL;
    const cli_opt opts[] = {
        {"push-only", CLI_OPT_FLAG, &push_only}, {"pull-only", CLI_OPT_FLAG, &pull_only},
        {"rate", CLI_OPT_STRING, &rate},         {"window", CLI_OPT_STRING, &window},
        {"share", CLI_OPT_STRING, &share},       {"timeout", CLI_OPT_STRING, &timeout},
        {"verbose", CLI_OPT_FLAG, &a.verbose},   {"json", CLI_OPT_FLAG, &a.json},
        {"progress", CLI_OPT_FLAG, &a.progress},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &sync_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    if (push_only && pull_only)
        return cli_usage_error(ctx, path, "--push-only and --pull-only exclude each other");
    if (push_only && cli_follower(ctx))
        return cli_follower_refuse(ctx, path);
    if (!set_flag(ctx, "--rate", rate, CONFIG_RATE, &rc) ||
        !set_flag(ctx, "--window", window, CONFIG_WINDOW, &rc) ||
        !set_flag(ctx, "--share", share, CONFIG_SHARE, &rc) ||
        !set_flag(ctx, "--timeout", timeout, CONFIG_TIMEOUT, &rc))
        return rc;
    a.push = !pull_only;
    a.pull = !push_only;
    sync_report report;
    return cli_sync_run(ctx, &a, &report);
}

/* ---- plan ---- */

/* What the next sync sends, by method (each DELETE and PATCH after its look). */
typedef struct plan_requests {
    size_t post, del, patch, get;
    bool settle;   /* a create of unknown outcome: a listing comes first */
} plan_requests;

typedef struct plan_view {
    cli_ctx *ctx;
    bool json;
    size_t count[4]; /* + - ! ~ */
    plan_requests req;
} plan_view;

/* The requests a row costs the next sync. A credential's create is followed by
 * the look and PATCH that take its creation marker away. */
static void count_requests(plan_requests *r, const model_object *obj)
{
    bool marked = kind_get(obj->kind)->has_token;
    switch (model_object_state(obj)) {
    case MODEL_STATE_ORPHANED: /* its remote copy deleted, then created again */
        r->del++, r->get++;
        /* fall through */
    case MODEL_STATE_NEW:
        r->post++;
        r->patch += marked, r->get += marked;
        break;
    case MODEL_STATE_DELETING:
        r->del++, r->get++;
        break;
    case MODEL_STATE_EDITED:
        r->patch++, r->get++;
        break;
    case MODEL_STATE_CREATING:
    case MODEL_STATE_UNKNOWN:
        r->settle = true;
        break;
    default: /* failed, conflict, remote_deleted: nothing until someone acts */
        break;
    }
}

/* "Requests: 5 (1 POST, 1 DELETE, 1 PATCH, 2 GET), then one listing of about 12
 * pages: about 11s at the budget's pace (1.6 req/s)." */
static void put_plan_requests(cli_ctx *ctx, const plan_requests *r, store *st)
{
    size_t n = r->post + r->del + r->patch + r->get;
    size_t pages = cli_sync_listing_pages(st, 0); /* the creates are cached already */
    size_t listings = r->settle ? 2 : 1;
    fprintf(ctx->out, "Requests: %zu (%zu POST, %zu DELETE, %zu PATCH, %zu GET), then %s of "
            "about %zu pages", n, r->post, r->del, r->patch, r->get,
            listings == 2 ? "a listing before (creates of unknown outcome) and one after, each"
                          : "one listing",
            pages);
    double pace = cli_sync_pace(&ctx->cfg);
    if (pace > 0) {
        char took[32];
        cli_duration(took, sizeof took, (double)(n + listings * pages) / pace);
        fprintf(ctx->out, ": about %s at the budget's pace (%.1f req/s)", took, pace);
    }
    fputs(".\n", ctx->out);
}

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
    fprintf(ctx->out, "%-4.4s ", d->noun);
    cli_put_cell(ctx->out, model_object_id(obj), 33, 0);
    fputc(' ', ctx->out);
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
    count_requests(&v->req, it->object);
    return ERROR_OK;
}

/* --detailed-exitcode: a plan with a line exits so; an error always exits 1. */
enum { PLAN_EXIT_CHANGES = 2 };

/* Whether argv holds --detailed-exitcode before "--": known before parsing, so a
 * usage error of the same command line exits 1 too. */
static bool detailed_exitcode(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--detailed-exitcode") == 0)
            return true;
    }
    return false;
}

/* The plan; *lines counts what it listed. */
static int plan_run(cli_ctx *ctx, const char *path, int argc, char **argv, size_t *lines)
{
    plan_view v = {.ctx = ctx};
    bool detailed = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &v.json},
                            {"detailed-exitcode", CLI_OPT_FLAG, &detailed}};
    int first, rc;
    /* main leaves it to the plan, for its exit status */
    if (ctx->config_error.code && !ctx->describe)
        return cli_fail(ctx, &ctx->config_error);
    if (!cli_parse(ctx, path, &plan_command, opts, 2, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    error_info e = {0};
    if (sync_plan(st, plan_item, &v, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    /* Rotations: a retirement due is a delete (its look and DELETE); one waiting
     * out its grace period is shown, not a change. */
    size_t index = v.count[0] + v.count[1] + v.count[2] + v.count[3], due = 0, rotating = 0;
    if (cli_rotation_plan(ctx, st, v.json, true, &index, &due, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    v.count[1] += due, v.req.del += due, v.req.get += due;
    size_t total = v.count[0] + v.count[1] + v.count[2] + v.count[3];
    *lines = total;
    if (v.json) {
        if (cli_rotation_plan(ctx, st, true, false, &index, &rotating, &e) != ERROR_OK)
            return cli_fail(ctx, &e);
        cli_json_array_end(ctx, total + rotating);
        return CLI_EXIT_OK;
    }
    if (total == 0)
        fprintf(ctx->out, "Nothing to do: the cache matches the last sync.\n");
    else
    {
        fprintf(ctx->out,
                "\nPlan: %zu to create, %zu to delete, %zu need attention, %zu to change "
                "or changed remotely.\n",
                v.count[0], v.count[1], v.count[2], v.count[3]);
        put_plan_requests(ctx, &v.req, st);
    }
    if (cli_rotation_plan(ctx, st, false, false, &index, &rotating, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return CLI_EXIT_OK;
}

int cli_sync(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return sync_cmd(ctx, path, argc, argv);
}

static int plan_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    size_t lines = 0;
    int rc = plan_run(ctx, path, argc, argv, &lines);
    if (!detailed_exitcode(argc, argv))
        return rc;
    if (rc != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    return lines > 0 ? PLAN_EXIT_CHANGES : CLI_EXIT_OK;
}

int cli_plan(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return plan_cmd(ctx, path, argc, argv);
}

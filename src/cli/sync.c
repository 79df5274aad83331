/* `rampart sync` and `rampart plan`: push the queue, pull the remote, and show
 * beforehand what a sync would do. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_follower.h"
#include "cli_impact.h"
#include "cli_object.h"
#include "cli_sync.h"
#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/duration.h"
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
    .min_operands = 0, .max_operands = 0};

static const cli_command plan_command = {
    "plan", plan_cmd,
    "[-o table|json|yaml] [--json] [--detailed-exitcode] [--impact LOG... [--policy ipp_ID] "
    "[--ip-field N] [--ip-key PATH] [--time-key PATH] [--log-format F] [--since DURATION] "
    "[--max-addresses N] [--fail-on-lockout] [-o table|json|csv]]",
    "Show what the next sync would do; nothing is sent.",
    "Lines start with + (create), - (delete), ~ (a change: an edit to send, or\n"
    "deleted remotely and kept here for review) or ! (needs attention: failed,\n"
    "orphaned, outcome unknown, or a conflict to resolve). Then the counts, and the\n"
    "requests the sync sends (by method, and the listing it pulls) with the time\n"
    "they take at the budget's pace (settings rate, window, share).\n\n"
    "Options:\n"
    "  -o, --output FORMAT  table (the default: the form above), json (one JSON\n"
    "                       object: items, an array of {action, kind, why,\n"
    "                       object}; counts; requests; listings, listing_pages,\n"
    "                       pace_per_s and budget_s) or yaml (the same as YAML)\n"
    "  --json               -o json\n"
    "  --detailed-exitcode  exit 0 when there is nothing to do, 2 when the plan has\n"
    "                       a line (changes queued, or rows that need attention), 1\n"
    "                       on any error (as Terraform's); without it: 0, or the\n"
    "                       error's own status\n"
    "  --policy ID          with --impact: the IP policy whose decisions to compare\n\n"
    CLI_IMPACT_HELP
    "With --impact, further operands are logs too; -o json|csv prints the impact's\n"
    "document only. Before: synced rules, the bases of edited ones, rules being\n"
    "deleted, the remote side of a conflict; after: queued creates (unknown and\n"
    "failed ones too) and edits, without queued deletes.\n"
    "Exit status with --impact: 1 on an error, or when no line was counted or the\n"
    "address cap was hit; 6 with --fail-on-lockout when an address would newly be\n"
    "denied (before --detailed-exitcode's 2).\n",
    .min_operands = 0, .max_operands = -1};

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

/* The report's line (sync_report_summary, the console's words too); with
 * `pending_line`, where to look at what is left (a run that stopped early says
 * that on stderr instead). */
static void put_report(cli_ctx *ctx, const sync_report *r, bool pending_line)
{
    char summary[1024];
    fprintf(ctx->out, "sync: %s\n", sync_report_summary(r, summary, sizeof summary));
    if ((r->pending || r->attention) && pending_line)
        fprintf(ctx->out, "what is left: see '%s plan'\n", ctx->program);
    if (r->conflicted && pending_line)
        fprintf(ctx->out, "resolve a conflict with '%s rules resolve ID --keep-local' (or "
                "--take-remote; 'creds resolve' for a credential)\n", ctx->program);
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
    bool document;   /* json or yaml: the items go into the document's array */
    bool quiet;      /* --impact -o json|csv: the impact's document alone */
    size_t count[4]; /* + - ! ~ */
    plan_requests req;
} plan_view;

/* What the next sync costs: its requests, the listings it pulls, and the time
 * all that takes at the budget's pace. */
typedef struct plan_cost {
    size_t requests;  /* post + del + patch + get */
    size_t listings;  /* 1, or 2 with a listing before (creates of unknown outcome) */
    size_t pages;     /* of each listing, about */
    double pace;      /* requests per second the budget allows; 0: unpaced */
    double seconds;   /* at that pace; 0 when unpaced */
} plan_cost;

/* The requests a row costs the next sync. A credential's create is followed by
 * the look and PATCH that take its creation marker away. */
static void count_requests(plan_requests *r, const model_object *obj)
{
    bool marked = kind_get(obj->kind)->traits & KIND_MARKED;
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

static void plan_cost_of(cli_ctx *ctx, const plan_requests *r, store *st, plan_cost *c)
{
    c->requests = r->post + r->del + r->patch + r->get;
    c->pages = cli_sync_listing_pages(st, 0); /* the creates are cached already */
    c->listings = r->settle ? 2 : 1;
    c->pace = cli_sync_pace(&ctx->cfg);
    c->seconds = c->pace > 0 ? (double)(c->requests + c->listings * c->pages) / c->pace : 0;
}

/* "Requests: 5 (1 POST, 1 DELETE, 1 PATCH, 2 GET), then one listing of about 12
 * pages: about 11s at the budget's pace (1.6 req/s)." */
static void put_plan_requests(cli_ctx *ctx, const plan_requests *r, const plan_cost *c)
{
    fprintf(ctx->out, "Requests: %zu (%zu POST, %zu DELETE, %zu PATCH, %zu GET), then %s of "
            "about %zu pages", c->requests, r->post, r->del, r->patch, r->get,
            c->listings == 2 ? "a listing before (creates of unknown outcome) and one after, "
                               "each"
                             : "one listing",
            c->pages);
    if (c->pace > 0) {
        char took[DURATION_TEXT_MAX];
        duration_text(c->seconds, took, sizeof took);
        fprintf(ctx->out, ": about %s at the budget's pace (%.1f req/s)", took, c->pace);
    } else {
        fputs(": unpaced (rate 0), as fast as the remote answers", ctx->out);
    }
    fputs(".\n", ctx->out);
}

/* The document's fields after its items: the counts and the cost. */
static void put_plan_summary_json(cli_ctx *ctx, const plan_view *v, const plan_cost *c)
{
    const plan_requests *r = &v->req;
    fprintf(ctx->out, "], \"counts\": {\"create\": %zu, \"delete\": %zu, \"attention\": %zu, "
            "\"change\": %zu}, \"requests\": {\"total\": %zu, \"post\": %zu, \"delete\": %zu, "
            "\"patch\": %zu, \"get\": %zu}, \"listings\": %zu, \"listing_pages\": %zu, "
            "\"pace_per_s\": %.3f, \"budget_s\": ",
            v->count[0], v->count[1], v->count[2], v->count[3], c->requests, r->post, r->del,
            r->patch, r->get, c->listings, c->pages, c->pace);
    if (c->pace > 0)
        fprintf(ctx->out, "%.1f}\n", c->seconds);
    else
        fputs("null}\n", ctx->out);
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
    char *obj = codec_object_encode(it->object, CODEC_WITH_STATE);
    fputs(index == 0 ? "\n  " : ",\n  ", v->ctx->out);
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
    if (v->quiet)
        ; /* counted only */
    else if (v->document)
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

/* The plan's lines (the document's items), then its counts and cost. Rotations:
 * a retirement that is due is a delete (its look and DELETE); one waiting out its
 * grace period is shown after the plan, and is no change. */
static int plan_show(cli_ctx *ctx, store *st, plan_view *v, size_t *lines)
{
    if (v->document)
        fputs("{\"items\": [", ctx->out);
    error_info e = {0};
    size_t index = 0, due = 0, rotating = 0;
    if (sync_plan(st, plan_item, v, &e) != ERROR_OK)
        goto failed;
    index = v->count[0] + v->count[1] + v->count[2] + v->count[3];
    if (!v->quiet &&
        (cli_rotation_plan(ctx, st, v->document, true, &index, &due, &e) != ERROR_OK ||
         (v->document &&
          cli_rotation_plan(ctx, st, true, false, &index, &rotating, &e) != ERROR_OK)))
        goto failed;
    v->count[1] += due, v->req.del += due, v->req.get += due;
    size_t total = v->count[0] + v->count[1] + v->count[2] + v->count[3];
    *lines = total;
    if (v->quiet)
        return CLI_EXIT_OK;
    plan_cost cost;
    plan_cost_of(ctx, &v->req, st, &cost);
    if (v->document) {
        put_plan_summary_json(ctx, v, &cost);
        return CLI_EXIT_OK;
    }
    if (total == 0)
        fprintf(ctx->out, "Nothing to do: the cache matches the last sync.\n");
    else
        fprintf(ctx->out,
                "\nPlan: %zu to create, %zu to delete, %zu need attention, %zu to change "
                "or changed remotely.\n",
                v->count[0], v->count[1], v->count[2], v->count[3]);
    put_plan_requests(ctx, &v->req, &cost);
    if (cli_rotation_plan(ctx, st, false, false, &index, &rotating, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return CLI_EXIT_OK;
failed:
    if (v->document) /* the document stays whole: the error is on stderr */
        fputs("]}\n", ctx->out);
    return cli_fail(ctx, &e);
}

/* plan's -o: its own forms, and csv for --impact's document (cli_choices_fn). */
static void plan_put_formats(FILE *out, const void *unused)
{
    cli_report_put_formats(out, unused);
    fputs("csv\n", out);
}

/* The plan; *lines counts what it listed, *impact_rc is --impact's status. */
static int plan_run(cli_ctx *ctx, const char *path, int argc, char **argv, size_t *lines,
                    int *impact_rc)
{
    plan_view v = {.ctx = ctx};
    bool detailed = false, json = false;
    const char *output = NULL, *policy = NULL;
    cli_impact_args ia = {0};
    const cli_opt opts[] = {{"output", CLI_OPT_OUTPUT, &(cli_choice){&output, plan_put_formats, NULL}},
                            {"json", CLI_OPT_FLAG, &json},
                            {"detailed-exitcode", CLI_OPT_FLAG, &detailed},
                            {"policy", CLI_OPT_STRING, &policy},
                            CLI_IMPACT_INPUT_OPTS(&ia)};
    int first, rc;
    cli_output_format format = CLI_OUTPUT_DEFAULT;
    /* main leaves it to the plan, for its exit status */
    if (ctx->config_error.code && !ctx->describe)
        return cli_fail(ctx, &ctx->config_error);
    if (!cli_parse(ctx, path, &plan_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    bool impact = cli_impact_wanted(&ia);
    if (!impact && (first < argc || policy))
        return cli_usage_error(ctx, path, "%s go%s with --impact LOG",
                               first < argc ? "log operands" : "--policy",
                               first < argc ? "" : "es");
    cli_impact im;
    ia.output = impact ? output : NULL; /* with --impact, -o is the impact's */
    rc = cli_impact_prepare(ctx, path, &ia, policy, json, &im);
    if (rc != CLI_GO_ON)
        return rc;
    if (impact) {
        im.more = argv + first;
        im.nmore = (size_t)(argc - first);
        v.quiet = cli_impact_document(&im);
    } else if (!cli_output_choose(ctx, path, output, json, true, &format)) {
        return CLI_EXIT_USAGE;
    }
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    v.document = cli_report_is_document(format);
    cli_report report;
    if (!cli_report_begin(ctx, &report, format))
        return CLI_EXIT_FAILURE;
    rc = cli_report_end(ctx, &report, plan_show(ctx, st, &v, lines));
    if (rc == CLI_EXIT_OK && impact)
        *impact_rc = cli_impact_run(&im, st, NULL, 0, "the queued changes");
    return rc;
}

int cli_sync(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return sync_cmd(ctx, path, argc, argv);
}

static int plan_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    size_t lines = 0;
    int impact_rc = CLI_EXIT_OK;
    int rc = plan_run(ctx, path, argc, argv, &lines, &impact_rc);
    if (rc == CLI_EXIT_OK && impact_rc != CLI_EXIT_OK)
        return impact_rc;
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

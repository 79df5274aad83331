/*
 * `rampart apply --policy ID --action allow|deny [--name NAME] FILE|-`: keep a
 * policy's rules of one action in step with a published list, with the fewest
 * requests (rampart/apply.h). The list is read and checked whole first (every
 * bad line named, nothing queued), then planned against the cache, shown, and
 * queued in one transaction (or pushed at once with --sync).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_apply.h"
#include "cli_follower.h"
#include "cli_impact.h"
#include "cli_object.h"
#include "cli_sync.h"
#include "rampart/termsafe.h"
#include "rampart/validate.h"

enum { PROGRESS_MIN = 2000 }; /* ops below this queue too fast to need a line */

static int apply_cmd(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command apply_command = {
    "apply", apply_cmd,
    "[--policy ipp_ID] --action allow|deny [--name NAME] [--key PATH]... [--aggregate] "
    "[--adopt] [--skip-conflicts] [--description TEXT] [--allow-empty] [--dry-run] [--sync] "
    "[--json] [--impact LOG... [--ip-field N] [--ip-key PATH] [--time-key PATH] "
    "[--log-format F] [--since DURATION] [--max-addresses N] [--fail-on-lockout] "
    "[-o table|json|csv]] FILE|-",
    "Make the policy's rules of one action and NAME equal to a list of CIDRs.",
    "The list (FILE, or - for standard input) is plain text, one CIDR or address per\n"
    "line ('#' or ';' starts a comment; a trailing comment becomes the new rule's\n"
    "description), or JSON: an array of strings, or an object whose array --key\n"
    "names. A bare address is a /32 or /128. Every entry is checked as the forms\n"
    "check it; one bad line queues nothing, and every bad line is named.\n\n"
    "The change is the smallest one: rules already there stay, a rule that leaves\n"
    "the list is deleted, a new entry is created; when both happen, a rule takes the\n"
    "new cidr in place (one PATCH instead of a DELETE and a POST), and in the same\n"
    "PATCH the entry's comment as its description (else --description; with\n"
    "neither it keeps its own). Applying the same list again queues nothing.\n\n"
    "Ownership: the rules an apply makes carry its NAME in their metadata\n"
    "({\"rampart_apply\":\"NAME\"}); an apply never touches another rule. A list entry\n"
    "that another rule holds (the other action, another NAME, or none) is a conflict:\n"
    "nothing is queued unless --skip-conflicts.\n\n"
    "Options:\n"
    "  --policy ID         the IP policy (ipp_ID); default: the policy setting\n"
    "                      (config file, per profile, or RAMPART_POLICY)\n"
    "  --action ACTION     allow or deny: the rules the list stands for\n"
    "  --name NAME         whose rules these are (letters, digits, . _ -; default\n"
    "                      \"default\"); lists applied under other names are left alone\n"
    "  --key PATH          JSON: the member holding the array (a.b for member b of a;\n"
    "                      arrays on the way are looked through: prefixes.ip_prefix\n"
    "                      takes ip_prefix of every object in prefixes); repeatable\n"
    "  --aggregate         merge adjacent and overlapping entries into the fewest\n"
    "                      CIDRs first (the same addresses); without it overlaps are\n"
    "                      kept and reported\n"
    "  --adopt             take over rules of the same action without metadata that\n"
    "                      hold a list entry (their metadata becomes the NAME's)\n"
    "  --skip-conflicts    queue the rest when entries conflict (they are reported)\n"
    "  --description TEXT  of new and reused rules without a comment of their own\n"
    "                      (default: the NAME for new rules, so the console and\n"
    "                      'rules list --filter' show it; reused rules keep theirs)\n"
    "  --allow-empty       apply a list with no entries (every rule of the NAME is\n"
    "                      deleted); without it an empty list, such as a download\n"
    "                      that failed, is refused\n"
    "  --dry-run           show the plan; queue nothing\n"
    "  --sync              send this apply's queued changes now (also those an\n"
    "                      earlier run left queued), nothing else of the queue\n"
    "  --json              one JSON object: overlaps, the plan, requests, the result\n\n"
    "The plan says how many requests the next sync sends for it and how long the\n"
    "account's budget (settings rate, window, share) needs for them.\n"
    CLI_IMPACT_HELP
    "--impact goes with --dry-run: before is the policy as the remote holds it, after\n"
    "as it will be with the queued changes and this apply; -o json|csv prints the\n"
    "impact's document only.\n\n"
    "Exit status: 0 queued (or nothing to do; with --sync, every rule it queued is in\n"
    "force remotely); 2 a bad list or option, or conflicts (nothing queued); 4 --sync\n"
    "left some of its rows pending; 5 --sync with no remote (queued); with --impact:\n"
    "1 on an error or when nothing could be checked, 6 with --fail-on-lockout when an\n"
    "address would newly be denied.\n",
    .min_operands = 1, .max_operands = 1};

/* ---- options ---- */

typedef struct apply_args {
    const char *policy, *action, *name, *description;
    cli_list keys;
} apply_args;

static int check_args(cli_ctx *ctx, const char *path, const apply_args *a,
                      cli_apply_run *run)
{
    if (!a->action)
        return cli_usage_missing(ctx, path, "--action is required");
    error_info e = {0};
    if (validate_action(a->action, &run->req.action, &e) != ERROR_OK ||
        apply_name_check(run->req.name, &e) != ERROR_OK ||
        (a->description && validate_description(a->description, &e) != ERROR_OK))
        return cli_usage_error(ctx, path, "%s", e.msg);
    if (!(run->req.policy_id = cli_policy(ctx, path, a->policy, !run->json)))
        return CLI_EXIT_USAGE;
    run->req.description = a->description; /* NULL: the name, for new rules */
    return CLI_GO_ON;
}

/* ---- the list ---- */

static void put_problems(cli_apply_run *run, const cidrset_problems *p, const char *why)
{
    for (size_t i = 0; i < p->kept; i++) {
        error_info e;
        if (p->items[i].line)
            error_set(&e, ERROR_INVALID, "%s:%zu: %s", run->label, p->items[i].line,
                      p->items[i].msg);
        else
            error_set(&e, ERROR_INVALID, "%s: %s", run->label, p->items[i].msg);
        cli_fail(run->ctx, &e);
    }
    error_info e;
    if (p->total > p->kept)
        error_set(&e, ERROR_INVALID, "%s: %zu more problems not shown", run->label,
                  p->total - p->kept);
    if (p->total > p->kept)
        cli_fail(run->ctx, &e);
    if (why) {
        error_set(&e, ERROR_INVALID, "%s: %s", run->label, why);
        cli_fail(run->ctx, &e);
    }
}

/* Read and check the whole list; CLI_GO_ON, or the exit status after saying why. */
/* A JSON list is read whole (its parser needs the document): at most this. */
#define APPLY_JSON_MAX (16u << 20)
enum { APPLY_CHUNK = 1 << 16 };

/* Whether the input is JSON: its first byte after a byte order mark and white
 * space is '[' or '{'. *decided: such a byte was seen. */
static bool looks_json(const char *data, size_t len, bool *decided)
{
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && strchr(" \t\r\n", data[i]) && data[i])
        i++;
    *decided = i < len;
    return i < len && (data[i] == '[' || data[i] == '{');
}

/* The list as it comes: text fed line by line (memory grows with the entries,
 * never with the input; an endless line stops it at once), JSON read whole up
 * to APPLY_JSON_MAX. ERROR_FORMAT/ERROR_INVALID as cidrset_parse says; ERROR_IO
 * naming the file. */
static error_code parse_stream(FILE *f, const char *label, const cidrset_parse_opts *opt,
                               cidrset *out, cidrset_problems *problems, error_info *e)
{
    buf_t b = {0};
    bool decided = false, json = false;
    cidrset_text_reader *text = NULL;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && buf_reserve(&b, APPLY_CHUNK)) {
        size_t got = fread(b.data + b.len, 1, APPLY_CHUNK, f);
        buf_commit(&b, got);
        if (!decided)
            json = looks_json(b.data, b.len, &decided);
        if (decided && !json) {
            if (!text && !(text = calloc(1, sizeof *text)))
                rc = error_set(e, ERROR_NOMEM, "out of memory");
            if (rc == ERROR_OK)
                rc = cidrset_text_feed(text, b.data, b.len, out, problems, e);
            buf_reset(&b);
        } else if (b.len > APPLY_JSON_MAX) {
            rc = error_set(e, ERROR_FORMAT, "a JSON list of more than %u MiB: apply reads a "
                           "JSON document whole (a text list, one entry a line, has no such "
                           "limit)", APPLY_JSON_MAX >> 20);
        }
        if (got < APPLY_CHUNK)
            break;
    }
    if (rc == ERROR_OK && (b.failed || ferror(f)))
        rc = error_set(e, ERROR_IO, "cannot read %s: %s", label,
                       b.failed ? "out of memory" : strerror(errno));
    if (rc == ERROR_OK && json) {
        bool is_json;
        rc = cidrset_parse(b.data, b.len, opt, out, problems, &is_json, e);
    } else if (rc == ERROR_OK && opt->nkeys && (text || !decided)) {
        rc = error_set(e, ERROR_INVALID, "--key names a member of a JSON document; this "
                       "file is text (one entry per line)");
    } else if (rc == ERROR_OK && text) {
        rc = cidrset_text_end(text, out, problems, e);
    }
    free(text);
    buf_free(&b);
    return rc;
}

static int read_list(cli_apply_run *run, const char *file, const cli_list *keys)
{
    bool is_stdin = strcmp(file, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(file, "rb");
    if (!f) {
        termsafe_fprintf(run->ctx->err, "%s: cannot open %s: %s\n", run->ctx->program, file,
                         strerror(errno));
        return CLI_EXIT_USAGE;
    }
    cidrset_parse_opts opt = {keys->items, keys->count};
    cidrset_problems problems = {0};
    error_info e = {0};
    error_code rc = parse_stream(f, run->label, &opt, &run->list, &problems, &e);
    if (!is_stdin)
        fclose(f);
    int exit = CLI_GO_ON;
    if (rc != ERROR_OK || problems.total) {
        char why[ERROR_MSG_MAX + 64];
        if (rc != ERROR_OK)
            snprintf(why, sizeof why, "%s: nothing queued", e.msg);
        else
            snprintf(why, sizeof why, "%zu bad entr%s: nothing queued", problems.total,
                     problems.total == 1 ? "y" : "ies");
        put_problems(run, &problems, why);
        exit = rc == ERROR_NOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
    } else if (problems.bad_notes) {
        fprintf(run->ctx->err, "%s: %zu comments are not valid UTF-8: their rules get the "
                "default description\n", run->ctx->program, problems.bad_notes);
    }
    cidrset_problems_free(&problems);
    run->read = run->list.count;
    if (exit == CLI_GO_ON && run->read == 0 && !run->allow_empty) {
        error_info none;
        error_set(&none, ERROR_INVALID, "%s: no entries: applied, it would delete every rule "
                  "'%s' owns; nothing queued (--allow-empty does that)", run->label,
                  run->req.name);
        exit = cli_fail(run->ctx, &none);
    }
    return exit;
}

/* Overlaps (and duplicates) as the file has them, before anything merges. */
static int find_overlaps(cli_apply_run *run)
{
    cidrset_overlap *found = NULL;
    size_t n = 0;
    error_info e = {0};
    if (cidrset_overlaps(&run->list, &found, &n, &e) != ERROR_OK)
        return cli_fail(run->ctx, &e);
    run->overlaps = n ? calloc(n, sizeof *run->overlaps) : NULL;
    if (n && !run->overlaps) {
        free(found);
        return cli_fail(run->ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    }
    for (size_t i = 0; i < n; i++) {
        const cidrset_entry *in = &run->list.items[found[i].inner];
        const cidrset_entry *out = &run->list.items[found[i].outer];
        cli_apply_overlap *o = &run->overlaps[i];
        cidrset_format(&in->pfx, o->inner);
        cidrset_format(&out->pfx, o->outer);
        o->inner_line = in->line;
        o->outer_line = out->line;
        o->same = found[i].same;
    }
    run->noverlaps = n;
    free(found);
    return CLI_GO_ON;
}

static int shape_list(cli_apply_run *run)
{
    cidrset_sort(&run->list);
    int rc = find_overlaps(run);
    if (rc != CLI_GO_ON)
        return rc;
    if (run->aggregate)
        run->merged_away = cidrset_aggregate(&run->list);
    else
        run->duplicates = cidrset_dedupe(&run->list);
    cli_apply_show_overlaps(run);
    return CLI_GO_ON;
}

/* ---- plan, queue, push ---- */

/* The budget's pace and the listing a sync pulls, for the plan's time. */
static void budget_figures(cli_apply_run *run, store *st)
{
    run->pace = cli_sync_pace(&run->ctx->cfg);
    run->pull_pages = cli_sync_listing_pages(st, run->plan.count[APPLY_CREATE]);
}

static void put_progress(void *ctxp, size_t done, size_t total)
{
    cli_ctx *ctx = ctxp;
    fprintf(ctx->err, "\rqueueing: %zu/%zu", done, total);
    if (done == total)
        fputs("\r\033[K", ctx->err);
    fflush(ctx->err);
}

/* Collects the rules of the apply's NAME (its policy and action) still to be
 * sent or settled. */
static error_code take_own(void *ctx, model_object *rows, size_t count, error_info *err)
{
    cli_apply_run *run = ctx;
    for (size_t i = 0; i < count; i++) {
        const model_rule *r = &rows[i].rule;
        char name[APPLY_NAME_MAX + 1];
        if (r->action != run->req.action || !apply_metadata_name(r->metadata, name) ||
            strcmp(name, run->req.name) != 0)
            continue;
        sync_row_ref ref = {.kind = MODEL_KIND_RULE};
        model_copy_text(ref.id, sizeof ref.id, r->id);
        if (!buf_append(&run->own, &ref, sizeof ref))
            return error_set(err, ERROR_NOMEM, "out of memory");
        run->nown++;
    }
    return ERROR_OK;
}

/* The rules this apply owns whose change a sync has still to send or settle:
 * queued now or by an earlier run that did not finish (a refused connection,
 * a kill -9). */
static error_code own_queued(cli_apply_run *run, store *st, error_info *e)
{
    unsigned states = 0;
    const model_state waiting[] = {MODEL_STATE_NEW,     MODEL_STATE_CREATING,
                                   MODEL_STATE_UNKNOWN, MODEL_STATE_DELETING,
                                   MODEL_STATE_EDITED,  MODEL_STATE_FAILED,
                                   MODEL_STATE_CONFLICT};
    for (size_t i = 0; i < sizeof waiting / sizeof waiting[0]; i++)
        states |= 1u << waiting[i];
    store_query q = {.policy_id = run->req.policy_id, .states = states};
    buf_reset(&run->own);
    run->nown = 0;
    return store_walk(st, MODEL_KIND_RULE, &q, 256, take_own, run, e);
}

/* What the queue holds of this apply, in one line. */
static void say_queued(cli_apply_run *run)
{
    cli_ctx *ctx = run->ctx;
    if (run->queued)
        fprintf(ctx->out, run->sync ? "Queued; sending it now.\n" : "Queued for the next sync.\n");
    else if (run->nown)
        fprintf(ctx->out, "The rules match the list, but %zu change%s of this apply %s still "
                "queued from an earlier run: %s\n", run->nown, run->nown == 1 ? "" : "s",
                run->nown == 1 ? "is" : "are",
                run->sync ? "sending now." : "'rampart sync' (or apply --sync) sends them.");
    else
        fprintf(ctx->out, "Nothing to do: the rules match the list.\n");
}

static int queue(cli_apply_run *run, store *st)
{
    size_t ops = run->plan.nops - run->plan.count[APPLY_CONFLICT] -
                 run->plan.count[APPLY_BLOCKED];
    bool progress = !run->json && ops >= PROGRESS_MIN && isatty(fileno(run->ctx->err));
    error_info e = {0};
    if (apply_plan_queue(st, &run->req, &run->plan, progress ? put_progress : NULL, run->ctx,
                         &e) != ERROR_OK) {
        error_prefix(&e, "nothing queued");
        return cli_fail(run->ctx, &e);
    }
    run->queued = ops > 0;
    if (own_queued(run, st, &e) != ERROR_OK)
        return cli_fail(run->ctx, &e);
    if (!run->json)
        say_queued(run);
    return CLI_EXIT_OK;
}

static int conflicts_refused(cli_apply_run *run)
{
    size_t n = run->plan.count[APPLY_CONFLICT];
    fprintf(run->ctx->err,
            "%s: %zu list entr%s held by rules this apply does not own: nothing queued "
            "(delete those rules, drop the entries, take rules without metadata over with "
            "--adopt, or queue the rest with --skip-conflicts)\n",
            run->ctx->program, n, n == 1 ? "y is" : "ies are");
    return CLI_EXIT_USAGE;
}

/* What the plan does to the after side, for --impact. */
static error_code impact_changes(const cli_apply_run *run, impact_change **out, size_t *n,
                                 error_info *e)
{
    *out = calloc(run->plan.nops ? run->plan.nops : 1, sizeof **out);
    *n = 0;
    if (!*out)
        return error_set(e, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < run->plan.nops; i++) {
        const apply_op *op = &run->plan.ops[i];
        impact_change *c = &(*out)[*n];
        const apply_rule *rule = op->rule != SIZE_MAX ? &run->plan.rules[op->rule] : NULL;
        if (op->entry != SIZE_MAX)
            c->pfx = run->list.items[op->entry].pfx;
        c->action = run->req.action;
        if (rule)
            snprintf(c->rule_id, sizeof c->rule_id, "%s", rule->id);
        switch (op->kind) {
        case APPLY_DELETE:
            c->kind = IMPACT_CHANGE_REMOVE;
            break;
        case APPLY_EDIT:
            c->kind = IMPACT_CHANGE_MOVE;
            break;
        case APPLY_RETRY:
        case APPLY_CREATE:
            c->kind = IMPACT_CHANGE_ADD;
            break;
        default: /* conflicts and blocked rules stay as they are; a drop is on no side */
            continue;
        }
        (*n)++;
    }
    return ERROR_OK;
}

static int run_impact(cli_apply_run *run, store *st)
{
    impact_change *changes = NULL;
    size_t n = 0;
    error_info e = {0};
    if (impact_changes(run, &changes, &n, &e) != ERROR_OK)
        return cli_fail(run->ctx, &e);
    int rc = cli_impact_run(run->impact, st, changes, n, "this apply");
    free(changes);
    return rc;
}

static int plan_and_queue(cli_apply_run *run)
{
    store *st = cli_store(run->ctx);
    if (!st)
        return run->ctx->store_exit;
    error_info e = {0};
    if (apply_plan_build(st, &run->req, &run->plan, &e) != ERROR_OK)
        return cli_fail(run->ctx, &e);
    budget_figures(run, st);
    bool document = run->impact && cli_impact_document(run->impact);
    if (!run->json && !document)
        cli_apply_show_plan(run);
    int rc = CLI_EXIT_OK;
    if (run->plan.count[APPLY_CONFLICT] && !run->skip_conflicts)
        rc = conflicts_refused(run);
    else if (!run->dry_run)
        rc = queue(run, st);
    if (run->json)
        cli_apply_show_json(run);
    if (rc == CLI_EXIT_OK && run->impact)
        rc = run_impact(run, st);
    if (rc == CLI_EXIT_OK && run->sync && run->nown)
        rc = cli_object_push(run->ctx, (const sync_row_ref *)(void *)run->own.data, run->nown);
    return rc;
}

static int apply_cmd(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    apply_args a = {.name = APPLY_NAME_DEFAULT};
    cli_apply_run run = {.ctx = ctx};
    cli_impact_args ia = {0};
    cli_impact im;
    const cli_opt opts[] = {
        {"policy", CLI_OPT_STRING, &a.policy},
        {"action", CLI_OPT_CHOICE, &(cli_choice){&a.action, cli_action_choices, NULL}},
        {"name", CLI_OPT_STRING, &a.name},
        {"key", CLI_OPT_LIST, &a.keys},
        {"aggregate", CLI_OPT_FLAG, &run.aggregate},
        {"adopt", CLI_OPT_FLAG, &run.req.adopt},
        {"skip-conflicts", CLI_OPT_FLAG, &run.skip_conflicts},
        {"description", CLI_OPT_STRING, &a.description},
        {"allow-empty", CLI_OPT_FLAG, &run.allow_empty},
        {"dry-run", CLI_OPT_FLAG, &run.dry_run},
        {"sync", CLI_OPT_FLAG, &run.sync},
        {"json", CLI_OPT_FLAG, &run.json},
        CLI_IMPACT_OPTS(&ia),
    };
    int first, rc;
    if (!cli_parse(ctx, path, &apply_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    if (!run.dry_run && cli_follower(ctx)) /* a dry run only shows the plan */
        return cli_follower_refuse(ctx, path);
    run.req.name = a.name;
    rc = check_args(ctx, path, &a, &run);
    if (rc == CLI_GO_ON && cli_impact_wanted(&ia) && !run.dry_run)
        rc = cli_usage_error(ctx, path, "--impact goes with --dry-run (once queued, 'rampart "
                             "plan --impact' shows it)");
    if (rc == CLI_GO_ON)
        rc = cli_impact_prepare(ctx, path, &ia, run.req.policy_id, run.json, &im);
    if (rc == CLI_GO_ON && cli_impact_wanted(&ia))
        run.impact = &im;
    const char *file = argv[first];
    run.label = strcmp(file, "-") == 0 ? "stdin" : file;
    for (size_t i = 0; rc == CLI_GO_ON && run.impact && i < ia.logs.count; i++)
        if (strcmp(file, "-") == 0 && strcmp(ia.logs.items[i], "-") == 0)
            rc = cli_usage_error(ctx, path, "standard input cannot hold both the list and "
                                 "the log: give one of them as a file");
    /* The list first: a bad one must not leave a new, empty database behind. */
    if (rc == CLI_GO_ON)
        rc = read_list(&run, file, &a.keys);
    if (rc == CLI_GO_ON)
        rc = shape_list(&run);
    run.req.list = &run.list;
    if (rc == CLI_GO_ON)
        rc = plan_and_queue(&run);
    apply_plan_free(&run.plan);
    cidrset_free(&run.list);
    free(run.overlaps);
    buf_free(&run.own);
    return rc;
}

int cli_apply(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return apply_cmd(ctx, path, argc, argv);
}

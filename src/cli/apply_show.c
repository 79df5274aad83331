/*
 * `rampart apply`: what it prints. Text: overlaps on stderr as warnings naming
 * their lines, the plan on stdout (one line per change, Terraform style, then the
 * counts, the requests and the time the budget needs). JSON: one object with all
 * of it and the result. Everything echoed from the list or the cache is a
 * canonical CIDR, a checked id or name, or goes through the CLI's cell helper.
 */
#include <stdint.h>
#include <string.h>

#include "cli_apply.h"
#include "cli_sync.h"
#include "rampart/duration.h"

enum { OVERLAPS_SHOWN = 20 };

void cli_apply_show_overlaps(const cli_apply_run *run)
{
    if (run->json)
        return;
    cli_ctx *ctx = run->ctx;
    for (size_t i = 0; i < run->noverlaps && i < OVERLAPS_SHOWN; i++) {
        const cli_apply_overlap *o = &run->overlaps[i];
        error_info e;
        if (o->same)
            error_set(&e, ERROR_OK, "%s:%zu: %s repeats line %zu: counted once", run->label,
                      o->inner_line, o->inner, o->outer_line);
        else
            error_set(&e, ERROR_OK, "%s:%zu: %s lies inside %s (line %zu): %s", run->label,
                      o->inner_line, o->inner, o->outer, o->outer_line,
                      run->aggregate ? "merged" : "kept (--aggregate merges overlaps)");
        cli_fail(ctx, &e);
    }
    if (run->noverlaps > OVERLAPS_SHOWN)
        fprintf(ctx->err, "%s: %zu more overlaps not shown\n", ctx->program,
                run->noverlaps - OVERLAPS_SHOWN);
    if (run->aggregate)
        fprintf(ctx->err, "%s: --aggregate: %zu entries merged into %zu CIDRs (%zu fewer)\n",
                ctx->program, run->read, run->list.count, run->merged_away);
}

/* ---- the plan as text ---- */

static const char signs[APPLY_OP_COUNT] = {
    [APPLY_CONFLICT] = '!', [APPLY_BLOCKED] = '!', [APPLY_DELETE] = '-', [APPLY_DROP] = '-',
    [APPLY_EDIT] = '~',     [APPLY_ADOPT] = '~',   [APPLY_RETRY] = '+',  [APPLY_CREATE] = '+',
};

/* A reused rule's description: "description: partners -> jump host", or "keeps
 * its description: partners". */
static void put_edit_description(cli_ctx *ctx, const cli_apply_run *run, const apply_op *op,
                                 const apply_rule *r)
{
    const char *now = apply_edit_description(&run->req, &run->plan, op);
    fputs(now ? "description: " : "keeps its description: ", ctx->out);
    cli_put_cell(ctx->out, r->description ? r->description : "", 0, 40);
    if (!now)
        return;
    fputs(" -> ", ctx->out);
    cli_put_cell(ctx->out, now, 0, 40);
}

/* The reason of an op said in fixed words, by the rule's state; NULL for an op
 * whose reason names a value (put_reason). */
static const char *fixed_reason(const apply_op *op, const apply_rule *r)
{
    switch (op->kind) {
    case APPLY_BLOCKED:
        return r->state == MODEL_STATE_CONFLICT ? "a conflict: resolve it first"
                                                : "its create is in flight: sync first";
    case APPLY_DELETE:
        return op->requests ? "the next sync deletes it" : "never sent: removed here";
    case APPLY_DROP:
        return "deleted remotely: removed here";
    case APPLY_RETRY:
        return r->state == MODEL_STATE_FAILED ? "refused before: sent again"
                                              : "deleted remotely: created again";
    default:
        return NULL;
    }
}

/* What the line says after the cidr and the rule or line. */
static void put_reason(cli_ctx *ctx, const cli_apply_run *run, const apply_op *op,
                       const apply_rule *r)
{
    const char *fixed = fixed_reason(op, r);
    if (fixed) {
        fputs(fixed, ctx->out);
        return;
    }
    switch (op->kind) {
    case APPLY_CONFLICT:
        fprintf(ctx->out, "held by %s (%s%s%s%s)", r->id, model_action_name(r->action),
                r->owner[0] ? ", apply '" : r->has_metadata ? ", its own metadata" : "",
                r->owner, r->owner[0] ? "'" : "");
        break;
    case APPLY_EDIT:
        put_edit_description(ctx, run, op, r);
        break;
    case APPLY_ADOPT:
        fprintf(ctx->out, "takes the name '%s'", run->req.name);
        break;
    case APPLY_CREATE:
        cli_put_cell(ctx->out, apply_entry_description(&run->req, op->entry), 0, 40);
        break;
    default:
        break;
    }
}

static void put_op(const cli_apply_run *run, const apply_op *op)
{
    static const apply_rule no_rule = {.id = ""}; /* a create's: none yet */
    cli_ctx *ctx = run->ctx;
    bool has_rule = op->rule != SIZE_MAX;
    const apply_rule *r = has_rule ? &run->plan.rules[op->rule] : &no_rule;
    char cidr[MODEL_CIDR_MAX + 1], where[32] = "";
    snprintf(cidr, sizeof cidr, "%s", r->cidr);
    if (op->entry != SIZE_MAX) {
        cidrset_format(&run->list.items[op->entry].pfx, cidr);
        snprintf(where, sizeof where, "line %zu", run->list.items[op->entry].line);
    }
    char what[2 * MODEL_CIDR_MAX + 8], who[MODEL_ID_MAX + 40];
    if (op->kind == APPLY_EDIT)
        snprintf(what, sizeof what, "%s -> %s", r->cidr, cidr);
    else
        snprintf(what, sizeof what, "%s", cidr);
    bool rule_shown = has_rule && op->kind != APPLY_CONFLICT;
    snprintf(who, sizeof who, "%s%s%s", rule_shown ? r->id : "",
             rule_shown && where[0] ? " " : "", where);
    fprintf(ctx->out, "%c %-8s %-18s  %-10s  ", signs[op->kind], apply_op_name(op->kind), what,
            who);
    put_reason(ctx, run, op, r);
    fputc('\n', ctx->out);
}

static void put_requests(const cli_apply_run *run)
{
    FILE *out = run->ctx->out;
    const apply_plan *p = &run->plan;
    size_t n = apply_plan_requests(p);
    fprintf(out, "Requests: %zu (%zu POST, %zu DELETE, %zu PATCH, %zu GET)", n, p->posts,
            p->deletes, p->patches, p->gets);
    if (n && run->pace > 0) {
        char took[DURATION_TEXT_MAX];
        duration_text((double)n / run->pace, took, sizeof took);
        fprintf(out, ": about %s at the budget's pace (%.1f req/s)", took, run->pace);
    }
    if (n && !run->sync)
        fprintf(out, ", plus the listing 'rampart sync' pulls after them (about %zu pages; "
                "--sync sends these alone)", run->pull_pages);
    fputs(".\n", out);
}

void cli_apply_show_plan(const cli_apply_run *run)
{
    const apply_plan *p = &run->plan;
    FILE *out = run->ctx->out;
    for (size_t i = 0; i < p->nops; i++)
        put_op(run, &p->ops[i]);
    fprintf(out,
            "Plan for '%s' (%s) in %s: %zu to create, %zu to delete, %zu to edit, %zu to "
            "adopt, %zu to retry, %zu unchanged",
            run->req.name, model_action_name(run->req.action), run->req.policy_id,
            p->count[APPLY_CREATE], p->count[APPLY_DELETE] + p->count[APPLY_DROP],
            p->count[APPLY_EDIT], p->count[APPLY_ADOPT], p->count[APPLY_RETRY],
            p->count[APPLY_KEEP]);
    if (p->count[APPLY_CONFLICT])
        fprintf(out, "; %zu conflicts", p->count[APPLY_CONFLICT]);
    if (p->count[APPLY_BLOCKED])
        fprintf(out, "; %zu left as they are", p->count[APPLY_BLOCKED]);
    fputs(".\n", out);
    put_requests(run);
}

/* ---- JSON ---- */

static void json_overlaps(const cli_apply_run *run, FILE *out)
{
    fputs("\"overlaps\": [", out);
    for (size_t i = 0; i < run->noverlaps; i++) {
        const cli_apply_overlap *o = &run->overlaps[i];
        fprintf(out, "%s{\"line\": %zu, \"cidr\": \"%s\", \"inside\": \"%s\", "
                     "\"inside_line\": %zu, \"same\": %s}",
                i ? ", " : "", o->inner_line, o->inner, o->outer, o->outer_line,
                o->same ? "true" : "false");
    }
    fputs("]", out);
}

static void json_op(const cli_apply_run *run, const apply_op *op, FILE *out)
{
    const apply_rule *r = op->rule == SIZE_MAX ? NULL : &run->plan.rules[op->rule];
    fprintf(out, "{\"op\": \"%s\", \"requests\": %u", apply_op_name(op->kind), op->requests);
    if (op->entry != SIZE_MAX) {
        char cidr[MODEL_CIDR_MAX + 1];
        cidrset_format(&run->list.items[op->entry].pfx, cidr);
        fprintf(out, ", \"cidr\": \"%s\", \"line\": %zu", cidr, run->list.items[op->entry].line);
    }
    if (r) {
        fprintf(out, ", \"rule\": {\"id\": \"%s\", \"cidr\": \"%s\", \"action\": \"%s\", "
                     "\"state\": \"%s\", \"name\": ",
                r->id, r->cidr, model_action_name(r->action), model_state_name(r->state));
        if (r->owner[0])
            cli_put_json_string(out, r->owner);
        else
            fputs("null", out);
        fputs("}", out);
    }
    if (op->kind == APPLY_EDIT && r) { /* an edit always reuses a rule */
        const char *now = apply_edit_description(&run->req, &run->plan, op);
        fputs(", \"description\": {\"from\": ", out);
        cli_put_json_string(out, r->description ? r->description : "");
        fputs(", \"to\": ", out);
        cli_put_json_string(out, now ? now : r->description ? r->description : "");
        fputs("}", out);
    }
    fputs("}", out);
}

void cli_apply_show_json(const cli_apply_run *run)
{
    FILE *out = run->ctx->out;
    const apply_plan *p = &run->plan;
    fprintf(out, "{\"policy\": \"%s\", \"action\": \"%s\", \"name\": \"%s\", \"read\": %zu, "
                 "\"entries\": %zu, \"merged_away\": %zu, \"duplicates\": %zu, ",
            run->req.policy_id, model_action_name(run->req.action), run->req.name, run->read,
            run->list.count, run->merged_away, run->duplicates);
    json_overlaps(run, out);
    fputs(", \"ops\": [", out);
    for (size_t i = 0; i < p->nops; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        json_op(run, &p->ops[i], out);
    }
    fputs("], \"counts\": {", out);
    for (int k = 0; k < APPLY_OP_COUNT; k++)
        fprintf(out, "%s\"%s\": %zu", k ? ", " : "", apply_op_name((apply_op_kind)k),
                p->count[k]);
    fprintf(out, "}, \"requests\": {\"total\": %zu, \"post\": %zu, \"delete\": %zu, "
                 "\"patch\": %zu, \"get\": %zu}, \"pace_per_s\": %.3f, \"budget_s\": ",
            apply_plan_requests(p), p->posts, p->deletes, p->patches, p->gets, run->pace);
    if (run->pace > 0)
        fprintf(out, "%.1f", (double)apply_plan_requests(p) / run->pace);
    else
        fputs("null", out);
    fprintf(out, ", \"dry_run\": %s, \"queued\": %s}\n", run->dry_run ? "true" : "false",
            run->queued ? "true" : "false");
}

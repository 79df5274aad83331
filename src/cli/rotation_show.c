/*
 * How a credential's rotation reads: its lines in `creds get` (text and JSON)
 * and in `plan` (cli_object.h). Below both the rotate command and plan: it calls
 * neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_object.h"
#include "rampart/buf.h"
#include "rampart/duration.h"
#include "rampart/termsafe.h"

/* ---- how a rotation reads ---- */

static const char *ago(long long at, long long now, char *buf, size_t size)
{
    char age[32];
    if (at <= 0)
        return "never";
    snprintf(buf, size, "%s ago", duration_age((double)(now - at), age, sizeof age));
    return buf;
}

/* Where the rotation stands, one line: "grace: 23h left", "waiting: …". */
static const char *standing(const store_rotation *r, long long now, long long quiet,
                            char *buf, size_t size)
{
    const char *why = NULL;
    char left[32];
    bool due = store_rotation_due(r, now, quiet, &why);
    const char *state = store_rotation_state_name(r->state);
    if (due)
        snprintf(buf, size, "%s: the old one retires with the next sync", state);
    else if (r->state == STORE_ROTATION_GRACE && r->held_at &&
             now < r->held_at + r->grace_s)
        snprintf(buf, size, "grace: %s left",
                 duration_countdown((double)(r->held_at + r->grace_s - now), left, sizeof left));
    else if (r->state == STORE_ROTATION_STOPPED)
        snprintf(buf, size, "stopped: %s", r->error);
    else if (r->state == STORE_ROTATION_RETIRED)
        snprintf(buf, size, "retired");
    else if (r->state == STORE_ROTATION_RETIRING)
        snprintf(buf, size, "retiring: the old one's delete is queued");
    else
        snprintf(buf, size, "%s: %s", state, why);
    return buf;
}

void cli_rotation_put(cli_ctx *ctx, const store_rotation *r, const char *self_id,
                      long long now, long long quiet)
{
    char line[STORE_ROTATION_EXEC_MAX + MODEL_ERROR_MAX + 128], when[48];
    bool is_old = strcmp(self_id, r->old_id) == 0;
    cli_put_field(ctx, is_old ? "successor" : "predecessor", is_old ? r->new_id : r->old_id);
    cli_put_field(ctx, "rotation", standing(r, now, quiet, line, sizeof line));
    if (r->state != STORE_ROTATION_RETIRED)
        cli_put_field(ctx, "old served", ago(r->old_served_at, now, when, sizeof when));
    cli_put_field(ctx, "new served", ago(r->new_served_at, now, when, sizeof when));
    if (r->exec[0]) {
        snprintf(line, sizeof line, "%s (%s)", r->exec,
                 r->exec_state == STORE_EXEC_OK        ? "ran"
                 : r->exec_state == STORE_EXEC_FAILED  ? "failed"
                                                       : "runs once the successor is held");
        cli_put_field(ctx, "exec", line);
    }
}

static void json_time(buf_t *b, long long at)
{
    char text[32];
    time_t t = (time_t)at;
    struct tm tm;
    if (at <= 0 || !gmtime_r(&t, &tm) || !strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm)) {
        buf_puts(b, "null");
        return;
    }
    buf_json_string(b, text);
}

static void json_number(buf_t *b, long long n)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", n);
    buf_puts(b, text);
}

/* A member's start: the separator, `indent` and two spaces, then "name": . */
static void json_key(buf_t *b, const char *indent, const char *name, bool first)
{
    buf_puts(b, first ? "\n" : ",\n");
    buf_puts(b, indent);
    buf_puts(b, "  ");
    buf_json_string(b, name);
    buf_puts(b, ": ");
}

void cli_rotation_json(buf_t *b, const store_rotation *r, long long now, long long quiet,
                       const char *indent)
{
    static const char *const modes[] = {"grace", "finish", "now"};
    static const char *const execs[] = {"none", "pending", "ok", "failed"};
    const char *why = NULL;
    bool due = store_rotation_due(r, now, quiet, &why);
    const struct {
        const char *name, *text;
    } texts[] = {
        {"old_id", r->old_id}, {"new_id", r->new_id},
        {"state", store_rotation_state_name(r->state)}, {"mode", modes[r->mode]},
        {"waiting_for", due ? NULL : why}, {"exec", r->exec[0] ? r->exec : NULL},
        {"exec_state", execs[r->exec_state]}, {"error", r->error[0] ? r->error : NULL},
    };
    buf_puts(b, "{");
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_key(b, indent, texts[i].name, i == 0);
        if (texts[i].text)
            buf_json_string(b, texts[i].text);
        else
            buf_puts(b, "null");
    }
    long long left = r->held_at ? r->held_at + r->grace_s - now : r->grace_s;
    const struct {
        const char *name;
        long long n;
        bool time;
    } nums[] = {
        {"grace_s", r->grace_s, false}, {"grace_left_s", left > 0 ? left : 0, false},
        {"started_at", r->started_at, true}, {"successor_held_at", r->held_at, true},
        {"old_last_served_at", r->old_served_at, true},
        {"new_last_served_at", r->new_served_at, true}, {"retired_at", r->retired_at, true},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        json_key(b, indent, nums[i].name, false);
        if (nums[i].time)
            json_time(b, nums[i].n);
        else
            json_number(b, nums[i].n);
    }
    json_key(b, indent, "due", false);
    buf_puts(b, due ? "true\n" : "false\n");
    buf_puts(b, indent);
    buf_puts(b, "}");
}

/* ---- plan ---- */

typedef struct plan_pass {
    cli_ctx *ctx;
    store *st;
    bool json, due;
    long long now, quiet;
    size_t *index, *count;
} plan_pass;

static void plan_line(plan_pass *p, const store_rotation *r, const char *why)
{
    char when[48], left[32];
    cli_ctx *ctx = p->ctx;
    if (p->due) {
        fputs("- cred ", ctx->out);
        cli_put_cell(ctx->out, r->old_id, 33, 0);
        fputc(' ', ctx->out);
        cli_put_cell(ctx->out, r->name[0] ? r->name : "-", 30, 30);
        termsafe_fprintf(ctx->out, "  retire: rotated to %s (old token last served %s)\n",
                         r->new_id, ago(r->old_served_at, p->now, when, sizeof when));
        return;
    }
    termsafe_fprintf(ctx->out, "\xE2\x86\xBB %s \xE2\x86\x92 %s  ", r->old_id, r->new_id);
    cli_put_cell(ctx->out, r->name[0] ? r->name : "-", 0, 30);
    if (r->state == STORE_ROTATION_GRACE && r->held_at && p->now < r->held_at + r->grace_s)
        fprintf(ctx->out, "  grace %s left", duration_countdown((double)(r->held_at +
                                                               r->grace_s - p->now),
                                                               left, sizeof left));
    else
        termsafe_fprintf(ctx->out, "  %s: %s", store_rotation_state_name(r->state), why);
    fprintf(ctx->out, "; old token last served %s\n",
            ago(r->old_served_at, p->now, when, sizeof when));
}

static void plan_json(plan_pass *p, const store_rotation *r, const char *why)
{
    fputs((*p->index)++ == 0 ? "\n  " : ",\n  ", p->ctx->out); /* plan's items */
    buf_t b = {0};
    if (p->due) {
        buf_puts(&b, "{\"action\": \"-\", \"kind\": \"credential\", \"why\": ");
        char text[128];
        snprintf(text, sizeof text, "retire: rotated to %s", r->new_id);
        buf_json_string(&b, text);
    } else {
        buf_puts(&b, "{\"action\": \"\xE2\x86\xBB\", \"kind\": \"rotation\", \"why\": ");
        buf_json_string(&b, why);
    }
    buf_puts(&b, ", \"rotation\": ");
    cli_rotation_json(&b, r, p->now, p->quiet, "");
    buf_puts(&b, "}");
    char *text = buf_take(&b);
    fputs(text ? text : "null", p->ctx->out);
    free(text);
}

static error_code plan_visit(void *ctx, const store_rotation *r, error_info *err)
{
    (void)err;
    plan_pass *p = ctx;
    const char *why = NULL;
    bool due = store_rotation_due(r, p->now, p->quiet, &why);
    bool open = r->state != STORE_ROTATION_RETIRED && r->state != STORE_ROTATION_RETIRING;
    if (due != p->due || !open)
        return ERROR_OK;
    if (p->json)
        plan_json(p, r, why);
    else
        plan_line(p, r, why);
    (*p->count)++;
    return ERROR_OK;
}

error_code cli_rotation_plan(cli_ctx *ctx, store *st, bool json, bool due, size_t *index,
                             size_t *count, error_info *err)
{
    plan_pass p = {ctx, st, json, due, (long long)time(NULL),
                   config_number(&ctx->cfg, CONFIG_ROTATE_QUIET), index, count};
    *count = 0;
    return store_rotation_each(st, plan_visit, &p, err);
}

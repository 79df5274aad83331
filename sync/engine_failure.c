/*
 * engine: why a run stopped, and why a row did not go through, as types the
 * console and the command line decide on (sync_failure in the report), beside the
 * sentence they show (last_error), and the log callback's lines (engine_log);
 * what each call's outcome is called and stands for. Nothing here reads a
 * message to decide.
 */
#include "engine_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { LOG_LINE_MAX = 768 };

/* A line for the log callback (opt.on_log), when there is one. */
void engine_log(engine *e, sync_log_level level, const char *fmt, ...)
{
    if (!e->opt.on_log)
        return;
    char line[LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    e->opt.on_log(e->opt.cb_ctx, level, line);
}

static const char *const failure_names[SYNC_FAILURE_COUNT] = {
    [SYNC_FAILURE_NONE] = "none",
    [SYNC_FAILURE_UNREACHABLE] = "unreachable",
    [SYNC_FAILURE_TIMED_OUT] = "timed_out",
    [SYNC_FAILURE_CONNECTION_LOST] = "connection_lost",
    [SYNC_FAILURE_RATE_LIMITED] = "rate_limited",
    [SYNC_FAILURE_REJECTED] = "rejected",
    [SYNC_FAILURE_AUTH] = "auth",
    [SYNC_FAILURE_NOT_FOUND] = "not_found",
    [SYNC_FAILURE_SERVER_ERROR] = "server_error",
    [SYNC_FAILURE_BAD_REPLY] = "bad_reply",
    [SYNC_FAILURE_DATABASE] = "database",
    [SYNC_FAILURE_BUSY] = "busy",
    [SYNC_FAILURE_LOCAL] = "local",
};

const char *sync_failure_name(sync_failure_kind kind)
{
    return (unsigned)kind < SYNC_FAILURE_COUNT ? failure_names[kind] : "unknown";
}

/* Each outcome's name, and the failure it stands for when a result names none.
 * An ambiguous outcome says only that the request may have happened: the
 * connection is the likeliest reason. */
static const struct {
    const char *name;
    sync_failure_kind failure;
} outcomes[] = {
    [SYNC_OK] = {"ok", SYNC_FAILURE_NONE},
    [SYNC_NOT_SENT] = {"not_sent", SYNC_FAILURE_UNREACHABLE},
    [SYNC_AMBIGUOUS] = {"ambiguous", SYNC_FAILURE_CONNECTION_LOST},
    [SYNC_REJECTED] = {"rejected", SYNC_FAILURE_REJECTED},
    [SYNC_RATE_LIMITED] = {"rate_limited", SYNC_FAILURE_RATE_LIMITED},
    [SYNC_AUTH] = {"auth", SYNC_FAILURE_AUTH},
    [SYNC_NOT_FOUND] = {"not_found", SYNC_FAILURE_NOT_FOUND},
};

static bool outcome_known(sync_outcome outcome)
{
    return (unsigned)outcome < sizeof outcomes / sizeof outcomes[0];
}

const char *sync_outcome_name(sync_outcome outcome)
{
    return outcome_known(outcome) ? outcomes[outcome].name : "unknown";
}

sync_failure_kind sync_outcome_failure(sync_outcome outcome)
{
    return outcome_known(outcome) ? outcomes[outcome].failure : SYNC_FAILURE_SERVER_ERROR;
}

/* Only a remote that could not be reached at all heals by itself: every other
 * failure needs someone to change something (the key, a row, the server). */
bool sync_report_should_retry(const sync_report *r)
{
    return r && r->failure.kind == SYNC_FAILURE_UNREACHABLE;
}

/* ---- filling the report --------------------------------------------------- */

static sync_failure_kind result_failure(const sync_result *res)
{
    return res->failure != SYNC_FAILURE_NONE ? res->failure
                                             : sync_outcome_failure(res->outcome);
}

static void fill(sync_failure *f, sync_failure_kind kind, const engine_target *t,
                 const sync_result *res)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->retry_after_s = -1;
    if (t) {
        f->has_object = true;
        f->object_kind = t->kind;
        model_copy_text(f->object_id, sizeof f->object_id, t->id ? t->id : "");
    }
    if (!res)
        return;
    f->http_status = res->http_status;
    f->retry_after_s = res->retry_after_s;
    model_copy_text(f->error_code, sizeof f->error_code, res->error_code);
    model_copy_text(f->server_msg, sizeof f->server_msg, res->server_msg);
    model_copy_text(f->operation_id, sizeof f->operation_id, res->operation_id);
}

/* The failure a stop stands for; a cancel is none. */
static sync_failure_kind stop_failure(engine_stop why, const sync_result *res)
{
    switch (why) {
    case ENGINE_AUTH:
        return SYNC_FAILURE_AUTH;
    case ENGINE_UNREACHABLE:
        return SYNC_FAILURE_UNREACHABLE;
    case ENGINE_DB:
        return SYNC_FAILURE_DATABASE;
    case ENGINE_PULL_FAILED:
        return res ? result_failure(res) : SYNC_FAILURE_BAD_REPLY;
    case ENGINE_DEADLINE:
    case ENGINE_TOO_SLOW:
        return SYNC_FAILURE_TIMED_OUT;
    case ENGINE_RATE_LIMITED:
        return SYNC_FAILURE_RATE_LIMITED;
    case ENGINE_GO:
    case ENGINE_CANCELLED:
        break;
    }
    return SYNC_FAILURE_NONE;
}

static void vstop(engine *e, engine_stop why, const engine_target *t, const sync_result *res,
                  const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void vstop(engine *e, engine_stop why, const engine_target *t, const sync_result *res,
                  const char *fmt, va_list ap)
{
    if (e->stop != ENGINE_GO)
        return;
    e->stop = why;
    error_vset(&e->err, ERROR_IO, fmt, ap);
    fill(&e->report->failure, stop_failure(why, res), t, res);
}

void engine_fail(engine *e, engine_stop why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vstop(e, why, NULL, NULL, fmt, ap);
    va_end(ap);
}

void engine_fail_at(engine *e, engine_stop why, const engine_target *t, const sync_result *res,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vstop(e, why, t, res, fmt, ap);
    va_end(ap);
}

/* The store's message already says "database: …" (store_db_error): one prefix. */
void engine_db_fail(engine *e, const error_info *err)
{
    engine_fail(e, ENGINE_DB, "%s", err->msg);
}

void engine_failure_from(sync_failure *f, const engine_target *t, const sync_result *res)
{
    fill(f, res ? result_failure(res) : SYNC_FAILURE_NONE, t, res);
}

void engine_note_row_failure(engine *e, const engine_target *t, const sync_result *res)
{
    sync_failure_kind kind = res ? result_failure(res) : SYNC_FAILURE_REJECTED;
    fill(&e->report->row_failure, kind, t, res);
}

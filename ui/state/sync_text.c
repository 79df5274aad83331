/*
 * What the console says about a sync (rampart/ui_sync_text.h): a cause from its
 * type, a wait with its countdown, a pace. Pure: no console, no clock.
 */
#include "rampart/ui_sync_text.h"

#include <stdio.h>
#include <string.h>

#include "rampart/duration.h"
#include "rampart/textcat.h"

/* The server's message, control characters as '?', at most 160 bytes. */
static void clean(const char *msg, char *out, size_t size)
{
    size_t n = 0;
    for (; msg[n] && n + 1 < size; n++) {
        unsigned char c = (unsigned char)msg[n];
        out[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    out[n] = '\0';
}

/* The cause in a few words, from the type and the status alone. */
static void cause(const sync_failure *f, char *buf, size_t size)
{
    int st = f->http_status;
    switch (f->kind) {
    case SYNC_FAILURE_NONE: buf[0] = '\0'; return;
    case SYNC_FAILURE_UNREACHABLE: snprintf(buf, size, "unreachable"); return;
    case SYNC_FAILURE_TIMED_OUT: snprintf(buf, size, "timed out"); return;
    case SYNC_FAILURE_CONNECTION_LOST: snprintf(buf, size, "connection lost"); return;
    case SYNC_FAILURE_RATE_LIMITED: snprintf(buf, size, "rate limited (429)"); return;
    case SYNC_FAILURE_AUTH: snprintf(buf, size, "API key refused"); return;
    case SYNC_FAILURE_NOT_FOUND: snprintf(buf, size, "not found (404)"); return;
    case SYNC_FAILURE_BAD_REPLY: snprintf(buf, size, "unusable reply"); return;
    case SYNC_FAILURE_DATABASE: snprintf(buf, size, "local database error"); return;
    case SYNC_FAILURE_BUSY: snprintf(buf, size, "another sync is running"); return;
    case SYNC_FAILURE_LOCAL: snprintf(buf, size, "local error"); return;
    case SYNC_FAILURE_REJECTED:
        if (st > 0)
            snprintf(buf, size, "refused %d", st);
        else
            snprintf(buf, size, "refused");
        return;
    case SYNC_FAILURE_SERVER_ERROR:
    case SYNC_FAILURE_COUNT:
        break;
    }
    if (st > 0)
        snprintf(buf, size, "server error %d", st);
    else
        snprintf(buf, size, "server error");
}

const char *ui_failure_text(const sync_failure *f, bool detail, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (!f || f->kind == SYNC_FAILURE_NONE)
        return buf;
    cause(f, buf, size);
    if (!detail)
        return buf;
    if (f->server_msg[0]) {
        char msg[161];
        clean(f->server_msg, msg, sizeof msg);
        textcat_add(buf, size, ": %s", msg);
    }
    if (f->operation_id[0]) {
        char op[MODEL_ID_MAX + 1];
        clean(f->operation_id, op, sizeof op);
        textcat_add(buf, size, " (%s)", op);
    }
    return buf;
}

const char *ui_pace_text(double rate_per_s, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    if (!(rate_per_s > 0))
        buf[0] = '\0';
    else if (rate_per_s < 0.1)
        snprintf(buf, size, "paced: %.2f req/s", rate_per_s);
    else
        snprintf(buf, size, "paced: %.1f req/s", rate_per_s);
    return buf;
}

const char *ui_wait_text(sync_wait_cause wcause, const sync_failure *f, double remaining_s,
                         double rate_per_s, bool detail, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    char left[32];
    duration_countdown(remaining_s, left, sizeof left);
    buf[0] = '\0';
    switch (wcause) {
    case SYNC_WAIT_BUDGET:
        ui_pace_text(rate_per_s, buf, size);
        if (!buf[0])
            snprintf(buf, size, "paced");
        return buf;
    case SYNC_WAIT_RATE_LIMITED:
        /* A 429's message says no more than its status (the log's details keep
         * its operation id): the cause and the wait alone. */
        snprintf(buf, size, "rate limited (429)");
        break;
    case SYNC_WAIT_BACKOFF:
        ui_failure_text(f, detail, buf, size);
        if (!buf[0])
            snprintf(buf, size, "backing off");
        break;
    case SYNC_WAIT_NONE:
        snprintf(buf, size, "paused %s", left);
        return buf;
    }
    textcat_add(buf, size, ", retry in %s", left);
    return buf;
}

sync_budget ui_auto_pull_budget(const sync_budget *b)
{
    sync_budget out = *b;
    if (!(out.share > 0) || out.share > UI_AUTO_PULL_SHARE)
        out.share = UI_AUTO_PULL_SHARE;
    return out;
}

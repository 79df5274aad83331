/* What a running sync shows: the progress line on standard error and, with
 * --json, one JSON object per event on standard output (see cli_sync.h). */
#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli_sync.h"
#include "rampart/duration.h"
#include "rampart/kind.h"
#include "rampart/textcat.h"
#include "rampart/utf8.h"

enum {
    BAR_WIDTH = 20,
    DEFAULT_COLUMNS = 80,
    /* A pause shorter than this for the budget is the pace itself, not a wait worth
     * a countdown: the line keeps showing the counts. */
    BUDGET_WAIT_SHOWN_S = 2
};

/* Not a terminal (--progress): at most one line a second, but every wait tick and
 * every phase change. */
static const double LINE_EVERY_S = 1.0;

double cli_sync_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int terminal_columns(FILE *f)
{
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return DEFAULT_COLUMNS;
}

void cli_sync_view_init(cli_sync_view *v, cli_ctx *ctx, bool bar, bool verbose, bool json)
{
    memset(v, 0, sizeof *v);
    v->ctx = ctx;
    v->tty = isatty(fileno(ctx->err)) == 1;
    v->bar = v->tty || bar;
    v->verbose = verbose;
    v->json = json;
    v->phase = SYNC_PHASE_PUSH;
    v->started = cli_sync_clock();
    v->printed = -1;
    v->width = v->tty ? terminal_columns(ctx->err) : 0;
}

static const char *phase_name(sync_phase phase)
{
    static const char *const names[] = {
        [SYNC_PHASE_PUSH] = "push", [SYNC_PHASE_PULL] = "pull",
        [SYNC_PHASE_RECONCILE] = "reconcile", [SYNC_PHASE_WAIT] = "wait",
        [SYNC_PHASE_DONE] = "done"};
    return (unsigned)phase < sizeof names / sizeof names[0] ? names[phase] : "?";
}

static const char *cause_name(sync_wait_cause cause)
{
    static const char *const names[] = {
        [SYNC_WAIT_NONE] = "none", [SYNC_WAIT_BUDGET] = "budget",
        [SYNC_WAIT_RATE_LIMITED] = "rate_limited", [SYNC_WAIT_BACKOFF] = "backoff"};
    return (unsigned)cause < sizeof names / sizeof names[0] ? names[cause] : "none";
}

/* ---- text helpers ---- */

/* "42s", "3m05s", "2h10m". */
static void add_duration(char *buf, size_t size, double s)
{
    char text[DURATION_TEXT_MAX];
    textcat_add(buf, size, "%s", duration_text(s, text, sizeof text));
}

/* The failures a backoff names in words; the others by sync_failure_name. */
static const char *const wait_words[SYNC_FAILURE_COUNT] = {
    [SYNC_FAILURE_SERVER_ERROR] = "server error", [SYNC_FAILURE_UNREACHABLE] = "unreachable",
    [SYNC_FAILURE_TIMED_OUT] = "timed out", [SYNC_FAILURE_CONNECTION_LOST] = "connection lost",
    [SYNC_FAILURE_RATE_LIMITED] = "rate limited"};

void cli_sync_wait_words(const sync_progress *p, char *buf, size_t size)
{
    buf[0] = '\0';
    const sync_failure *f = p->failure;
    if (p->wait_cause == SYNC_WAIT_BUDGET) {
        textcat_add(buf, size, "budget");
        return;
    }
    if (p->wait_cause == SYNC_WAIT_RATE_LIMITED) {
        textcat_add(buf, size, "rate limited 429");
        return;
    }
    if (!f || f->kind == SYNC_FAILURE_NONE) {
        textcat_add(buf, size, "backoff");
        return;
    }
    const char *words = (unsigned)f->kind < SYNC_FAILURE_COUNT ? wait_words[f->kind] : NULL;
    textcat_add(buf, size, "%s", words ? words : sync_failure_name(f->kind));
    if (f->http_status)
        textcat_add(buf, size, " %d", f->http_status);
    if (f->server_msg[0])
        textcat_add(buf, size, ": %.*s", (int)utf8_prefix(f->server_msg, 80), f->server_msg); /* whole chars */
    if (f->operation_id[0])
        textcat_add(buf, size, "%soperation %s", f->server_msg[0] ? ", " : ": ", f->operation_id);
}

/* The display's text: "push  12/40 [#####---------------] 1.6 req/s eta 25s", and
 * while waiting "... waiting 42s (rate limited 429), eta 1m30s". */
static void progress_text(const cli_sync_view *v, const sync_progress *p, char *out,
                          size_t size)
{
    out[0] = '\0';
    bool waiting = p->phase == SYNC_PHASE_WAIT;
    size_t done = waiting ? v->done : p->done, total = waiting ? v->total : p->total;
    textcat_add(out, size, "%-9s", phase_name(waiting ? v->phase : p->phase));
    if (total) {
        char bar[BAR_WIDTH + 1];
        size_t full = done >= total ? BAR_WIDTH : done * BAR_WIDTH / total;
        for (size_t i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < full ? '#' : '-';
        bar[BAR_WIDTH] = '\0';
        textcat_add(out, size, " %zu/%zu [%s]", done, total, bar);
    } else {
        bool pull = (waiting ? v->phase : p->phase) == SYNC_PHASE_PULL;
        textcat_add(out, size, " %zu%s", done, pull ? " rows" : "");
    }
    if (waiting) {
        char why[256];
        cli_sync_wait_words(p, why, sizeof why);
        textcat_add(out, size, " waiting ");
        add_duration(out, size, p->wait_s);
        textcat_add(out, size, " (%s)", why);
    } else {
        double elapsed = cli_sync_clock() - v->started;
        double rate = p->rate_per_s > 0 ? p->rate_per_s
                      : elapsed >= 1 ? (double)p->requests / elapsed
                                     : 0;
        if (rate > 0)
            textcat_add(out, size, " %.1f req/s", rate);
    }
    if (p->phase != SYNC_PHASE_DONE && p->eta_s >= 0 && isfinite(p->eta_s)) {
        textcat_add(out, size, waiting ? ", eta " : " eta ");
        add_duration(out, size, p->eta_s);
    }
}

static void put_number(FILE *out, const char *name, double x)
{
    if (isfinite(x) && x >= 0)
        fprintf(out, ", \"%s\": %.1f", name, x);
    else
        fprintf(out, ", \"%s\": null", name);
}

void cli_sync_put_failure_json(FILE *out, const sync_failure *f)
{
    if (!f || f->kind == SYNC_FAILURE_NONE) {
        fputs("null", out);
        return;
    }
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

/* {"event": "progress"|"wait", "phase", "done", "total", "requests", "rate_per_s",
 * "eta_s"[, "cause", "wait_s", "reason", "failure"]}: a wait names the phase it
 * paused. */
static void put_event_json(const cli_sync_view *v, const sync_progress *p)
{
    FILE *out = v->ctx->out;
    bool waiting = p->phase == SYNC_PHASE_WAIT;
    fprintf(out, "{\"event\": \"%s\", \"phase\": \"%s\", \"done\": %zu, \"total\": %zu, "
                 "\"requests\": %zu",
            waiting ? "wait" : "progress", phase_name(waiting ? v->phase : p->phase),
            waiting ? v->done : p->done, waiting ? v->total : p->total, p->requests);
    put_number(out, "rate_per_s", p->rate_per_s);
    put_number(out, "eta_s", p->eta_s);
    if (waiting) {
        char why[256];
        cli_sync_wait_words(p, why, sizeof why);
        fprintf(out, ", \"cause\": \"%s\"", cause_name(p->wait_cause));
        put_number(out, "wait_s", p->wait_s);
        fputs(", \"reason\": ", out);
        cli_put_json_string(out, why);
        fputs(", \"failure\": ", out);
        cli_sync_put_failure_json(out, p->failure);
    }
    fputs("}\n", out);
    fflush(out);
}

/* ---- the display on stderr ---- */

void cli_sync_view_clear(cli_sync_view *v)
{
    if (v->drawn)
        fputs("\r\033[K", v->ctx->err);
    v->drawn = false;
}

static void show_line(cli_sync_view *v, const char *text, bool force)
{
    FILE *err = v->ctx->err;
    if (v->tty) {
        if (v->drawn && strcmp(text, v->last) == 0)
            return;
        fputs("\r\033[K", err);
        cli_put_cell(err, text, 0, v->width - 1); /* never wraps: \r redraws it */
        v->drawn = true;
    } else {
        double now = cli_sync_clock();
        if (strcmp(text, v->last) == 0 ||
            (!force && v->printed >= 0 && now - v->printed < LINE_EVERY_S))
            return;
        cli_put_cell(err, text, 0, 0);
        fputc('\n', err);
        v->printed = now;
    }
    fflush(err);
    snprintf(v->last, sizeof v->last, "%s", text);
}

void cli_sync_view_progress(void *view, const sync_progress *p)
{
    cli_sync_view *v = view;
    bool waiting = p->phase == SYNC_PHASE_WAIT;
    bool phase_changed = !waiting && p->phase != v->phase;
    if (!waiting) {
        v->phase = p->phase;
        v->done = p->done;
        v->total = p->total;
    }
    if (v->json)
        put_event_json(v, p);
    if (!v->bar || p->phase == SYNC_PHASE_DONE)
        return;
    /* The pace's own short pauses keep the counts on screen. */
    if (waiting && p->wait_cause == SYNC_WAIT_BUDGET && p->wait_s < BUDGET_WAIT_SHOWN_S)
        return;
    char text[sizeof v->last];
    progress_text(v, p, text, sizeof text);
    show_line(v, text, waiting || phase_changed);
}

void cli_sync_view_log(void *view, sync_log_level level, const char *line)
{
    cli_sync_view *v = view;
    if (level == SYNC_LOG_INFO && !v->verbose)
        return;
    const char *label = level == SYNC_LOG_ERROR  ? "error"
                        : level == SYNC_LOG_WARN ? "warning"
                                                 : "info";
    if (v->json) {
        fprintf(v->ctx->out, "{\"event\": \"log\", \"level\": \"%s\", \"message\": ", label);
        cli_put_json_string(v->ctx->out, line);
        fputs("}\n", v->ctx->out);
        fflush(v->ctx->out);
    }
    cli_sync_view_clear(v);
    if (level != SYNC_LOG_INFO)
        fprintf(v->ctx->err, "%s: ", label);
    cli_put_cell(v->ctx->err, line, 0, 0);
    fputc('\n', v->ctx->err);
    v->last[0] = '\0';
}

/*
 * cli_sync: what the command line's sync pieces share, internal to src/cli
 * (sync.c: `rampart sync`, `plan` and the settings; sync_view.c: what a running
 * sync shows; objects.c: `--sync` of create and update; tui.c: the console's
 * settings).
 *
 * - cli_sync_settings is the one place the configuration becomes a sync's pace and
 *   deadlines, for the command line and the console alike.
 * - Exit status CLI_EXIT_NO_REMOTE (5): a command's change was saved and queued,
 *   but `--sync` could not send it because no remote is configured (rampart(1),
 *   EXIT STATUS). `rampart sync` itself with no remote stays CLI_EXIT_USAGE (2):
 *   it changed nothing.
 * - What a sync shows: on standard error, a progress line redrawn in place when it
 *   is a terminal (or one line per change with `progress` forced), never a token;
 *   with `json`, one JSON object per event on standard output, the report last.
 */
#ifndef RAMPART_CLI_SYNC_H
#define RAMPART_CLI_SYNC_H

#include <stdbool.h>
#include <stdio.h>

#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/config.h"
#include "rampart/sync.h"

enum { CLI_EXIT_NO_REMOTE = 5 /* saved and queued; --sync had no remote to send it to */ };

/*
 * The sync's budget, deadlines and per-request low-speed limit from `cfg` (every
 * value as config_number reads it, so each is in its checked range):
 * - opt->budget: requests = rate (0: unpaced), window_s = window, share =
 *   share / 100, give_up_windows = give_up_windows;
 * - opt->deadline_s = timeout (0: none); opt->max_backoff_s = max_backoff;
 * - opt->rate_per_min = 0 (the budget replaces it);
 * - api->low_speed_bps = low_speed, api->low_speed_s = low_speed_time; low_speed
 *   0 (no limit) becomes 1 byte/s, the least libcurl checks (a stalled reply),
 *   since 0 in api_config means the default.
 * Nothing else of *opt or *api is touched. Either pointer may be NULL.
 */
void cli_sync_settings(const config *cfg, sync_options *opt, api_config *api);

/* The pace the budget gives a sync, requests per second (0: unpaced), from the
 * settings as cli_sync_settings reads them. */
double cli_sync_pace(const config *cfg);

/* Pages of the listing a sync pulls: the cached rules plus `more_rules`, and the
 * credentials, 100 a page. */
size_t cli_sync_listing_pages(store *st, size_t more_rules);


/* How a sync of the command line runs and what it shows. */
typedef struct cli_sync_args {
    bool push, pull;
    bool scoped;   /* push only `only` (a command's --sync): its summary and exit
                      status speak of those rows; the rest of the queue is one line */
    const sync_row_ref *only;
    size_t only_count;
    bool verbose;  /* a log line per request settled */
    bool json;     /* event lines on stdout, the report (JSON) last */
    bool progress; /* the progress display on stderr even when it is not a terminal */
} cli_sync_args;

/* cli_sync_now with every display option (cli_sync_now: progress not forced). */
int cli_sync_run(cli_ctx *ctx, const cli_sync_args *a, sync_report *report);

/* ---- sync_view.c: what a running sync shows ---- */

typedef struct cli_sync_view {
    cli_ctx *ctx;
    bool bar;          /* a progress display on ctx->err */
    bool tty;          /* ... redrawn in place (else a line per change) */
    bool verbose, json;
    bool drawn;        /* a progress line is on screen (tty) */
    sync_phase phase;  /* the last phase that was not a wait */
    size_t done, total;
    double started;    /* monotonic seconds at the start */
    double printed;    /* when the last line was printed (not a tty) */
    int width;         /* the terminal's columns */
    char last[512];    /* the line last shown */
} cli_sync_view;

/* Start a view; `bar` forces the display (else only on a terminal). */
void cli_sync_view_init(cli_sync_view *v, cli_ctx *ctx, bool bar, bool verbose, bool json);

/* The engine's callbacks (cb_ctx: the view). */
void cli_sync_view_progress(void *view, const sync_progress *p);
void cli_sync_view_log(void *view, sync_log_level level, const char *line);

/* Take the progress line off the terminal (before other output). */
void cli_sync_view_clear(cli_sync_view *v);

/* Monotonic seconds. */
double cli_sync_clock(void);

/* A failure as a JSON object, or null. */
void cli_sync_put_failure_json(FILE *out, const sync_failure *f);

/* Why a run waits, in words: "budget", "rate limited 429", "server error 503:
 * busy, operation op_…" (the failure's message cut, never a token). */
void cli_sync_wait_words(const sync_progress *p, char *buf, size_t size);

#endif

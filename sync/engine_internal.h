/*
 * engine internals shared by sync/engine*.c: one run's state, pacing and
 * progress helpers (engine_pace.c), push (engine_push.c) and pull
 * (engine_pull.c). Nothing outside sync/ includes this.
 */
#ifndef RAMPART_ENGINE_INTERNAL_H
#define RAMPART_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rampart/sync.h"

/* Why a run stopped early. */
typedef enum engine_stop {
    ENGINE_GO,
    ENGINE_CANCELLED,
    ENGINE_AUTH,        /* 401/403: ERROR_CONFIG */
    ENGINE_UNREACHABLE, /* not_sent max_attempts times in a row: ERROR_IO */
    ENGINE_PULL_FAILED, /* a listing could not be completed: ERROR_IO */
    ENGINE_DB           /* the store failed: ERROR_IO */
} engine_stop;

typedef struct engine {
    store *st;
    const sync_api_ops *ops;
    void *api;
    sync_options opt;      /* defaults filled in, clock never NULL */
    sync_report *report;
    engine_stop stop;
    error_info err;        /* why it stopped */

    /* pacing: completion times of the last rate_per_min requests (a ring) */
    double *sent;
    size_t sent_cap, sent_head, sent_count;
    double resume_at;      /* the queue is paused until then (429, backoff) */
    unsigned failures;     /* consecutive 429/not_sent/ambiguous: backoff exponent */
    unsigned not_sent_streak;
    uint64_t rng;          /* jitter */
    size_t requests;       /* sent in this run */
    bool pulled;           /* a listing was merged in this run */
    size_t requeued;       /* rows the last merge queued for another push */

    /* progress of the current phase */
    sync_phase phase;
    size_t done, total;
    double phase_start;
} engine;

/* A request through the ops table; `arg` is the caller's. */
typedef sync_outcome (*engine_request_fn)(engine *e, void *arg, sync_result *res);

/* ---- engine_pace.c -------------------------------------------------------- */

double engine_now(engine *e);

/* Seed the jitter, allocate the rate ring. ERROR_NOMEM. */
error_code engine_pace_init(engine *e, error_info *err);
void engine_pace_free(engine *e);

/*
 * Before each request: honour a stop or the cancel flag, the queue's pause
 * (429/backoff) and the rate budget, sleeping as needed (and reporting
 * SYNC_PHASE_WAIT). false: do not send (e->stop says why).
 */
bool engine_before_request(engine *e);

/*
 * After each request: count it against the budget, pause the whole queue on a
 * 429 (Retry-After clamped, else backoff) or after not_sent/ambiguous, stop on
 * auth or when the remote stays unreachable.
 */
void engine_after_request(engine *e, const sync_result *res);

/*
 * An idempotent request (delete, list page): sent until it settles, repeated
 * after not_sent, 429 and ambiguous outcomes up to max_attempts times. Returns the
 * last outcome (res filled); SYNC_NOT_SENT with e->stop set when it never went.
 */
sync_outcome engine_send_idempotent(engine *e, engine_request_fn fn, void *arg,
                                    sync_result *res);

/* Record a stop (the first one wins) with its message. */
void engine_fail(engine *e, engine_stop why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A store error stops the run. */
void engine_db_fail(engine *e, const error_info *err);

void engine_log(engine *e, sync_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Start a phase of `total` items (0: unknown) and report it. */
void engine_phase(engine *e, sync_phase phase, size_t total);
/* One more item of the phase done: report progress with an ETA. */
void engine_step(engine *e, size_t items);

/* ---- engine_push.c -------------------------------------------------------- */

/* Push the outbox: deletes (and remote copies of orphaned credentials), then
 * creates, rules before credentials. */
void engine_push(engine *e);

/* Rows the push would act on (for progress totals and another round). */
error_code engine_outbox_size(engine *e, size_t *out, error_info *err);

/* ---- engine_pull.c -------------------------------------------------------- */

/* Pull both complete listings into staging and merge them. false: no merge. */
bool engine_pull(engine *e);

/*
 * The local id in a pulled credential's creation marker: the last metadata line
 * when it is SYNC_MARKER_KEY + id. Strips that line from `metadata` in place and
 * copies the id into `marker` (size MODEL_ID_MAX + 1); "" when there is none.
 */
void engine_strip_marker(char *metadata, char *marker);

/* The metadata a credential's create sends: the user's plus the marker line.
 * false when it does not fit in MODEL_METADATA_MAX. */
bool engine_marked_metadata(const char *user, const char *local_id, char *out,
                            size_t size);

#endif

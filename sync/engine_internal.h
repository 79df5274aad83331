/*
 * engine internals shared by sync/engine*.c: one run's state, the rows it acts
 * on (counts, walks, labels: engine_rows.c), the pacing schedule
 * (engine_pace.c) and its record shared through the cache (engine_record.c),
 * waits, deadline and progress (engine_wait.c), stops, the report's typed
 * failures and the log lines (engine_failure.c), push (engine_push.c), edits in
 * place (engine_edit.c), pull (engine_pull.c) and the credentials' creation
 * marker (engine_marker.c). engine.c runs push and pull, push runs the edit
 * pass; none calls back up. Every part works on either kind through the kind's
 * descriptor (kind.h); what is one kind's own is in one place: the marker in
 * engine_marker.c, tokens in create_done (engine_push.c), orphans in
 * delete_done. Nothing outside sync/ includes this.
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
    ENGINE_DB,          /* the store failed: ERROR_IO */
    ENGINE_DEADLINE,    /* the run's deadline passed (timed_out): ERROR_IO */
    ENGINE_TOO_SLOW,    /* a reply under the low-speed limit (timed_out): ERROR_IO */
    ENGINE_RATE_LIMITED /* 429s with nothing settling for give_up windows: ERROR_IO */
} engine_stop;

/*
 * The pacing schedule. A budget of `requests` per `window_s` with a `share` gives
 * an even spacing (base_interval = window_s / (requests * share)): a request
 * starts no sooner than next_at, and never while the ring holds `cap` completion
 * times of the last window. After a 429 the spacing is `slow` times longer; each
 * request that settles brings it back a little.
 */
typedef struct engine_pace {
    bool paced;              /* a budget applies; else only pauses (429, backoff) */
    double window_s;
    double base_interval;    /* seconds between request starts at full pace */
    double slow;             /* >= 1: the spacing's multiplier after 429s */
    double next_at;          /* the earliest start of the next request */
    double *ring;            /* completion times of the last `cap` requests */
    size_t cap, head, count;
    double give_up_s;        /* give_up_windows * window_s */
    double last_settled;     /* when a request last settled (or the run began) */
} engine_pace;

typedef struct engine {
    store *st;
    const sync_api_ops *ops;
    void *api;
    sync_options opt;      /* defaults filled in, clock never NULL */
    sync_report *report;
    engine_stop stop;
    error_info err;        /* why it stopped */

    engine_pace pace;
    double resume_at;      /* the queue is paused until then (429, backoff) */
    sync_wait_cause pause_cause;  /* why: RATE_LIMITED or BACKOFF */
    sync_failure pause_failure;   /* the failure behind the pause */
    double run_start;
    double deadline_at;    /* 0: none */
    unsigned failures;     /* consecutive 429/not_sent/ambiguous: backoff exponent */
    unsigned not_sent_streak;
    uint64_t rng;          /* jitter */
    size_t requests;       /* sent in this run */
    bool pulled;           /* a listing was merged in this run */
    size_t requeued;       /* rows the last merge queued for another push */
    size_t refused;        /* listed objects the store refused in the current pull */

    /* progress of the current phase */
    sync_phase phase;
    size_t done, total;
    double per_item;       /* requests per item of the phase (a look and its write:
                              2); 0 counts as 1 */
} engine;

/* What a request is about, for the report when it fails: a kind, and the row's id
 * (NULL for a listing). */
typedef struct engine_target {
    model_kind kind;
    const char *id;
} engine_target;

/* A request through the ops table; `arg` is the caller's. */
typedef sync_outcome (*engine_request_fn)(engine *e, void *arg, sync_result *res);

/* ---- engine_rows.c: the rows a run acts on ------------------------------- */

/* Rows of every kind whose state is in `states` (a mask of 1u << state). */
error_code engine_count_states(engine *e, unsigned states, size_t *out, error_info *err);
/* The same over the rows this run pushes: the scope's when scoped, else all. */
error_code engine_count_queue(engine *e, unsigned states, size_t *out, error_info *err);

/* Keyset walk over `kind`'s rows in `states` (a mask of 1u << state), calling `fn`
 * for each until the run stops; a store failure stops the run. Rows that leave
 * those states while being acted on never come back. */
typedef void (*engine_row_fn)(engine *e, const model_object *row);
void engine_each_row(engine *e, model_kind kind, unsigned states, engine_row_fn fn);

/* The same walk a page at a time: `fn` (a store_visit) gets each page of the
 * rows (the scope's when scoped, read afresh) and returns anything but ERROR_OK
 * to end it once the run stops. */
void engine_walk(engine *e, model_kind kind, unsigned states, store_visit fn, void *ctx);

/* What names a row in a log line beside its id: its label (kind.h), "" when the
 * label is only the id. Points into `row`. */
const char *engine_row_label(const model_object *row);

/* ---- engine_pace.c: the schedule ----------------------------------------- */

double engine_now(engine *e);

/* Seed the jitter and set up the schedule from opt.budget (defaults filled in);
 * the run then takes over the last run's record (engine_pace_load, which calls
 * here: engine_pace.c never calls engine_record.c). ERROR_NOMEM. */
error_code engine_pace_init(engine *e, error_info *err);
void engine_pace_free(engine *e);

/* Seconds between request starts now (0: unpaced). */
double engine_pace_interval(const engine *e);

/* When the schedule lets the next request start: the next even slot, and no
 * sooner than a full window after the oldest of the last `cap` completions. 0
 * when unpaced. */
double engine_pace_slot(const engine *e);

/* When `n` requests may start back to back (a look and its write): the slot,
 * and no sooner than the ring has room for all `n` (at most its size). */
double engine_pace_slot_for(const engine *e, size_t n);

/* A request starts at `now`: the next slot is one interval later. */
void engine_pace_start(engine *e, double now);

/* Put a completion time in the ring (the oldest leaves when it is full). */
void engine_pace_count(engine *e, double when);

/*
 * After each request about `t`: count it against the budget; on a 429 pause the
 * whole queue (Retry-After clamped to max_backoff_s, else backoff), halve the
 * pace, and stop the run (ENGINE_RATE_LIMITED) when nothing settled for
 * give_up_windows windows; after not_sent/ambiguous pause with backoff; stop on
 * auth or when the remote stays unreachable (the report's failure then names
 * `t`). A request that settles (ok, rejected, not found) brings the pace back a
 * step.
 */
void engine_after_request(engine *e, const engine_target *t, const sync_result *res);

/* ---- engine_record.c: the schedule shared through the cache --------------- */

/* Take over the schedule the last run on this cache left (its last completion
 * times, next slot and slowdown), when it is from this clock and not older than
 * a window: back-to-back runs keep one schedule. Never fails (a record that does
 * not read is ignored). */
void engine_pace_load(engine *e);
/* Leave the schedule for the next run (store meta STORE_META_PACE); a failure
 * to write is a warning. */
void engine_pace_save(engine *e);

/* ---- engine_wait.c: waits, deadline, retries, progress -------------------- */

/*
 * Before each request: honour a stop or the cancel flag, the queue's pause
 * (429/backoff) and the schedule, sleeping as needed and reporting
 * SYNC_PHASE_WAIT with a countdown about once a second (a pacing gap under 1 s is
 * not reported). A wait that would end past the deadline is not begun: the run
 * stops with ENGINE_DEADLINE, as it does once the deadline has passed. false: do
 * not send (e->stop says why).
 */
bool engine_before_request(engine *e);

/* The same for a look and its write: both start in one wait, back to back (the
 * schedule moves on by two intervals), so no pacing gap opens between them. */
bool engine_before_pair(engine *e);

/*
 * A write with its fresh look. `look` (a GET of the object) and `write` (its
 * PATCH or DELETE) go back to back in one slot of the schedule; between them
 * `judge` reads the look (recording what it settles itself: a conflict, an edit
 * the remote already holds) and returns true to write now. A write that did not
 * settle (not sent, 429, ambiguous) is tried again from a new look, since any
 * wait between look and write means look again; not_sent and ambiguous count
 * as attempts (max_attempts), a 429 does not. A judge that stops the run (a
 * store failure) ends it. Returns the outcome of the last request (res filled;
 * SYNC_NOT_SENT with e->stop set when nothing went) and sets *stage.
 */
typedef enum engine_stage {
    ENGINE_STAGE_LOOK,    /* the look ended it: failed, or 404 */
    ENGINE_STAGE_JUDGED,  /* the look settled it: nothing written */
    ENGINE_STAGE_WRITE    /* the write's outcome */
} engine_stage;

typedef struct engine_looked {
    engine_request_fn look, write;
    bool (*judge)(engine *e, void *arg);
    void *arg;
} engine_looked;

sync_outcome engine_send_looked(engine *e, const engine_target *t, const engine_looked *l,
                                sync_result *res, engine_stage *stage);

/* A judge's common part: the store's verdict on `looked` (store_look), a row that
 * became a conflict counted in the report; a look the store cannot read is
 * logged and a store failure stops the run (both: STORE_LOOK_SKIP). */
store_look_result engine_judge_look(engine *e, const engine_target *t,
                                    const model_object *looked);

/*
 * An idempotent request (delete, list page, get) about `t`: sent until it settles,
 * repeated after not_sent and ambiguous outcomes up to max_attempts times, and
 * after 429s for as long as the run goes on (a 429 is not an attempt: the run
 * gives up on 429s by time, see engine_after_request). Returns the last outcome
 * (res filled); SYNC_NOT_SENT with e->stop set when it never went.
 */
sync_outcome engine_send_idempotent(engine *e, const engine_target *t, engine_request_fn fn,
                                    void *arg, sync_result *res);

/* The same, but an ambiguous outcome is returned at once when `retry_ambiguous`
 * is false (the caller settles it another way: an edit confirms with a GET). */
sync_outcome engine_send_retrying(engine *e, const engine_target *t, engine_request_fn fn,
                                  void *arg, bool retry_ambiguous, sync_result *res);

/* Start a phase of `total` items (0: unknown) and report it. */
void engine_phase(engine *e, sync_phase phase, size_t total);
/* One more item of the phase done: report progress with an ETA from the schedule. */
void engine_step(engine *e, size_t items);

/* ---- engine_failure.c ----------------------------------------------------- */

/* A line for opt.on_log (printf-style); nothing without a callback. */
void engine_log(engine *e, sync_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record a stop (the first one wins) with its message, and the report's typed
 * failure: auth, unreachable, database, or for a failed listing what `res` says
 * (a listing that does not hold together without one: a bad reply). */
void engine_fail(engine *e, engine_stop why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a stop caused by a request about `t` (either may be NULL): the
 * failure carries the server's status, error_code, msg and operation id, and the
 * object. */
void engine_fail_at(engine *e, engine_stop why, const engine_target *t, const sync_result *res,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A store error stops the run. */
void engine_db_fail(engine *e, const error_info *err);

/* `f` says what `res` (a request about `t`; either may be NULL) says: its kind,
 * status, the server's fields and the object. */
void engine_failure_from(sync_failure *f, const engine_target *t, const sync_result *res);

/* A row's create, delete or edit did not go through (refused, given up, left for
 * the next sync, a conflict): the report's row_failure. `res` NULL: refused before
 * sending. */
void engine_note_row_failure(engine *e, const engine_target *t, const sync_result *res);

/* ---- engine_push.c -------------------------------------------------------- */

/* Push the outbox: deletes (and remote copies of orphaned credentials), then
 * creates, then edits (engine_edit), each pass rules before credentials. */
void engine_push(engine *e);

/* Rows the push would act on (for progress totals and another round): deleting,
 * orphaned, new, edited. */
error_code engine_outbox_size(engine *e, size_t *out, error_info *err);

/* ---- engine_edit.c -------------------------------------------------------- */

/*
 * The edit pass: every edited row of `kind` (MODEL_STATE_EDITED) is sent as ONE
 * PATCH of its edited fields (store_edit_get) with its current values, through
 * the pacing, 429 retries and progress steps of the other passes. 200: recorded
 * with store_edit_pushed (report->updated). Ambiguous: confirmed by a GET (the
 * values sent are there: recorded as a 200). 404 (PATCH or GET): a conflict
 * "gone", never created again; a 4xx refusal: a conflict "rejected" with the
 * server's message (report->conflicts). Anything else leaves the row edited for
 * the next sync (a PATCH repeated is the same edit) and notes row_failure.
 */
void engine_edit(engine *e, model_kind kind);

/* engine_rotate.c: bring the rotations up to date, run their commands, mark the
 * old credentials whose retirement is due deleting; returns how many it marked. */
size_t engine_rotate(engine *e);
/* Only the links brought up to date (store_rotation_settle): a run that stopped. */
void engine_rotate_settle(engine *e);
/* Whether credential `id` is the successor of a rotation that is not over. */
bool engine_rotation_successor(engine *e, const char *id);

/* ---- engine_pull.c -------------------------------------------------------- */

/* Pull both complete listings into staging and merge them. false: no merge. */
bool engine_pull(engine *e);

/* ---- engine_marker.c: the credentials' creation marker ------------------- */

/*
 * Make `req` (a copy of the row about to be created) recognisable in a later
 * listing: a credential's metadata becomes the user's metadata, a newline and the
 * marker line with its local id when that fits in MODEL_METADATA_MAX bytes, else
 * the marker line alone (see SYNC_MARKER_KEY); the edit pass puts the user's
 * metadata back. A rule is found by its natural key and is left as it is.
 */
void engine_mark_request(model_object *req);

/* What the creation markers of one pulled page hold, as store_pull_stage takes
 * them: per item, the local id of its marker (`ptrs`) and the metadata exactly as
 * listed, marker included (`raw`, NULL for an item without a marker). Both are
 * NULL for a kind without markers. */
typedef struct engine_markers {
    char (*ids)[MODEL_ID_MAX + 1];
    const char **ptrs;
    char **raw;
    size_t count;
} engine_markers;

/* Strip the marker line from each item's metadata (people see their own
 * metadata), keeping its local id and a copy of the metadata as listed in `m`.
 * ERROR_NOMEM; free with engine_markers_free whatever the result. */
error_code engine_markers_take(codec_page *page, engine_markers *m, error_info *err);
void engine_markers_free(engine_markers *m);

/* The look before deleting `row`: a credential's metadata as the row keeps it,
 * the marker line stripped when the row holds it without (as a pull caches it),
 * so a marker is no change. */
void engine_unmark_like(model_object *looked, const model_object *row);

/* Whether an edit that sent `fields` of `sent` only took the creation marker away
 * from what the look showed (`looked`): the PATCH that follows a create, no
 * change of anyone's, so no "updated" in the report. */
bool engine_marker_only(const model_object *looked, const model_object *sent,
                        unsigned fields);

#endif

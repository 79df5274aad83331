/*
 * sync: the offline-first sync engine (sync/engine*.c) and the interface through
 * which it talks to the remote API (sync_api_ops), so unit tests script every
 * outcome and the real client (api.h) plugs in the same way.
 *
 * - A run pushes the outbox (deletes, creates, then edits: one PATCH of the edited
 *   fields per row), pulls complete listings following next_page_uri verbatim,
 *   then reconciles. Each state move is its own short transaction; none is held
 *   across a call to the API. The engine never prints: progress and log lines go
 *   through callbacks, and never carry a token.
 * - Absence is evidence only in a complete listing: after an error in a pull
 *   nothing is marked deleted and the cache is left as it was. A listed object the
 *   store refuses costs only itself: a warning names it, report->refused counts
 *   it, its cached copy stays.
 * - Ambiguous creates are settled by the natural key (rules) or the creation
 *   marker (credentials, SYNC_MARKER_KEY) in a later listing.
 * - Every PATCH and DELETE follows a GET of its object in one slot of the
 *   schedule, judged by store_look (a conflict writes nothing; 404 is gone); a
 *   PATCH reply whose unsent fields differ from the look's is a crossed conflict.
 * - Pacing (sync_budget): one request start every window_s / (requests * share)
 *   seconds and at most requests * share in any rolling window, the schedule kept
 *   in the cache for the next run. A 429 pauses the queue, then halves the pace;
 *   a run gives up on 429s only after give_up_windows windows without progress,
 *   and stops between requests at deadline_s. Unsent rows always stay queued.
 */
#ifndef RAMPART_SYNC_H
#define RAMPART_SYNC_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/codec.h"
#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"

/*
 * How one API call ended, as sync/api.c classifies it:
 * OK            2xx with a body that decoded.
 * NOT_SENT      the request surely did not reach the server (connect refused, DNS,
 *               TLS setup): safe to retry as is.
 * AMBIGUOUS     it may have happened (reset or timeout after sending, truncated or
 *               undecodable 2xx, 5xx): a create must be reconciled by a listing.
 * REJECTED      a definite 4xx other than 401/403/404/429 (validation): the message
 *               says why.
 * RATE_LIMITED  429: retry_after_s says how long when the server said.
 * AUTH          401/403: stop the whole sync.
 * NOT_FOUND     404 (a delete: done; an edit or a get: the object is gone).
 */
typedef enum sync_outcome {
    SYNC_OK,
    SYNC_NOT_SENT,
    SYNC_AMBIGUOUS,
    SYNC_REJECTED,
    SYNC_RATE_LIMITED,
    SYNC_AUTH,
    SYNC_NOT_FOUND
} sync_outcome;

/*
 * Why a request, or a whole run, did not simply work: a type that the console and
 * the command line act on, so that no decision ever depends on a message's text.
 */
typedef enum sync_failure_kind {
    SYNC_FAILURE_NONE,            /* it worked (or, for a run, it did not stop early) */
    SYNC_FAILURE_UNREACHABLE,     /* the request never left: DNS, connect, TLS setup */
    SYNC_FAILURE_TIMED_OUT,       /* sent, but no whole reply came in time */
    SYNC_FAILURE_CONNECTION_LOST, /* sent, then the connection failed or the reply was
                                     cut short */
    SYNC_FAILURE_RATE_LIMITED,    /* 429: retry_after_s is the wait the server asked */
    SYNC_FAILURE_REJECTED,        /* refused for good: a 4xx other than 401/403/404/429,
                                     a 3xx, or not sent because the client refused it
                                     (http_status 0) */
    SYNC_FAILURE_AUTH,            /* 401/403: the API key */
    SYNC_FAILURE_NOT_FOUND,       /* 404 */
    SYNC_FAILURE_SERVER_ERROR,    /* 5xx, or a status HTTP does not define */
    SYNC_FAILURE_BAD_REPLY,       /* a 2xx that could not be used; a listing that does
                                     not hold together (items without ids, a loop) */
    SYNC_FAILURE_DATABASE,        /* runs only: the local database failed */
    SYNC_FAILURE_BUSY,            /* runs only: another sync of the database runs */
    SYNC_FAILURE_LOCAL,           /* nothing reached the remote for a local reason: out
                                     of memory, a call the engine cannot run */
    SYNC_FAILURE_COUNT
} sync_failure_kind;

/* The result of one call: the outcome plus what the server said. */
typedef struct sync_result {
    sync_outcome outcome;
    sync_failure_kind failure; /* why, when not OK; an implementation that leaves it
                                  NONE gets sync_outcome_failure(outcome) */
    int http_status;         /* 0 when no reply */
    double retry_after_s;    /* from Retry-After; < 0 when absent */
    char error_code[64];     /* the error body's error_code; empty when it had none */
    char server_msg[512];    /* the error body's msg, cleaned; empty when none */
    char message[512];       /* human text: the server's msg and operation id, or the
                                transport error; never a token or the API key */
    char operation_id[MODEL_ID_MAX + 1];
} sync_result;

/*
 * The remote API as the engine sees it; `ctx` is the implementation's state, and
 * paths, list keys and id prefixes come from the kind's descriptor (kind.h). Every
 * function fills `res` (never NULL) and returns res->outcome; a 404 is
 * SYNC_NOT_FOUND, a 2xx whose body does not decode or names another object
 * SYNC_AMBIGUOUS. `out` is initialised to the kind by the call and released by the
 * caller with model_object_clear whatever the outcome.
 * - create: POST the create body of `in`; on SYNC_OK `out` is the created object
 *   (a credential with its token).
 * - remove: DELETE `id` of `kind`; SYNC_OK for 204 (404: the engine takes it as done).
 * - list_page: `url` NULL for the first page of the collection, else a
 *   next_page_uri verbatim; fills `page` (empty before; codec_page_free).
 * - update: PATCH in->id with only `fields` (kind_field_bit of KIND_FIELD_EDIT
 *   fields, codec_patch_body); on SYNC_OK `out` is the object as the server has
 *   it. No field, or one that never changes: SYNC_REJECTED without sending.
 * - get: `id` of `kind` into `out` (a credential's token NULL).
 * - list_ahead (may be NULL): the page (`url` as for list_page) the engine asks
 *   for next, asked only when a request could start at once; its request may
 *   leave now and its reply wait for that call; any other call drops it. true
 *   when a request was started.
 * - deadline (may be NULL): told before every request: the run ends in
 *   `seconds_left` (<= 0: none), and a request cut at it is a timeout (sent:
 *   ambiguous).
 * sync_run refuses a table without every required operation.
 */
typedef struct sync_api_ops {
    sync_outcome (*create)(void *ctx, const model_object *in, model_object *out,
                           sync_result *res);
    sync_outcome (*remove)(void *ctx, model_kind kind, const char *id, sync_result *res);
    sync_outcome (*list_page)(void *ctx, model_kind kind, const char *url, codec_page *page,
                              sync_result *res);
    sync_outcome (*update)(void *ctx, const model_object *in, unsigned fields,
                           model_object *out, sync_result *res);
    sync_outcome (*get)(void *ctx, model_kind kind, const char *id, model_object *out,
                        sync_result *res);
    bool (*list_ahead)(void *ctx, model_kind kind, const char *url);
    void (*deadline)(void *ctx, double seconds_left);
} sync_api_ops;

/* Name of an outcome ("ok", "not_sent", …) for logs and --json. */
const char *sync_outcome_name(sync_outcome outcome);

/* Name of a failure kind ("none", "unreachable", "timed_out", "rate_limited", …)
 * for --json. */
const char *sync_failure_name(sync_failure_kind kind);

/* The usual failure behind an outcome (NOT_SENT: unreachable, AMBIGUOUS: connection
 * lost, …), for results whose implementation did not say. */
sync_failure_kind sync_outcome_failure(sync_outcome outcome);

/*
 * Credentials carry a creation marker so an ambiguous create can be recognised in
 * a later listing: the metadata sent with a create is the user's metadata, a
 * newline and a last line "rampart-create=<local id>" when that fits in the API's
 * MODEL_METADATA_MAX bytes, else (and when the user's metadata is empty) that line
 * alone. The user's metadata may use all MODEL_METADATA_MAX bytes. The marker is
 * temporary: the create's reply (metadata with the marker) is recorded by
 * store_confirm_create as the base of a metadata edit, so the edit pass of the
 * same sync PATCHes the user's own metadata back and the marker is gone from the
 * server. Pulled metadata has a marker line stripped before it is cached (people
 * see their own metadata), and the text as listed is handed to the store's merge
 * beside it (store_pull_stage's raw_metadata).
 */
#define SYNC_MARKER_KEY "rampart-create="

typedef enum sync_phase {
    SYNC_PHASE_PUSH,
    SYNC_PHASE_PULL,
    SYNC_PHASE_RECONCILE,
    SYNC_PHASE_WAIT,   /* paused: rate budget, 429 or backoff */
    SYNC_PHASE_DONE
} sync_phase;

/* Why the queue waits (SYNC_PHASE_WAIT). */
typedef enum sync_wait_cause {
    SYNC_WAIT_NONE,
    SYNC_WAIT_BUDGET,       /* pacing: the next slot of this client's share of the budget */
    SYNC_WAIT_RATE_LIMITED, /* a 429: the whole queue paused (Retry-After, else backoff) */
    SYNC_WAIT_BACKOFF       /* after a failure (5xx, a dropped reply, unreachable): the
                               progress's failure says which */
} sync_wait_cause;

struct sync_failure;

typedef struct sync_progress {
    sync_phase phase;
    size_t done, total;   /* items of this phase (pull: rows fetched, total unknown = 0) */
    double eta_s;         /* < 0 when unknown (no total); from the requests left of
                             this phase and the schedule: the wait for the next start
                             (a pause included), then one interval per request left
                             (unpaced: the run's mean request time per request) */
    double wait_s;        /* SYNC_PHASE_WAIT: how long the pause lasts from now (a wait
                             is reported again about once a second: a countdown; a
                             pacing gap under 1 s is the pace itself and is not
                             reported). After a wait the phase is reported again. */
    sync_wait_cause wait_cause;         /* SYNC_PHASE_WAIT: why */
    const struct sync_failure *failure; /* RATE_LIMITED, BACKOFF: the failure behind the
                                           wait (status, message, operation id); NULL
                                           otherwise; valid during the callback only */
    double rate_per_s;    /* the pace the schedule allows now (requests per second;
                             lower after a 429); 0 when unpaced */
    size_t requests;      /* requests sent in this run so far */
} sync_progress;

/*
 * The account's request budget and the part of it a sync uses. The production
 * service allows 120 requests per rolling 60 s to the whole account; a sync takes
 * `share` of it, spread evenly over the window (never a burst), so the account's
 * other clients keep the rest. Zero fields take the defaults.
 */
typedef struct sync_budget {
    int requests;           /* per window; 0: unpaced */
    double window_s;        /* 0: 60 */
    double share;           /* 0 < share <= 1; 0: 0.8 */
    double give_up_windows; /* 429s with no request settling for this many windows stop
                               the run; 0: 2 */
} sync_budget;

typedef enum sync_log_level { SYNC_LOG_INFO, SYNC_LOG_WARN, SYNC_LOG_ERROR } sync_log_level;

/* A clock and a sleep the engine uses for pacing, injectable for tests. */
typedef struct sync_clock {
    double (*now)(void *ctx);                  /* seconds, monotonic */
    void (*sleep)(void *ctx, double seconds);
    void *ctx;
} sync_clock;

/* A row a scoped sync pushes: its kind and id (a local id stays valid after the
 * create: it is then an alias of the remote id). */
typedef struct sync_row_ref {
    model_kind kind;
    char id[MODEL_ID_MAX + 1];
} sync_row_ref;

typedef struct sync_options {
    bool push;                 /* push the outbox */
    bool scoped;               /* push only the rows of `only` (a command's --sync):
                                  no listing but the one that settles a create of
                                  unknown outcome among them; the report's pending,
                                  attention and converged speak of them alone, and
                                  `others` counts the rest of the queue */
    const sync_row_ref *only;
    size_t only_count;
    bool pull;                 /* pull and reconcile */
    bool follower;             /* the remote is a hub's mirror (read_only): what it no
                                  longer lists is forgotten, not kept as
                                  remote_deleted (a follower has no local change
                                  to keep) */
    int rate_per_min;          /* the older setting: when budget.requests is 0 and
                                  this is > 0, the budget is {rate_per_min, 60 s,
                                  share 1.0}; 0: unpaced */
    sync_budget budget;
    bool wait_for_lock;        /* another process syncing this cache: wait for it (up to
                                  deadline_s) instead of failing busy at once */
    double deadline_s;         /* the whole run's deadline, seconds; 0: none. A run
                                  past it stops between requests (a timed_out
                                  failure); what it did is recorded, the rest waits */
    int max_attempts;          /* tries of one request; 0: default 5. Deletes,
                                  gets and list pages are retried that often
                                  (not_sent, ambiguous), edits too (not_sent: then
                                  the row stays edited for the next sync);
                                  not_sent that many times in a row stops the run
                                  (unreachable: rows stay new). A 429 is not an
                                  attempt (see budget.give_up_windows) */
    double max_backoff_s;      /* clamp of Retry-After and backoff; 0: default 30 */
    size_t listing_max;        /* objects one listing may hold (a remote or hub that
                                  serves pages forever stops there, a failure naming
                                  the setting); 0: 10,000,000 */
    /* Credential rotation (store.h): a push first brings the links up to date
     * (store_rotation_settle), runs the command of each rotation whose successor
     * is held (its output to stderr with rotate_exec_stderr, else /dev/null; at
     * most 60 s), and marks each old credential whose retirement is due
     * deleting, then deletes it after the creates, through its look. A scoped
     * run does this for the rotations of its rows only. */
    long long rotate_quiet_s;  /* store_rotation_due's quiet period; 0: 3600 */
    long long rotate_keep_s;   /* a retired link is forgotten after this; 0: 30 days */
    bool rotate_exec_stderr;
    sync_clock clock;          /* NULL functions: the real clock */
    void (*on_progress)(void *ctx, const sync_progress *p);
    void (*on_log)(void *ctx, sync_log_level level, const char *line);
    void *cb_ctx;
    const volatile bool *cancel; /* set from another thread to stop between requests */
} sync_options;

/*
 * A failure with what the server said and the object it concerns: why a run
 * stopped, or why the last row that did not go through did not.
 */
typedef struct sync_failure {
    sync_failure_kind kind;   /* SYNC_FAILURE_NONE: there is none */
    int http_status;          /* 0 when no reply */
    double retry_after_s;     /* RATE_LIMITED: the wait asked for; < 0 when unsaid */
    char error_code[64];      /* the server's error_code, may be empty */
    char server_msg[512];     /* the server's msg, may be empty */
    char operation_id[MODEL_ID_MAX + 1];
    bool has_object;          /* object_kind is set: a row or a listing of that kind */
    model_kind object_kind;
    char object_id[MODEL_ID_MAX + 1]; /* the row's id; empty for a listing */
} sync_failure;

typedef struct sync_report {
    size_t created, deleted, failed;     /* pushes that settled */
    size_t updated;                      /* edits (PATCHes) that settled: the remote
                                            has the values sent */
    size_t conflicts;                    /* rows that became conflicts in this run
                                            (an edit refused or its object gone, a
                                            remote change meeting an edit here, a
                                            remote rule holding a create's key) */
    size_t retried;                      /* requests repeated after a 429/not_sent */
    size_t pulled_rules, pulled_creds;   /* rows in the complete listings */
    size_t remote_added, remote_deleted; /* changes found by the pull */
    size_t refused;                      /* listed objects the store refused (a bad
                                            CIDR…): each logged as a warning naming
                                            it; a cached copy is kept as it was */
    size_t adopted;                      /* ambiguous creates found remotely */
    size_t orphans_deleted;              /* credentials whose token was lost: deleted
                                            remotely and queued again */
    size_t pending;                      /* rows a sync still has to send or settle
                                            afterwards (new, creating, unknown,
                                            deleting, orphaned, edited) */
    size_t attention;                    /* failed and conflict rows afterwards: the
                                            user fixes, retries, discards or resolves
                                            them */
    size_t conflicted;                   /* of attention: the conflict rows (the
                                            rest are failed rows) */
    size_t others;                       /* a scoped run: rows outside its scope that
                                            wait for a sync or for the user */
    bool converged;                      /* nothing pending, nothing failed, no error */
    bool auth_failed;
    bool cancelled;                      /* stopped by the cancel flag (ERROR_OK) */
    sync_failure failure;                /* why the run stopped early (its message is
                                            last_error); NONE when it did not, and
                                            when it was cancelled */
    sync_failure row_failure;            /* the last row whose create, delete or
                                            edit did not go through in this run
                                            (refused, given up after 429s, left for
                                            the next sync, a conflict); NONE when
                                            every row went */
    char last_error[512];
} sync_report;

/*
 * The one summary of a run, for the command line and the console alike: what it
 * did ("2 created, 0 deleted, 1 failed", then each other count only when not
 * zero: "; 2 updated", "; 1 new conflicts", "; remote has 3 rules, 1
 * credentials", "; 1 new there, 0 deleted there", refused, adopted and orphaned
 * counts) and what it left, by cause ("; 2 pending", "; 1 conflict to resolve",
 * "; 1 failed row to fix"). Written into `buf` (`size` > 0 bytes, cut when it
 * does not fit) and returned; NULL `r`: "". Pure.
 */
const char *sync_report_summary(const sync_report *r, char *buf, size_t size);

/*
 * Whether a run that ended as `r` says is worth running again by itself later,
 * with nothing changed by a person: only when it stopped because the remote could
 * not be reached (SYNC_FAILURE_UNREACHABLE; the rows stay queued). A refusal, a
 * refused key, a server or database failure need someone to look. Decided from
 * the typed failure alone, never from a message. NULL: false.
 */
bool sync_report_should_retry(const sync_report *r);

/*
 * Run one sync over `st` through `ops`. Returns ERROR_OK when the run itself
 * worked (even if some rows failed validation remotely: see the report; also when
 * cancelled: report->cancelled); ERROR_CONFIG on an auth failure; ERROR_IO on a
 * database failure, when the remote could not be reached at all (not_sent
 * max_attempts times in a row: rows stay new, never failed), when a listing
 * could not be completed, when the deadline passed (timed_out) or when 429s
 * lasted give_up_windows windows with nothing settling (rate_limited);
 * ERROR_STATE inside a transaction, or when another sync of the same database
 * holds its lock (store_sync_lock_take; with opt->wait_for_lock, when the wait for
 * it passed the deadline or was cancelled): nothing was sent. Whenever it returns an error,
 * report->failure says why as a type (last_error as a sentence).
 * Rounds: creating/unknown rows are settled by a listing before anything is
 * sent; then push + pull, repeated (at most 3 times) while a pull queues work
 * again (a create the listing lacked, an orphaned credential deleted remotely and
 * created afresh in the same run, so no credential stays on the server without
 * its token here).
 */
error_code sync_run(store *st, const sync_api_ops *ops, void *api_ctx,
                    const sync_options *opt, sync_report *report, error_info *err);

/* One line of a plan: what the next sync would do with one row. */
typedef struct sync_plan_item {
    char sign;                  /* '+' create, '-' delete, '!' failed/orphaned/unknown/
                                   conflict, '~' changed: deleted remotely
                                   (remote_deleted) or edited here (edited) */
    const model_object *object; /* the row, valid during the callback only */
    const char *why;            /* short reason ("create", "the server refused: …",
                                   an edit's "cidr 10.0.0.0/8 -> 10.0.0.0/16") */
} sync_plan_item;

/* The plan's line for a row in `state` whose error text is `error_text`: returns
 * its sign (0: settled, not part of a plan) and points *why at the reason (static
 * text, or `error_text` itself for failed, orphaned and conflict rows that have
 * one). For edited and conflict rows this is a summary without the fields: the
 * plan (sync_plan) and sync_edit_describe say what changed. */
char sync_plan_line(model_state state, const char *error_text, const char **why);

/*
 * What an edited or conflicting row is about, as the plan shows it, so the command
 * line and the console print the same text. `info` is the row's store_edit_get;
 * `error_text` the row's error (used for a rejected edit; may be NULL). Written
 * into `buf` (`size` bytes, cut at a UTF-8 boundary with "…" when it does not fit)
 * and returned:
 * - edited: each edited field "name base -> local", joined by "; " in descriptor
 *   order ("cidr 10.0.0.0/8 -> 10.0.0.0/16; description "" -> web");
 * - conflict fields: "cidr: local 10.0.0.0/16, remote 10.1.0.0/16 (changed on both
 *   sides): resolve with --keep-local or --take-remote" (several fields joined by
 *   "; " before the one "(changed on both sides)");
 * - conflict gone: "deleted remotely while edited here: resolve with …";
 * - conflict key: "the server has rule ipr_… for this cidr with the other action:
 *   resolve with …" (a create; an edited cidr: "the server has rule ipr_… for
 *   this cidr: resolve with …");
 * - conflict rejected: `error_text` (else "the server refused the edit: resolve
 *   with …").
 * Values: a text over SYNC_EDIT_VALUE_MAX bytes is cut with "…", an ACL's rules are
 * joined by ", ", an empty value is shown as "", a newline as "\n" and other
 * control characters as '?'. A row that is neither edited nor a conflict gives "".
 */
#define SYNC_EDIT_VALUE_MAX 40
const char *sync_edit_describe(const store_edit_info *info, const char *error_text, char *buf,
                               size_t size);

/* Bit (1u << state) for every state a plan shows. */
unsigned sync_plan_states(void);

/*
 * Walk the rows a sync would act on, from the cache alone (no network), calling
 * `fn` for each in a stable order (rules then credentials, by id). An edited or
 * conflicting row's reason is sync_edit_describe's. Stops early and returns what
 * `fn` returned if not ERROR_OK.
 */
error_code sync_plan(store *st,
                     error_code (*fn)(void *ctx, const sync_plan_item *item, error_info *err),
                     void *ctx, error_info *err);

#endif

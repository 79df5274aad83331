/*
 * emulator: the reference server of the remote API (`rampart serve-api`): every
 * route of service-api.md with the behaviour of api-facts.md, over http.h, its
 * rows kept in its own SQLite file through the store (state synced).
 *
 * - Routes: POST/GET /ip_policy_rules, GET/PATCH/DELETE /ip_policy_rules/{id},
 *   the same for /credentials, one piece of code over the kind. POST 201 and
 *   PATCH 200 reply with the whole object, GET 200, DELETE 204 (404 when gone).
 * - The gate first: the Bearer key in constant time (else 401, even for an unknown
 *   path), then the version header (missing: 400 unless accepted; not "2": 400).
 * - Ids are the kind's prefix and 27 base62 characters from one monotonic
 *   generator (they sort by creation); uris are absolute, from the base URL. A
 *   credential's token is sent in its create reply only (null elsewhere).
 * - Lists: limit 1..100 (default 100), before_id, newest first, next_page_uri
 *   null on the last page; any other, repeated or malformed parameter is a 400.
 * - Bodies are decoded by the codec and checked by the kind's validate (400 with
 *   the client's messages; a CIDR another rule of the policy holds names it). A
 *   PATCH takes only KIND_FIELD_EDIT fields (another member, or a body that
 *   changes nothing, is a 400 naming it); the merged row goes through
 *   store_update and keeps its id. A credential created without an owner is
 *   EMULATOR_OWNER_ID's.
 * - Errors: {"error_code","status_code","msg","details":{"operation_id"}} and an
 *   "Operation-Id" header. With rate_limit, one rolling window for every client:
 *   past it a 429 ERR_RATE_LIMITED without Retry-After (a refused one not counted).
 */
#ifndef RAMPART_EMULATOR_H
#define RAMPART_EMULATOR_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

/* The owner of credentials created without one: the API key's user. */
#define EMULATOR_OWNER_ID "usr_2Rampart0Reference0Server00"

/* Default name of the version header (the production service brands it). */
#define EMULATOR_VERSION_HEADER "Service-Version"

typedef enum emulator_op {
    EMULATOR_OP_CREATE_RULE,
    EMULATOR_OP_CREATE_CRED,
    EMULATOR_OP_DELETE_RULE,
    EMULATOR_OP_DELETE_CRED,
    EMULATOR_OP_LIST_RULES,
    EMULATOR_OP_LIST_CREDS,
    EMULATOR_OP_GET_RULE,
    EMULATOR_OP_GET_CRED,
    EMULATOR_OP_PATCH_RULE,
    EMULATOR_OP_PATCH_CRED,
    EMULATOR_OP_ANY,      /* in a fault: every operation */
    EMULATOR_OP_COUNT
} emulator_op;

typedef enum emulator_fault_kind {
    EMULATOR_FAULT_DROP,     /* done, reply never sent */
    EMULATOR_FAULT_RESET,    /* done, connection reset */
    EMULATOR_FAULT_TRUNCATE, /* done, reply cut in half */
    EMULATOR_FAULT_DELAY,    /* done, reply late */
    EMULATOR_FAULT_STATUS,   /* refused with `status` before doing anything */
    EMULATOR_FAULT_TRICKLE   /* done, body sent one byte every delay_ms */
} emulator_fault_kind;

typedef enum emulator_select {
    EMULATOR_SELECT_RANGE,   /* first..last (last 0: no end) */
    EMULATOR_SELECT_EVERY    /* every `every`th */
} emulator_select;

typedef struct emulator_fault {
    emulator_op op;
    emulator_fault_kind kind;
    int status;              /* STATUS: 403, 429, 500 or 502 */
    unsigned delay_ms;       /* DELAY: the wait; TRICKLE: between two bytes */
    long retry_after;        /* 429: seconds for Retry-After; -1: no header */
    emulator_select select;
    unsigned long first, last, every;
} emulator_fault;

enum { EMULATOR_FAULTS_MAX = 32 };

/* A parsed SPEC and its counters: a plain value, not thread-safe (lock it). */
typedef struct emulator_faults {
    emulator_fault items[EMULATOR_FAULTS_MAX];
    size_t count;
    unsigned long seen[EMULATOR_OP_COUNT]; /* requests counted so far */
} emulator_faults;

/* "create_rule", …, "any". */
const char *emulator_op_name(emulator_op op);

/*
 * Parse a --faults SPEC into `out` (zeroed first, counters at 0). NULL or "" is
 * no fault. Faults are deterministic, counted per operation (and all together for
 * "any") once a request passed the gate and matched a route; when several entries
 * select one request, the first wins. Example:
 *   create_rule:drop@2,any:429@1:retry-after=2,list_creds:delay=300@every=3
 *   SPEC   := ENTRY [ "," ENTRY ]...
 *   ENTRY  := OP ":" KIND "@" SELECT [ ":retry-after=" SECONDS ]   (429: 0..86400)
 *   OP     := create_rule | create_cred | delete_rule | delete_cred | list_rules |
 *             list_creds | get_rule | get_cred | patch_rule | patch_cred | any
 *   KIND   := drop | reset | truncate   done (committed), then the reply is lost:
 *                                       no byte / TCP reset / half the body
 *           | delay=MS | trickle=MS     done, then replied MS (1..60000) ms late /
 *                                       the body sent a byte every MS ms
 *           | 429 | 500 | 502           refused before anything is done
 *   SELECT := N | N-M | N+ | every=K    the Nth request of OP (from 1), the Nth to
 *                                       the Mth, the Nth and later, every Kth
 * ERROR_INVALID names the entry and its bad part ("entry 2 'create_rule:dorp@2':
 * unknown kind 'dorp' (drop, reset, …)"); `out` is then empty.
 */
error_code emulator_faults_parse(const char *spec, emulator_faults *out, error_info *err);

/* Count one request of `op` (not EMULATOR_OP_ANY) and return the fault selected
 * for it, or NULL. The pointer stays valid as long as `f`. */
const emulator_fault *emulator_faults_next(emulator_faults *f, emulator_op op);

/* One line per request, for the server's log: `fault` is NULL or "drop", "reset",
 * "truncate", "trickle"; `status` is the reply's (also when it was not delivered);
 * `client` is the request's User-Agent as sent (NULL without one: the client's own
 * text, to neutralise), which tells the account's clients apart. Never carries
 * the key, a token or a body. */
typedef void (*emulator_log_fn)(void *ctx, const char *method, const char *path,
                                int status, const char *fault, double elapsed_ms,
                                const char *client);

typedef struct emulator_config {
    const char *listen;          /* "tcp:127.0.0.1:PORT" or "unix:PATH" */
    const char *db_path;         /* the server's own database (created if missing) */
    const char *api_key;         /* copied; wiped at stop; non-empty */
    const char *version_header;  /* NULL or "": EMULATOR_VERSION_HEADER */
    bool accept_missing_version;
    const char *base_url;        /* NULL or "": http://<listen address>
                                    (unix sockets: http://localhost) */
    const char *faults;          /* SPEC or NULL */
    int rate_limit;              /* requests per rolling window, as the production
                                    service (120 per 60 s) answers past it: 429
                                    without Retry-After; 0: no limit */
    int rate_window_s;           /* the rolling window, seconds; 0: 60 */
    emulator_log_fn log;         /* NULL: no log; called from server threads */
    void *log_ctx;
} emulator_config;

typedef struct emulator emulator;

/*
 * Open the database, listen, and serve in background threads until
 * emulator_stop. ERROR_INVALID for a bad setting (listen address, header name,
 * base URL, fault SPEC: the message names the option), ERROR_IO/ERROR_CONFIG from
 * the store or the socket. On failure *out is NULL and nothing is left running.
 */
error_code emulator_start(const emulator_config *cfg, emulator **out, error_info *err);

/* Where it listens: "127.0.0.1:PORT" (the port actually bound) or the socket path. */
const char *emulator_address(const emulator *em);

/* True when listening on a unix socket. */
bool emulator_is_unix(const emulator *em);

/* The base of every uri in replies, without a trailing slash. */
const char *emulator_base_url(const emulator *em);

/* Stop serving (waits for running requests), close the database, wipe the key,
 * free everything. NULL is a no-op. */
void emulator_stop(emulator *em);

#endif

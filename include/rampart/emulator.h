/*
 * emulator: the reference server of the remote API (`rampart serve-api`): every
 * route of service-api.md with the behaviour of api-facts.md, over the http layer,
 * kept in its own SQLite file through the store module.
 *
 * Contract:
 * - Routes: POST/GET /ip_policy_rules, GET/PATCH/DELETE /ip_policy_rules/{id}, and
 *   the same for /credentials. Success: POST 201 with the object, GET 200, PATCH
 *   200 with the whole object, DELETE 204 with an empty body (404 when already
 *   gone).
 * - Every request first passes the gate: `Authorization: Bearer <key>` compared in
 *   constant time (else 401, before anything else, even an unknown path), then the
 *   version header (its name is configurable; missing: 400 unless accepted; a
 *   value other than "2": 400).
 * - Server rows are store rows in state "synced" with server-made ids (prefix + 27
 *   base62 characters from one monotonic generator, so they sort by creation);
 *   `created_at` is RFC 3339 UTC; `uri`s are absolute, built from the base URL at
 *   reply time. A credential's token ("<id body>_<21 base62>") is written to the
 *   store's token table and sent only in the create reply (null elsewhere).
 * - Lists: `limit` 1..100 (default 100) and `before_id`; newest first;
 *   `next_page_uri` = <base>/<collection>?before_id=<last id on the page>&limit=N,
 *   null on the last page; any other, repeated or malformed parameter: 400.
 * - Create bodies are decoded by the codec (wrong types, bad JSON: 400; unknown
 *   fields ignored, as the codec does) and validated with the client's rules (the
 *   kind's validate, rampart/kind.h: 400 with the same messages); the same CIDR
 *   twice in one policy is a 400 naming the existing rule. Every route is one piece
 *   of code over the kind.
 * - PATCH (an edit in place): the body may hold the fields the kind lets change
 *   (KIND_FIELD_EDIT, rampart/kind.h: a rule's cidr, description, metadata; a
 *   credential's description, acl, metadata), decoded by codec_patch_decode. Any
 *   other member (action, ip_policy_id or ip_policy, owner_id, token, id, uri,
 *   created_at, or one the kind does not have) is a 400 naming it, and so is a body
 *   that changes nothing (none, {}, only nulls); bad JSON or a wrong type is 400
 *   ERR_INVALID_BODY. The merged object is checked as a create is (the same
 *   messages, the "did you mean" of a CIDR; a CIDR another rule of the policy holds
 *   is a 400 naming that rule), then stored with store_update: the id, and so the
 *   place in list order, never changes. The reply is the whole object, a
 *   credential's token null; 404 for an unknown id. Without owner_id a credential belongs to
 *   EMULATOR_OWNER_ID (the key's owner, an admin: any other owner is accepted).
 * - Errors: {"error_code","status_code","msg","details":{"operation_id"}} plus the
 *   header "Operation-Id". Codes: ERR_UNAUTHORIZED 401, ERR_VERSION 400,
 *   ERR_INVALID_BODY 400 (JSON or types), ERR_VALIDATION 400, ERR_INVALID_QUERY 400,
 *   ERR_NOT_FOUND 404, ERR_METHOD_NOT_ALLOWED 405, ERR_TOO_LARGE 413,
 *   ERR_RATE_LIMITED 429, ERR_INTERNAL 500, ERR_BAD_GATEWAY 502, and ERR_FORBIDDEN
 *   403 injected by a fault (a key that may not create what it asks for).
 * - Rate limit (optional): past `rate_limit` requests in a rolling window of
 *   `rate_window_s` seconds (default 60), a 429 ERR_RATE_LIMITED without a
 *   Retry-After header, as the production service does (120 per rolling 60 s).
 *   One budget for the whole account: every client's requests count together
 *   (those that passed the gate and matched a route); a refused one does not.
 * - Threads: the http layer runs hooks on one thread per connection; the store,
 *   the id generator and the fault counters are shared under one mutex, held only
 *   around store calls (never across a delay).
 *
 * Faults (--faults SPEC), deterministic and counter-based:
 *   SPEC   := ENTRY [ "," ENTRY ]...
 *   ENTRY  := OP ":" KIND "@" SELECT [ ":retry-after=" SECONDS ]
 *   OP     := create_rule | create_cred | delete_rule | delete_cred | list_rules |
 *             list_creds | get_rule | get_cred | patch_rule | patch_cred | any
 *   KIND   := drop | reset | truncate   the operation is done (a create or an edit
 *                                       is committed), then the reply is lost: closed
 *                                       without a byte / TCP reset / half the body
 *                                       of the announced Content-Length
 *           | delay=MS                  done, then replied MS (1..60000) ms late
 *           | trickle=MS                done, then the reply's body sent one byte
 *                                       every MS (1..60000) ms (for clients'
 *                                       low-speed limits)
 *           | 403 | 429 | 500 | 502     refused before anything is done; 429 may
 *                                       carry ":retry-after=S" (0..86400) for a
 *                                       Retry-After header (none without it)
 *   SELECT := N        the Nth request of OP (counting from 1)
 *           | N-M      the Nth to the Mth
 *           | N+       the Nth and every later one
 *           | every=K  every Kth (K, 2K, 3K, …)
 * Requests are counted per operation (and all together for "any") once they
 * passed the gate and matched a route. When several entries select one request,
 * the first in SPEC wins. Example:
 *   create_rule:drop@2,any:429@1:retry-after=2,list_creds:delay=300@every=3
 */
#ifndef RAMPART_EMULATOR_H
#define RAMPART_EMULATOR_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

/* The owner of credentials created without owner_id: the API key's user. */
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
 * Parse SPEC (syntax above) into `out` (zeroed first, counters at 0). NULL or ""
 * is no fault. ERROR_INVALID with a message naming the entry and its bad part
 * ("entry 2 'create_rule:dorp@2': unknown kind 'dorp' (drop, reset, …)"); `out` is
 * then empty.
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

/*
 * agent internals shared by agent.c (lifecycle), agent_log.c (log lines),
 * agent_batch.c (store handles, a batch's replies), agent_index.c (the policy
 * index), agent_fetches.c (token fetch times), agent_gate.c (who may ask: peer,
 * headers, key, rate), agent_key.c (paths, the local key), agent_routes.c
 * (tokens, policy check, health) and agent_mirror.c (the read-only mirror of the
 * remote API). agent.c starts the others and none calls it back. Not part of the
 * contract (see rampart/agent.h).
 */
#ifndef RAMPART_AGENT_INTERNAL_H
#define RAMPART_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/agent.h"
#include "rampart/http.h"
#include "rampart/model.h"
#include "rampart/policy.h"
#include "rampart/store.h"
#include "rampart/thread.h"

enum {
    AGENT_KEY_MAX = 512,          /* bytes of the local key */
    AGENT_RATE_SLOTS = 64,        /* peers tracked by the rate limiter */
    AGENT_HEADER_NAME_MAX = 64,
    AGENT_POOL_MAX = 64,          /* read-only store handles open at once */
    AGENT_FETCH_MAX = 512,        /* credentials whose fetch waits to be written */
    AGENT_FETCH_FLUSH_S = 1,      /* how often those are written to the cache (a
                                     rotation judges its quiet period by them) */
    AGENT_BATCH_MAX = 16,         /* token replies an event thread keeps per batch */
    AGENT_BATCH_MAX_MS = 1,       /* and for at most this long */
    AGENT_ASKED_MAX = 128         /* bytes of an id or name kept with one */
};

typedef struct agent agent;

/* A token reply an event thread gave in its current batch (agent_batch.c). */
typedef struct agent_kept {
    char by;                          /* 'i': by id, 'n': by name */
    char asked[AGENT_ASKED_MAX];      /* the id or name asked, as sent */
    char canon[MODEL_ID_MAX + 1];     /* the credential's id */
    char *body;                       /* the reply (heap, wiped when forgotten) */
    size_t len;
    double at;                        /* monotonic ms: when it was read */
    unsigned long long connection;    /* whose request read it */
} agent_kept;

/* What one event thread of a listener keeps (agent_batch.c); only that thread
 * touches it, so no lock. */
typedef struct agent_worker {
    store *st;                        /* its read-only handle; NULL until used */
    agent_kept kept[AGENT_BATCH_MAX];
    size_t nkept;
    char noted[MODEL_ID_MAX + 1];     /* the last fetch it noted, and its second */
    long long noted_at;
} agent_worker;

/* One listener; its address is the ctx of its http server's hooks. */
typedef struct agent_listener {
    agent *ag;
    http_server *http;
    bool tcp;
    char address[HTTP_ADDRESS_MAX + 8]; /* "unix:PATH" / "tcp:127.0.0.1:PORT" */
    char base[AGENT_BASE_MAX];          /* prefix of the uris in mirror replies:
                                           "http://127.0.0.1:PORT", "" for a unix
                                           socket (agent_mirror_base: the public
                                           URL instead when given) */
    agent_worker *workers;              /* one per event thread of its server */
    size_t nworkers;
} agent_listener;

/* A token bucket: `tokens` left at monotonic second `last` (its last refill). */
typedef struct agent_bucket {
    double tokens;
    double last;
} agent_bucket;

typedef struct agent_rate_slot {
    char peer[80];      /* agent_peer_name; "" when free */
    agent_bucket bucket;
} agent_rate_slot;

struct agent {
    char *db_path;
    agent_listener lis[AGENT_LISTEN_MAX];
    size_t nlis;
    char *key;                        /* heap, wiped at stop; NULL without TCP */
    size_t key_len;
    long uids[AGENT_UIDS_MAX];
    size_t nuids;
    unsigned rate;                    /* per peer per second; 0: no limit */
    char version_header[AGENT_HEADER_NAME_MAX];
    unsigned mirror_max_age_s;        /* Cache-Control of mirror replies */
    char public_url[AGENT_BASE_MAX];  /* "" or the base of every mirror uri */
    void (*on_log)(void *ctx, const char *line);
    void *log_ctx;

    /* Read-only store handles, lent to one request at a time (agent_batch.c). */
    pthread_mutex_t pool_lock;
    pthread_cond_t pool_free;
    store *pool[AGENT_POOL_MAX];      /* idle handles */
    size_t npool;                     /* idle */
    size_t nopen;                     /* idle + lent */

    /* The policy index: readers hold index_lock shared while deciding; the
     * indexer thread (agent_index.c) polls the cache, builds a new index when the
     * rules changed and swaps it in; watch_lock serialises the builds (the first
     * one may run on a request: nothing to answer with before it). */
    pthread_mutex_t watch_lock;
    pthread_cond_t index_wake;        /* with watch_lock: the indexer's sleep */
    store *watch;                     /* polls data_version, loads the index */
    long long watch_version;          /* data_version when last looked */
    long long watch_counter;          /* the rules' change counter the index is of */
    pthread_rwlock_t index_lock;
    policy_index *index;
    error_info index_error;           /* the last build failed (code set): why */
    thread_ctl index_thread;          /* stop read under watch_lock */
    atomic_size_t index_builds;
    atomic_size_t index_looks;        /* writes seen by the indexer (data_version) */

    /* Per-peer rate, and the lines about refusals (a bucket of their own: anyone
     * who can connect can make refusals, and must not flood the log with them). */
    pthread_mutex_t rate_lock;
    agent_rate_slot slots[AGENT_RATE_SLOTS];
    agent_bucket refusal_lines;
    size_t refusal_lines_dropped;     /* refusals not logged since the last line */

    atomic_size_t requests, lookups, refused;

    /* Token fetches not yet in the cache (agent_fetches.c): noted under fetch_lock
     * on the request path, written by the flusher thread in one transaction every
     * AGENT_FETCH_FLUSH_S seconds (sooner when the table is full) and at stop. */
    pthread_mutex_t fetch_lock;
    pthread_cond_t fetch_wake;
    store_fetch fetches[AGENT_FETCH_MAX];
    size_t nfetches;
    size_t fetches_dropped;           /* not noted: the table was full */
    thread_ctl fetch_thread;          /* stop read under fetch_lock */
    store_fetch flushing[AGENT_FETCH_MAX]; /* the flusher's copy */
    store *writer;                    /* the flusher's own writable handle */
};

/* ---- agent_log.c (calls no other agent file) ---- */

/* One log line (printf-style, no newline); prefixed with the UTC time. Never give
 * it a token. */
void agent_log(agent *ag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy client text into `out` for a log line: printable ASCII only (the rest as
 * '?'), at most size-1 bytes, quotes and backslashes as '?'. */
void agent_log_text(char *out, size_t size, const char *text);

/* Who asked, for audit lines and the rate limiter: "uid:1000" or "key@127.0.0.1". */
void agent_peer_name(const http_request *req, char *out, size_t size);

/* ---- agent_index.c: the policy index and the indexer thread ---- */

enum { AGENT_INDEX_POLL_MS = 50 }; /* how often it looks for changed rules */

error_code agent_index_start(agent *ag, error_info *err);
void agent_index_stop(agent *ag);

/*
 * Decide `ip` for `policy_id` with the index in force. Only the first check
 * builds it; afterwards the indexer thread rebuilds it when the rules changed
 * (their change counter, not any write: the agent's own bookkeeping never causes
 * one) and swaps it in, so no request waits for a rebuild. ERROR_INVALID for a
 * bad address (message without the text), ERROR_IO when the index cannot be
 * built (a cached rule it refuses: no decision rather than one that ignores it).
 */
error_code agent_policy_check(agent *ag, const char *policy_id, const char *ip,
                              policy_decision *out, error_info *err);

/* ---- agent_fetches.c ---- */

/* Note that credential `cred_id` (its current id) had its token handed out now.
 * Memory only (a mutex, a short scan): the cache is written by the flusher. */
void agent_fetch_note(agent *ag, const char *cred_id);

/* Start the flusher thread. ERROR_IO when it cannot be started. */
error_code agent_fetches_start(agent *ag, error_info *err);

/* Stop the flusher and write what is left (one try: a busy cache loses the last
 * seconds' fetches, said in the log); closes its handle. Safe when never started. */
void agent_fetches_stop(agent *ag);

/* ---- agent_batch.c: store handles; per event thread, per batch ---- */

/* Borrow a read-only handle (opened on demand, at most AGENT_POOL_MAX at once:
 * beyond that, wait for one). NULL with `err` filled when none can be opened. */
store *agent_store_take(agent *ag, error_info *err);

/* Give a handle back (NULL is a no-op). A handle that failed is closed instead of
 * reused when `broken`. */
void agent_store_give(agent *ag, store *st, bool broken);

/* The http idle hook (ctx: the agent_listener): the batch of `worker` is over,
 * its kept replies are wiped and forgotten. */
void agent_batch_end(void *ctx, int worker);

/* If the event thread serving `req` gave the token reply for (by, asked) in this
 * batch, less than AGENT_BATCH_MAX_MS ago, to another connection: the same reply
 * into `resp` (200, Cache-Control: no-store), its credential id into `canon`,
 * and true. False otherwise (also off an event thread): read the cache. */
bool agent_batch_reply(agent_listener *l, const http_request *req, char by, const char *asked,
                       char canon[MODEL_ID_MAX + 1], http_response *resp);

/* Keep a 200 token reply just read for (by, asked) for the rest of the batch
 * (a copy; nothing kept off an event thread, or when the batch holds
 * AGENT_BATCH_MAX already). */
void agent_batch_keep(agent_listener *l, const http_request *req, char by, const char *asked,
                      const char *canon, const http_response *resp);

/* A read-only handle for a lookup: the event thread's own (opened on first use),
 * else one of the pool. NULL with `err` when none can be opened. Give it back
 * with agent_lookup_store_done (`broken`: it failed, closed and opened again
 * when next needed). */
store *agent_lookup_store(agent_listener *l, const http_request *req, error_info *err);
void agent_lookup_store_done(agent_listener *l, const http_request *req, store *st,
                             bool broken);

/* agent_fetch_note, once a second per credential and event thread at most (the
 * cache keeps seconds). */
void agent_batch_note(agent_listener *l, const http_request *req, const char *canon);

/* Wipe and free a listener's workers, close their handles; after its server
 * stopped. */
void agent_workers_free(agent_listener *l);

/* ---- agent_gate.c ---- */

/* The http gate hook (ctx: the agent_listener). */
bool agent_gate(void *ctx, const http_request *req, http_response *resp);

/* The http error hook: the layer's 404/405/413 in the API's error shape. */
void agent_layer_error(void *ctx, const http_request *req, int status, const char *msg,
                       http_response *resp);

/* An error reply in the remote API's shape ({"error_code","status_code","msg",
 * "details":{"operation_id"}} and an Operation-Id header). Like every reply of
 * the agent it carries Cache-Control: no-store. */
void agent_error(http_response *resp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A 200 (or `status`) with a heap JSON body (taken over), with Cache-Control:
 * no-store; NULL (out of memory): a 500. */
void agent_reply(http_response *resp, int status, char *json);

/* A store failure: ERROR_NOT_FOUND 404, the rest 500 ("the cache cannot be read"). */
void agent_store_error(http_response *resp, const error_info *e);

/* ---- agent_key.c ---- */

/* Read the key (first line) of a file only we can read, into a heap string the
 * caller wipes. ERROR_CONFIG when the file is unsafe or holds no usable key. */
error_code agent_key_load(const char *path, char **key, size_t *len, error_info *err);

/* The unix socket's directory: created 0700 when missing; refused when it is not
 * a directory of ours that only we can write. */
error_code agent_socket_dir_check(const char *socket_path, error_info *err);

/* ---- agent_routes.c (the tables) / agent_mirror.c ---- */

/* Who may ask a route on the unix socket, past the checks every request passes
 * (relayed or browser-made requests refused, the per-peer rate). Over TCP every
 * route needs the key: a TCP peer has no uid, and any local user can connect. */
typedef enum agent_auth {
    AGENT_AUTH_ALLOWED_UID, /* a uid given with --allow-uid (default: ours) */
    AGENT_AUTH_ANY_UID      /* whoever can connect: the socket's mode decides */
} agent_auth;

/* A route's row data (req->route_data, read by the gate): who may ask, and what
 * the route answers, which `agent --help` prints (agent_route_doc_get). */
typedef struct agent_route_info {
    agent_auth auth;
    const char *query, *reply, *note; /* as agent_route_doc's */
    int object; /* a model_kind: the reply is one object of it, whose keys the codec
                 * gives (codec_object_keys); -1: `reply` says them */
} agent_route_info;

/* The route table: one row per route, everything known about it (method,
 * pattern, handler, and its agent_route_info); every route's ctx is the
 * agent_listener. */
extern const http_route agent_routes[];
extern const size_t agent_nroutes;

/* The mirror's routes alone (the same rows), for a mirror-only listener. */
extern const http_route agent_mirror_routes[];
extern const size_t agent_mirror_nroutes;

/* Copy the mirror settings of `opt` (max-age, public URL) into `ag`; ERROR_INVALID
 * naming the bad one (agent_mirror.c). */
error_code agent_mirror_settings(agent *ag, const agent_options *opt, error_info *err);

void agent_mirror_list_rules(void *ctx, const http_request *req, http_response *resp);
void agent_mirror_list_creds(void *ctx, const http_request *req, http_response *resp);
void agent_mirror_get_rule(void *ctx, const http_request *req, http_response *resp);
void agent_mirror_get_cred(void *ctx, const http_request *req, http_response *resp);

#endif

/*
 * store: the SQLite cache, the one source of truth on this machine; the only
 * module with SQL in it.
 *
 * - One `store` is one SQLite connection, used from one thread at a time; open
 *   another (STORE_READONLY for readers) per thread.
 * - WAL with synchronous=FULL (a committed token survives power loss), foreign
 *   keys on, a busy timeout; the schema is versioned (PRAGMA user_version) and
 *   migrated forward on open, one transaction per step. See store_open.
 * - Every mutating call is its own transaction unless the caller opened one with
 *   store_begin (then it joins it). Never hold a transaction across a network call.
 * - Rows created here get a local id ("local_…"); when the remote confirms the
 *   create, the row takes the remote id in the same transaction and the local id
 *   keeps resolving (an alias): every call taking an id accepts either.
 * - Browsing is keyset pagination over an index of (key, id), never OFFSET: a page
 *   costs the same at any depth. A rule's cidr sorts by its cidr_key column
 *   (family, address bytes, prefix length). The filter: see store_query.
 * - A rule's natural key (policy id, cidr) is unique among live rules (every state
 *   but deleting, remote_deleted and conflict); the database enforces it, so a
 *   call that would make two live rules share it fails with ERROR_CONFLICT.
 * - Tokens live in their own table, written with the create's reply, never
 *   returned by browsing calls, never in a message. ERROR_IO carries SQLite's
 *   message (also for a write through a STORE_READONLY handle, and for a damaged
 *   file, naming it); other errors as documented per function.
 */
#ifndef RAMPART_STORE_H
#define RAMPART_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/kind.h"
#include "rampart/model.h"

typedef struct store store;

enum store_open_flags {
    STORE_READONLY = 1u << 0 /* no writes, no migration; fails if the file is missing */
};

/* Current schema version written by migrations (PRAGMA user_version). */
int store_schema_version(void);

/* PRAGMA application_id of a rampart cache: "RAMP". */
#define STORE_APPLICATION_ID 0x52414D50

typedef struct store_identity {
    unsigned long application_id; /* STORE_APPLICATION_ID; 0 for a cache an older
                                     rampart made, opened read-only since */
    int schema_version;           /* PRAGMA user_version */
} store_identity;

/* What the open database says it is. */
error_code store_identity_get(store *st, store_identity *out, error_info *err);

/*
 * PRAGMA integrity_check over the whole file (every page, index and constraint;
 * slower than quick_check on a large cache, which is fine for a check run by
 * hand). *problems is how many it reported (0: healthy, up to 100 counted), the
 * first of them in `first`. ERROR_IO when the check itself cannot run (a file
 * too damaged to read).
 */
error_code store_integrity_check(store *st, char *first, size_t size, size_t *problems,
                                 error_info *err);

/*
 * Open (and create/migrate unless STORE_READONLY) the database at `path`
 * (":memory:": a private in-memory one). On success *out is a handle to release
 * with store_close; on failure *out is NULL. A new file is 0600 and its missing
 * directories 0700, whatever the umask; an existing cache, -wal, -shm or -journal
 * that another user owns or others may read or write is ERROR_CONFIG naming the
 * chmod that fixes it (fileperm.h). A cache carries STORE_APPLICATION_ID (written
 * when made, or by the first writable open of an older rampart's cache); any
 * other SQLite file that holds something is ERROR_CONFIG ("not a rampart cache")
 * before anything is written, an empty one is a new cache. ERROR_CONFIG too when
 * the schema is newer than this program knows ("upgrade rampart"), or, read-only,
 * when it is missing or older (nothing to migrate with). ERROR_IO for a file
 * SQLite finds damaged or not a database.
 */
error_code store_open(const char *path, unsigned flags, store **out, error_info *err);

/*
 * Create the missing directories above the file `path` (like mkdir -p, each new
 * one 0700), as store_open does for the database; for files kept beside it.
 */
error_code store_make_parent_dirs(const char *path, error_info *err);

/* Close the handle (NULL is a no-op). Rolls back an open transaction. */
void store_close(store *st);

/* Explicit transaction for batches (import). Nested begin is ERROR_STATE, and so
 * is a commit without a begin. A call failing inside the batch undoes only its own
 * changes; the caller decides whether to commit the rest. */
error_code store_begin(store *st, error_info *err);
error_code store_commit(store *st, error_info *err);
void store_rollback(store *st);

/* Whether a store_begin transaction is open on this handle. */
bool store_in_transaction(const store *st);

/*
 * Page orders. Every order is (key, id), so it is total and keyset cursors work;
 * text keys compare as bytes. A cidr sorts in address order: IPv4 before IPv6,
 * then by address, then shorter prefix first ("9.0.0.0/8" before "10.0.0.0/8"
 * before "10.0.0.0/16"), through a key the store writes beside every cidr. The
 * cursor of a page in any order but STORE_SORT_ID is looked up by its id to find
 * its key: it must be an existing row (a cursor that no longer exists yields an
 * empty page; start again from NULL). Every order walks an index of (key, id), so
 * a page costs the same at any depth; with a policy (rules), the order by policy
 * does, and SQLite picks for the others (a policy's rules found by their index
 * and sorted per page, or the order's index walked for that policy's rows).
 */
typedef enum store_sort {
    STORE_SORT_ID,          /* id order: remote ids sort by creation time */
    STORE_SORT_POLICY,      /* rules: policy id, then id */
    STORE_SORT_CIDR,        /* rules: cidr in address order, then id */
    STORE_SORT_ACTION,      /* rules: allow before deny, then id */
    STORE_SORT_STATE,       /* state name, then id */
    STORE_SORT_DESCRIPTION, /* credentials: description, then id */
    STORE_SORT_COUNT
} store_sort;

/* The name of an order as the console (:sort) and `list --sort` spell it: "id",
 * "policy", "cidr", "action", "state", "description"; NULL for STORE_SORT_COUNT
 * and beyond. */
const char *store_sort_name(store_sort sort);

/* Whether `kind` has order `sort` (store_page takes it): rules id, policy, cidr,
 * action, state; credentials id, description, state. */
bool store_sort_offered(model_kind kind, store_sort sort);

typedef enum store_dir {
    STORE_FORWARD,   /* rows after the cursor, ascending */
    STORE_BACKWARD   /* rows before the cursor, still returned ascending */
} store_dir;

typedef struct store_query {
    const char *policy_id; /* rules only; NULL or "" = all policies */
    /* NULL or "" = no filter; at most 1024 bytes (ERROR_INVALID beyond). Matches
     * case-insensitively (ASCII) as a substring, % _ and \ taken literally, of a
     * rule's id, cidr, description, policy id, action or state; of a credential's
     * id, description, owner id, ACL or state. For rules, a filter that is an IP
     * address (validate_ip: "10.1.2.3", "2001:db8::5") also matches every rule whose
     * cidr contains it, at any prefix length (an IN over the cidr_key index). The
     * same filter counts (store_count) and pages. */
    const char *filter;
    store_sort sort;
    unsigned states;       /* bit (1u << state) per wanted model_state; 0 = all;
                              STORE_STATES_HELD: also the conflicts that hold the
                              remote's values (store_conflict_holds_remote) */
} store_query;

/* In store_query.states: the conflicts whose row holds the remote's values. */
#define STORE_STATES_HELD (1u << MODEL_STATE_COUNT)

/*
 * Keyset page of `kind`'s rows. `cursor` is the id of the row next to the page (the
 * last row of the previous page going forward, the first row of the next page
 * going backward); NULL or "" starts at the beginning (forward) or the end
 * (backward). Fills up to `limit` rows into `rows` (each overwritten: it need not
 * be cleared before, and holds no heap before the call), sets *count. The caller
 * releases the rows with model_object_clear. *count < limit means the end was
 * reached in that direction. In id order the cursor is a position, not a lookup:
 * it need not be an existing id (other orders: see store_sort). Tokens are not
 * filled. ERROR_INVALID for a bad sort (or one the kind does not have), state set
 * or an overlong filter; on failure *count is 0 and nothing needs clearing.
 */
error_code store_page(store *st, model_kind kind, const store_query *q, const char *cursor,
                      store_dir dir, size_t limit, model_object *rows, size_t *count,
                      error_info *err);

/* Called by store_walk with one page of rows (count >= 1); the rows belong to the
 * walk (released after the call). Return ERROR_OK to go on; anything else stops the
 * walk and is returned as is. */
typedef error_code (*store_visit)(void *ctx, model_object *rows, size_t count,
                                  error_info *err);

/*
 * Every row of `kind` matching `q` (NULL = all), forward in id order, `page_rows`
 * at a time through keyset pages. The callback may change the rows it is given (a
 * state move): the walk goes on after the page's last id, so a row never comes
 * twice.
 */
error_code store_walk(store *st, model_kind kind, const store_query *q, size_t page_rows,
                      store_visit fn, void *ctx, error_info *err);

/* Number of `kind`'s rows matching `q` (NULL = all). */
error_code store_count(store *st, model_kind kind, const store_query *q, size_t *out,
                       error_info *err);

/* Rows of `kind` per sync state: counts[state] for every state. */
error_code store_state_counts(store *st, model_kind kind, size_t counts[MODEL_STATE_COUNT],
                              error_info *err);

/*
 * Insert a row of obj->kind. The store is the gate (kind_validate_row): every
 * field is checked and canonicalised in the same transaction (a CIDR to its
 * canonical text, so "2001:DB8::/32" and "2001:db8::/32" are one key), and a bad
 * value is refused with ERROR_INVALID and the reason the forms show ("cidr: host
 * bits set: did you mean 10.0.0.0/8?"). An empty id gets a new local id and an
 * empty created_at is set to now (both written back into `obj`, with the
 * canonical values, once stored). The state is taken from the row.
 * ERROR_CONFLICT when the id exists, or, for a rule, when its policy already has
 * a live rule (any state but deleting/remote_deleted) for the same cidr: the
 * message names that rule's id ("policy ipp_… already has a rule for 10.0.0.0/8
 * (ipr_…)"). A credential's token (obj->cred.token) is stored in the token table
 * in the same transaction. On failure `obj` is unchanged.
 */
error_code store_insert(store *st, model_object *obj, error_info *err);

/*
 * Edit a row in place. `fields` is a set of obj->kind's fields (kind_field_bit),
 * each one the kind lets change after creation (KIND_FIELD_EDIT: a rule's cidr,
 * description, metadata; a credential's description, acl, metadata); they take
 * their values from `obj`, whose id (or local alias) names the row, and its other
 * fields are not read. In one transaction the stored row is read, the given fields
 * replaced, and the whole merged row passes store_insert's gate
 * (kind_validate_row: a CIDR canonicalised, the same messages) before it is
 * written. Everything else stays: id and aliases, created_at, uri, a rule's policy
 * and action, a credential's owner and token, and so the row's place in id order.
 * The sync state, the error text and the create bookkeeping are not changed
 * either: this is an edit as the reference server (serve-api PATCH) applies it.
 * The user's edit, queued for a sync with its bases, is store_edit.
 * On success `obj` holds the whole row as stored (as store_get reads it: no token).
 * ERROR_NOT_FOUND: no such row. ERROR_INVALID: `fields` is empty or holds a field
 * that never changes (the message names it), or the gate refused the merged row
 * (its message: "cidr: host bits set: did you mean 10.0.0.0/8?"). ERROR_CONFLICT:
 * a rule's new cidr is held by another live rule of its policy; the message names
 * that rule as store_insert's does ("policy ipp_… already has a rule for
 * 10.0.0.0/8 (ipr_…)"). On failure the row and `obj` are unchanged.
 */
error_code store_update(store *st, model_object *obj, unsigned fields, error_info *err);

/* Fetch a row of `kind` by id or local alias into `out` (which holds no heap
 * before; release with model_object_clear). Tokens are not filled.
 * ERROR_NOT_FOUND when neither. */
error_code store_get(store *st, model_kind kind, const char *id, model_object *out,
                     error_info *err);

/* The current id (`canon`) and state of row `id` of `kind` (an id or a local
 * alias). ERROR_NOT_FOUND when neither. */
error_code store_resolve_id(store *st, model_kind kind, const char *id,
                            char canon[MODEL_ID_MAX + 1], model_state *state, error_info *err);

/* A live rule of `policy_id` for `cidr` (the natural key; `cidr` is compared in
 * its canonical form), ERROR_NOT_FOUND if none. */
error_code store_rule_find(store *st, const char *policy_id, const char *cidr,
                           model_rule *out, error_info *err);

typedef enum store_delete_result {
    STORE_DELETE_REMOVED, /* never reached the remote (new, failed, remote_deleted): gone */
    STORE_DELETE_MARKED,  /* exists remotely: now "deleting", pushed by the next sync */
    STORE_DELETE_ALREADY, /* was already "deleting" */
    STORE_DELETE_REVERTED /* discard of an edit: the row has the remote's values again */
} store_delete_result;

/*
 * A local delete, as the user asks for it. An edited row is a delete like a
 * synced one (its edit goes: it takes its bases back); a conflict whose remote
 * object is gone, or a local create in a key conflict, is removed. ERROR_NOT_FOUND
 * for an unknown id;
 * ERROR_STATE for a row whose create is in flight or ambiguous (creating,
 * unknown): sync first. `result` may be NULL.
 */
error_code store_delete(store *st, model_kind kind, const char *id,
                        store_delete_result *result, error_info *err);

/* Set a row's sync state and its error text (NULL or "" clears it; UTF-8, cut at
 * MODEL_ERROR_MAX bytes). ERROR_NOT_FOUND for an unknown id; ERROR_CONFLICT when a
 * rule would become live beside another live rule with its natural key. */
error_code store_set_state(store *st, model_kind kind, const char *id, model_state state,
                           const char *error_text, error_info *err);

/* Remove a row for good (the "gone" state), with its token and aliases. */
error_code store_remove(store *st, model_kind kind, const char *id, error_info *err);

/*
 * The remote confirmed the create of local row `local_id` (of remote->kind): in one
 * transaction the row takes remote's id, uri, created_at (and a rule's policy
 * uri), state synced, and an alias local_id -> remote id is recorded. A
 * credential's token in `remote` (if any) is written in the same transaction; a
 * token stored with the local row follows it. Empty uri/created_at/policy uri in
 * `remote` keep the stored values; the others are checked as store_insert does. A
 * text field fixed at creation that the row left empty (a credential's owner,
 * which the remote fills in) takes the reply's value, unless its check refuses it.
 * Where the reply's editable fields differ from the row's (a credential's metadata
 * carrying the sync's creation marker), the row becomes edited with the reply's
 * values as bases, so the next push sends the row's own (a field the reply left
 * empty counts as not said).
 * ERROR_NOT_FOUND: no such row; ERROR_STATE: `local_id` was already confirmed (it
 * is now an alias); ERROR_CONFLICT: the remote id is already another row's id;
 * ERROR_INVALID: the remote's id, uri or created_at is malformed, or its token
 * (store_token_check); nothing is then written.
 */
error_code store_confirm_create(store *st, const char *local_id, const model_object *remote,
                                error_info *err);

/*
 * The remote confirmed the create of credential `local_id`, but the token of its
 * reply cannot be kept (store_token_check refused it): as store_confirm_create,
 * in one transaction, but no token is written (remote->cred.token is not read)
 * and the row becomes orphaned with `reason` as its error (UTF-8, cut at
 * MODEL_ERROR_MAX bytes; it must not hold the token): the next sync deletes the
 * remote copy and creates it again, as for any token lost. Errors as
 * store_confirm_create; ERROR_INVALID for a kind without a token.
 */
error_code store_confirm_create_without_token(store *st, const char *local_id,
                                              const model_object *remote, const char *reason,
                                              error_info *err);

enum { STORE_TOKEN_MAX = 255 }; /* bytes of a token the store keeps */

/*
 * Whether `token` has a token's shape, the one the store keeps (and so the one
 * that may reach a terminal): 1..STORE_TOKEN_MAX bytes of base62 letters and
 * digits and '_' (the API's tokens: "<the id's body>_<21 base62>"). ERROR_INVALID
 * with why otherwise; the message never quotes the token, only where it goes
 * wrong. Pure.
 */
error_code store_token_check(const char *token, error_info *err);

/*
 * The token of a credential (id or alias) as a heap string the caller must wipe
 * and free (model_wipe + free); it always passes store_token_check. ERROR_NOT_FOUND:
 * no such credential; ERROR_UNAVAILABLE: the credential exists but this machine
 * does not hold a token of it it can hand out (the message says why: not yet
 * created remotely, created elsewhere, the row's error, such as a create reply
 * whose token was malformed, or a malformed token an older version stored).
 */
error_code store_token_get(store *st, const char *cred_id, char **token,
                           error_info *err);

/*
 * One indexed read for the agent's hot path: the credential's current id (an
 * alias resolves to it) into `canon`, its state, and its token into *token (heap,
 * wipe and free; NULL when this machine does not hold it), and when `acl` is not
 * NULL (an empty model_acl) its ACL as the remote enforces it (while an ACL edit
 * waits for its sync, the base: the token still works under that one; the caller
 * releases it with model_acl_clear). ERROR_NOT_FOUND when there is no such
 * credential.
 */
error_code store_token_lookup(store *st, const char *cred_id, char canon[MODEL_ID_MAX + 1],
                              model_state *state, char **token, model_acl *acl,
                              error_info *err);

/* ---- whether a token was shown (store_token_shown.c) ---------------------- */

/*
 * A token the store writes (a sync's create, an import) is "not yet shown" until
 * the console has shown it; tokens held before schema version 7 count as shown.
 * Mark the token of credential `cred_id` (id or alias) as shown now; when
 * `shown_before` is not NULL it says whether it had been shown already (or there
 * is no token). Errors as any store write (ERROR_IO: a read-only or busy file).
 */
error_code store_token_mark_shown(store *st, const char *cred_id, bool *shown_before,
                                  error_info *err);

/*
 * The credentials (live ones, oldest first) whose token is not yet shown: up to
 * `max` ids into `ids` (*n of them), and *total counts them all.
 */
error_code store_token_unseen(store *st, char (*ids)[MODEL_ID_MAX + 1], size_t max,
                              size_t *n, size_t *total, error_info *err);

/* ---- when local agents last fetched a token (store_fetch.c) --------------- */

/* Credential `cred_id` (id or alias) had its token handed out at `at` (seconds
 * since the epoch). */
typedef struct store_fetch {
    char cred_id[MODEL_ID_MAX + 1];
    long long at;
} store_fetch;

/*
 * Record `n` fetches in one transaction (or within the caller's): a credential
 * keeps its latest time only (an older `at` never moves it back). A credential no
 * longer in the cache is skipped; a fetch row follows its credential (renamed by
 * a confirm, removed with it). Ids and times only, never a token. Errors as any
 * store write (ERROR_IO: a busy or read-only file; nothing is written then).
 */
error_code store_fetch_record_batch(store *st, const store_fetch *fetches, size_t n,
                                    error_info *err);

/*
 * When each of the credentials `ids` (ids or aliases) last had its token fetched,
 * if that was at or after `since`: at[i] is the time, 0 when not since then (or
 * never). *found counts the credentials fetched since. One indexed read each.
 */
error_code store_fetch_recent(store *st, const char *const *ids, size_t n, long long since,
                              long long *at, size_t *found, error_info *err);

/* ---- credential rotation (store_rotate.c) ---------------------------------- */

/*
 * A rotation links a credential (the old one) to its successor: a new credential
 * with the same description, ACL, metadata and owner, queued as any create (so it
 * is exactly-once). The link follows both rows (renamed by a confirm); it is
 * dropped when the successor is removed, and when the old one is removed it
 * becomes retired and stays, so an agent asking for the old id learns the
 * successor's, until store_rotation_settle forgets it after `keep_s`.
 * - waiting: the successor's token is not held yet; the old one is served.
 * - grace: both tokens are held; the successor is served by name, the old one by
 *   id (with the successor's id beside it). It retires when due
 *   (store_rotation_due).
 * - retiring: the old one is deleting (its delete goes through the look).
 * - retired: the old one is deleted.
 * - stopped: the successor's create failed (`error` says why): the old one stays.
 */
typedef enum store_rotation_state {
    STORE_ROTATION_WAITING,
    STORE_ROTATION_GRACE,
    STORE_ROTATION_RETIRING,
    STORE_ROTATION_RETIRED,
    STORE_ROTATION_STOPPED,
    STORE_ROTATION_STATE_COUNT
} store_rotation_state;

typedef enum store_rotation_mode {
    STORE_ROTATE_GRACE,  /* retire after the grace period and the quiet period */
    STORE_ROTATE_FINISH, /* retire as soon as the successor is held (--finish) */
    STORE_ROTATE_NOW     /* a leaked token: the same, from the start (--now) */
} store_rotation_mode;

typedef enum store_rotation_exec {
    STORE_EXEC_NONE,    /* no command */
    STORE_EXEC_PENDING, /* to run once the successor's token is held */
    STORE_EXEC_OK,
    STORE_EXEC_FAILED   /* `error` says why; run again by the next sync */
} store_rotation_exec;

enum { STORE_ROTATION_EXEC_MAX = 1024 };

typedef struct store_rotation {
    char old_id[MODEL_ID_MAX + 1];
    char new_id[MODEL_ID_MAX + 1];
    char name[MODEL_DESCRIPTION_MAX + 1]; /* the successor's description */
    store_rotation_state state;
    store_rotation_mode mode;
    long long grace_s;
    long long started_at, held_at, retired_at; /* seconds since the epoch; 0: not yet */
    bool old_held, new_held;                   /* their tokens are held here */
    bool old_changed; /* the old one's description, ACL or metadata differ from the
                       * successor's (changed since the copy, here or remotely) */
    long long old_served_at, new_served_at;    /* last handed out here; 0: never */
    char exec[STORE_ROTATION_EXEC_MAX + 1];
    store_rotation_exec exec_state;
    char error[MODEL_ERROR_MAX + 1];
} store_rotation;

/* "waiting", "grace", "retiring", "retired", "stopped". */
const char *store_rotation_state_name(store_rotation_state state);

/*
 * Start rotating credential `id` (an id or alias; synced or edited: it exists
 * remotely): in one transaction the successor is inserted (state new, the old
 * one's description, ACL, metadata and owner as this cache has them) and linked.
 * `exec` (NULL or "": none) runs once the successor's token is held. `now` is
 * the time (seconds since the epoch). The successor's local id into `new_id`.
 * ERROR_NOT_FOUND; ERROR_STATE for a credential in another state, one already
 * being rotated, or a successor whose own rotation is not over (the message
 * says what to do); ERROR_INVALID for a negative grace or an overlong command.
 */
error_code store_rotation_start(store *st, const char *id, long long grace_s,
                                store_rotation_mode mode, const char *exec, long long now,
                                char new_id[MODEL_ID_MAX + 1], error_info *err);

/* The rotation credential `id` (id or alias) is the old one or the successor of:
 * the one that is not retired first. ERROR_NOT_FOUND when there is none. */
error_code store_rotation_get(store *st, const char *id, store_rotation *out,
                              error_info *err);

/* Every rotation, oldest first; `fn` returning anything but ERROR_OK stops it. */
error_code store_rotation_each(store *st,
                               error_code (*fn)(void *ctx, const store_rotation *r,
                                                error_info *err),
                               void *ctx, error_info *err);

/*
 * Whether the old credential of `r` should retire at `now` (pure): the
 * successor's token is held, its command ran (succeeded, in grace mode), and
 * then in grace mode the grace period is over (from when the successor was
 * held), the old token was held here (else only finish and now retire it), the
 * old one is still as its successor copied it (old_changed: never delete a
 * changed object) and not handed out for `quiet_s`; finish and now: at once. Only waiting and grace
 * rotations are ever due. *why (may be NULL) says what it waits for, or "due".
 */
bool store_rotation_due(const store_rotation *r, long long now, long long quiet_s,
                        const char **why);

/*
 * Bring the links up to date at `now`: a successor whose token is now held
 * starts the grace period (held_at; its command becomes pending), a successor
 * whose create failed stops the rotation with its error (and one queued again
 * since, creds retry, lets it go on), a retired link older
 * than `keep_s` is forgotten. *stopped (may be NULL) counts rotations stopped
 * now. One transaction.
 */
error_code store_rotation_settle(store *st, long long now, long long keep_s, size_t *stopped,
                                 error_info *err);

/* The command of the rotation of `old_id` ran: ok, or failed because of `why`. */
error_code store_rotation_exec_done(store *st, const char *old_id, bool ok, const char *why,
                                    error_info *err);

/*
 * Retire the old credential of the rotation of `id` now: it is marked deleting
 * (as store_delete does; its error says it was rotated) and the rotation is
 * retiring. ERROR_STATE unless the successor's token is held and the rotation is
 * waiting or grace.
 */
error_code store_rotation_retire(store *st, const char *id, error_info *err);

/*
 * `rotate --finish`: retire at once when the successor is held, else as soon as
 * it is (mode finish). *retired (may be NULL) says which. ERROR_STATE for a
 * rotation that is retiring, retired or stopped.
 */
error_code store_rotation_finish(store *st, const char *id, bool *retired, error_info *err);

/*
 * `rotate --cancel`: drop the successor (removed when it never reached the
 * remote; else marked deleting, its token no longer served) and the link.
 * ERROR_STATE while its create is in flight (sync first), or when the old one
 * is already retiring or retired. The dropped successor's id into `new_id`.
 */
error_code store_rotation_cancel(store *st, const char *id, char new_id[MODEL_ID_MAX + 1],
                                 error_info *err);

/*
 * The successor of credential `id` (an id or alias, or an id no longer cached)
 * when its token is held here, for the agent's "superseded_by": *found false when
 * there is none. One indexed read.
 */
error_code store_rotation_successor(store *st, const char *id, char succ[MODEL_ID_MAX + 1],
                                    bool *found, error_info *err);

/* ---- edits in place and conflicts (store_edit.c) ------------------------- */

/*
 * A row that exists remotely and is edited here keeps, per edited field, the value
 * the remote had when the edit was made (its base) beside the new value, which is
 * the row's own (what browsing, the plan and the forms show). Only fields whose
 * value differs from their base are edits: setting a field back to its base
 * drops that part, and a row with no edit left is synced again. The state says
 * where the row stands:
 * - edited: one PATCH of the edited fields is pending (the sync sends it);
 * - conflict: the sync cannot go on without the user's choice (store_resolve);
 *   the reason is one of store_conflict.
 * The database keeps this consistent: a row that leaves edited/conflict (synced,
 * deleting, removed) loses its bases and its conflict record in the same
 * statement (triggers), and a conflicting rule is not live (its natural key is
 * not held: the remote rule that clashes with it is cached beside it).
 */
typedef enum store_conflict {
    STORE_CONFLICT_NONE,
    STORE_CONFLICT_FIELDS,   /* the remote changed a field that is edited here */
    STORE_CONFLICT_GONE,     /* the remote object was deleted while edited here */
    STORE_CONFLICT_KEY,      /* rules: a remote rule holds this row's (policy, cidr):
                              * a local create (of the other action), or a cidr edit */
    STORE_CONFLICT_REJECTED, /* the server refused the edit (the row's error says why) */
    STORE_CONFLICT_CHANGED,  /* deleted here, changed remotely (the look before the
                              * DELETE): the row holds the remote's values, each
                              * changed field's base what this cache had */
    STORE_CONFLICT_CROSSED,  /* someone wrote between the look and the PATCH: the
                              * row holds the PATCH's reply */
    STORE_CONFLICT_COUNT
} store_conflict;

/* "none", "fields", "gone", "key", "rejected", "changed", "crossed". */
const char *store_conflict_name(store_conflict reason);

typedef struct store_edit_field {
    size_t field;  /* index in the kind's field table (kind_get(kind)->fields) */
    char *base;    /* what the remote had: column text (an ACL one rule per line) */
    char *local;   /* the value edited here (the row's), the same form */
    char *remote;  /* NULL unless this field conflicts: the remote's value now */
} store_edit_field;

/* The edit of one row, as store_edit_get reads it. Release with
 * store_edit_info_clear (frees the texts; a zeroed info is empty). */
typedef struct store_edit_info {
    model_kind kind;
    char id[MODEL_ID_MAX + 1];         /* the row's current id */
    model_state state;
    store_conflict conflict;           /* STORE_CONFLICT_NONE unless state conflict */
    char other_id[MODEL_ID_MAX + 1];   /* STORE_CONFLICT_KEY: the remote rule */
    unsigned fields;                   /* kind_field_bit set of the edited fields */
    size_t count;                      /* entries of `field` used, descriptor order */
    store_edit_field field[8];
} store_edit_info;

void store_edit_info_clear(store_edit_info *info);

/*
 * The row's edit: its edited fields with base, local and (in a conflict) remote
 * values, and its conflict. Any row may be asked: one that is not edited has
 * count 0. ERROR_NOT_FOUND for an unknown id.
 */
error_code store_edit_get(store *st, model_kind kind, const char *id, store_edit_info *out,
                          error_info *err);

typedef enum store_edit_result {
    STORE_EDIT_CREATE,    /* the row waits for its create (new, failed): the queued
                           * create changed; a failed one is new again */
    STORE_EDIT_EDITED,    /* edited: a PATCH is pending */
    STORE_EDIT_UNCHANGED, /* every field is back at its base: synced again */
    STORE_EDIT_CONFLICT   /* still a conflict: the new values wait for store_resolve */
} store_edit_result;

/*
 * The user's edit (CLI `update`, the console's form): `fields` of obj->kind
 * (kind_field_bit set, each KIND_FIELD_EDIT) take their values from `obj`, whose id
 * or local alias names the row, through the same gate and with the same messages
 * and ERROR_INVALID/ERROR_CONFLICT as store_update. By the row's state:
 * - new, failed: the queued create changes (STORE_EDIT_CREATE);
 * - synced, edited: each changed field keeps its base (the first edit's), a
 *   field set back to its base is no longer edited; edited or synced again;
 * - conflict: the values change and the conflict stays (STORE_EDIT_CONFLICT), but
 *   a refused edit (STORE_CONFLICT_REJECTED) is answered by the new edit: edited;
 * - creating, unknown: ERROR_STATE ("its create is in flight: sync first");
 * - deleting, remote_deleted, orphaned: ERROR_STATE naming the state.
 * Tokens are never touched. On success `obj` holds the row as stored (no token)
 * and *result (may be NULL) says what happened; on failure nothing changed.
 */
error_code store_edit(store *st, model_object *obj, unsigned fields,
                      store_edit_result *result, error_info *err);

typedef enum store_side {
    STORE_KEEP_LOCAL, /* the values here win */
    STORE_TAKE_REMOTE /* the remote's values win */
} store_side;

/*
 * The user's answer to a conflict (`resolve ID --keep-local|--take-remote`):
 * - fields: keep-local: the remote values become the bases, so the next sync sends
 *   the local ones (edited); take-remote: the conflicting fields take the remote
 *   values (edited if other edits remain, else synced);
 * - gone: keep-local: the row becomes a create again under a fresh local id (new;
 *   a credential's old token is dropped: the create brings a new one);
 *   take-remote: the row is removed;
 * - key: keep-local: the remote rule holding the key is deleted (deleting) and the
 *   row goes back to new (a create) or edited; take-remote: a local create adopts
 *   the remote rule (the row is removed and its local id becomes an alias of the
 *   remote rule's), an edit goes back to its base values;
 * - rejected: keep-local: edited again (sent as is by the next sync);
 *   take-remote: the fields go back to their bases (synced);
 * - changed: keep-local: deleting again (the next sync deletes what the remote
 *   holds now, after another look); take-remote: synced (the delete is dropped);
 * - crossed: either side: synced (the row already holds the remote's values).
 * ERROR_STATE when the row is not a conflict; ERROR_NOT_FOUND; ERROR_CONFLICT when
 * the values kept would clash with another live rule (the message names it).
 * `out_id` (may be NULL) receives the id the row or its adopted rule now has ("" when
 * removed).
 */
error_code store_resolve(store *st, model_kind kind, const char *id, store_side side,
                         char out_id[MODEL_ID_MAX + 1], error_info *err);

/*
 * For the sync: the remote answered the PATCH of `fields` (kind_field_bit set) with
 * the values in `sent` (its id names the row) by `remote`, the whole object as the
 * server now has it (a 200, or a GET that shows the values sent). Each sent field
 * whose remote value equals the one sent takes it as its new base (so an edit made
 * meanwhile stays an edit); the fields not edited take the remote values; the row
 * is synced when no edit is left, else stays edited. A row that is no longer
 * edited (discarded, deleted meanwhile) is left as it is (ERROR_OK). A
 * credential's token is not touched. ERROR_NOT_FOUND; ERROR_INVALID when `remote`
 * fails the gate.
 */
error_code store_edit_pushed(store *st, const model_object *sent, unsigned fields,
                             const model_object *remote, error_info *err);

/*
 * For the sync: the PATCH of an edited row cannot go through: `reason` is
 * STORE_CONFLICT_GONE (404) or STORE_CONFLICT_REJECTED (400: `why` is the server's
 * message, kept as the row's error). The row becomes a conflict; its local values
 * stay. ERROR_STATE when the row is not edited (left as it is); ERROR_NOT_FOUND.
 */
error_code store_edit_conflict(store *st, model_kind kind, const char *id,
                               store_conflict reason, const char *why, error_info *err);

/* What the look right before a write found (store_look). */
typedef enum store_look_result {
    STORE_LOOK_WRITE,    /* send it: an edit whose fields the remote still holds at
                          * their bases (its other fields took the remote's values),
                          * or a delete of exactly what this cache saw */
    STORE_LOOK_SETTLED,  /* nothing to send: the remote already holds the edit */
    STORE_LOOK_CONFLICT, /* a conflict now (fields: changed on both sides;
                          * changed: deleted here, changed remotely) */
    STORE_LOOK_SKIP      /* the row is no longer edited or deleting: nothing to do */
} store_look_result;

/*
 * For the sync: `remote` is the object as a GET showed it just before the write
 * (its id names the row). The user's fields (those an edit may change; the others
 * never change) are compared with what this cache last saw remotely:
 * - edited: as a pull's merge compares (a field edited here and changed remotely
 *   to a third value: conflict fields; to the local value: settled; a field not
 *   edited takes the remote's value);
 * - deleting: any difference is conflict changed: the row takes the remote's
 *   values (it stays in force until resolved), each changed field's line keeping
 *   what this cache had as its base.
 * ERROR_INVALID when `remote` fails the gate; ERROR_NOT_FOUND.
 */
error_code store_look(store *st, const model_object *remote, store_look_result *result,
                      error_info *err);

/*
 * For the sync: the reply of a PATCH of row `id` shows fields it did not send
 * changed since the look (`why` says which): someone wrote in between. A synced
 * row becomes conflict crossed (attention), `why` its error; any other state is
 * left as it is (ERROR_STATE).
 */
error_code store_edit_crossed(store *st, model_kind kind, const char *id, const char *why,
                              error_info *err);

/* Whether row `id` is a conflict whose values are the remote's (changed,
 * crossed): such a row stays in force for check, the agent and the mirror. */
bool store_conflict_holds_remote(store *st, model_kind kind, const char *id);

/* ---- bulk import (store_import.c) ----------------------------------------- */

/*
 * An import: rows of one kind read from a file (`rules import`), merged into the
 * cache so that importing what `export` wrote changes nothing, and importing it
 * again after editing it queues those edits. It runs inside the caller's
 * store_begin transaction, which makes the import all or nothing (the caller
 * commits after store_import_finish, or rolls back).
 * Each row is matched with the cache, and the row's own state and error text are
 * never taken:
 * - its id, or local alias, names a cached row: equal KIND_FIELD_CREATE fields
 *   (compared after the gate: a CIDR in another spelling is the same) change
 *   nothing (STORE_IMPORT_UNCHANGED); editable fields that differ are the user's
 *   edit, as store_edit makes it, with its refusals (STORE_IMPORT_UPDATED); a
 *   difference in a field that never changes is ERROR_INVALID naming it;
 * - a remote id the cache does not know: inserted as synced (STORE_IMPORT_SYNCED);
 * - no id, or a local id the cache does not know (another machine's): inserted
 *   as new under a new local id, a create for the next sync (STORE_IMPORT_CREATED);
 * - a rule inserted so whose natural key a live rule holds: unchanged when that
 *   rule has the same action, description and metadata (the same rule, listed
 *   again or imported twice), else store_insert's ERROR_CONFLICT naming it.
 * Inserts pass store_insert's gate with its messages. Memory does not grow with
 * the rows; a large import (`expected_rows`, an upper estimate, 0 when unknown)
 * may drop the rules' browsing indexes and build them once at
 * store_import_finish. store_commit refuses (ERROR_STATE) until the import is
 * finished; store_rollback restores the indexes.
 */
typedef struct store_import store_import;

typedef enum store_import_result {
    STORE_IMPORT_CREATED,  /* a new row, queued for creation */
    STORE_IMPORT_SYNCED,   /* a new row with the remote's id, taken as synced */
    STORE_IMPORT_UPDATED,  /* a cached row took differing values as the user's edit */
    STORE_IMPORT_UNCHANGED /* the cache holds the row with these values already */
} store_import_result;

/* Start an import. ERROR_STATE without an open store_begin transaction or with
 * another import open on this handle; *out is freed by store_import_finish or
 * store_import_free, which also restore the connection's cache settings. */
error_code store_import_begin(store *st, model_kind kind, size_t expected_rows,
                              store_import **out, error_info *err);

/* One row as read from a file (see above); *result (may be NULL) says what was
 * done. `obj` is the caller's scratch: on success it holds what was written (the
 * new local id, the canonical CIDR), on failure anything. A refused row leaves
 * nothing behind; the import can go on. */
error_code store_import_add(store_import *imp, model_object *obj, store_import_result *result,
                            error_info *err);

/* Build the indexes it dropped (if any) and free `imp`, whatever the result. */
error_code store_import_finish(store_import *imp, error_info *err);

/* Free an import that will not be finished; the caller rolls the transaction
 * back (which restores any dropped index). NULL is a no-op. */
void store_import_free(store_import *imp);

/* ---- lookups (store_lookup.c) ---------------------------------------------- */

/*
 * The policy ids that have rules in the cache (any state), in order, after `after`
 * (NULL or "": from the first), at most `max` into `ids`; *count says how many.
 * One index seek per id, so it is cheap at any cache size. Page through with the
 * last id returned.
 */
error_code store_policy_ids(store *st, const char *after, char (*ids)[MODEL_ID_MAX + 1],
                            size_t max, size_t *count, error_info *err);

/*
 * The same policies with how many rules each holds in the cache (any state), in
 * order, after `after` (NULL or "": from the first): at most `max` into `out`;
 * *count says how many. One query (a GROUP BY over the policy index), not one per
 * policy: it reads the index entries of the policies it returns.
 */
typedef struct store_policy_count {
    char id[MODEL_ID_MAX + 1];
    size_t rules;
} store_policy_count;
error_code store_policy_counts(store *st, const char *after, store_policy_count *out,
                               size_t max, size_t *count, error_info *err);

/*
 * The live credentials (every state but deleting, remote_deleted) whose
 * description is exactly `name`, in id order: up to `max` ids into `ids`, and in
 * *count how many match in all, capped at max + 1 (so *count > max means "more
 * than the ids shown"). One indexed query. A rotation pair counts once: the
 * successor once its token is held here, the old one until then.
 */
error_code store_cred_find_by_name(store *st, const char *name,
                                   char (*ids)[MODEL_ID_MAX + 1], size_t max,
                                   size_t *count, error_info *err);

/*
 * SQLite's data_version for this connection: it changes when another connection
 * (another process, a sync worker's handle) commits, not on this handle's own
 * writes. Readers poll it to know when to rebuild what they derived (the agent's
 * policy index, the console's row count).
 */
error_code store_data_version(store *st, long long *out, error_info *err);

/*
 * Small facts the cache keeps about itself, by key (STORE_META_LAST_SYNC: when a
 * sync last completed its pull, RFC 3339 UTC), so they outlive the process that
 * wrote them. store_meta_get copies the value into `value` (cut at `size`; "" and
 * ERROR_NOT_FOUND when never set); store_meta_set replaces it (ERROR_INVALID for
 * an empty or over-long key or value).
 */
#define STORE_META_KEY_MAX 64
#define STORE_META_VALUE_MAX 256
#define STORE_META_LAST_SYNC "last_sync"
error_code store_meta_get(store *st, const char *key, char *value, size_t size,
                          error_info *err);
error_code store_meta_set(store *st, const char *key, const char *value, error_info *err);

/* ---- the sync engine's outbox (store_outbox.c) ---------------------------- */

/*
 * The right to sync this database, exclusive between processes and handles: an
 * advisory lock (flock) on "<database>-sync.lock" beside it, released by the
 * kernel if the process dies, so a crash never leaves it stuck. Two syncs at once
 * could both send a row one of them has in flight. ERROR_STATE when another sync
 * holds it; ERROR_IO when the lock file cannot be opened. An in-memory database
 * has nothing to share: the lock is granted. Release with store_sync_unlock.
 */
typedef struct store_sync_lock store_sync_lock;
error_code store_sync_lock_take(store *st, store_sync_lock **out, error_info *err);
void store_sync_unlock(store_sync_lock *lock); /* NULL is a no-op */

/*
 * Claim a new row for sending: new -> creating, counting the attempt, in one
 * statement, so two syncs never send the same row. ERROR_STATE when the row is no
 * longer new (another sync took it, the user discarded it); ERROR_NOT_FOUND.
 */
error_code store_claim(store *st, model_kind kind, const char *id, error_info *err);

/*
 * An orphaned credential (created remotely, token lost) whose remote copy is now
 * deleted: it becomes new again under the local id it was first created with (its
 * alias is dropped), so the next push creates it afresh and receives a token.
 * ERROR_STATE unless orphaned; ERROR_NOT_FOUND.
 */
error_code store_cred_requeue(store *st, const char *id, error_info *err);

/*
 * `retry ID`, for rows waiting for the user:
 * - failed: new again, its error cleared (the next sync sends it);
 * - remote_deleted: new under a fresh local id (the next sync creates it again;
 *   a credential's old token is dropped, the new one arrives with the create);
 * - orphaned (credentials): left as it is and ERROR_OK: the next sync already
 *   deletes the remote copy and creates it again.
 * ERROR_STATE for any other state ("nothing to retry"), ERROR_NOT_FOUND, and
 * ERROR_CONFLICT when a recreated rule's policy has a live rule for its cidr.
 */
error_code store_retry(store *st, model_kind kind, const char *id, error_info *err);

/*
 * `discard ID`: take back what is queued for a row.
 * - new, failed, remote_deleted: removed locally (STORE_DELETE_REMOVED);
 * - orphaned (credentials): marked deleting (STORE_DELETE_MARKED): the next sync
 *   deletes its remote copy, whose token is lost, and does not create it again;
 * - edited, conflict: synced with its fields back at their bases, or with the
 *   remote's values a changed or crossed conflict holds (STORE_DELETE_REVERTED);
 *   a conflict whose remote object is gone, or a local create in a key conflict,
 *   is removed (STORE_DELETE_REMOVED);
 * - deleting: the delete the user queued is taken back: synced again, or edited
 *   when an edit waits under it (STORE_DELETE_REVERTED); one the sync queued
 *   itself (its error says why) is ERROR_STATE.
 * ERROR_STATE for other states (synced: delete it instead; creating, unknown:
 * sync first), ERROR_NOT_FOUND. `result` may be NULL.
 */
error_code store_discard(store *st, model_kind kind, const char *id,
                         store_delete_result *result, error_info *err);

/* ---- pull staging and merge (store_pull.c) -------------------------------- */

/*
 * A pull writes the complete remote listings into staging tables, page by page
 * (each page its own short transaction; staged rows are not durable until the
 * merge: a crash just discards them), then store_pull_merge replaces the cached
 * snapshot with them in ONE transaction. An interrupted pull leaves the cache as
 * it was. Call store_pull_merge only after both listings were staged completely:
 * absence from staging is taken as deletion on the remote.
 */

/* Empty the staging tables: the start of every pull. Outside a transaction the
 * staging then lives in memory (about 270 bytes a rule) until the merge ends or
 * store_pull_release; inside one it stays in SQLite's temporary file. */
error_code store_pull_begin(store *st, error_info *err);

/* Give back the memory of a pull that will not be merged (one that failed part
 * way): the staged rows are dropped. The next store_pull_begin starts afresh.
 * NULL or inside a transaction: nothing happens. Never fails. */
void store_pull_release(store *st);

/*
 * Called for each pulled object the store refuses: `id` as the remote sent it
 * (may be empty or malformed itself), `why` the reason with the field first
 * ("cidr: host bits set: did you mean 10.0.0.0/8?").
 */
typedef void (*store_refused_fn)(void *ctx, model_kind kind, const char *id,
                                 const error_info *why);

/*
 * Stage one page of pulled rows, all of one kind. Each row passes the same gate as
 * store_insert (canonicalised in place in `rows`); a row that fails it is refused:
 * `on_refused` (may be NULL) is told, the rest of the page is staged, and the
 * cached row with that id, if any, is staged as it is, so the merge neither
 * changes it nor takes it for deleted remotely. An id seen twice keeps the last
 * copy. A refused row with no cached copy says nothing: until the next pull,
 * store_pull_merge leaves the kind's local creates (creating, unknown, new,
 * failed) as they are rather than take them for absent, since it may be one of
 * them. Credentials: `markers[i]` is the local id found in the creation marker of
 * rows[i] (NULL or "" when none; markers itself may be NULL); their metadata must
 * already have the marker line stripped, and `raw_metadata[i]` is the metadata as
 * the server listed it, marker included, when there was one (NULL otherwise;
 * raw_metadata itself may be NULL): an edited row is compared with the server's
 * text, and our own credential still carrying its marker gets it removed by an
 * edit (store_pull_merge). Tokens are ignored. *refused (may be
 * NULL) counts the refused rows. Errors are the database's only.
 */
error_code store_pull_stage(store *st, model_kind kind, model_object *rows,
                            const char *const *markers, const char *const *raw_metadata,
                            size_t n, store_refused_fn on_refused, void *ctx,
                            size_t *refused, error_info *err);

/*
 * A listed object that could not even be read (the codec refused it): staged as
 * refused by the gate are (store_pull_stage), by its id alone. ERROR_OK or the
 * database's error.
 */
error_code store_pull_unreadable(store *st, model_kind kind, const char *id, error_info *err);

/* What one merge did to one kind of row. */
typedef struct store_pull_stats {
    size_t pulled;         /* rows in the staged listing */
    size_t added;          /* remote additions, inserted as synced */
    size_t updated;        /* cached rows whose remote fields changed */
    size_t remote_deleted; /* synced rows absent remotely: now remote_deleted */
    size_t gone;           /* deleting rows absent remotely: removed */
    size_t adopted;        /* rules: local creates found by natural key: synced */
    size_t orphaned;       /* credentials found by creation marker: token lost */
    size_t requeued;       /* creating/unknown not found, or orphaned gone: new */
    size_t conflicts;      /* rules: the remote holds the key of a local create of the
                              other action, or of an edit's new cidr: conflict */
    size_t edit_conflicts; /* edited rows the remote changed or deleted: conflict */
    size_t strays;         /* credentials: extra copies of our own creates: deleting */
    size_t twice;          /* listed rows whose id the listing held before: one kept */
    size_t same_key;       /* rules: listed under another id with a listed rule's
                              policy and cidr: left out of the cache */
} store_pull_stats;

/*
 * Merge the staged listings into the cache in one transaction, then empty the
 * staging tables. Rules:
 * - a cached row whose id is listed takes the remote fields (remote_deleted comes
 *   back as synced; deleting stays deleting: its delete is still to be sent);
 * - synced and absent: remote_deleted (kept for review); deleting and absent: gone;
 * - a local new/creating/unknown/failed row whose natural key (policy, cidr) is
 *   listed under an unknown id with its action is adopted: it takes that id (the
 *   local id stays an alias), synced; with the other action it is a conflict
 *   (STORE_CONFLICT_KEY, the remote rule cached beside it), and so is an edited
 *   rule whose new cidr a listed rule holds;
 * - creating/unknown rows still unmatched: new (the remote never got them);
 * - listed rules not cached are inserted as synced.
 * Credentials: the same by id; a local row (new/creating/unknown/failed) whose id
 * a listed creation marker names takes the listed id, orphaned (token lost); an
 * orphan absent remotely is new again; a listed second copy of one of our rows is
 * inserted as deleting; our own credential still listed with its marker becomes
 * edited (base: the server's text), so the next push removes the marker.
 * Edited and conflicting rows, compared field by field with their listed copy: a
 * field the remote changed to the local value is settled, one it changed
 * otherwise is a conflict (STORE_CONFLICT_FIELDS, both values kept), one not
 * edited takes the remote value; absent from the listing: STORE_CONFLICT_GONE.
 * `rules`/`creds` may be NULL.
 */
error_code store_pull_merge(store *st, store_pull_stats *rules, store_pull_stats *creds,
                            error_info *err);

/* A follower's cache (read_only: it never holds a local change) keeps no trace of
 * what its upstream removed: the rows a merge marked remote_deleted, of both kinds,
 * are deleted in one transaction. *removed (may be NULL) counts them. */
error_code store_pull_forget_removed(store *st, size_t *removed, error_info *err);

/* ---- one policy's rules, lean (store_apply.c) ------------------------------ */

/* A rule as store_policy_rules hands it over: the texts are valid during the
 * callback only. */
typedef struct store_policy_rule {
    const char *id, *cidr, *description, *metadata;
    model_action action;
    model_state state;
} store_policy_rule;

/* Called once per rule; anything but ERROR_OK stops the walk and is returned. */
typedef error_code (*store_policy_rule_fn)(void *ctx, const store_policy_rule *rule,
                                           error_info *err);

/*
 * Every rule of `policy_id`, in every state, in id order, through one indexed
 * query (no model rows: what `apply` and `export` compare, at 100,000 rules in a
 * fraction of a second). Errors: the database's, or the callback's.
 */
error_code store_policy_rules(store *st, const char *policy_id, store_policy_rule_fn fn,
                              void *ctx, error_info *err);

/*
 * The rules of `policy_id` whose cidr contains the address `ip` (text as
 * validate_ip reads it), in every state, through the cidr_key index: one lookup
 * per prefix length, whatever the policy's size (what a check of a few addresses
 * needs). An `ip` that is no address finds nothing.
 */
error_code store_policy_rules_containing(store *st, const char *policy_id, const char *ip,
                                         store_policy_rule_fn fn, void *ctx, error_info *err);

/* ---- a fleet: the mirror's validators, a follower's pages (store_http.c) ---- */

/*
 * The state of one kind's rows, as the mirror's entity tags name it: `counter`
 * counts every write to the kind's table since the cache was made (triggers of
 * schema step 9: every path that writes counts, in any process; a bulk import
 * counts once), `cache_id` is random per cache (two caches never share tags).
 * The pair changes whenever a row of the kind may have, and never moves back.
 * Read it BEFORE the rows a reply is made of: a write in between then makes the
 * tag older than the body, which costs a client one more download, never a stale
 * page kept as current. ERROR_IO when the schema lacks it.
 */
enum { STORE_CACHE_ID_MAX = 32, STORE_ETAG_MAX = 200 };
typedef struct store_change_tag {
    long long counter;
    char cache_id[STORE_CACHE_ID_MAX + 1];
} store_change_tag;
error_code store_change_tag_get(store *st, model_kind kind, store_change_tag *out,
                                error_info *err);

/*
 * A follower's copy of the pages it pulled (the table http_cache), by URL: the
 * entity tag the remote gave and the body, so that a page the remote answers 304
 * for is read from here. Only for what a 200 carried (the API client decides).
 * - store_http_page_get: the tag (cut at etag_size) and a heap copy of the body
 *   (NUL-terminated after *len bytes; the caller frees it); ERROR_NOT_FOUND when
 *   none is kept. Reads only.
 * - store_http_page_reused: the page at `url` was used again at `now_ms`
 *   (milliseconds of the wall clock).
 * - store_http_page_put: keep (or replace) the page at `url`, one page of the
 *   listing `collection` (its first page's URL), used at `now_ms`. ERROR_INVALID
 *   for an empty URL or tag, or a tag longer than STORE_ETAG_MAX.
 * - store_http_page_prune: forget the pages of `collection` not used since
 *   `before_ms` (a listing that completed names every page it still has: the rest
 *   belong to page boundaries that moved).
 * Each write is its own short transaction (or part of the caller's).
 */
error_code store_http_page_get(store *st, const char *url, char *etag, size_t etag_size,
                               char **body, size_t *len, error_info *err);
error_code store_http_page_reused(store *st, const char *url, long long now_ms,
                                  error_info *err);
error_code store_http_page_put(store *st, const char *url, const char *collection,
                               const char *etag, const char *body, size_t len,
                               long long now_ms, error_info *err);
error_code store_http_page_prune(store *st, const char *collection, long long before_ms,
                                 error_info *err);

/* ---- values for shell completion (store_complete.c) ------------------------ */

typedef enum store_complete_what {
    STORE_COMPLETE_RULE_ID,   /* rules' ids (remote or local) */
    STORE_COMPLETE_CRED_ID,   /* credentials' ids (remote or local) */
    STORE_COMPLETE_POLICY_ID, /* the policies that hold rules */
    STORE_COMPLETE_CIDR,      /* rules' cidrs */
    STORE_COMPLETE_COUNT
} store_complete_what;

/* Called once per value (valid during the call only); anything but ERROR_OK stops
 * and is returned. */
typedef error_code (*store_complete_fn)(void *ctx, const char *value, error_info *err);

/*
 * Up to `max` distinct values of `what` that start with `prefix` (bytes; NULL or
 * "": any), for a shell's completion. Never a walk of a table: ids are one range
 * of their primary key, policy ids one index seek each, a policy's cidrs
 * (`policy_id` given) one range of its natural key's index (live rules), and
 * every policy's cidrs a few ranges of the cidr_key index (the addresses whose
 * text can start so: "10.1" is 10.1.x, 10.10-19.x and 10.100-199.x; IPv6 by
 * groups; typed in any case), at most 5,000 rows read per range. Ids and policy
 * ids come in byte order, cidrs in address order (of one policy: text order). A
 * prefix longer than any value yields nothing. Errors: the database's, or the
 * callback's.
 */
error_code store_complete(store *st, store_complete_what what, const char *prefix,
                          const char *policy_id, size_t max, store_complete_fn fn, void *ctx,
                          error_info *err);

#endif

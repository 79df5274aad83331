/*
 * store internals shared by the store_*.c files: the handle, the statement cache,
 * transaction helpers and the per-kind descriptors that let rules and credentials
 * share their row logic. Nothing outside the store module includes this, except
 * the store's own unit test (query plans).
 *
 * The row code in layers, each calling only those below it: store.c and
 * store_sql.c; store_columns.c (a row as its columns' texts, store_get);
 * store_rows.c (one row's writes, with store_creds.c's token and store_rules.c's
 * key conflict); store_update.c; the edit code (store_edit.c, store_edit_sync.c);
 * the calls that use it (store_object.c, store_outbox.c, store_import.c, ...).
 */
#ifndef RAMPART_STORE_INTERNAL_H
#define RAMPART_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/ids.h"
#include "rampart/kind.h"
#include "rampart/store.h"

/* Cached statements; their SQL is in store_sql.c, indexed by this enum. */
typedef enum store_stmt_id {
    STMT_BEGIN,
    STMT_COMMIT,
    STMT_ROLLBACK,
    STMT_SAVEPOINT,
    STMT_RELEASE,
    STMT_ROLLBACK_TO,
    STMT_ALIAS_EXISTS,
    STMT_ALIAS_INSERT,
    STMT_ALIAS_DELETE,
    STMT_LIVE_ID_BY_KEY,
    STMT_TOKEN_PUT,
    STMT_TOKEN_GET,
    STMT_TOKEN_MARK_SHOWN,
    STMT_TOKEN_UNSEEN,
    STMT_FETCH_RECORD,
    STMT_FETCH_SINCE,
    /* lookups (store_lookup.c) */
    STMT_POLICY_IDS,
    STMT_POLICY_COUNTS,
    STMT_BY_DESCRIPTION,
    STMT_ROTATION_SUCCESSOR,
    STMT_DATA_VERSION,
    STMT_META_GET,
    STMT_META_SET,
    /* a fleet (store_http.c) */
    STMT_CHANGE_TAG,
    STMT_CHANGE_BUMP,
    STMT_HTTP_GET,
    STMT_HTTP_TOUCH,
    STMT_HTTP_PUT,
    STMT_HTTP_PRUNE,
    /* outbox (store_outbox.c) */
    STMT_REQUEUE_ORPHAN,
    STMT_TOKEN_DELETE,
    /* pull staging and merge (store_pull.c) */
    STMT_PULL_RULES_CLEAR,
    STMT_PULL_CREDS_CLEAR,
    STMT_EDIT_LIST,
    STMT_EDIT_PUT,
    STMT_EDIT_SET,
    STMT_EDIT_DROP,
    STMT_CONFLICT_GET,
    STMT_CONFLICT_PUT,
    STMT_PULL_RULES_COUNT,
    STMT_PULL_CREDS_COUNT,
    STMT_PULL_RULES_SAME_KEY,
    STMT_MERGE_RULE_LOCAL_CREATES,
    STMT_MERGE_CRED_LOCAL_CREATES,
    STMT_MERGE_RULE_GONE_ALIASES,
    STMT_MERGE_RULE_GONE,
    STMT_MERGE_RULE_REMOTE_DELETED,
    STMT_MERGE_RULE_ADOPT_ALIASES,
    STMT_MERGE_RULE_ADOPT_EDITS,
    STMT_MERGE_RULE_ADOPT_CONFLICTS,
    STMT_MERGE_RULE_ADOPT,
    STMT_MERGE_RULE_KEY_CONFLICTS,
    STMT_MERGE_RULE_CONFLICT,
    STMT_MERGE_RULE_REQUEUE,
    STMT_MERGE_CRED_GONE_ALIASES,
    STMT_MERGE_CRED_GONE,
    STMT_MERGE_CRED_REMOTE_DELETED,
    STMT_MERGE_CRED_UNORPHAN,
    STMT_MERGE_CRED_STALE_ALIASES,
    STMT_MERGE_CRED_MARKED_EDITS,
    STMT_MERGE_CRED_MARKED,
    STMT_MERGE_CRED_ORPHAN_ALIASES,
    STMT_MERGE_CRED_ORPHAN,
    STMT_MERGE_CRED_REQUEUE,
    STMT_COUNT
} store_stmt_id;

/*
 * The statements every kind has, one family per operation, made from the kind's
 * descriptor (store_kind_sql). A row is read and inserted as its columns in
 * store_row_field's order: the descriptor's head fields, its fields, the state.
 */
typedef enum store_kstmt {
    KSTMT_RESOLVE,      /* ?1 id or alias -> id, state */
    KSTMT_GET,          /* ?1 id or alias -> the row */
    KSTMT_INSERT,       /* ?1.. the row */
    KSTMT_SET_STATE,    /* ?1 id, ?2 state, ?3 error, ?4 now */
    KSTMT_DELETE,       /* ?1 id */
    KSTMT_STATE_COUNTS, /* -> state, count */
    KSTMT_CONFIRM,      /* :local_id, :id, :now, :<head column>, :<field fixed at creation> */
    KSTMT_UPDATE,       /* :id, :<editable field> */
    KSTMT_CLAIM,        /* ?1 id, ?2 now: new -> creating, counting the attempt */
    KSTMT_RECREATE,     /* ?1 id, ?2 fresh local id, ?3 now */
    KSTMT_UNDELETE,     /* ?1 id, ?2 now */
    KSTMT_EDITED_IDS,   /* -> ids of the edited and conflicting rows */
    KSTMT_PULL_PUT,     /* ?1.. a listed row's columns (store_pull_width), then a
                         * credential's marker and raw metadata */
    KSTMT_PULL_KEEP,    /* ?1 id: stage the cached copy of a refused pulled row */
    KSTMT_PULL_ROW,     /* ?1 id -> a staged row, then `kept` */
    /* the pull merge's steps (store_pull.c), ?1 now -> rows changed */
    KSTMT_MERGE_UPDATE, /* listed rows cached already take the remote's values */
    KSTMT_MERGE_ADD,    /* listed rows not cached are added, synced */
    KSTMT_MERGE_STRAYS, /* a marked kind's second copies, queued for deletion */
    KSTMT_COUNT,
    /* parts of other queries (store_page.c) */
    KSQL_COLS = KSTMT_COUNT, /* the row's columns */
    KSQL_FILTER,             /* the text filter over ?3 */
    KSQL_STAGING             /* the pull's staging table (store_pull.c), if missing */
} store_kstmt;

/* Page query variants: one bit per optional clause. */
enum {
    STORE_PAGE_BACKWARD = 1u << 0,
    STORE_PAGE_CURSOR = 1u << 1,
    STORE_PAGE_POLICY = 1u << 2,
    STORE_PAGE_FILTER = 1u << 3,
    STORE_PAGE_STATES = 1u << 4,
    STORE_PAGE_VARIANTS = 32,  /* the clauses above, in one order */
    STORE_PAGE_SORT_SHIFT = 5, /* the bits above them: the store_sort */
    STORE_PAGE_SLOTS = STORE_PAGE_VARIANTS * STORE_SORT_COUNT,
    STORE_COUNT_VARIANTS = 8 /* policy, filter and states bits, shifted down */
};

enum { STORE_PATH_MAX = 4096 };

struct store {
    sqlite3 *db;
    char path[STORE_PATH_MAX]; /* as opened, for messages that name the file */
    bool readonly;
    bool in_tx; /* store_begin is open */
    bool import_open;     /* a store_import is open on this handle */
    bool indexes_dropped; /* a bulk import dropped the rules' indexes: no commit yet */
    /* per kind, pulled rows the gate refused that have no cached copy: the listing
     * says nothing about them, so it cannot settle local creates (store_pull.c) */
    size_t pull_blind[MODEL_KIND_COUNT];
    /* per kind, rows written to the staging since store_pull_begin: more than it
     * holds when the listing held an id twice */
    size_t pull_puts[MODEL_KIND_COUNT];
    bool staging_ready;   /* the pull's staging tables exist in the temp schema */
    long long now_sec;    /* the second now_text was formatted for */
    char now_text[MODEL_TIME_MAX + 1];
    ids_gen idgen;
    sqlite3_stmt *stmts[STMT_COUNT];
    sqlite3_stmt *kstmts[MODEL_KIND_COUNT][KSTMT_COUNT];
    sqlite3_stmt *pages[MODEL_KIND_COUNT][STORE_PAGE_SLOTS];
    sqlite3_stmt *counts[MODEL_KIND_COUNT][STORE_COUNT_VARIANTS];
};

/* store_sql.c */
const char *store_sql_text(store_stmt_id id);
/* The SQL of `which` for `kind` into `out`; false when `size` is too small. */
bool store_kind_sql(model_kind kind, store_kstmt which, char *out, size_t size);
/* A field's store column: its `column`, else its name. */
const char *store_column(const kind_field *f);
/* The columns of a row: store_row_width of them; store_row_field(kind, i) is
 * column i's field, NULL for the last (the state). */
int store_row_width(model_kind kind);
/* The parameters of KSTMT_PULL_PUT: the row's columns a listing has (not the
 * error text, nor the state), then what the kind's staging adds. */
int store_pull_width(model_kind kind);
const kind_field *store_row_field(model_kind kind, int i);
/* Whether column i is one a listing carries: not the error text, nor the state. */
bool store_row_staged(model_kind kind, int i);
int store_sql_migration_count(void);
const char *store_sql_migration(int index);
/* The rules table's secondary indexes but the natural key's: the SQL that creates
 * them (true) or drops them (false), for a bulk import that builds them once at
 * its end. */
const char *store_sql_rule_indexes(bool create);
/* The rules table's change triggers (migration 9): the SQL that makes them (true)
 * or drops them (false), for a bulk import that counts once instead of per row. */
const char *store_sql_rule_change_triggers(bool create);

/* store_files.c: the files before SQLite opens them. Create the missing
 * directories and file (writers), then refuse a cache or companion file
 * (-wal, -shm, -journal) that breaks fileperm's rule (ERROR_CONFIG). */
error_code store_prepare_path(const char *path, bool readonly, error_info *err);
/* The permission checks alone (the file must exist; absent companions are fine). */
error_code store_check_files(const char *path, error_info *err);
bool store_is_memory(const char *path);

/* store.c: statements, steps, errors */
/* Run a cached statement that returns no rows. */
error_code store_run(store *st, store_stmt_id id, error_info *err);
/* The same without reporting (an undo: the failure that led here is the one to
 * report). */
void store_run_quiet(store *st, store_stmt_id id);
/* First column of the first row of `sql` as text into `out` ("" for NULL or no row). */
error_code store_query_text(store *st, const char *sql, char *out, size_t size,
                            error_info *err);
/* Run SQL text with no result rows (several statements allowed). */
error_code store_exec_sql(store *st, const char *sql, error_info *err);
sqlite3_stmt *store_stmt(store *st, store_stmt_id id, error_info *err);
/* Kind `kind`'s statement `which`, prepared on first use and cached. */
sqlite3_stmt *store_kind_stmt(store *st, model_kind kind, store_kstmt which,
                              error_info *err);
error_code store_prepare(store *st, const char *sql, sqlite3_stmt **out, error_info *err);
void store_reset(sqlite3_stmt *s);
/* Bind NUL-terminated texts to ?1..?n without copying (reset before they die). */
error_code store_bind_texts(store *st, sqlite3_stmt *s, const char *const *texts,
                            int n, error_info *err);
/* Bind texts to those of the named parameters `names` (":id") that `s` has (the
 * others are skipped: one list serves every kind's statement), without copying. */
error_code store_bind_named(store *st, sqlite3_stmt *s, const char *const *names,
                            const char *const *texts, int n, error_info *err);
/* Step once: *row tells whether a row came back. The statement is not reset. */
error_code store_step(store *st, sqlite3_stmt *s, bool *row, error_info *err);
/* Step a statement that returns no rows, then reset it. */
error_code store_exec(store *st, sqlite3_stmt *s, error_info *err);
error_code store_db_error(store *st, int rc, error_info *err);
void store_col_copy(sqlite3_stmt *s, int col, char *dst, size_t size);
bool store_is_local_id(const char *id);

/*
 * One mutating call's transaction: its own BEGIN IMMEDIATE outside store_begin;
 * inside it, a savepoint when the call writes more than once (so a failure undoes
 * only this call), nothing when one statement does it.
 */
typedef enum store_op {
    STORE_OP_NONE,
    STORE_OP_TX,
    STORE_OP_SAVEPOINT
} store_op;
error_code store_op_begin(store *st, bool multi_write, store_op *op, error_info *err);
error_code store_op_end(store *st, store_op op, error_code rc, error_info *err);

/* store_http.c: one more write to `kind` in the change counter (a bulk import,
 * whose triggers are dropped, counts once). Inside the caller's transaction. */
error_code store_change_bump(store *st, model_kind kind, error_info *err);

/* ---- store_columns.c: a row as its columns' texts, and back ---- */

/* Field `f` of `row` as its column's text: a pointer into `row`, or for an ACL
 * into *heap (the caller frees *heap). NULL on failure (err set). */
const char *store_field_text(const model_object *row, const kind_field *f, char **heap,
                             error_info *err);
/* Set field `f` of `obj` from its column's text (an ACL: one rule per line,
 * replacing the list). ERROR_NOMEM; ERROR_INVALID for an action that is not one. */
error_code store_field_set_text(model_object *obj, const kind_field *f, const char *text,
                                error_info *err);
/* The ACL column's text: one rule per line (heap, the caller frees). ERROR_INVALID
 * for an empty rule or one with a line break. */
error_code store_cred_acl_join(const model_acl *acl, char **out, error_info *err);
/* The other way: append the column's rules to `acl`. ERROR_NOMEM. */
error_code store_cred_acl_split(const char *text, model_acl *acl, error_info *err);
/* One row of `kind` from a statement over its columns (KSTMT_GET,
 * KSTMT_PULL_ROW, a page) into `out`, initialised here (ERROR_NOMEM). */
error_code store_row_read(sqlite3_stmt *s, model_kind kind, model_object *out,
                          error_info *err);

/* store_rows.c: the row primitives both kinds share */
error_code store_row_resolve(store *st, model_kind kind, const char *id,
                             char canon[MODEL_ID_MAX + 1], model_state *state,
                             error_info *err);
error_code store_row_set_state(store *st, model_kind kind, const char *id,
                               model_state state, const char *error_text,
                               error_info *err);
error_code store_row_remove(store *st, model_kind kind, const char *id, error_info *err);
error_code store_row_state_counts(store *st, model_kind kind,
                                  size_t counts[MODEL_STATE_COUNT], error_info *err);
/* Inside an op: refuse an id that an alias already stands for. */
error_code store_row_check_alias(store *st, model_kind kind, const char *id,
                                 error_info *err);
/* Inside an op: rename local row `local_id` to `remote_id` (already resolved
 * and checked) by running the kind's bound confirm statement, then add the alias. */
error_code store_row_confirm(store *st, model_kind kind, sqlite3_stmt *confirm,
                             const char *local_id, const char *remote_id,
                             error_info *err);
error_code store_row_check_confirm(store *st, model_kind kind, const char *local_id,
                                   const char *remote_id, error_info *err);

/* store_page.c */
error_code store_page_stmt(store *st, model_kind kind, const store_query *q,
                           const char *cursor, store_dir dir, size_t limit,
                           sqlite3_stmt **out, error_info *err);
error_code store_count_rows(store *st, model_kind kind, const store_query *q,
                            size_t *out, error_info *err);
/* EXPLAIN QUERY PLAN of `sql` (details joined by "; "), for the store's tests. */
error_code store_plan(store *st, const char *sql, char *out, size_t size, error_info *err);
/* The same for page variant `variant` (sort bits included: store_sort <<
 * STORE_PAGE_SORT_SHIFT). */
error_code store_page_plan(store *st, model_kind kind, unsigned variant, char *out,
                           size_t size, error_info *err);

/* store_complete.c: EXPLAIN QUERY PLAN of a completion's query, for the tests:
 * `bounded` (the prefix has an upper bound), `inclusive` (the first seek of the
 * policy ids; for cidrs: one policy's, else every policy's key range). */
error_code store_complete_plan(store *st, store_complete_what what, bool bounded,
                               bool inclusive, char *out, size_t size, error_info *err);

/* store_page.c: bind the cidr_key of every prefix of address `ip` (/0 to /32 or
 * /128) to parameters first.. first+128 (those of another family, or all when
 * `ip` is no address, stay NULL). An SQLite result code. */
int store_bind_addr_keys(sqlite3_stmt *s, int first, const char *ip);

/* Every state but deleting, remote_deleted and conflict: the rows whose natural
 * key is unique (rules_live_key). */
bool store_state_is_live(model_state state);
/* The ERROR_CONFLICT of writing `row` under `id`: names the live rule that holds
 * a rule's natural key when there is one, else says the id exists. */
error_code store_row_conflict(store *st, const model_object *row, const char *id,
                              error_info *err);
/* The current time as RFC 3339 UTC into `out`, formatted at most once a second
 * per handle (a bulk import stamps a million rows in a few seconds). */
void store_now(store *st, char out[MODEL_TIME_MAX + 1]);

/* store_insert for a row that passed the gate (kind_validate_row) already. */
error_code store_insert_valid(store *st, model_object *obj, error_info *err);

/* store_insert's write, for a row that passed the gate (kind_validate_row), inside
 * the caller's op: the row under `id` with `created_at`, and its token when it
 * carries one. updated_at is '' until the row's state moves (created_at says when
 * it was made), which keeps a bulk import's rows 20 bytes shorter. */
error_code store_row_insert_in_op(store *st, const model_object *obj, const char *id,
                                  const char *created_at, error_info *err);
/* The token a row carries (a credential's; NULL for a kind that has none). */
const char *store_row_token(const model_object *obj);
/* Store a credential's token (a no-op for NULL or ""), inside the caller's op. */
error_code store_cred_put_token(store *st, const char *cred_id, const char *token,
                                error_info *err);

/* ---- store_rows.c / store_update.c / store_edit.c: inside the caller's op ---- */

/* Remove row `canon` (its aliases; a credential's token by cascade). */
error_code store_row_remove_in_op(store *st, model_kind kind, const char *canon,
                                  error_info *err);
/* Row `canon` becomes a new local create of the same content under a fresh local
 * id (written to `fresh`): its remote id, aliases (and a credential's token) go. */
error_code store_row_recreate_in_op(store *st, model_kind kind, const char *canon,
                                    char fresh[MODEL_ID_MAX + 1], error_info *err);
/* Set the state and error text of row `id` (ERROR_NOT_FOUND, ERROR_CONFLICT as
 * store_set_state). */
error_code store_row_set_state_in_op(store *st, model_kind kind, const char *id,
                                     model_state state, const char *error_text,
                                     error_info *err);
/* store_update's work inside an op: read row `given`'s id into `row`, move the
 * `fields` of `given` into it, pass the gate, write. `row` is initialised to the
 * kind by the caller and released by it whatever the result. */
error_code store_update_in_op(store *st, model_object *given, unsigned fields,
                              model_object *row, error_info *err);
/* `fields` must name some of the kind's fields, each one an edit may change:
 * ERROR_INVALID naming the others ("action: cannot be changed after creation"). */
error_code store_update_check_fields(model_kind kind, unsigned fields, error_info *err);
/* The frame of an edit call (store_update, store_edit): check the kind and the
 * fields, copy `obj`, run `fn` in an op (multi_write: a savepoint inside
 * store_begin) with the copy as `given` and an initialised `row` to fill with the
 * stored row, and on success move `row` into `obj`. */
typedef error_code (*store_update_fn)(store *st, model_object *given, unsigned fields,
                                      model_object *row, void *ctx, error_info *err);
error_code store_update_run(store *st, model_object *obj, unsigned fields, bool multi_write,
                            store_update_fn fn, void *ctx, error_info *err);
/* Write `row`'s editable columns as they are (it passed the gate). */
error_code store_update_write(store *st, const model_object *row, error_info *err);
/* store_edit.c: what a user's delete and discard do to an edited or conflicting
 * row `canon`: *result says it (store_delete_result). */
error_code store_edit_delete_in_op(store *st, model_kind kind, const char *canon,
                                   store_delete_result *result, error_info *err);
error_code store_edit_discard_in_op(store *st, model_kind kind, const char *canon,
                                    store_delete_result *result, error_info *err);
/* store_edit_sync.c: a confirmed create whose remote fields differ from the row's (a
 * credential's metadata carries the creation marker): those become edits whose
 * bases are the remote's, so the next push sends the row's own values. */
error_code store_edit_after_confirm(store *st, const model_object *remote,
                                    const char *canon, error_info *err);
/* store_edit_sync.c: the merge of a pull for edited and conflicting rows (store_pull.c). */
error_code store_edit_merge(store *st, model_kind kind, size_t *conflicts, error_info *err);

#endif

/*
 * store: pull staging and the merge of a complete remote snapshot into the cache.
 * The rules of the merge are in store.h (store_pull_merge); the SQL is in
 * store_sql.c, one set-based statement per step, all in one transaction.
 */
#include "store_internal.h"
#include "store_stmt.h"

#include "rampart/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run a cached statement with up to `n` texts (a merge step binds "now" only when
 * it writes a timestamp). */
static error_code exec_stmt(store *st, sqlite3_stmt *s, const char *const *args, int n,
                            size_t *changes, error_info *err)
{
    if (s && sqlite3_bind_parameter_count(s) < n)
        n = sqlite3_bind_parameter_count(s);
    return store_stmt_run(st, s, args, n, changes, err);
}

static error_code exec_id(store *st, store_stmt_id id, const char *const *args, int n,
                          size_t *changes, error_info *err)
{
    return exec_stmt(st, store_stmt(st, id, err), args, n, changes, err);
}

/*
 * A pull's staging, from store_pull_begin to the end of its merge (or
 * store_pull_release), sits in the temp schema's page cache of STAGING_CACHE_KIB:
 * a listing of 100,000 rules (about 270 bytes a rule) stays in it and is never
 * read back from disk, while a longer one (a remote or hub serving pages forever,
 * up to listing_max) spills to SQLite's temporary file rather than grow the
 * process: with the merge's own cache (MERGE_CACHE_KIB) a pull stays under 128
 * MiB whatever the listing's length. SQLite's default 2 MB cache made a
 * 100,000-rule listing spill and read back (~34k writes, ~33k reads); a staging
 * all in memory (temp_store = MEMORY) grew without bound. Both settings go back
 * to their defaults when the pull ends, which drops the temp schema whole; they
 * can change only outside a transaction (temp_store drops the temp schema), so
 * inside a caller's transaction the staging stays where it is.
 */
enum { STAGING_CACHE_KIB = 32 * 1024 };

static error_code staging_in_memory(store *st, bool on, error_info *err)
{
    if (st->in_tx)
        return ERROR_OK;
    st->staging_ready = false; /* a change drops the temp schema */
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA temp_store = %s; PRAGMA temp.cache_size = -%d",
             on ? "FILE" : "DEFAULT", on ? STAGING_CACHE_KIB : 2000);
    return store_exec_sql(st, sql, err);
}

void store_pull_release(store *st)
{
    error_info ignored;
    if (!st)
        return;
    staging_in_memory(st, false, &ignored);
    memset(st->pull_puts, 0, sizeof st->pull_puts);
}

/* The staging tables live in this connection's temp schema: make them on first
 * use (once per pull: parsing their schema for every page was 1% of a pull). */
static error_code ensure_staging(store *st, error_info *err)
{
    if (st->staging_ready)
        return ERROR_OK;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        char sql[2048];
        if (!store_kind_sql((model_kind)k, KSQL_STAGING, sql, sizeof sql))
            return error_set(err, ERROR_IO, "database: the %s staging is too long",
                             kind_get((model_kind)k)->noun);
        int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return store_db_error(st, rc, err);
    }
    /* Made inside a caller's transaction they may yet be rolled back. */
    st->staging_ready = !st->in_tx;
    return ERROR_OK;
}

error_code store_pull_begin(store *st, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (staging_in_memory(st, true, err) || ensure_staging(st, err))
        return err->code;
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    error_code rc = exec_id(st, STMT_PULL_RULES_CLEAR, NULL, 0, NULL, err);
    if (rc == ERROR_OK)
        rc = exec_id(st, STMT_PULL_CREDS_CLEAR, NULL, 0, NULL, err);
    memset(st->pull_blind, 0, sizeof st->pull_blind);
    memset(st->pull_puts, 0, sizeof st->pull_puts);
    return store_op_end(st, op, rc, err);
}

/* ---- staging -------------------------------------------------------------- */

enum { PUT_MAX = 32 };

/* A listed row into the staging: its columns as KSTMT_PULL_PUT's ?1.., then the
 * marker and the raw metadata (bound only where the kind's staging has them). */
static error_code put_row(store *st, const model_object *obj, const char *marker,
                          const char *raw_metadata, error_info *err)
{
    model_kind kind = obj->kind;
    int width = store_row_width(kind);
    const char *texts[PUT_MAX];
    char *heaps[PUT_MAX] = {0};
    int n = 0;
    error_code rc = ERROR_OK;
    for (int i = 0; rc == ERROR_OK && i < width && n < PUT_MAX - 2; i++) {
        if (!store_row_staged(kind, i))
            continue;
        texts[n] = store_field_text(obj, store_row_field(kind, i), &heaps[n], err);
        rc = texts[n++] ? ERROR_OK : err->code;
    }
    texts[n++] = marker ? marker : "";
    texts[n++] = raw_metadata ? raw_metadata : "";
    if (rc == ERROR_OK)
        rc = exec_stmt(st, store_kind_stmt(st, kind, KSTMT_PULL_PUT, err), texts, n, NULL, err);
    for (int i = 0; i < n; i++)
        free(heaps[i]);
    return rc;
}

/* The gate of store_insert, plus what a listed object must have: a remote id. */
static error_code check_pulled(model_object *obj, error_info *err)
{
    const kind_desc *d = kind_get(obj->kind);
    if (validate_id(model_object_id(obj), d->id_prefix, "id", err))
        return err->code;
    return kind_validate_row(obj, err);
}

typedef struct stage_page {
    model_kind kind;
    model_object *rows;
    const char *const *markers;
    const char *const *raw_metadata;
    size_t n;
    store_refused_fn on_refused;
    void *ctx;
    size_t refused;
} stage_page;

/* A refused row: its cached copy stands in for it; with none, the listing says
 * nothing about it (see the merge's local creates). */
static error_code stage_refused(store *st, model_kind kind, const char *id, error_info *err)
{
    size_t kept = 0;
    if (exec_stmt(st, store_kind_stmt(st, kind, KSTMT_PULL_KEEP, err), &id, 1, &kept, err))
        return err->code;
    /* Not cached: it may be one of our own creates, whose reply was lost. */
    st->pull_blind[kind] += kept == 0;
    st->pull_puts[kind] += kept;
    return ERROR_OK;
}

error_code store_pull_unreadable(store *st, model_kind kind, const char *id, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    if (ensure_staging(st, err))
        return err->code;
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    return store_op_end(st, op, stage_refused(st, kind, id ? id : "", err), err);
}

static error_code stage_row(store *st, stage_page *p, size_t i, error_info *err)
{
    model_object *obj = &p->rows[i];
    obj->kind = p->kind;
    error_info why;
    const char *raw = p->raw_metadata ? p->raw_metadata[i] : NULL;
    if (check_pulled(obj, &why) != ERROR_OK ||
        (raw && validate_metadata(raw, &why) != ERROR_OK)) {
        p->refused++;
        if (p->on_refused)
            p->on_refused(p->ctx, p->kind, model_object_id(obj), &why);
        return stage_refused(st, p->kind, model_object_id(obj), err);
    }
    st->pull_puts[p->kind]++;
    return put_row(st, obj, p->markers ? p->markers[i] : NULL, raw, err);
}

static error_code stage_rows(store *st, stage_page *p, error_info *err)
{
    for (size_t i = 0; i < p->n; i++) {
        if (stage_row(st, p, i, err))
            return err->code;
    }
    return ERROR_OK;
}

error_code store_pull_stage(store *st, model_kind kind, model_object *rows,
                            const char *const *markers, const char *const *raw_metadata,
                            size_t n, store_refused_fn on_refused, void *ctx,
                            size_t *refused, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    stage_page p = {kind, rows, markers, raw_metadata, n, on_refused, ctx, 0};
    if (refused)
        *refused = 0;
    if (n == 0)
        return ERROR_OK;
    if (ensure_staging(st, err))
        return err->code;
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    if (store_op_end(st, op, stage_rows(st, &p, err), err))
        return err->code;
    if (refused)
        *refused = p.refused;
    return ERROR_OK;
}

/* ---- merge ---------------------------------------------------------------- */

/* One step of a merge: the kind it merges, a statement (one of the store's, or
 * one made for the kind from its descriptor) and the counter its changes go to
 * (or none). */
typedef struct merge_step {
    model_kind kind;
    store_stmt_id stmt; /* STMT_COUNT: the kind's statement `kstmt` */
    store_kstmt kstmt;
    size_t offset;      /* of a size_t in store_pull_stats; SIZE_MAX: not counted */
    bool local_creates; /* only matters while a local row waits for its create */
} merge_step;

#define SQL(id) id, KSTMT_COUNT
#define KIND_SQL(which) STMT_COUNT, which

#define NO_COUNTER SIZE_MAX
#define COUNTED(field) offsetof(store_pull_stats, field), false
#define UNCOUNTED NO_COUNTER, false
#define IF_CREATES(field) offsetof(store_pull_stats, field), true
#define IF_CREATES_UNCOUNTED NO_COUNTER, true

/*
 * Order matters: absences first (they free natural keys: a remote_deleted rule is
 * no longer live), then rows matched by id, then local creates matched by key or
 * marker (aliases before the renames), then what is left unmatched, and the remote
 * additions last, once every local row that could claim them has.
 */
#define R MODEL_KIND_RULE
#define C MODEL_KIND_CRED
static const merge_step merge_steps[] = {
    {R, SQL(STMT_MERGE_RULE_GONE_ALIASES), UNCOUNTED},
    {R, SQL(STMT_MERGE_RULE_GONE), COUNTED(gone)},
    {R, SQL(STMT_MERGE_RULE_REMOTE_DELETED), COUNTED(remote_deleted)},
    {R, KIND_SQL(KSTMT_MERGE_UPDATE), COUNTED(updated)},
    {R, SQL(STMT_MERGE_RULE_ADOPT_ALIASES), IF_CREATES_UNCOUNTED},
    {R, SQL(STMT_MERGE_RULE_ADOPT_EDITS), IF_CREATES_UNCOUNTED},
    {R, SQL(STMT_MERGE_RULE_ADOPT_CONFLICTS), IF_CREATES(conflicts)},
    {R, SQL(STMT_MERGE_RULE_ADOPT), IF_CREATES(adopted)},
    {R, SQL(STMT_MERGE_RULE_KEY_CONFLICTS), IF_CREATES_UNCOUNTED},
    {R, SQL(STMT_MERGE_RULE_CONFLICT), IF_CREATES(conflicts)},
    {R, SQL(STMT_MERGE_RULE_REQUEUE), IF_CREATES(requeued)},
    {R, KIND_SQL(KSTMT_MERGE_ADD), COUNTED(added)},
    /* Credentials: orphans (created remotely, token lost) and strays (a second
     * copy of one of our creates) take the natural key's place. */
    {C, SQL(STMT_MERGE_CRED_GONE_ALIASES), UNCOUNTED},
    {C, SQL(STMT_MERGE_CRED_GONE), COUNTED(gone)},
    {C, SQL(STMT_MERGE_CRED_REMOTE_DELETED), COUNTED(remote_deleted)},
    {C, SQL(STMT_MERGE_CRED_UNORPHAN), COUNTED(requeued)},
    {C, SQL(STMT_MERGE_CRED_STALE_ALIASES), UNCOUNTED},
    {C, KIND_SQL(KSTMT_MERGE_UPDATE), COUNTED(updated)},
    {C, SQL(STMT_MERGE_CRED_MARKED_EDITS), UNCOUNTED},
    {C, SQL(STMT_MERGE_CRED_MARKED), UNCOUNTED},
    {C, SQL(STMT_MERGE_CRED_ORPHAN_ALIASES), IF_CREATES_UNCOUNTED},
    {C, SQL(STMT_MERGE_CRED_ORPHAN), IF_CREATES(orphaned)},
    {C, SQL(STMT_MERGE_CRED_REQUEUE), IF_CREATES(requeued)},
    {C, KIND_SQL(KSTMT_MERGE_STRAYS), COUNTED(strays)},
    {C, KIND_SQL(KSTMT_MERGE_ADD), COUNTED(added)},
};
#undef R
#undef C
#undef SQL
#undef KIND_SQL

static error_code count_staged(store *st, store_stmt_id id, size_t *out, error_info *err)
{
    long long n;
    if (store_stmt_int(st, store_stmt(st, id, err), &n, err))
        return err->code;
    *out = (size_t)n;
    return ERROR_OK;
}

/* A query's first row exists? */
static error_code exists(store *st, store_stmt_id id, bool *out, error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, id, err);
    if (store_stmt_first(st, s, NULL, 0, out, err))
        return err->code;
    store_reset(s);
    return ERROR_OK;
}

/* The steps of `kind`, in order. */
static error_code run_steps(store *st, model_kind kind, const char *now,
                            store_stmt_id creates_query, store_pull_stats *stats,
                            error_info *err)
{
    bool creates = false;
    if (exists(st, creates_query, &creates, err))
        return err->code;
    const merge_step *steps = merge_steps;
    for (size_t i = 0; i < sizeof merge_steps / sizeof merge_steps[0]; i++) {
        /* Local creates are settled only by a listing that says something about
         * every object in it (a refused one with no cached copy may be ours). */
        bool settle_creates = creates && st->pull_blind[kind] == 0;
        if (steps[i].kind != kind || (steps[i].local_creates && !settle_creates))
            continue;
        size_t changes = 0;
        sqlite3_stmt *s = steps[i].stmt < STMT_COUNT
                              ? store_stmt(st, steps[i].stmt, err)
                              : store_kind_stmt(st, kind, steps[i].kstmt, err);
        if (exec_stmt(st, s, &now, 1, &changes, err))
            return err->code;
        if (steps[i].offset != NO_COUNTER)
            *(size_t *)((char *)stats + steps[i].offset) += changes;
    }
    return ERROR_OK;
}

/* Rows the staging took more than it holds: ids the listing held twice. */
static size_t twice(const store *st, model_kind kind, size_t staged)
{
    return st->pull_puts[kind] > staged ? st->pull_puts[kind] - staged : 0;
}

static error_code merge_in_op(store *st, store_pull_stats *rules, store_pull_stats *creds,
                              error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    if (count_staged(st, STMT_PULL_RULES_COUNT, &rules->pulled, err) ||
        count_staged(st, STMT_PULL_CREDS_COUNT, &creds->pulled, err))
        return err->code;
    rules->twice = twice(st, MODEL_KIND_RULE, rules->pulled);
    creds->twice = twice(st, MODEL_KIND_CRED, creds->pulled);
    if (run_steps(st, MODEL_KIND_RULE, now, STMT_MERGE_RULE_LOCAL_CREATES, rules, err) ||
        run_steps(st, MODEL_KIND_CRED, now, STMT_MERGE_CRED_LOCAL_CREATES, creds, err) ||
        count_staged(st, STMT_PULL_RULES_SAME_KEY, &rules->same_key, err))
        return err->code;
    /* Edited rows last: they compare with the staged copy by id, whatever the
     * steps above did to the other rows. */
    if (store_edit_merge(st, MODEL_KIND_RULE, &rules->edit_conflicts, err) ||
        store_edit_merge(st, MODEL_KIND_CRED, &creds->edit_conflicts, err))
        return err->code;
    /* The snapshot is in the cache now: staging would only take space. Outside
     * a transaction store_pull_release drops it whole after the commit. */
    if (!st->in_tx)
        return ERROR_OK;
    if (exec_id(st, STMT_PULL_RULES_CLEAR, NULL, 0, NULL, err))
        return err->code;
    return exec_id(st, STMT_PULL_CREDS_CLEAR, NULL, 0, NULL, err);
}

/*
 * The merge's dirty pages stay in memory until its commit: with the writer's
 * 16 MiB cache a merge of 100,000 new rules spilled B-tree pages to the WAL in
 * the middle of its transaction and read them back (~30k writes, ~19k reads).
 * The cache may grow to MERGE_CACHE_KIB for the merge (SQLite takes pages as it
 * needs them; past that it spills as before) and is set back after it, which
 * gives the pages back. 64 MiB holds the merge of a 100,000-rule listing (57 MB
 * measured) and bounds a larger one: a machine the admin runs rampart on is
 * also running something else.
 */
enum { MERGE_CACHE_KIB = 64 * 1024 };

static error_code merge_cache(store *st, bool big, int *saved, error_info *err)
{
    char sql[64];
    if (big) {
        char was[32];
        if (store_query_text(st, "PRAGMA main.cache_size", was, sizeof was, err))
            return err->code;
        *saved = atoi(was);
    }
    snprintf(sql, sizeof sql, "PRAGMA main.cache_size = %d", big ? -MERGE_CACHE_KIB : *saved);
    return store_exec_sql(st, sql, err);
}

error_code store_pull_merge(store *st, store_pull_stats *rules, store_pull_stats *creds,
                            error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    store_pull_stats rule_stats = {0}, cred_stats = {0};
    if (ensure_staging(st, err))
        return err->code;
    store_op op;
    int saved_cache = 0;
    if (merge_cache(st, true, &saved_cache, err))
        return err->code;
    error_code rc = store_op_begin(st, true, &op, err);
    if (rc == ERROR_OK)
        rc = store_op_end(st, op, merge_in_op(st, &rule_stats, &cred_stats, err), err);
    error_info ignored;
    merge_cache(st, false, &saved_cache, &ignored);
    if (rc != ERROR_OK)
        return rc;
    store_pull_release(st);
    if (rules)
        *rules = rule_stats;
    if (creds)
        *creds = cred_stats;
    return ERROR_OK;
}

error_code store_pull_forget_removed(store *st, size_t *removed, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    size_t total = 0;
    if (store_begin(st, err))
        return err->code;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        char sql[96];
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE state = 'remote_deleted'",
                 kind_get((model_kind)k)->table);
        if (store_exec_sql(st, sql, err)) {
            store_rollback(st);
            return err->code;
        }
        total += (size_t)sqlite3_changes(st->db);
    }
    if (store_commit(st, err))
        return err->code;
    if (removed)
        *removed = total;
    return ERROR_OK;
}

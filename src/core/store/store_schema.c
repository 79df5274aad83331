/*
 * store: a database file's life. Opening it (what it is: rampart's, an older
 * rampart's, new, or someone else's; its connection settings; the schema
 * migrations), closing it, and the health checks of `rampart doctor`. Built on
 * store.c's statements and transactions, which never call back here.
 */
#include "store_internal.h"

#include "rampart/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    BUSY_TIMEOUT_MS = 5000,
    BUSY_RETRY_MS = 20,
    /* KiB of page cache for a writer: keeps the index pages an import touches
     * hot. Readers keep SQLite's default. */
    WRITER_CACHE_KIB = 16384,
    /* A large import grows the WAL; truncate it back after checkpoints. */
    WAL_LIMIT_BYTES = 64 << 20
};

int store_schema_version(void)
{
    return store_sql_migration_count();
}

/* canon_cidr(text): the canonical form of a CIDR (validate_cidr's), or the text
 * itself when it is not a valid CIDR, so a migration can bring rows an older
 * version stored as the remote spelled them to the one spelling the natural key
 * compares. */
static void sql_canon_cidr(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *text = (const char *)sqlite3_value_text(argv[0]);
    char canon[MODEL_CIDR_MAX + 1];
    if (text && validate_cidr(text, NULL, canon, sizeof canon, NULL) == ERROR_OK)
        sqlite3_result_text(ctx, canon, -1, SQLITE_TRANSIENT);
    else
        sqlite3_result_value(ctx, argv[0]);
}

/* cidr_sort_key(text): the blob rules.cidr_key holds, so the console's cidr order
 * is address order (family, address bytes, prefix length: what memcmp on the blob
 * gives) served by an index. Computed here, in the store's own writes, rather than
 * in an expression index: the column is plain data any reader (the sqlite3 shell
 * included) can use without this function. Text that is not a CIDR (a row an older
 * version kept as the remote sent it) sorts after every address, as text. */
static void sql_cidr_sort_key(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *text = (const char *)sqlite3_value_text(argv[0]);
    validate_prefix pfx;
    unsigned char key[1 + 16 + 1 + MODEL_CIDR_MAX];
    size_t len = 0;
    if (text && validate_cidr(text, &pfx, NULL, 0, NULL) == ERROR_OK) {
        size_t n = pfx.family == 4 ? 4 : 16;
        key[len++] = (unsigned char)pfx.family;
        memcpy(key + len, pfx.addr, n);
        len += n;
        key[len++] = (unsigned char)pfx.bits;
    } else {
        size_t n = text ? strlen(text) : 0;
        n = n > MODEL_CIDR_MAX ? MODEL_CIDR_MAX : n;
        key[len++] = 0xff;
        for (size_t i = 0; i < n; i++) /* bytes of a blob, not a string */
            key[len + i] = (unsigned char)text[i];
        len += n;
    }
    sqlite3_result_blob(ctx, key, (int)len, SQLITE_TRANSIENT);
}

static error_code add_functions(store *st, error_info *err)
{
    int rc = sqlite3_create_function(st->db, "canon_cidr", 1,
                                     SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
                                     NULL, sql_canon_cidr, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(st->db, "cidr_sort_key", 1,
                                     SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
                                     NULL, sql_cidr_sort_key, NULL, NULL);
    return rc == SQLITE_OK ? ERROR_OK : store_db_error(st, rc, err);
}

/* Call `fn` again while SQLite answers busy or locked without calling the busy
 * handler (a lock another process takes while it makes a file a cache), for as
 * long as the busy timeout. */
typedef error_code (*attempt_fn)(store *st, void *arg, error_info *err);

static error_code retry_busy(store *st, attempt_fn fn, void *arg, error_info *err)
{
    const struct timespec step = {0, BUSY_RETRY_MS * 1000000L};
    for (int waited = 0;; waited += BUSY_RETRY_MS) {
        error_code rc = fn(st, arg, err);
        int code = sqlite3_errcode(st->db) & 0xff;
        if (rc == ERROR_OK || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
            waited >= BUSY_TIMEOUT_MS)
            return rc;
        nanosleep(&step, NULL);
    }
}

static error_code query_int(store *st, const char *sql, long long *out, error_info *err)
{
    char text[32];
    if (store_query_text(st, sql, text, sizeof text, err))
        return err->code;
    *out = strtoll(text, NULL, 10);
    return ERROR_OK;
}

/* ---- what the file is ---------------------------------------------------- */

typedef struct file_facts {
    long long app, version, objects, core_tables;
} file_facts;

/* One statement, so one snapshot: read one fact at a time, a file another process
 * is making a cache meanwhile would look half made (no id yet, its tables already
 * there) and be taken for a foreign one. The core tables are those every rampart
 * cache has had since schema version 1. */
static const char facts_sql[] =
    "SELECT (SELECT application_id FROM pragma_application_id()),"
    " (SELECT user_version FROM pragma_user_version()),"
    " (SELECT count(*) FROM sqlite_master),"
    " (SELECT count(*) FROM sqlite_master WHERE type = 'table'"
    "  AND name IN ('rules', 'credentials', 'tokens', 'aliases'))";
enum { CORE_TABLES = 4 };

static error_code read_facts(store *st, file_facts *f, error_info *err)
{
    sqlite3_stmt *s;
    if (store_prepare(st, facts_sql, &s, err))
        return err->code;
    bool row = false;
    error_code rc = store_step(st, s, &row, err);
    if (rc == ERROR_OK && row) {
        f->app = sqlite3_column_int64(s, 0);
        f->version = sqlite3_column_int64(s, 1);
        f->objects = sqlite3_column_int64(s, 2);
        f->core_tables = sqlite3_column_int64(s, 3);
    }
    sqlite3_finalize(s);
    return rc;
}

static error_code read_facts_attempt(store *st, void *arg, error_info *err)
{
    return read_facts(st, arg, err);
}

static error_code not_ours(store *st, const file_facts *f, error_info *err)
{
    const char *why = f->app != 0           ? ""
                      : f->core_tables == 0 ? ", no rampart tables"
                                            : ", no schema version";
    return error_set(err, ERROR_CONFIG,
                     "%s is not a rampart cache (application_id 0x%08X%s; a rampart cache "
                     "has 0x%08X): rampart leaves it as it is; give --db (or RAMPART_DB) "
                     "the path of a rampart cache, or a new path",
                     st->path, (unsigned)(f->app & 0xFFFFFFFF), why, STORE_APPLICATION_ID);
}

/* ERROR_CONFIG when the file is not a rampart cache: another application id, or
 * none with objects that are not an older rampart's tables (a new, empty file and
 * an older rampart's cache pass). Reads only. */
static error_code check_identity(store *st, error_info *err)
{
    file_facts f = {0};
    /* Another process may be making this file a cache at the same moment. */
    if (retry_busy(st, read_facts_attempt, &f, err))
        return err->code;
    bool fresh = f.app == 0 && f.version == 0 && f.objects == 0;
    if (f.app == STORE_APPLICATION_ID || fresh)
        return ERROR_OK;
    /* A cache an older rampart made, before the application id: ours, stamped by
     * the next open that may write. */
    if (f.app == 0 && f.version > 0 && f.core_tables == CORE_TABLES)
        return ERROR_OK;
    return not_ours(st, &f, err);
}

error_code store_identity_get(store *st, store_identity *out, error_info *err)
{
    long long app = 0, version = 0;
    if (query_int(st, "PRAGMA application_id", &app, err) ||
        query_int(st, "PRAGMA user_version", &version, err))
        return err->code;
    out->application_id = (unsigned long)(app & 0xFFFFFFFF);
    out->schema_version = (int)version;
    return ERROR_OK;
}

/* ---- migrations ---------------------------------------------------------- */

static error_code newer_schema(long long found, error_info *err)
{
    return error_set(err, ERROR_CONFIG,
                     "database schema version %lld is newer than this rampart (%d): "
                     "upgrade rampart", found, store_schema_version());
}

/* One migration step and the application id, in one transaction; another process
 * may have done either meanwhile, so both are read again inside it. */
static error_code migrate_step(store *st, bool *done, error_info *err)
{
    long long v = 0, app = 0;
    if (store_run(st, STMT_BEGIN, err))
        return err->code;
    error_code rc = query_int(st, "PRAGMA user_version", &v, err);
    if (rc == ERROR_OK)
        rc = query_int(st, "PRAGMA application_id", &app, err);
    if (rc == ERROR_OK && v > store_schema_version())
        rc = newer_schema(v, err);
    if (rc == ERROR_OK && v < store_schema_version()) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %lld", v + 1);
        rc = store_exec_sql(st, store_sql_migration((int)v), err);
        if (rc == ERROR_OK)
            rc = store_exec_sql(st, bump, err);
        if (rc != ERROR_OK)
            error_prefix(err, "migrating the database to schema version %lld", v + 1);
        v++;
    }
    if (rc == ERROR_OK && app != STORE_APPLICATION_ID) {
        char stamp[64];
        snprintf(stamp, sizeof stamp, "PRAGMA application_id = %d", STORE_APPLICATION_ID);
        rc = store_exec_sql(st, stamp, err);
    }
    if (rc == ERROR_OK)
        rc = store_run(st, STMT_COMMIT, err);
    if (rc != ERROR_OK)
        store_run_quiet(st, STMT_ROLLBACK);
    *done = v >= store_schema_version();
    return rc;
}

/* Migrate to the current schema and stamp the application id, one transaction
 * per step (writers). */
static error_code migrate(store *st, error_info *err)
{
    long long v = 0, app = 0;
    if (query_int(st, "PRAGMA user_version", &v, err) ||
        query_int(st, "PRAGMA application_id", &app, err))
        return err->code;
    if (v > store_schema_version())
        return newer_schema(v, err);
    bool done = v == store_schema_version() && app == STORE_APPLICATION_ID;
    while (!done) {
        if (migrate_step(st, &done, err))
            return err->code;
    }
    return ERROR_OK;
}

/* Read-only handles: the schema must be the current one. */
static error_code check_schema(store *st, error_info *err)
{
    long long v = 0;
    if (query_int(st, "PRAGMA user_version", &v, err))
        return err->code;
    if (v > store_schema_version())
        return newer_schema(v, err);
    if (v < store_schema_version())
        return error_set(err, ERROR_CONFIG,
                         "database schema version %lld is older than this rampart (%d): "
                         "open it read-write once to migrate it", v,
                         store_schema_version());
    return ERROR_OK;
}

/* ---- connection settings ------------------------------------------------- */

typedef struct wal_answer {
    char *mode;
    size_t size;
} wal_answer;

static error_code switch_to_wal(store *st, void *arg, error_info *err)
{
    wal_answer *a = arg;
    return store_query_text(st, "PRAGMA journal_mode = WAL", a->mode, a->size, err);
}

static error_code configure(store *st, const char *path, error_info *err)
{
    if (store_exec_sql(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL", err))
        return err->code;
    if (st->readonly)
        return ERROR_OK;
    char cache[96];
    snprintf(cache, sizeof cache, "PRAGMA cache_size = -%d; PRAGMA journal_size_limit = %d",
             WRITER_CACHE_KIB, WAL_LIMIT_BYTES);
    if (store_exec_sql(st, cache, err))
        return err->code;
    if (store_is_memory(path))
        return ERROR_OK;
    /* On a new file another process may be switching or migrating at the same
     * moment, and SQLite calls no busy handler for that lock. */
    char mode[16];
    wal_answer answer = {mode, sizeof mode};
    if (retry_busy(st, switch_to_wal, &answer, err))
        return err->code;
    if (strcmp(mode, "wal") != 0)
        return error_set(err, ERROR_IO, "cannot use WAL mode for %s (got %s)", path, mode);
    return ERROR_OK;
}

/* ---- open / close -------------------------------------------------------- */

static error_code open_db(store *st, const char *path, error_info *err)
{
    /* A file path was created (0600) by store_prepare_path: never let SQLite
     * create it. */
    int flags = SQLITE_OPEN_NOMUTEX |
                (st->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
                (store_is_memory(path) ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &st->db, flags, NULL);
    if (rc != SQLITE_OK)
        return error_set(err, rc == SQLITE_NOMEM ? ERROR_NOMEM : ERROR_IO,
                         "cannot open database %s: %s", path,
                         st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
    /* Before anything writes to the file (the switch to WAL does): another
     * program's database is refused as it is. */
    if (check_identity(st, err) || configure(st, path, err))
        return err->code;
    if (st->readonly)
        return check_schema(st, err);
    return add_functions(st, err) ? err->code : migrate(st, err);
}

error_code store_open(const char *path, unsigned flags, store **out, error_info *err)
{
    *out = NULL;
    if (!path || !*path)
        return error_set(err, ERROR_INVALID, "database path is empty");
    store *st = calloc(1, sizeof *st);
    if (!st)
        return error_set(err, ERROR_NOMEM, "out of memory");
    st->readonly = (flags & STORE_READONLY) != 0;
    if (!model_copy_text(st->path, sizeof st->path, path)) {
        free(st);
        return error_set(err, ERROR_INVALID, "database path is too long");
    }
    if (store_prepare_path(path, st->readonly, err) || open_db(st, path, err)) {
        store_close(st);
        return err->code;
    }
    *out = st;
    return ERROR_OK;
}

static void finalize_all(sqlite3_stmt **stmts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_finalize(stmts[i]);
        stmts[i] = NULL;
    }
}

void store_close(store *st)
{
    if (!st)
        return;
    if (st->db)
        store_rollback(st);
    finalize_all(st->stmts, STMT_COUNT);
    finalize_all(&st->kstmts[0][0], MODEL_KIND_COUNT * KSTMT_COUNT);
    finalize_all(&st->pages[0][0], MODEL_KIND_COUNT * STORE_PAGE_SLOTS);
    finalize_all(&st->counts[0][0], MODEL_KIND_COUNT * STORE_COUNT_VARIANTS);
    sqlite3_close(st->db);
    free(st);
}

/* ---- health -------------------------------------------------------------- */

enum { INTEGRITY_MAX_ROWS = 100 };

error_code store_integrity_check(store *st, char *first, size_t size, size_t *problems,
                                 error_info *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA integrity_check(%d)", INTEGRITY_MAX_ROWS);
    sqlite3_stmt *s;
    if (store_prepare(st, sql, &s, err))
        return err->code;
    *problems = 0;
    if (size)
        first[0] = '\0';
    bool row = true;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && row) {
        rc = store_step(st, s, &row, err);
        const char *text = rc == ERROR_OK && row ? (const char *)sqlite3_column_text(s, 0)
                                                 : NULL;
        if (!text || strcmp(text, "ok") == 0)
            continue;
        if (*problems == 0 && size)
            model_copy_text(first, size, text);
        ++*problems;
    }
    sqlite3_finalize(s);
    return rc;
}

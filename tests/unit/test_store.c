#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/store.h"
#include "rampart/validate.h"
#include "../../src/core/store/store_internal.h"
#include "test_support.h"

typedef ts_store_dir fixture;

typedef char id_text[MODEL_ID_MAX + 1];

static const char POLICY_A[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char POLICY_B[] = "ipp_2Zz1lqOxDdQyVpYcBBBBBBBBBBB";
static const char TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-store-XXXXXX", "data/rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

static model_object make_rule(const char *policy, const char *cidr, model_state st)
{
    return ts_rule(policy, cidr, MODEL_ACTION_ALLOW, st);
}

static void insert_rule(store *st, const char *policy, const char *cidr, model_state state,
                        char *id_out)
{
    ts_insert_rule(st, policy, cidr, MODEL_ACTION_ALLOW, state, id_out);
}

static model_object make_cred(const char *id)
{
    model_object c;
    model_object_init(&c, MODEL_KIND_CRED);
    strcpy(c.cred.id, id);
    return c;
}

static void insert_cred(store *st, const char *id, model_state state, const char *token,
                        char *id_out)
{
    model_object c;
    ts_cred_init(&c, "agent on web-1", "", "bind:*.example.com");
    strcpy(c.cred.id, id);
    c.cred.state = state;
    error_info err;
    assert_int_equal(model_cred_set_token(&c.cred, token, &err), ERROR_OK);
    ts_insert(st, &c, id_out);
}

/* store_get into `out`, made an empty row of `kind` first (clear it after a
 * credential). */
static error_code get_row(store *st, model_kind kind, const char *id, model_object *out,
                          error_info *err)
{
    model_object_init(out, kind);
    return store_get(st, kind, id, out, err);
}

static void clear_rows(model_object *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_object_clear(&rows[i]);
}

static int db_user_version(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

static long long db_pragma(const char *path, const char *pragma)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s", pragma);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    long long v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* Run `sql` on the file at `path` past the store (another program, or an older
 * rampart), then make it 0600 as a cache must be. */
static void db_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
    assert_int_equal(chmod(path, 0600), 0);
}

/* The whole file, to see that a refusal changed nothing. */
static size_t read_all(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, size, fp);
    fclose(fp);
    return n;
}

/* ---- open, files, schema -------------------------------------------------- */

static void test_migrates_from_empty(void **state)
{
    fixture *f = *state;
    assert_true(store_schema_version() >= 1);
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(db_user_version(f->path), store_schema_version());
    error_info err;
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    size_t n = 99;
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
    /* A new cache says what it is. */
    assert_int_equal(db_pragma(f->path, "application_id"), STORE_APPLICATION_ID);
    store_identity id;
    assert_int_equal(store_identity_get(f->st, &id, &err), ERROR_OK);
    assert_int_equal(id.application_id, STORE_APPLICATION_ID);
    assert_int_equal(id.schema_version, store_schema_version());
}

static void test_reopen_keeps_data(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, id);
    store_close(f->st);
    error_info err;
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    model_object r;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &r, &err), ERROR_OK);
    assert_string_equal(r.rule.cidr, "10.0.0.0/8");
    assert_string_equal(r.rule.policy_id, POLICY_A);
    assert_int_equal(r.rule.state, MODEL_STATE_NEW);
}

static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
    store_close(f->st);
    f->st = NULL;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    error_info err;
    store *st = NULL;
    assert_int_equal(store_open(f->path, 0, &st, &err), ERROR_CONFIG);
    assert_null(st);
    assert_non_null(strstr(err.msg, "999 is newer than this rampart"));
    assert_non_null(strstr(err.msg, "upgrade rampart"));
    assert_int_equal(store_open(f->path, STORE_READONLY, &st, &err), ERROR_CONFIG);
    assert_int_equal(db_user_version(f->path), 999);
}

/* ---- migration 3: stored CIDRs lower-cased -------------------------------- */

/*
 * A database left at schema version 2 with rules of POLICY_A as an older rampart
 * cached them (as the remote sent them), then opened by the store, which migrates
 * it: every row is still there, with the cidr it should now have.
 */
static void test_migration_canonicalises_cidrs(void **state)
{
    static const struct {
        const char *id, *cidr, *state, *want;
    } rows[] = {
        {"ipr_2Old0Upper", "2001:DB8:ABCD::/48", "synced", "2001:db8:abcd::/48"},
        {"ipr_2Old0Mapped", "::FFFF:10.0.0.0/104", "new", "::ffff:10.0.0.0/104"},
        {"ipr_2Old0Four", "10.0.0.0/8", "synced", "10.0.0.0/8"},
        /* Not only lower-cased: canonical (RFC 5952), as the store writes it now. */
        {"ipr_2Old0Zeros", "2001:0DB8:0:0:1::/80", "synced", "2001:db8:0:0:1::/80"},
        {"ipr_2Old0Lead", "2001:0DB8:0000::/48", "synced", "2001:db8::/48"},
        {"ipr_2Old0Bad", "not a cidr", "synced", "not a cidr"},
        /* A live twin holds the lower-case key already: the open still succeeds,
         * the row that would clash stays as it was; a row that is not live has no
         * key to clash with. */
        {"ipr_2Twin0Lower", "2001:db8::/32", "synced", "2001:db8::/32"},
        {"ipr_2Twin0Upper", "2001:DB8::/32", "new", "2001:DB8::/32"},
        {"ipr_2Twin0Gone", "2001:DB8::/32", "deleting", "2001:db8::/32"},
    };
    enum { ROWS = sizeof rows / sizeof rows[0] };
    fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/v2.db", f->dir);
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 0; v < 2; v++)
        assert_int_equal(sqlite3_exec(db, store_sql_migration(v), NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 2", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO rules (id, cidr, policy_id, action,"
                                            " state) VALUES (?1, ?2, ?3, 'allow', ?4)",
                                        -1, &s, NULL), SQLITE_OK);
    for (size_t i = 0; i < ROWS; i++) {
        const char *args[] = {rows[i].id, rows[i].cidr, POLICY_A, rows[i].state};
        for (int a = 0; a < 4; a++)
            sqlite3_bind_text(s, a + 1, args[a], -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(s), SQLITE_DONE);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);

    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(path, 0, &st, &err), ERROR_OK);
    for (size_t i = 0; i < ROWS; i++) {
        model_object got;
        assert_int_equal(get_row(st, MODEL_KIND_RULE, rows[i].id, &got, &err), ERROR_OK);
        assert_string_equal(got.rule.cidr, rows[i].want);
    }
    store_close(st);
    assert_int_equal(db_user_version(path), store_schema_version());
}

static void test_readonly_needs_schema(void **state)
{
    fixture *f = *state;
    char path[160];
    store *st = NULL;
    error_info err;
    snprintf(path, sizeof path, "%s/missing.db", f->dir);
    assert_int_equal(store_open(path, STORE_READONLY, &st, &err), ERROR_IO);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof path, "%s/empty.db", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(store_open(path, STORE_READONLY, &st, &err), ERROR_CONFIG);
    assert_non_null(strstr(err.msg, "older than this rampart"));
    assert_int_equal(store_open(f->path, STORE_READONLY, &st, &err), ERROR_OK);
    model_object r = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    assert_int_equal(store_insert(st, &r, &err), ERROR_IO);
    store_close(st);
}

static void check_modes(const char *dir, unsigned mask)
{
    char path[200], data[100];
    snprintf(data, sizeof data, "%s/m%03o", dir, mask);
    snprintf(path, sizeof path, "%s/rampart.db", data);
    mode_t old = umask((mode_t)mask);
    store *st;
    error_info err;
    error_code rc = store_open(path, 0, &st, &err);
    umask(old);
    assert_int_equal(rc, ERROR_OK);
    insert_rule(st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    struct stat sb;
    assert_int_equal(stat(data, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    snprintf(path, sizeof path, "%s/rampart.db-wal", data);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    store_close(st);
}

static void test_file_modes(void **state)
{
    fixture *f = *state;
    check_modes(f->dir, 0);
    check_modes(f->dir, 022);
    check_modes(f->dir, 0277);
}

/* Missing ancestors are created like mkdir -p, each 0700; a file in the way is refused. */
static void test_missing_parents_are_created(void **state)
{
    fixture *f = *state;
    char path[160], dir[160];
    snprintf(path, sizeof path, "%s/no/such/rampart.db", f->dir);
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(path, 0, &st, &err), ERROR_OK);
    store_close(st);
    struct stat sb;
    snprintf(dir, sizeof dir, "%s/no", f->dir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(dir, sizeof dir, "%s/no/such", f->dir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);

    snprintf(path, sizeof path, "%s/no/such/rampart.db/x.db", f->dir);
    st = NULL;
    assert_int_equal(store_open(path, 0, &st, &err), ERROR_IO);
    assert_null(st);
    assert_non_null(strstr(err.msg, "not a directory"));
}

static void test_memory_database(void **state)
{
    (void)state;
    store *st;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    insert_rule(st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    size_t n;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
    store_close(st);
}

/* A cache, or a file beside it, that others may read or write: refused on every
 * open, with the chmod that fixes it. */
static void test_cache_modes_refused(void **state)
{
    fixture *f = *state;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    store_close(f->st);
    f->st = NULL;
    store *st = NULL;
    error_info err;
    static const struct {
        mode_t mode;
        const char *says;
    } cases[] = {
        {0644, "is readable by others (mode 0644)"},
        {0640, "is readable by others (mode 0640)"},
        {0620, "can be written by others (mode 0620)"},
        {0601, "can be used by others (mode 0601)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(chmod(f->path, cases[i].mode), 0);
        for (unsigned flags = 0; flags <= STORE_READONLY; flags += STORE_READONLY) {
            assert_int_equal(store_open(f->path, flags, &st, &err), ERROR_CONFIG);
            assert_null(st);
            if (!strstr(err.msg, cases[i].says) || !strstr(err.msg, "chmod 600") ||
                !strstr(err.msg, f->path) || !strstr(err.msg, "it holds tokens"))
                fail_msg("mode %04o: %s", (unsigned)cases[i].mode, err.msg);
        }
    }
    assert_int_equal(chmod(f->path, 0600), 0);
    /* SQLite's files beside it hold its pages too. */
    char shm[200];
    snprintf(shm, sizeof shm, "%s-shm", f->path);
    FILE *fp = fopen(shm, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(chmod(shm, 0644), 0);
    assert_int_equal(store_open(f->path, 0, &st, &err), ERROR_CONFIG);
    assert_non_null(strstr(err.msg, "-shm is readable by others"));
    assert_int_equal(chmod(shm, 0600), 0);
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    size_t n = 0;
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
}

/* Root's rampart opening a user's cache (or a cache someone else left): refused,
 * so it never makes root-owned -wal files the user then cannot open. */
static void test_cache_of_another_user_refused(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0) {
        print_message("skipped: chown to another uid needs root\n");
        skip();
    }
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(chown(f->path, 65534, 65534), 0);
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(f->path, STORE_READONLY, &st, &err), ERROR_CONFIG);
    assert_non_null(strstr(err.msg, "belongs to another user (uid 65534; you are uid 0)"));
    assert_non_null(strstr(err.msg, "chown 0 "));
    assert_int_equal(chown(f->path, 0, 0), 0);
}

/* Another program's SQLite file is refused, read-only or not, and left exactly
 * as it was: no migration, no switch to WAL, no -wal file. */
static void test_foreign_database_refused(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *sql;
        const char *says;
    } cases[] = {
        {"PRAGMA application_id = 252006673; CREATE TABLE notes (body TEXT);"
         "INSERT INTO notes VALUES ('keep me');",
         "is not a rampart cache (application_id 0x0F055111; a rampart cache has "
         "0x52414D50)"},
        {"CREATE TABLE rules (x); INSERT INTO rules VALUES (1);",
         "is not a rampart cache (application_id 0x00000000, no schema version"},
        {"PRAGMA user_version = 3; CREATE TABLE notes (body TEXT);",
         "is not a rampart cache (application_id 0x00000000, no rampart tables"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[160], wal[170];
        snprintf(path, sizeof path, "%s/foreign%zu.db", f->dir, i);
        snprintf(wal, sizeof wal, "%s-wal", path);
        db_exec(path, cases[i].sql);
        static char before[65536], after[65536];
        size_t n = read_all(path, before, sizeof before);
        for (unsigned flags = 0; flags <= STORE_READONLY; flags += STORE_READONLY) {
            store *st = NULL;
            error_info err;
            assert_int_equal(store_open(path, flags, &st, &err), ERROR_CONFIG);
            assert_null(st);
            if (!strstr(err.msg, cases[i].says) || !strstr(err.msg, path))
                fail_msg("case %zu: %s", i, err.msg);
        }
        assert_int_equal(read_all(path, after, sizeof after), n);
        assert_memory_equal(before, after, n);
        assert_int_equal(access(wal, F_OK), -1);
    }
}

/* A cache an older rampart made has no application id: read as it is, stamped by
 * the first open that may write, its rows kept. */
static void test_older_cache_adopted(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED, id);
    store_close(f->st);
    f->st = NULL;
    db_exec(f->path, "PRAGMA application_id = 0");
    store *st = NULL;
    error_info err;
    store_identity ident;
    assert_int_equal(store_open(f->path, STORE_READONLY, &st, &err), ERROR_OK);
    assert_int_equal(store_identity_get(st, &ident, &err), ERROR_OK);
    assert_int_equal(ident.application_id, 0);
    store_close(st);
    assert_int_equal(db_pragma(f->path, "application_id"), 0);
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    assert_int_equal(db_pragma(f->path, "application_id"), STORE_APPLICATION_ID);
    model_object r;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &r, &err), ERROR_OK);
    assert_string_equal(r.rule.cidr, "10.0.0.0/8");
}

/* Pages 2.. of `path` overwritten: the header and schema read, the rows do not. */
static void damage(const char *path)
{
    long long page = db_pragma(path, "page_size");
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    assert_int_equal(fseek(fp, (long)(2 * page), SEEK_SET), 0);
    for (long i = 2 * page; i < size; i++)
        fputc(0x5A, fp);
    fclose(fp);
}

/* SQLITE_CORRUPT and SQLITE_NOTADB name the file; the integrity check finds it. */
static void test_damaged_database_named(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 300; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.%d.0/24", i / 256, i % 256);
        insert_rule(f->st, POLICY_A, cidr, MODEL_STATE_NEW, NULL);
    }
    char first[256];
    size_t problems = 99;
    error_info err;
    assert_int_equal(store_integrity_check(f->st, first, sizeof first, &problems, &err),
                     ERROR_OK);
    assert_int_equal(problems, 0);
    store_close(f->st);
    f->st = NULL;
    damage(f->path);
    store *st = NULL;
    error_code rc = store_open(f->path, 0, &st, &err);
    size_t n = 0;
    if (rc == ERROR_OK)
        rc = store_count(st, MODEL_KIND_RULE, NULL, &n, &err);
    assert_int_equal(rc, ERROR_IO);
    if (!strstr(err.msg, f->path) || !strstr(err.msg, "is damaged"))
        fail_msg("%s", err.msg);
    store_close(st);
    st = NULL;
    if (store_open(f->path, STORE_READONLY, &st, &err) == ERROR_OK) {
        rc = store_integrity_check(st, first, sizeof first, &problems, &err);
        assert_true(rc != ERROR_OK || problems > 0);
        store_close(st);
    }

    char text[160];
    snprintf(text, sizeof text, "%s/notes.db", f->dir);
    FILE *fp = fopen(text, "w");
    assert_non_null(fp);
    fputs("these are not the pages you are looking for, not even one of them\n", fp);
    fclose(fp);
    assert_int_equal(store_open(text, STORE_READONLY, &st, &err), ERROR_IO);
    assert_non_null(strstr(err.msg, "is damaged or is not a SQLite database"));
    assert_non_null(strstr(err.msg, text));
}

/* ---- rules: insert, get, find, conflicts ------------------------------------ */

static void test_insert_assigns_local_id(void **state)
{
    fixture *f = *state;
    model_object r = make_rule(POLICY_A, "2001:db8::/32", MODEL_STATE_NEW);
    strcpy(r.rule.description, "office v6");
    strcpy(r.rule.metadata, "{\"team\":\"net\"}");
    r.rule.action = MODEL_ACTION_DENY;
    error_info err;
    assert_int_equal(store_insert(f->st, &r, &err), ERROR_OK);
    assert_int_equal(strncmp(r.rule.id, "local_", 6), 0);
    assert_int_equal(strlen(r.rule.created_at), 20);
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, r.rule.id, &got, &err), ERROR_OK);
    assert_memory_equal(&got.rule, &r.rule, sizeof r.rule);
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, "ipr_nope", &got, &err),
                     ERROR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "ipr_nope"));
}

static void test_conflicts(void **state)
{
    fixture *f = *state;
    id_text first;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED, first);
    model_object dup = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    error_info err;
    assert_int_equal(store_insert(f->st, &dup, &err), ERROR_CONFLICT);
    char want[256];
    snprintf(want, sizeof want, "policy %s already has a rule for 10.0.0.0/8 (%s)", POLICY_A,
             first);
    assert_string_equal(err.msg, want);
    assert_string_equal(dup.rule.id, "");

    model_object same_id = make_rule(POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW);
    strcpy(same_id.rule.id, first);
    assert_int_equal(store_insert(f->st, &same_id, &err), ERROR_CONFLICT);
    snprintf(want, sizeof want, "rule %s already exists", first);
    assert_string_equal(err.msg, want);

    insert_rule(f->st, POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    store_delete_result res;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, first, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    id_text again;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, again);
    /* The old row cannot come back to life beside its replacement. */
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, first, MODEL_STATE_SYNCED, NULL,
                                     &err), ERROR_CONFLICT);
    model_rule found;
    assert_int_equal(store_rule_find(f->st, POLICY_A, "10.0.0.0/8", &found, &err), ERROR_OK);
    assert_string_equal(found.id, again);
    assert_int_equal(store_rule_find(f->st, POLICY_A, "10.1.0.0/16", &found, &err),
                     ERROR_NOT_FOUND);
}

static void test_set_state(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, id);
    error_info err;
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, id, MODEL_STATE_FAILED,
                                     "cidr: host bits set", &err), ERROR_OK);
    model_object r;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &r, &err), ERROR_OK);
    assert_int_equal(r.rule.state, MODEL_STATE_FAILED);
    assert_string_equal(r.rule.error, "cidr: host bits set");
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, id, MODEL_STATE_NEW, NULL, &err),
                     ERROR_OK);
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &r, &err), ERROR_OK);
    assert_string_equal(r.rule.error, "");
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, "ipr_x", MODEL_STATE_NEW, NULL,
                                     &err), ERROR_NOT_FOUND);
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, id, MODEL_STATE_COUNT, NULL, &err),
                     ERROR_INVALID);
}

/* One natural key whatever the spelling: the store writes the canonical cidr back
 * into the row it took, and leaves a row it refused as it was given. */
static void test_ipv6_spellings_are_one_key(void **state)
{
    fixture *f = *state;
    model_object first = make_rule(POLICY_A, "2001:DB8::/32", MODEL_STATE_NEW);
    error_info err;
    assert_int_equal(store_insert(f->st, &first, &err), ERROR_OK);
    assert_string_equal(first.rule.cidr, "2001:db8::/32");
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, first.rule.id, &got, &err), ERROR_OK);
    assert_string_equal(got.rule.cidr, "2001:db8::/32");
    char want[256];
    snprintf(want, sizeof want, "policy %s already has a rule for 2001:db8::/32 (%s)",
             POLICY_A, first.rule.id);
    static const char *const spellings[] = {"2001:db8::/32", "2001:DB8::/32",
                                            "2001:0DB8:0:0::/32"};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        model_object dup = make_rule(POLICY_A, spellings[i], MODEL_STATE_NEW);
        model_object before;
        memcpy(&before, &dup, sizeof before);
        assert_int_equal(store_insert(f->st, &dup, &err), ERROR_CONFLICT);
        assert_string_equal(err.msg, want);
        assert_memory_equal(&dup, &before, sizeof dup);
        model_rule found;
        assert_int_equal(store_rule_find(f->st, POLICY_A, spellings[i], &found, &err),
                         ERROR_OK);
        assert_string_equal(found.id, first.rule.id);
    }
    size_t n;
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
}

/* An error text over MODEL_ERROR_MAX bytes is cut where a UTF-8 character starts:
 * `ascii` bytes of 'e', then `unit` `times` over. */
static void test_set_state_cuts_error_text(void **state)
{
    static const struct {
        size_t ascii;
        const char *unit;
        size_t times;
        size_t want; /* bytes kept */
    } cases[] = {
        {MODEL_ERROR_MAX, "", 0, MODEL_ERROR_MAX},
        {MODEL_ERROR_MAX + 88, "", 0, MODEL_ERROR_MAX},
        {MODEL_ERROR_MAX - 1, "\xC3\xA9", 1, MODEL_ERROR_MAX - 1},
        {MODEL_ERROR_MAX - 2, "\xE2\x82\xAC", 1, MODEL_ERROR_MAX - 2},
        {MODEL_ERROR_MAX - 3, "\xF0\x9F\x98\x80", 1, MODEL_ERROR_MAX - 3},
        {0, "\xC3\xA9", 300, MODEL_ERROR_MAX},
        {1, "\xE2\x82\xAC", 200, MODEL_ERROR_MAX - 1},
    };
    fixture *f = *state;
    id_text id;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, id);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[4 * MODEL_ERROR_MAX];
        memset(text, 'e', cases[i].ascii);
        text[cases[i].ascii] = '\0';
        for (size_t t = 0; t < cases[i].times; t++)
            strcat(text, cases[i].unit);
        assert_true(strlen(text) > MODEL_ERROR_MAX - 4);
        error_info err;
        assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, id, MODEL_STATE_FAILED, text,
                                         &err), ERROR_OK);
        model_object got;
        assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &got, &err), ERROR_OK);
        if (strlen(got.rule.error) != cases[i].want)
            fail_msg("case %zu: kept %zu bytes, want %zu", i, strlen(got.rule.error),
                     cases[i].want);
        assert_memory_equal(got.rule.error, text, cases[i].want);
        assert_int_equal(validate_text(got.rule.error, MODEL_ERROR_MAX, "error", &err),
                         ERROR_OK);
    }
}

static void test_state_counts(void **state)
{
    fixture *f = *state;
    static const model_state states[] = {MODEL_STATE_NEW, MODEL_STATE_NEW,
                                         MODEL_STATE_SYNCED, MODEL_STATE_FAILED,
                                         MODEL_STATE_REMOTE_DELETED};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%zu.0.0/16", i);
        insert_rule(f->st, POLICY_A, cidr, states[i], NULL);
    }
    insert_cred(f->st, "", MODEL_STATE_ORPHANED, NULL, NULL);
    size_t counts[MODEL_STATE_COUNT];
    error_info err;
    assert_int_equal(store_state_counts(f->st, MODEL_KIND_RULE, counts, &err), ERROR_OK);
    assert_int_equal(counts[MODEL_STATE_NEW], 2);
    assert_int_equal(counts[MODEL_STATE_SYNCED], 1);
    assert_int_equal(counts[MODEL_STATE_FAILED], 1);
    assert_int_equal(counts[MODEL_STATE_REMOTE_DELETED], 1);
    assert_int_equal(counts[MODEL_STATE_ORPHANED], 0);
    assert_int_equal(store_state_counts(f->st, MODEL_KIND_CRED, counts, &err), ERROR_OK);
    assert_int_equal(counts[MODEL_STATE_ORPHANED], 1);
    assert_int_equal(counts[MODEL_STATE_NEW], 0);
}

static void test_state_filter(void **state)
{
    fixture *f = *state;
    id_text ids[MODEL_STATE_COUNT];
    for (int i = 0; i < MODEL_STATE_COUNT; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        insert_rule(f->st, POLICY_A, cidr, (model_state)i, ids[i]);
    }
    store_query q = {.states = 1u << MODEL_STATE_NEW | 1u << MODEL_STATE_DELETING};
    model_object rows[4];
    size_t n;
    error_info err;
    assert_int_equal(store_page(f->st, MODEL_KIND_RULE, &q, NULL, STORE_FORWARD, 4, rows, &n,
                                &err), ERROR_OK);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].rule.id, ids[MODEL_STATE_NEW]);
    assert_string_equal(rows[1].rule.id, ids[MODEL_STATE_DELETING]);
    clear_rows(rows, n);
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, &q, &n, &err), ERROR_OK);
    assert_int_equal(n, 2);
    q.states = STORE_STATES_HELD; /* no conflict holds the remote's values here */
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, &q, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
    q.states = STORE_STATES_HELD << 1;
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, &q, &n, &err), ERROR_INVALID);
}

/* ---- delete semantics ----------------------------------------------------- */

typedef struct delete_case {
    model_state state;
    error_code rc;
    store_delete_result result;
} delete_case;

static const delete_case delete_cases[] = {
    {MODEL_STATE_NEW, ERROR_OK, STORE_DELETE_REMOVED},
    {MODEL_STATE_CREATING, ERROR_STATE, 0},
    {MODEL_STATE_SYNCED, ERROR_OK, STORE_DELETE_MARKED},
    {MODEL_STATE_DELETING, ERROR_OK, STORE_DELETE_ALREADY},
    {MODEL_STATE_FAILED, ERROR_OK, STORE_DELETE_REMOVED},
    {MODEL_STATE_UNKNOWN, ERROR_STATE, 0},
    {MODEL_STATE_ORPHANED, ERROR_OK, STORE_DELETE_MARKED},
    {MODEL_STATE_REMOTE_DELETED, ERROR_OK, STORE_DELETE_REMOVED},
};

static void check_after_delete(const delete_case *c, error_code get_rc, model_state now)
{
    if (c->rc == ERROR_OK && c->result == STORE_DELETE_REMOVED) {
        assert_int_equal(get_rc, ERROR_NOT_FOUND);
        return;
    }
    assert_int_equal(get_rc, ERROR_OK);
    if (c->rc == ERROR_OK)
        assert_int_equal(now, MODEL_STATE_DELETING);
    else
        assert_int_equal(now, c->state);
}

static void test_delete_semantics(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sizeof delete_cases / sizeof delete_cases[0]; i++) {
        const delete_case *c = &delete_cases[i];
        char cidr[32];
        id_text ids[MODEL_KIND_COUNT];
        snprintf(cidr, sizeof cidr, "10.%zu.0.0/16", i);
        insert_rule(f->st, POLICY_A, cidr, c->state, ids[MODEL_KIND_RULE]);
        insert_cred(f->st, "", c->state, TOKEN, ids[MODEL_KIND_CRED]);
        error_info err;
        for (int k = 0; k < MODEL_KIND_COUNT; k++) {
            store_delete_result res = 99;
            assert_int_equal(store_delete(f->st, (model_kind)k, ids[k], &res, &err), c->rc);
            if (c->rc == ERROR_OK)
                assert_int_equal(res, c->result);
            else
                assert_non_null(strstr(err.msg, "the next sync settles it"));
            model_object got;
            error_code get_rc = get_row(f->st, (model_kind)k, ids[k], &got, &err);
            check_after_delete(c, get_rc, model_object_state(&got));
            model_object_clear(&got);
        }
        const char *cid = ids[MODEL_KIND_CRED];
        char *tok = NULL;
        bool removed = c->rc == ERROR_OK && c->result == STORE_DELETE_REMOVED;
        assert_int_equal(store_token_get(f->st, cid, &tok, &err),
                         removed ? ERROR_NOT_FOUND : ERROR_OK);
        if (!removed)
            assert_string_equal(tok, TOKEN);
        free(tok);
    }
    error_info err;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, "ipr_none", NULL, &err),
                     ERROR_NOT_FOUND);
}

static void test_remove(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_cred(f->st, "", MODEL_STATE_NEW, TOKEN, id);
    error_info err;
    assert_int_equal(store_remove(f->st, MODEL_KIND_CRED, id, &err), ERROR_OK);
    char *tok = NULL;
    assert_int_equal(store_token_get(f->st, id, &tok, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_remove(f->st, MODEL_KIND_CRED, id, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_remove(f->st, MODEL_KIND_RULE, "ipr_none", &err), ERROR_NOT_FOUND);
}

/* ---- confirm, aliases, tokens --------------------------------------------- */

static void test_rule_confirm_create(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, local);
    model_object remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    model_rule *rr = &remote.rule;
    strcpy(rr->id, "ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    strcpy(rr->uri, "https://api.example.com/ip_policy_rules/ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    strcpy(rr->created_at, "2025-09-04T10:11:15Z");
    strcpy(rr->policy_uri, "https://api.example.com/ip_policies/ipp_x");
    error_info err;
    assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    model_object by_old, by_new;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, local, &by_old, &err), ERROR_OK);
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, rr->id, &by_new, &err), ERROR_OK);
    assert_memory_equal(&by_old.rule, &by_new.rule, sizeof by_old.rule);
    assert_string_equal(by_new.rule.id, rr->id);
    assert_string_equal(by_new.rule.uri, rr->uri);
    assert_string_equal(by_new.rule.created_at, rr->created_at);
    assert_string_equal(by_new.rule.policy_uri, rr->policy_uri);
    assert_int_equal(by_new.rule.state, MODEL_STATE_SYNCED);
    assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_STATE);
    assert_int_equal(store_confirm_create(f->st, "local_nope", &remote, &err),
                     ERROR_NOT_FOUND);

    /* The old id keeps working for every call, until the row is gone. */
    store_delete_result res;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, local, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    assert_int_equal(store_remove(f->st, MODEL_KIND_RULE, local, &err), ERROR_OK);
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, local, &by_old, &err), ERROR_NOT_FOUND);
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, rr->id, &by_old, &err), ERROR_NOT_FOUND);
    model_object reuse = make_rule(POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW);
    strcpy(reuse.rule.id, local);
    assert_int_equal(store_insert(f->st, &reuse, &err), ERROR_OK);
}

static void test_confirm_conflicting_remote_id(void **state)
{
    fixture *f = *state;
    id_text a;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, a);
    model_object taken = make_rule(POLICY_A, "10.2.0.0/16", MODEL_STATE_SYNCED);
    strcpy(taken.rule.id, "ipr_2Zz1lqOxDdQyVpYcTTTTTTTTTTT");
    error_info err;
    assert_int_equal(store_insert(f->st, &taken, &err), ERROR_OK);
    model_object remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.rule.id, taken.rule.id);
    assert_int_equal(store_confirm_create(f->st, a, &remote, &err), ERROR_CONFLICT);
    model_object r;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, a, &r, &err), ERROR_OK);
    assert_int_equal(r.rule.state, MODEL_STATE_CREATING);
}

static void test_cred_confirm_and_tokens(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_cred(f->st, "", MODEL_STATE_CREATING, NULL, local);
    char *tok = NULL;
    error_info err;
    assert_int_equal(store_token_get(f->st, local, &tok, &err), ERROR_UNAVAILABLE);
    assert_non_null(strstr(err.msg, "is not created remotely yet: its token arrives with"));
    assert_null(tok);

    model_object remote = make_cred("cr_2Zz1lqOxDdQyVpYcCCCCCCCCCCC");
    strcpy(remote.cred.created_at, "2025-09-04T10:11:15Z");
    assert_int_equal(model_cred_set_token(&remote.cred, TOKEN, &err), ERROR_OK);
    assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    assert_int_equal(store_token_get(f->st, local, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
    assert_int_equal(store_token_get(f->st, remote.cred.id, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_CRED, local, &got, &err), ERROR_OK);
    assert_string_equal(got.cred.id, remote.cred.id);
    assert_int_equal(got.cred.state, MODEL_STATE_SYNCED);
    assert_null(got.cred.token);
    model_object_clear(&got);

    /* A second confirm must fail without echoing the token. */
    id_text other;
    insert_cred(f->st, "", MODEL_STATE_CREATING, NULL, other);
    assert_int_equal(store_confirm_create(f->st, other, &remote, &err), ERROR_CONFLICT);
    assert_null(strstr(err.msg, TOKEN));
    model_object_clear(&remote);
}

static void test_token_follows_rename(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_cred(f->st, "", MODEL_STATE_CREATING, TOKEN, local);
    model_object remote = make_cred("cr_2Zz1lqOxDdQyVpYcFFFFFFFFFFF");
    error_info err;
    assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    char *tok = NULL;
    assert_int_equal(store_token_get(f->st, remote.cred.id, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
}

/* A confirm takes what the reply says of a field fixed at creation that the row
 * left empty (the owner the remote gave it), keeps the row's own otherwise, and
 * never refuses a create over such a field. */
static void test_confirm_keeps_the_reply_owner(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *row, *reply, *want;
    } cases[] = {
        {"", "usr_2Zz1lqOxDdQyVpYcOOOOOOOOOOO", "usr_2Zz1lqOxDdQyVpYcOOOOOOOOOOO"},
        {"bot_2Zz1lqOxDdQyVpYcBBBBBBBBBBB", "usr_2Zz1lqOxDdQyVpYcOOOOOOOOOOO",
         "bot_2Zz1lqOxDdQyVpYcBBBBBBBBBBB"},
        {"", "not an owner", ""},
        {"", "", ""},
    };
    static const char *const ids[] = {"cr_2Zz1lqOxDdQyVpYcO1OOOOOOOOO",
                                      "cr_2Zz1lqOxDdQyVpYcO2OOOOOOOOO",
                                      "cr_2Zz1lqOxDdQyVpYcO3OOOOOOOOO",
                                      "cr_2Zz1lqOxDdQyVpYcO4OOOOOOOOO"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_object c;
        ts_cred_init(&c, "agent", "", NULL);
        strcpy(c.cred.owner_id, cases[i].row);
        c.cred.state = MODEL_STATE_CREATING;
        id_text local;
        ts_insert(f->st, &c, local);
        model_object remote = make_cred(ids[i]);
        strcpy(remote.cred.description, "agent");
        strcpy(remote.cred.owner_id, cases[i].reply);
        error_info err;
        assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_OK);
        model_object got;
        assert_int_equal(get_row(f->st, MODEL_KIND_CRED, ids[i], &got, &err), ERROR_OK);
        assert_string_equal(got.cred.owner_id, cases[i].want);
        assert_int_equal(got.cred.state, MODEL_STATE_SYNCED); /* no edit to send */
        model_object_clear(&got);
        model_object_clear(&remote);
    }
}

static void test_token_cases(void **state)
{
    fixture *f = *state;
    char *tok = NULL;
    error_info err;
    assert_int_equal(store_token_get(f->st, "cr_none", &tok, &err), ERROR_NOT_FOUND);
    insert_cred(f->st, "cr_2Zz1lqOxDdQyVpYcEEEEEEEEEEE", MODEL_STATE_SYNCED, NULL, NULL);
    assert_int_equal(store_token_get(f->st, "cr_2Zz1lqOxDdQyVpYcEEEEEEEEEEE", &tok, &err),
                     ERROR_UNAVAILABLE);
    assert_non_null(strstr(err.msg, "created elsewhere or its token was lost"));
    assert_null(tok);
}

static void test_cred_roundtrip_and_acl(void **state)
{
    fixture *f = *state;
    model_object c = make_cred("");
    strcpy(c.cred.owner_id, "usr_2Zz1lqOxDdQyVpYcUUUUUUUUUUU");
    strcpy(c.cred.metadata, "m");
    c.cred.state = MODEL_STATE_NEW;
    error_info err;
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:a.example.com", &err), ERROR_OK);
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:team=*", &err), ERROR_OK);
    assert_int_equal(store_insert(f->st, &c, &err), ERROR_OK);
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_CRED, c.cred.id, &got, &err), ERROR_OK);
    assert_string_equal(got.cred.owner_id, c.cred.owner_id);
    assert_string_equal(got.cred.metadata, "m");
    assert_int_equal(got.cred.acl.count, 2);
    assert_string_equal(got.cred.acl.rules[0], "bind:a.example.com");
    assert_string_equal(got.cred.acl.rules[1], "bind:team=*");
    assert_int_equal(store_insert(f->st, &c, &err), ERROR_CONFLICT);
    model_object_clear(&got);
    model_object_clear(&c);

    /* The store keeps one ACL rule per line: a rule with a line break never gets
     * there (the ACL's own check refuses it, naming the rule). */
    c.cred.state = MODEL_STATE_NEW;
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:a\nbind:b", &err), ERROR_OK);
    assert_int_equal(store_insert(f->st, &c, &err), ERROR_INVALID);
    error_info want;
    assert_int_equal(validate_acl(&c.cred.acl, &want), ERROR_INVALID);
    assert_string_equal(err.msg, want.msg);
    assert_int_equal(strncmp(err.msg, "acl rule 1: ", 12), 0);
    assert_string_equal(c.cred.id, "");
    model_object_clear(&c);
    size_t n;
    assert_int_equal(store_count(f->st, MODEL_KIND_CRED, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
}

/* ---- keyset paging -------------------------------------------------------- */

enum { PAGING_ROWS = 1000 };

typedef struct paging_data {
    id_text ids[PAGING_ROWS];
    char policy[PAGING_ROWS];     /* 'A' or 'B' */
    char description[PAGING_ROWS][32];
} paging_data;

static const char *const descriptions[] = {"50%_off", "50ab_off", "Web\\Front", "plain"};

static void fill_paging(store *st, paging_data *d)
{
    error_info err;
    assert_int_equal(store_begin(st, &err), ERROR_OK);
    for (size_t i = 0; i < PAGING_ROWS; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%zu.%zu.0/24", i / 256, i % 256);
        d->policy[i] = i % 3 ? 'A' : 'B';
        model_object r = make_rule(i % 3 ? POLICY_A : POLICY_B, cidr, MODEL_STATE_SYNCED);
        snprintf(d->description[i], sizeof d->description[i], "%s",
                 descriptions[i % 4]);
        strcpy(r.rule.description, d->description[i]);
        assert_int_equal(store_insert(st, &r, &err), ERROR_OK);
        strcpy(d->ids[i], r.rule.id);
    }
    assert_int_equal(store_commit(st, &err), ERROR_OK);
    for (size_t i = 1; i < PAGING_ROWS; i++)
        assert_true(strcmp(d->ids[i - 1], d->ids[i]) < 0);
}

/* Walk all pages in one direction; the ids come back in ascending order. */
static size_t walk(store *st, const store_query *q, store_dir dir, size_t page_size,
                   id_text *out)
{
    model_object *rows = calloc(page_size, sizeof *rows);
    assert_non_null(rows);
    id_text cursor = "";
    size_t total = 0;
    for (;;) {
        size_t n;
        error_info err;
        assert_int_equal(store_page(st, MODEL_KIND_RULE, q, cursor, dir, page_size, rows, &n,
                                    &err), ERROR_OK);
        for (size_t i = 1; i < n; i++)
            assert_true(strcmp(rows[i - 1].rule.id, rows[i].rule.id) < 0);
        for (size_t i = 0; i < n; i++) {
            size_t at = dir == STORE_FORWARD ? i : n - 1 - i;
            assert_true(total < PAGING_ROWS);
            strcpy(out[total++], rows[at].rule.id);
        }
        if (n)
            strcpy(cursor, dir == STORE_FORWARD ? rows[n - 1].rule.id : rows[0].rule.id);
        clear_rows(rows, n);
        if (n < page_size)
            break;
    }
    free(rows);
    if (dir == STORE_BACKWARD) {
        for (size_t i = 0; i < total / 2; i++) {
            id_text tmp;
            strcpy(tmp, out[i]);
            strcpy(out[i], out[total - 1 - i]);
            strcpy(out[total - 1 - i], tmp);
        }
    }
    return total;
}

typedef bool (*row_match)(const paging_data *d, size_t i);

static void check_walks(store *st, const paging_data *d, const store_query *q,
                        row_match match)
{
    static const size_t sizes[] = {1, 7, 100};
    id_text *want = calloc(PAGING_ROWS, sizeof *want);
    id_text *got = calloc(PAGING_ROWS, sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    size_t nwant = 0;
    for (size_t i = 0; i < PAGING_ROWS; i++)
        if (match(d, i))
            strcpy(want[nwant++], d->ids[i]);
    assert_true(nwant > 0);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int dir = STORE_FORWARD; dir <= STORE_BACKWARD; dir++) {
            memset(got, 0, PAGING_ROWS * sizeof *got);
            assert_int_equal(walk(st, q, (store_dir)dir, sizes[s], got), nwant);
            assert_memory_equal(got, want, nwant * sizeof *want);
        }
    }
    size_t count;
    error_info err;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, q, &count, &err), ERROR_OK);
    assert_int_equal(count, nwant);
    free(want);
    free(got);
}

static bool match_all(const paging_data *d, size_t i)
{
    (void)d;
    (void)i;
    return true;
}

static bool match_policy_b(const paging_data *d, size_t i)
{
    return d->policy[i] == 'B';
}

static bool match_literal_percent(const paging_data *d, size_t i)
{
    return strstr(d->description[i], "50%_") != NULL;
}

static bool match_backslash_in_a(const paging_data *d, size_t i)
{
    return d->policy[i] == 'A' && strchr(d->description[i], '\\') != NULL;
}

static void test_paging(void **state)
{
    fixture *f = *state;
    paging_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    fill_paging(f->st, d);
    check_walks(f->st, d, NULL, match_all);
    store_query q = {.policy_id = POLICY_B};
    check_walks(f->st, d, &q, match_policy_b);
    /* LIKE metacharacters match literally: "50%_" is not "50ab". */
    store_query lit = {.filter = "50%_"};
    check_walks(f->st, d, &lit, match_literal_percent);
    /* Case-insensitive, with a backslash, within one policy. */
    store_query both = {.policy_id = POLICY_A, .filter = "wEB\\fr"};
    check_walks(f->st, d, &both, match_backslash_in_a);
    free(d);
}

/* A page of up to three rules (rules hold no heap: nothing to release). */
static error_code page3(store *st, const store_query *q, const char *cursor, store_dir dir,
                        model_object rows[3], size_t *n)
{
    error_info err;
    return store_page(st, MODEL_KIND_RULE, q, cursor, dir, 3, rows, n, &err);
}

/* The cidr order is address order: family, address, prefix length (not text:
 * "9.0.0.0/8" before "10.0.0.0/8"), both ways, with a cursor. */
static void test_paging_cidr_order(void **state)
{
    fixture *f = *state;
    static const char *const cidrs[] = {"2001:db8::/32", "10.0.0.0/16", "9.0.0.0/8",
                                        "10.0.0.0/8", "2001:db8::1/128", "1.2.3.4/32"};
    static const char *const sorted[] = {"1.2.3.4/32", "9.0.0.0/8", "10.0.0.0/8",
                                         "10.0.0.0/16", "2001:db8::/32", "2001:db8::1/128"};
    for (size_t i = 0; i < 6; i++)
        insert_rule(f->st, POLICY_A, cidrs[i], MODEL_STATE_SYNCED, NULL);
    store_query q = {.sort = STORE_SORT_CIDR};
    model_object rows[3];
    size_t n;
    assert_int_equal(page3(f->st, &q, NULL, STORE_FORWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(rows[i].rule.cidr, sorted[i]);
    assert_int_equal(page3(f->st, &q, rows[2].rule.id, STORE_FORWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(rows[i].rule.cidr, sorted[3 + i]);
    assert_int_equal(page3(f->st, &q, rows[0].rule.id, STORE_BACKWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].rule.cidr, sorted[0]);
    /* A later insert takes its place in the order (its key is written with it). */
    insert_rule(f->st, POLICY_B, "255.0.0.0/8", MODEL_STATE_SYNCED, NULL);
    assert_int_equal(page3(f->st, &q, NULL, STORE_BACKWARD, rows, &n), ERROR_OK);
    assert_string_equal(rows[2].rule.cidr, "2001:db8::1/128");
    assert_string_equal(rows[0].rule.cidr, "255.0.0.0/8");
}

/* A filter that is an address matches the rules whose cidr contains it (IPv4 and
 * IPv6); action and state match as text. A text filter also matches the ids, which
 * are random base62: a row whose id holds the text counts too (1 run in ~300 had
 * a local id with "new" in it). */
static void test_filter_address(void **state)
{
    fixture *f = *state;
    static const char *const cidrs[] = {"10.0.0.0/8", "10.1.2.0/24", "10.1.3.0/24",
                                        "2001:db8::/32", "2001:db8::5/128"};
    id_text ids[5];
    for (size_t r = 0; r < 5; r++)
        insert_rule(f->st, POLICY_A, cidrs[r], r == 1 ? MODEL_STATE_NEW : MODEL_STATE_SYNCED,
                    ids[r]);
    size_t n;
    error_info err;
    static const struct {
        const char *filter;
        unsigned rows; /* bit r: cidrs[r] matches */
    } cases[] = {{"10.1.2.3", 0x03}, {"10.200.0.1", 0x01}, {"11.0.0.1", 0},
                 {"2001:db8::5", 0x18}, {"2001:db8::6", 0x08}, {"allow", 0x1f}, {"new", 0x02}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t expected = 0;
        for (size_t r = 0; r < 5; r++)
            expected += (cases[i].rows >> r & 1u) || strcasestr(ids[r], cases[i].filter);
        store_query q = {.filter = cases[i].filter, .sort = STORE_SORT_CIDR};
        assert_int_equal(store_count(f->st, MODEL_KIND_RULE, &q, &n, &err), ERROR_OK);
        assert_int_equal(n, expected);
    }
}

static void test_paging_edges(void **state)
{
    fixture *f = *state;
    paging_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    fill_paging(f->st, d);
    model_object rows[3];
    size_t n;
    assert_int_equal(page3(f->st, NULL, NULL, STORE_BACKWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rows[2].rule.id, d->ids[PAGING_ROWS - 1]);
    assert_string_equal(rows[0].rule.id, d->ids[PAGING_ROWS - 3]);
    assert_int_equal(page3(f->st, NULL, d->ids[1], STORE_BACKWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].rule.id, d->ids[0]);
    assert_int_equal(page3(f->st, NULL, d->ids[PAGING_ROWS - 1], STORE_FORWARD, rows, &n),
                     ERROR_OK);
    assert_int_equal(n, 0);
    store_query none = {.filter = "no such text"};
    assert_int_equal(page3(f->st, &none, "", STORE_FORWARD, rows, &n), ERROR_OK);
    assert_int_equal(n, 0);
    store_query bad = {.sort = STORE_SORT_COUNT};
    assert_int_equal(page3(f->st, &bad, "", STORE_FORWARD, rows, &n), ERROR_INVALID);
    free(d);
}

static void test_cred_paging(void **state)
{
    fixture *f = *state;
    id_text ids[30];
    for (size_t i = 0; i < 30; i++)
        insert_cred(f->st, "", MODEL_STATE_NEW, NULL, ids[i]);
    model_object rows[4];
    size_t n, seen = 0;
    id_text cursor = "";
    error_info err;
    store_query q = {.filter = "*.EXAMPLE"};
    do {
        assert_int_equal(store_page(f->st, MODEL_KIND_CRED, &q, cursor, STORE_FORWARD, 4, rows,
                                    &n, &err), ERROR_OK);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(rows[i].cred.id, ids[seen++]);
            assert_int_equal(rows[i].cred.acl.count, 1);
            assert_null(rows[i].cred.token);
        }
        if (n)
            strcpy(cursor, rows[n - 1].cred.id);
        clear_rows(rows, n);
    } while (n == 4);
    assert_int_equal(seen, 30);
    assert_int_equal(store_page(f->st, MODEL_KIND_CRED, NULL, ids[5], STORE_BACKWARD, 4, rows,
                                &n, &err), ERROR_OK);
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].cred.id, ids[1]);
    assert_string_equal(rows[3].cred.id, ids[4]);
    clear_rows(rows, n);
}

/* Every page shape walks an index in id order: no full scan, no sort. */
static void test_query_plans(void **state)
{
    fixture *f = *state;
    char plan[1024];
    error_info err;
    for (unsigned v = 0; v < STORE_PAGE_VARIANTS; v++) {
        assert_int_equal(store_page_plan(f->st, MODEL_KIND_RULE, v, plan, sizeof plan, &err),
                         ERROR_OK);
        assert_null(strstr(plan, "TEMP B-TREE"));
        /* Rules are a WITHOUT ROWID table clustered by id: walking it in key order
         * (a SCAN from the start, or a SEARCH from the cursor) needs no index. */
        if (v & STORE_PAGE_POLICY)
            assert_non_null(strstr(plan, "INDEX rules_policy_id"));
        else
            assert_true(strstr(plan, "USING PRIMARY KEY") || strcmp(plan, "SCAN rules") == 0);
        if (v & STORE_PAGE_POLICY)
            continue;
        assert_int_equal(store_page_plan(f->st, MODEL_KIND_CRED, v, plan, sizeof plan, &err),
                         ERROR_OK);
        assert_null(strstr(plan, "TEMP B-TREE"));
        assert_non_null(strstr(plan, "INDEX sqlite_autoindex_credentials"));
    }
    /* Every other order the console offers walks its own index too: no sort of
     * the matching rows per page (a policy's rules walk rules_policy_id). */
    for (unsigned sort = STORE_SORT_POLICY; sort < STORE_SORT_COUNT; sort++) {
        for (unsigned v = 0; v < STORE_PAGE_VARIANTS; v++) {
            unsigned variant = v | sort << STORE_PAGE_SORT_SHIFT;
            for (int k = 0; k < MODEL_KIND_COUNT; k++) {
                if (sort == STORE_SORT_DESCRIPTION ? k != MODEL_KIND_CRED
                    : sort != STORE_SORT_STATE && k != MODEL_KIND_RULE)
                    continue;
                if (k == MODEL_KIND_CRED && (v & STORE_PAGE_POLICY))
                    continue;
                if ((v & STORE_PAGE_POLICY) && sort != STORE_SORT_POLICY)
                    continue;
                assert_int_equal(store_page_plan(f->st, (model_kind)k, variant, plan,
                                                 sizeof plan, &err), ERROR_OK);
                assert_null(strstr(plan, "TEMP B-TREE"));
            }
        }
    }
    static const struct {
        store_stmt_id id;
        const char *index;
    } lookups[] = {
        {STMT_LIVE_ID_BY_KEY, "rules_live_key (policy_id=? AND cidr=?)"},
        {STMT_TOKEN_GET, "sqlite_autoindex_credentials_1 (id=?)"},
        {STMT_ALIAS_DELETE, "aliases_remote (remote_id=?)"},
    };
    for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++) {
        assert_int_equal(store_plan(f->st, store_sql_text(lookups[i].id), plan, sizeof plan,
                                    &err), ERROR_OK);
        assert_non_null(strstr(plan, lookups[i].index));
        assert_null(strstr(plan, "SCAN"));
    }
    char get[1024];
    assert_true(store_kind_sql(MODEL_KIND_RULE, KSTMT_GET, get, sizeof get));
    assert_int_equal(store_plan(f->st, get, plan, sizeof plan, &err), ERROR_OK);
    assert_non_null(strstr(plan, "PRIMARY KEY (id=?)"));
    assert_null(strstr(plan, "SCAN"));
}

/* ---- transactions and concurrency ---------------------------------------- */

/* The walk hands out every matching row once, even when the callback moves rows
 * out of the walked states, and stops at the callback's first non-OK code. */
typedef struct walk_seen {
    store *st;
    size_t rows, pages;
    bool stop;
} walk_seen;

static error_code claim_page(void *ctx, model_object *rows, size_t n, error_info *err)
{
    walk_seen *w = ctx;
    w->pages++;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].rule.state, MODEL_STATE_NEW);
        assert_int_equal(store_set_state(w->st, MODEL_KIND_RULE, rows[i].rule.id,
                                         MODEL_STATE_CREATING, NULL, err), ERROR_OK);
        w->rows++;
    }
    return w->stop ? ERROR_STATE : ERROR_OK;
}

static void test_walk(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 25; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        insert_rule(f->st, POLICY_A, cidr, MODEL_STATE_NEW, NULL);
    }
    store_query q = {.states = 1u << MODEL_STATE_NEW};
    walk_seen w = {.st = f->st, .stop = true};
    error_info err;
    assert_int_equal(store_walk(f->st, MODEL_KIND_RULE, &q, 7, claim_page, &w, &err),
                     ERROR_STATE);
    assert_int_equal(w.rows, 7);
    w = (walk_seen){.st = f->st};
    assert_int_equal(store_walk(f->st, MODEL_KIND_RULE, &q, 7, claim_page, &w, &err), ERROR_OK);
    assert_int_equal(w.rows, 18);
    assert_int_equal(w.pages, 3);
    w = (walk_seen){.st = f->st};
    assert_int_equal(store_walk(f->st, MODEL_KIND_RULE, &q, 7, claim_page, &w, &err), ERROR_OK);
    assert_int_equal(w.rows, 0);
}

static void test_transactions(void **state)
{
    fixture *f = *state;
    error_info err;
    size_t n;
    assert_int_equal(store_commit(f->st, &err), ERROR_STATE);
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    assert_int_equal(store_begin(f->st, &err), ERROR_STATE);
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    insert_rule(f->st, POLICY_A, "10.1.0.0/16", MODEL_STATE_NEW, NULL);
    store_rollback(f->st);
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);

    /* A failed call inside a batch undoes only itself. */
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, NULL);
    model_object dup = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    assert_int_equal(store_insert(f->st, &dup, &err), ERROR_CONFLICT);
    model_object remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.rule.id, "ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    assert_int_equal(store_confirm_create(f->st, "local_nope", &remote, &err),
                     ERROR_NOT_FOUND);
    assert_int_equal(store_commit(f->st, &err), ERROR_OK);
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);

    /* Closing with a transaction open rolls it back. */
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    insert_rule(f->st, POLICY_A, "10.9.0.0/16", MODEL_STATE_NEW, NULL);
    store_close(f->st);
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
}

enum { BATCH = 50, BATCHES = 40 };

typedef struct reader_state {
    const char *path;
    atomic_bool stop;
    error_code open_rc;
    size_t reads;
    size_t torn;      /* counts that were not a whole number of batches */
    size_t backwards; /* counts that went down */
} reader_state;

static void *reader(void *arg)
{
    reader_state *r = arg;
    store *st;
    error_info err;
    r->open_rc = store_open(r->path, STORE_READONLY, &st, &err);
    if (r->open_rc != ERROR_OK)
        return NULL;
    size_t last = 0;
    do {
        size_t n;
        if (store_count(st, MODEL_KIND_RULE, NULL, &n, &err) != ERROR_OK) {
            r->torn++;
            break;
        }
        r->reads++;
        r->torn += n % BATCH != 0;
        r->backwards += n < last;
        last = n;
    } while (!atomic_load(&r->stop));
    store_close(st);
    return NULL;
}

static void test_concurrent_reader(void **state)
{
    fixture *f = *state;
    reader_state r = {.path = f->path};
    atomic_init(&r.stop, false);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, reader, &r), 0);
    error_info err;
    for (size_t b = 0; b < BATCHES; b++) {
        assert_int_equal(store_begin(f->st, &err), ERROR_OK);
        for (size_t i = 0; i < BATCH; i++) {
            char cidr[32];
            snprintf(cidr, sizeof cidr, "10.%zu.%zu.0/24", b, i);
            insert_rule(f->st, POLICY_A, cidr, MODEL_STATE_NEW, NULL);
        }
        assert_int_equal(store_commit(f->st, &err), ERROR_OK);
    }
    atomic_store(&r.stop, true);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(r.open_rc, ERROR_OK);
    assert_true(r.reads >= 1);
    assert_int_equal(r.torn, 0);
    assert_int_equal(r.backwards, 0);
}

/* ---- store_update: an edit in place ----------------------------------------- */

/* The bit of `kind`'s field `name` (kind_field_bit), which must exist. */
static unsigned field_bit(model_kind kind, const char *name)
{
    const kind_field *f = kind_field_by_name(kind, name);
    assert_non_null(f);
    return kind_field_bit(kind, f);
}

/* An edit of row `id`: only the id set, the caller fills the fields it changes. */
static model_object edit_of(model_kind kind, const char *id)
{
    model_object o;
    model_object_init(&o, kind);
    strcpy(model_object_id_buf(&o), id);
    return o;
}

/* Three synced rules of POLICY_A, in id order: 10.0.0.0/8, 10.1.0.0/16, 10.2.0.0/16. */
static void insert_three(store *st, id_text ids[3])
{
    static const char *const cidrs[] = {"10.0.0.0/8", "10.1.0.0/16", "10.2.0.0/16"};
    for (size_t i = 0; i < 3; i++)
        insert_rule(st, POLICY_A, cidrs[i], MODEL_STATE_SYNCED, ids[i]);
}

static void test_update_rule_fields(void **state)
{
    fixture *f = *state;
    id_text ids[3];
    insert_three(f->st, ids);
    const char *id = ids[1];
    model_object before;
    error_info err;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &before, &err), ERROR_OK);

    model_object e = edit_of(MODEL_KIND_RULE, id);
    strcpy(e.rule.description, "office");
    strcpy(e.rule.metadata, "{\"k\":1}");
    strcpy(e.rule.cidr, "2001:DB8::/32"); /* stored canonical, like an insert */
    e.rule.action = MODEL_ACTION_DENY;   /* not in the set: not read */
    unsigned set = field_bit(MODEL_KIND_RULE, "description") |
                   field_bit(MODEL_KIND_RULE, "metadata") | field_bit(MODEL_KIND_RULE, "cidr");
    assert_int_equal(store_update(f->st, &e, set, &err), ERROR_OK);
    /* `e` is the whole row now, as stored. */
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &got, &err), ERROR_OK);
    assert_memory_equal(&got.rule, &e.rule, sizeof got.rule);
    assert_string_equal(got.rule.cidr, "2001:db8::/32");
    assert_string_equal(got.rule.description, "office");
    assert_string_equal(got.rule.metadata, "{\"k\":1}");
    /* What an edit never changes. */
    assert_int_equal(got.rule.action, MODEL_ACTION_ALLOW);
    assert_string_equal(got.rule.policy_id, POLICY_A);
    assert_string_equal(got.rule.created_at, before.rule.created_at);
    assert_int_equal(got.rule.state, MODEL_STATE_SYNCED);

    /* One field alone leaves the others as they are. */
    e = edit_of(MODEL_KIND_RULE, id);
    assert_int_equal(store_update(f->st, &e, field_bit(MODEL_KIND_RULE, "metadata"), &err),
                     ERROR_OK);
    assert_string_equal(e.rule.metadata, "");
    assert_string_equal(e.rule.description, "office");
    assert_string_equal(e.rule.cidr, "2001:db8::/32");

    /* The row keeps its place in id order. */
    model_object rows[4];
    size_t n;
    store_query q = {.sort = STORE_SORT_ID};
    assert_int_equal(store_page(f->st, MODEL_KIND_RULE, &q, NULL, STORE_FORWARD, 4, rows, &n,
                                &err), ERROR_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(rows[i].rule.id, ids[i]);
}

static void test_update_rule_refusals(void **state)
{
    fixture *f = *state;
    id_text ids[3];
    insert_three(f->st, ids);
    const char *held = ids[0], *id = ids[1], *gone = ids[2];
    error_info err;
    store_delete_result res;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, gone, &res, &err), ERROR_OK);
    unsigned cidr = field_bit(MODEL_KIND_RULE, "cidr");

    model_object e = edit_of(MODEL_KIND_RULE, id);
    assert_int_equal(store_update(f->st, &e, 0, &err), ERROR_INVALID);
    assert_int_equal(store_update(f->st, &e, field_bit(MODEL_KIND_RULE, "action"), &err),
                     ERROR_INVALID);
    assert_string_equal(err.msg, "action: cannot be changed after creation");
    assert_int_equal(store_update(f->st, &e, field_bit(MODEL_KIND_RULE, "ip_policy_id"), &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "ip_policy_id"));
    assert_int_equal(store_update(f->st, &e, 1u << 20, &err), ERROR_INVALID);

    /* The gate's own words; the row and the caller's object stay as they were. */
    strcpy(e.rule.cidr, "10.9.0.1/16");
    assert_int_equal(store_update(f->st, &e, cidr, &err), ERROR_INVALID);
    assert_string_equal(err.msg, "cidr: host bits set: did you mean 10.9.0.0/16?");
    assert_string_equal(e.rule.cidr, "10.9.0.1/16");
    assert_string_equal(e.rule.id, id);
    /* The natural key: refused naming the live rule that holds it. */
    strcpy(e.rule.cidr, "10.0.0.0/8");
    assert_int_equal(store_update(f->st, &e, cidr, &err), ERROR_CONFLICT);
    char want[256];
    snprintf(want, sizeof want, "policy %s already has a rule for 10.0.0.0/8 (%s)", POLICY_A,
             held);
    assert_string_equal(err.msg, want);
    assert_string_equal(e.rule.policy_id, ""); /* unchanged: never read */
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, id, &got, &err), ERROR_OK);
    assert_string_equal(got.rule.cidr, "10.1.0.0/16");
    /* A rule being deleted holds no key; its own cidr is no conflict either. */
    strcpy(e.rule.cidr, "10.2.0.0/16");
    assert_int_equal(store_update(f->st, &e, cidr, &err), ERROR_OK);
    assert_int_equal(store_update(f->st, &e, cidr, &err), ERROR_OK);

    model_object nobody = edit_of(MODEL_KIND_RULE, "ipr_2Zz1lqOxDdQyVpYcNNNNNNNNNNN");
    strcpy(nobody.rule.description, "x");
    assert_int_equal(store_update(f->st, &nobody, field_bit(MODEL_KIND_RULE, "description"),
                                  &err), ERROR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "ipr_2Zz1lqOxDdQyVpYcNNNNNNNNNNN"));
}

static void test_update_by_alias_and_in_batch(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, local);
    model_object remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.rule.id, "ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    error_info err;
    assert_int_equal(store_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    unsigned description = field_bit(MODEL_KIND_RULE, "description");
    model_object e = edit_of(MODEL_KIND_RULE, local);
    strcpy(e.rule.description, "by its old id");
    assert_int_equal(store_update(f->st, &e, description, &err), ERROR_OK);
    assert_string_equal(e.rule.id, remote.rule.id);

    /* Inside a batch it joins the caller's transaction. */
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    e = edit_of(MODEL_KIND_RULE, remote.rule.id);
    strcpy(e.rule.description, "rolled back");
    assert_int_equal(store_update(f->st, &e, description, &err), ERROR_OK);
    store_rollback(f->st);
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_RULE, remote.rule.id, &got, &err), ERROR_OK);
    assert_string_equal(got.rule.description, "by its old id");
}

static void test_update_cred(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_cred(f->st, "cr_2Zz1lqOxDdQyVpYcEEEEEEEEEEE", MODEL_STATE_SYNCED, TOKEN, id);
    error_info err;
    unsigned acl = field_bit(MODEL_KIND_CRED, "acl");
    unsigned set = acl | field_bit(MODEL_KIND_CRED, "description") |
                   field_bit(MODEL_KIND_CRED, "metadata");
    model_object e = edit_of(MODEL_KIND_CRED, id);
    strcpy(e.cred.description, "agent on web-2");
    strcpy(e.cred.metadata, "m2");
    strcpy(e.cred.owner_id, "usr_2Zz1lqOxDdQyVpYcUUUUUUUUUUU"); /* not in the set */
    assert_int_equal(model_acl_add(&e.cred.acl, "bind:a.example.com", &err), ERROR_OK);
    assert_int_equal(model_acl_add(&e.cred.acl, "bind:env=*", &err), ERROR_OK);
    assert_int_equal(store_update(f->st, &e, set, &err), ERROR_OK);
    assert_null(e.cred.token);
    model_object_clear(&e);
    model_object got;
    assert_int_equal(get_row(f->st, MODEL_KIND_CRED, id, &got, &err), ERROR_OK);
    assert_string_equal(got.cred.description, "agent on web-2");
    assert_string_equal(got.cred.metadata, "m2");
    assert_string_equal(got.cred.owner_id, "");
    assert_int_equal(got.cred.acl.count, 2);
    assert_string_equal(got.cred.acl.rules[1], "bind:env=*");
    assert_int_equal(got.cred.state, MODEL_STATE_SYNCED);
    model_object_clear(&got);
    /* The token stays where it was, untouched. */
    char *tok = NULL;
    assert_int_equal(store_token_get(f->st, id, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);

    /* An empty ACL is an edit too: no restriction. A bad rule: the ACL's own words. */
    e = edit_of(MODEL_KIND_CRED, id);
    assert_int_equal(store_update(f->st, &e, acl, &err), ERROR_OK);
    assert_int_equal(e.cred.acl.count, 0);
    model_object_clear(&e);
    e = edit_of(MODEL_KIND_CRED, id);
    assert_int_equal(model_acl_add(&e.cred.acl, "connect:x", &err), ERROR_OK);
    assert_int_equal(store_update(f->st, &e, acl, &err), ERROR_INVALID);
    assert_int_equal(strncmp(err.msg, "acl rule 1: ", 12), 0);
    assert_int_equal(e.cred.acl.count, 1); /* the caller's object is as given */
    assert_int_equal(store_update(f->st, &e, field_bit(MODEL_KIND_CRED, "owner_id"), &err),
                     ERROR_INVALID);
    assert_string_equal(err.msg, "owner_id: cannot be changed after creation");
    model_object_clear(&e);
}

int main(void)
{
    umask(077); /* as rampart runs: files the tests make beside the store are private */
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_migrates_from_empty),
        T(test_reopen_keeps_data),
        T(test_newer_schema_refused),
        T(test_migration_canonicalises_cidrs),
        T(test_readonly_needs_schema),
        T(test_file_modes),
        T(test_missing_parents_are_created),
        T(test_memory_database),
        T(test_cache_modes_refused),
        T(test_cache_of_another_user_refused),
        T(test_foreign_database_refused),
        T(test_older_cache_adopted),
        T(test_damaged_database_named),
        T(test_insert_assigns_local_id),
        T(test_conflicts),
        T(test_set_state),
        T(test_ipv6_spellings_are_one_key),
        T(test_set_state_cuts_error_text),
        T(test_state_counts),
        T(test_state_filter),
        T(test_delete_semantics),
        T(test_remove),
        T(test_rule_confirm_create),
        T(test_confirm_conflicting_remote_id),
        T(test_cred_confirm_and_tokens),
        T(test_token_follows_rename),
        T(test_confirm_keeps_the_reply_owner),
        T(test_token_cases),
        T(test_cred_roundtrip_and_acl),
        T(test_paging),
        T(test_paging_edges),
        T(test_cred_paging),
        T(test_query_plans),
        T(test_paging_cidr_order),
        T(test_filter_address),
        T(test_walk),
        T(test_transactions),
        T(test_concurrent_reader),
        T(test_update_rule_fields),
        T(test_update_rule_refusals),
        T(test_update_by_alias_and_in_batch),
        T(test_update_cred),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

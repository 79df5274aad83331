#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/store.h"
#include "../../src/core/store_internal.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    store *st;
} fixture;

typedef char id_text[MODEL_ID_MAX + 1];

static const char POLICY_A[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char POLICY_B[] = "ipp_2Zz1lqOxDdQyVpYcBBBBBBBBBBB";
static const char TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/rampart-store-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/data/rampart.db", f->dir);
    error_info err;
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_close(f->st);
    nftw(f->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static model_rule make_rule(const char *policy, const char *cidr, model_state st)
{
    model_rule r;
    memset(&r, 0, sizeof r);
    strcpy(r.policy_id, policy);
    strcpy(r.cidr, cidr);
    r.action = MODEL_ACTION_ALLOW;
    r.state = st;
    return r;
}

static void insert_rule(store *st, const char *policy, const char *cidr, model_state state,
                        char *id_out)
{
    model_rule r = make_rule(policy, cidr, state);
    error_info err;
    assert_int_equal(store_rule_insert(st, &r, &err), ERROR_OK);
    if (id_out)
        strcpy(id_out, r.id);
}

static void insert_cred(store *st, const char *id, model_state state, const char *token,
                        char *id_out)
{
    model_cred c;
    memset(&c, 0, sizeof c);
    strcpy(c.id, id);
    c.state = state;
    strcpy(c.description, "agent on web-1");
    error_info err;
    assert_int_equal(model_acl_add(&c.acl, "bind:*.example.com", &err), ERROR_OK);
    assert_int_equal(model_cred_set_token(&c, token, &err), ERROR_OK);
    assert_int_equal(store_cred_insert(st, &c, &err), ERROR_OK);
    if (id_out)
        strcpy(id_out, c.id);
    model_cred_clear(&c);
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
    assert_int_equal(store_rule_count(f->st, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
}

static void test_reopen_keeps_data(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, id);
    store_close(f->st);
    error_info err;
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    model_rule r;
    assert_int_equal(store_rule_get(f->st, id, &r, &err), ERROR_OK);
    assert_string_equal(r.cidr, "10.0.0.0/8");
    assert_string_equal(r.policy_id, POLICY_A);
    assert_int_equal(r.state, MODEL_STATE_NEW);
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
    model_rule r = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    assert_int_equal(store_rule_insert(st, &r, &err), ERROR_IO);
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
    assert_int_equal(store_rule_count(st, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);
    store_close(st);
}

/* ---- rules: insert, get, find, conflicts ------------------------------------ */

static void test_insert_assigns_local_id(void **state)
{
    fixture *f = *state;
    model_rule r = make_rule(POLICY_A, "2001:db8::/32", MODEL_STATE_NEW);
    strcpy(r.description, "office v6");
    strcpy(r.metadata, "{\"team\":\"net\"}");
    r.action = MODEL_ACTION_DENY;
    error_info err;
    assert_int_equal(store_rule_insert(f->st, &r, &err), ERROR_OK);
    assert_int_equal(strncmp(r.id, "local_", 6), 0);
    assert_int_equal(strlen(r.created_at), 20);
    model_rule got;
    assert_int_equal(store_rule_get(f->st, r.id, &got, &err), ERROR_OK);
    assert_memory_equal(&got, &r, sizeof r);
    assert_int_equal(store_rule_get(f->st, "ipr_nope", &got, &err), ERROR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "ipr_nope"));
}

static void test_conflicts(void **state)
{
    fixture *f = *state;
    id_text first;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED, first);
    model_rule dup = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    error_info err;
    assert_int_equal(store_rule_insert(f->st, &dup, &err), ERROR_CONFLICT);
    char want[256];
    snprintf(want, sizeof want, "policy %s already has a rule for 10.0.0.0/8 (%s)", POLICY_A,
             first);
    assert_string_equal(err.msg, want);
    assert_string_equal(dup.id, "");

    model_rule same_id = make_rule(POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW);
    strcpy(same_id.id, first);
    assert_int_equal(store_rule_insert(f->st, &same_id, &err), ERROR_CONFLICT);
    snprintf(want, sizeof want, "rule %s already exists", first);
    assert_string_equal(err.msg, want);

    insert_rule(f->st, POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW, NULL);
    store_delete_result res;
    assert_int_equal(store_rule_delete(f->st, first, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    id_text again;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW, again);
    /* The old row cannot come back to life beside its replacement. */
    assert_int_equal(store_rule_set_state(f->st, first, MODEL_STATE_SYNCED, NULL, &err),
                     ERROR_CONFLICT);
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
    assert_int_equal(store_rule_set_state(f->st, id, MODEL_STATE_FAILED,
                                          "cidr: host bits set", &err), ERROR_OK);
    model_rule r;
    assert_int_equal(store_rule_get(f->st, id, &r, &err), ERROR_OK);
    assert_int_equal(r.state, MODEL_STATE_FAILED);
    assert_string_equal(r.error, "cidr: host bits set");
    assert_int_equal(store_rule_set_state(f->st, id, MODEL_STATE_NEW, NULL, &err), ERROR_OK);
    assert_int_equal(store_rule_get(f->st, id, &r, &err), ERROR_OK);
    assert_string_equal(r.error, "");
    assert_int_equal(store_rule_set_state(f->st, "ipr_x", MODEL_STATE_NEW, NULL, &err),
                     ERROR_NOT_FOUND);
    assert_int_equal(store_rule_set_state(f->st, id, MODEL_STATE_COUNT, NULL, &err),
                     ERROR_INVALID);
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
    assert_int_equal(store_rule_state_counts(f->st, counts, &err), ERROR_OK);
    assert_int_equal(counts[MODEL_STATE_NEW], 2);
    assert_int_equal(counts[MODEL_STATE_SYNCED], 1);
    assert_int_equal(counts[MODEL_STATE_FAILED], 1);
    assert_int_equal(counts[MODEL_STATE_REMOTE_DELETED], 1);
    assert_int_equal(counts[MODEL_STATE_ORPHANED], 0);
    assert_int_equal(store_cred_state_counts(f->st, counts, &err), ERROR_OK);
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
    model_rule rows[4];
    size_t n;
    error_info err;
    assert_int_equal(store_rule_page(f->st, &q, NULL, STORE_FORWARD, 4, rows, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].id, ids[MODEL_STATE_NEW]);
    assert_string_equal(rows[1].id, ids[MODEL_STATE_DELETING]);
    assert_int_equal(store_rule_count(f->st, &q, &n, &err), ERROR_OK);
    assert_int_equal(n, 2);
    q.states = 1u << MODEL_STATE_COUNT;
    assert_int_equal(store_rule_count(f->st, &q, &n, &err), ERROR_INVALID);
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
        id_text rid, cid;
        snprintf(cidr, sizeof cidr, "10.%zu.0.0/16", i);
        insert_rule(f->st, POLICY_A, cidr, c->state, rid);
        insert_cred(f->st, "", c->state, TOKEN, cid);
        store_delete_result res = 99;
        error_info err;
        assert_int_equal(store_rule_delete(f->st, rid, &res, &err), c->rc);
        if (c->rc == ERROR_OK)
            assert_int_equal(res, c->result);
        else
            assert_non_null(strstr(err.msg, "the next sync settles it"));
        model_rule r;
        error_code get_rc = store_rule_get(f->st, rid, &r, &err);
        check_after_delete(c, get_rc, r.state);

        assert_int_equal(store_cred_delete(f->st, cid, &res, &err), c->rc);
        model_cred cr;
        memset(&cr, 0, sizeof cr);
        get_rc = store_cred_get(f->st, cid, &cr, &err);
        check_after_delete(c, get_rc, cr.state);
        model_cred_clear(&cr);
        char *tok = NULL;
        bool removed = c->rc == ERROR_OK && c->result == STORE_DELETE_REMOVED;
        assert_int_equal(store_token_get(f->st, cid, &tok, &err),
                         removed ? ERROR_NOT_FOUND : ERROR_OK);
        if (!removed)
            assert_string_equal(tok, TOKEN);
        free(tok);
    }
    error_info err;
    assert_int_equal(store_rule_delete(f->st, "ipr_none", NULL, &err), ERROR_NOT_FOUND);
}

static void test_remove(void **state)
{
    fixture *f = *state;
    id_text id;
    insert_cred(f->st, "", MODEL_STATE_NEW, TOKEN, id);
    error_info err;
    assert_int_equal(store_cred_remove(f->st, id, &err), ERROR_OK);
    char *tok = NULL;
    assert_int_equal(store_token_get(f->st, id, &tok, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_cred_remove(f->st, id, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_rule_remove(f->st, "ipr_none", &err), ERROR_NOT_FOUND);
}

/* ---- confirm, aliases, tokens --------------------------------------------- */

static void test_rule_confirm_create(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, local);
    model_rule remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.id, "ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    strcpy(remote.uri, "https://api.example.com/ip_policy_rules/ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR");
    strcpy(remote.created_at, "2025-09-04T10:11:15Z");
    strcpy(remote.policy_uri, "https://api.example.com/ip_policies/ipp_x");
    error_info err;
    assert_int_equal(store_rule_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    model_rule by_old, by_new;
    assert_int_equal(store_rule_get(f->st, local, &by_old, &err), ERROR_OK);
    assert_int_equal(store_rule_get(f->st, remote.id, &by_new, &err), ERROR_OK);
    assert_memory_equal(&by_old, &by_new, sizeof by_old);
    assert_string_equal(by_new.id, remote.id);
    assert_string_equal(by_new.uri, remote.uri);
    assert_string_equal(by_new.created_at, remote.created_at);
    assert_string_equal(by_new.policy_uri, remote.policy_uri);
    assert_int_equal(by_new.state, MODEL_STATE_SYNCED);
    assert_int_equal(store_rule_confirm_create(f->st, local, &remote, &err), ERROR_STATE);
    assert_int_equal(store_rule_confirm_create(f->st, "local_nope", &remote, &err),
                     ERROR_NOT_FOUND);

    /* The old id keeps working for every call, until the row is gone. */
    store_delete_result res;
    assert_int_equal(store_rule_delete(f->st, local, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    assert_int_equal(store_rule_remove(f->st, local, &err), ERROR_OK);
    assert_int_equal(store_rule_get(f->st, local, &by_old, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_rule_get(f->st, remote.id, &by_old, &err), ERROR_NOT_FOUND);
    model_rule reuse = make_rule(POLICY_B, "10.0.0.0/8", MODEL_STATE_NEW);
    strcpy(reuse.id, local);
    assert_int_equal(store_rule_insert(f->st, &reuse, &err), ERROR_OK);
}

static void test_confirm_conflicting_remote_id(void **state)
{
    fixture *f = *state;
    id_text a;
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, a);
    model_rule taken = make_rule(POLICY_A, "10.2.0.0/16", MODEL_STATE_SYNCED);
    strcpy(taken.id, "ipr_2Zz1lqOxDdQyVpYcTTTTTTTTTTT");
    error_info err;
    assert_int_equal(store_rule_insert(f->st, &taken, &err), ERROR_OK);
    model_rule remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.id, taken.id);
    assert_int_equal(store_rule_confirm_create(f->st, a, &remote, &err), ERROR_CONFLICT);
    model_rule r;
    assert_int_equal(store_rule_get(f->st, a, &r, &err), ERROR_OK);
    assert_int_equal(r.state, MODEL_STATE_CREATING);
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

    model_cred remote;
    memset(&remote, 0, sizeof remote);
    strcpy(remote.id, "cr_2Zz1lqOxDdQyVpYcCCCCCCCCCCC");
    strcpy(remote.created_at, "2025-09-04T10:11:15Z");
    assert_int_equal(model_cred_set_token(&remote, TOKEN, &err), ERROR_OK);
    assert_int_equal(store_cred_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    assert_int_equal(store_token_get(f->st, local, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
    assert_int_equal(store_token_get(f->st, remote.id, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
    model_cred got;
    memset(&got, 0, sizeof got);
    assert_int_equal(store_cred_get(f->st, local, &got, &err), ERROR_OK);
    assert_string_equal(got.id, remote.id);
    assert_int_equal(got.state, MODEL_STATE_SYNCED);
    assert_null(got.token);
    model_cred_clear(&got);

    /* A second confirm must fail without echoing the token. */
    id_text other;
    insert_cred(f->st, "", MODEL_STATE_CREATING, NULL, other);
    assert_int_equal(store_cred_confirm_create(f->st, other, &remote, &err), ERROR_CONFLICT);
    assert_null(strstr(err.msg, TOKEN));
    model_cred_clear(&remote);
}

static void test_token_follows_rename(void **state)
{
    fixture *f = *state;
    id_text local;
    insert_cred(f->st, "", MODEL_STATE_CREATING, TOKEN, local);
    model_cred remote;
    memset(&remote, 0, sizeof remote);
    strcpy(remote.id, "cr_2Zz1lqOxDdQyVpYcFFFFFFFFFFF");
    error_info err;
    assert_int_equal(store_cred_confirm_create(f->st, local, &remote, &err), ERROR_OK);
    char *tok = NULL;
    assert_int_equal(store_token_get(f->st, remote.id, &tok, &err), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
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
    model_cred c;
    memset(&c, 0, sizeof c);
    strcpy(c.owner_id, "usr_2Zz1lqOxDdQyVpYcUUUUUUUUUUU");
    strcpy(c.metadata, "m");
    c.state = MODEL_STATE_NEW;
    error_info err;
    assert_int_equal(model_acl_add(&c.acl, "bind:a.example.com", &err), ERROR_OK);
    assert_int_equal(model_acl_add(&c.acl, "bind:team=*", &err), ERROR_OK);
    assert_int_equal(store_cred_insert(f->st, &c, &err), ERROR_OK);
    model_cred got;
    memset(&got, 0, sizeof got);
    assert_int_equal(store_cred_get(f->st, c.id, &got, &err), ERROR_OK);
    assert_string_equal(got.owner_id, c.owner_id);
    assert_string_equal(got.metadata, "m");
    assert_int_equal(got.acl.count, 2);
    assert_string_equal(got.acl.rules[0], "bind:a.example.com");
    assert_string_equal(got.acl.rules[1], "bind:team=*");
    assert_int_equal(store_cred_insert(f->st, &c, &err), ERROR_CONFLICT);
    model_cred_clear(&got);
    model_cred_clear(&c);

    c.state = MODEL_STATE_NEW;
    assert_int_equal(model_acl_add(&c.acl, "bind:a\nbind:b", &err), ERROR_OK);
    assert_int_equal(store_cred_insert(f->st, &c, &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "line break"));
    assert_string_equal(c.id, "");
    model_cred_clear(&c);
    size_t n;
    assert_int_equal(store_cred_count(f->st, NULL, &n, &err), ERROR_OK);
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
        model_rule r = make_rule(i % 3 ? POLICY_A : POLICY_B, cidr, MODEL_STATE_SYNCED);
        snprintf(d->description[i], sizeof d->description[i], "%s",
                 descriptions[i % 4]);
        strcpy(r.description, d->description[i]);
        assert_int_equal(store_rule_insert(st, &r, &err), ERROR_OK);
        strcpy(d->ids[i], r.id);
    }
    assert_int_equal(store_commit(st, &err), ERROR_OK);
    for (size_t i = 1; i < PAGING_ROWS; i++)
        assert_true(strcmp(d->ids[i - 1], d->ids[i]) < 0);
}

/* Walk all pages in one direction; the ids come back in ascending order. */
static size_t walk(store *st, const store_query *q, store_dir dir, size_t page_size,
                   id_text *out)
{
    model_rule *rows = calloc(page_size, sizeof *rows);
    assert_non_null(rows);
    id_text cursor = "";
    size_t total = 0;
    for (;;) {
        size_t n;
        error_info err;
        assert_int_equal(store_rule_page(st, q, cursor, dir, page_size, rows, &n, &err),
                         ERROR_OK);
        for (size_t i = 1; i < n; i++)
            assert_true(strcmp(rows[i - 1].id, rows[i].id) < 0);
        for (size_t i = 0; i < n; i++) {
            size_t at = dir == STORE_FORWARD ? i : n - 1 - i;
            assert_true(total < PAGING_ROWS);
            strcpy(out[total++], rows[at].id);
        }
        if (n < page_size)
            break;
        strcpy(cursor, dir == STORE_FORWARD ? rows[n - 1].id : rows[0].id);
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
    assert_int_equal(store_rule_count(st, q, &count, &err), ERROR_OK);
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

static void test_paging_edges(void **state)
{
    fixture *f = *state;
    paging_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    fill_paging(f->st, d);
    model_rule rows[3];
    size_t n;
    error_info err;
    assert_int_equal(store_rule_page(f->st, NULL, NULL, STORE_BACKWARD, 3, rows, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rows[2].id, d->ids[PAGING_ROWS - 1]);
    assert_string_equal(rows[0].id, d->ids[PAGING_ROWS - 3]);
    assert_int_equal(store_rule_page(f->st, NULL, d->ids[1], STORE_BACKWARD, 3, rows, &n,
                                     &err), ERROR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].id, d->ids[0]);
    assert_int_equal(store_rule_page(f->st, NULL, d->ids[PAGING_ROWS - 1], STORE_FORWARD, 3,
                                     rows, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);
    store_query none = {.filter = "no such text"};
    assert_int_equal(store_rule_page(f->st, &none, "", STORE_FORWARD, 3, rows, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, 0);
    store_query bad = {.sort = STORE_SORT_COUNT};
    assert_int_equal(store_rule_page(f->st, &bad, "", STORE_FORWARD, 3, rows, &n, &err),
                     ERROR_INVALID);
    free(d);
}

static void test_cred_paging(void **state)
{
    fixture *f = *state;
    id_text ids[30];
    for (size_t i = 0; i < 30; i++)
        insert_cred(f->st, "", MODEL_STATE_NEW, NULL, ids[i]);
    model_cred rows[4];
    size_t n, seen = 0;
    id_text cursor = "";
    error_info err;
    store_query q = {.filter = "*.EXAMPLE"};
    do {
        assert_int_equal(store_cred_page(f->st, &q, cursor, STORE_FORWARD, 4, rows, &n, &err),
                         ERROR_OK);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(rows[i].id, ids[seen++]);
            assert_int_equal(rows[i].acl.count, 1);
            assert_null(rows[i].token);
        }
        if (n)
            strcpy(cursor, rows[n - 1].id);
        for (size_t i = 0; i < n; i++)
            model_cred_clear(&rows[i]);
    } while (n == 4);
    assert_int_equal(seen, 30);
    assert_int_equal(store_cred_page(f->st, NULL, ids[5], STORE_BACKWARD, 4, rows, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].id, ids[1]);
    assert_string_equal(rows[3].id, ids[4]);
    for (size_t i = 0; i < n; i++)
        model_cred_clear(&rows[i]);
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
    static const struct {
        store_stmt_id id;
        const char *index;
    } lookups[] = {
        {STMT_RULE_GET, "PRIMARY KEY (id=?)"},
        {STMT_RULE_FIND, "rules_live_key (policy_id=? AND cidr=?)"},
        {STMT_TOKEN_GET, "sqlite_autoindex_credentials_1 (id=?)"},
        {STMT_ALIAS_DELETE, "aliases_remote (remote_id=?)"},
    };
    for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++) {
        assert_int_equal(store_plan(f->st, store_sql_text(lookups[i].id), plan, sizeof plan,
                                    &err), ERROR_OK);
        assert_non_null(strstr(plan, lookups[i].index));
        assert_null(strstr(plan, "SCAN"));
    }
}

/* ---- transactions and concurrency ---------------------------------------- */

/* The walk hands out every matching row once, even when the callback moves rows
 * out of the walked states, and stops at the callback's first non-OK code. */
typedef struct walk_seen {
    store *st;
    size_t rows, pages;
    bool stop;
} walk_seen;

static error_code claim_page(void *ctx, model_rule *rows, size_t n, error_info *err)
{
    walk_seen *w = ctx;
    w->pages++;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].state, MODEL_STATE_NEW);
        assert_int_equal(store_rule_set_state(w->st, rows[i].id, MODEL_STATE_CREATING, NULL,
                                              err), ERROR_OK);
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
    assert_int_equal(store_rule_walk(f->st, &q, 7, claim_page, &w, &err), ERROR_STATE);
    assert_int_equal(w.rows, 7);
    w = (walk_seen){.st = f->st};
    assert_int_equal(store_rule_walk(f->st, &q, 7, claim_page, &w, &err), ERROR_OK);
    assert_int_equal(w.rows, 18);
    assert_int_equal(w.pages, 3);
    w = (walk_seen){.st = f->st};
    assert_int_equal(store_rule_walk(f->st, &q, 7, claim_page, &w, &err), ERROR_OK);
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
    assert_int_equal(store_rule_count(f->st, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 0);

    /* A failed call inside a batch undoes only itself. */
    id_text local;
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    insert_rule(f->st, POLICY_A, "10.0.0.0/8", MODEL_STATE_CREATING, local);
    model_rule dup = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_NEW);
    assert_int_equal(store_rule_insert(f->st, &dup, &err), ERROR_CONFLICT);
    model_rule remote = make_rule(POLICY_A, "10.0.0.0/8", MODEL_STATE_SYNCED);
    strcpy(remote.id, local);
    assert_int_equal(store_rule_confirm_create(f->st, "local_nope", &remote, &err),
                     ERROR_NOT_FOUND);
    assert_int_equal(store_commit(f->st, &err), ERROR_OK);
    assert_int_equal(store_rule_count(f->st, NULL, &n, &err), ERROR_OK);
    assert_int_equal(n, 1);

    /* Closing with a transaction open rolls it back. */
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    insert_rule(f->st, POLICY_A, "10.9.0.0/16", MODEL_STATE_NEW, NULL);
    store_close(f->st);
    assert_int_equal(store_open(f->path, 0, &f->st, &err), ERROR_OK);
    assert_int_equal(store_rule_count(f->st, NULL, &n, &err), ERROR_OK);
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
        if (store_rule_count(st, NULL, &n, &err) != ERROR_OK) {
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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_migrates_from_empty),
        T(test_reopen_keeps_data),
        T(test_newer_schema_refused),
        T(test_readonly_needs_schema),
        T(test_file_modes),
        T(test_missing_parents_are_created),
        T(test_memory_database),
        T(test_insert_assigns_local_id),
        T(test_conflicts),
        T(test_set_state),
        T(test_state_counts),
        T(test_state_filter),
        T(test_delete_semantics),
        T(test_remove),
        T(test_rule_confirm_create),
        T(test_confirm_conflicting_remote_id),
        T(test_cred_confirm_and_tokens),
        T(test_token_follows_rename),
        T(test_token_cases),
        T(test_cred_roundtrip_and_acl),
        T(test_paging),
        T(test_paging_edges),
        T(test_cred_paging),
        T(test_query_plans),
        T(test_walk),
        T(test_transactions),
        T(test_concurrent_reader),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

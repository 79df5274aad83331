/* store: a token is kept only with a token's shape, whatever the caller; a create
 * reply whose token is malformed is recorded without it, orphaned with the reason;
 * a malformed token an older version stored is never handed out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/store.h"
#include "test_support.h"

static const char TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";
static const char REMOTE_ID[] = "cr_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char HOSTILE[] = "2Zz1lqOxDdQyVpYc_\x1b]0;pwned\x07\x1b[2J";

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-token-XXXXXX", "rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

static void test_shape(void **state)
{
    (void)state;
    char longest[STORE_TOKEN_MAX + 2];
    memset(longest, 'a', STORE_TOKEN_MAX);
    longest[STORE_TOKEN_MAX] = '\0';
    static const struct {
        const char *token;
        bool ok;
    } cases[] = {
        {TOKEN, true},     {"a", true},           {"_", true},
        {"", false},       {"abc-def", false},    {"abc def", false},
        {"abc\n", false},  {HOSTILE, false},      {"caf\xc3\xa9", false},
        {"\xe2\x80\xae", false},
    };
    error_info err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if ((store_token_check(cases[i].token, &err) == ERROR_OK) != cases[i].ok)
            fail_msg("case %zu: %s", i, cases[i].ok ? err.msg : "accepted");
    }
    assert_int_equal(store_token_check(NULL, &err), ERROR_INVALID);
    assert_int_equal(store_token_check(longest, &err), ERROR_OK);
    longest[STORE_TOKEN_MAX] = 'a';
    longest[STORE_TOKEN_MAX + 1] = '\0';
    assert_int_equal(store_token_check(longest, &err), ERROR_INVALID);
    /* The message says where, never what. */
    assert_int_equal(store_token_check(HOSTILE, &err), ERROR_INVALID);
    assert_null(strstr(err.msg, "pwned"));
    assert_null(strchr(err.msg, '\x1b'));
    assert_non_null(strstr(err.msg, "byte 18"));
}

static model_object cred_with(const char *id, model_state state, const char *token)
{
    model_object c;
    ts_cred_init(&c, "agent", "", NULL);
    strcpy(c.cred.id, id);
    c.cred.state = state;
    assert_int_equal(model_cred_set_token(&c.cred, token, NULL), ERROR_OK);
    return c;
}

/* Whatever the caller (here an insert, as serve-api's own rows go in), a malformed
 * token is refused and nothing is written. */
static void test_insert_refuses(void **state)
{
    ts_store_dir *d = *state;
    model_object c = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, HOSTILE);
    error_info err;
    assert_int_equal(store_insert(d->st, &c, &err), ERROR_INVALID);
    assert_null(strstr(err.msg, "pwned"));
    model_object_clear(&c);
    model_object got;
    model_object_init(&got, MODEL_KIND_CRED);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, REMOTE_ID, &got, &err),
                     ERROR_NOT_FOUND);
    c = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, TOKEN);
    assert_int_equal(store_insert(d->st, &c, &err), ERROR_OK);
    model_object_clear(&c);
    char *token = NULL;
    assert_int_equal(store_token_get(d->st, REMOTE_ID, &token, &err), ERROR_OK);
    assert_string_equal(token, TOKEN);
    free(token);
}

/* A local row being created, as the sync engine has it when the reply comes. */
static void creating(store *st, char *local)
{
    model_object c = cred_with("", MODEL_STATE_CREATING, NULL);
    ts_insert(st, &c, local);
}

static void test_confirm(void **state)
{
    ts_store_dir *d = *state;
    char local[MODEL_ID_MAX + 1];
    creating(d->st, local);
    model_object reply = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, HOSTILE);
    error_info err;
    /* The plain confirm refuses the whole reply: still the local row. */
    assert_int_equal(store_confirm_create(d->st, local, &reply, &err), ERROR_INVALID);
    model_object got;
    model_object_init(&got, MODEL_KIND_CRED);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, local, &got, &err), ERROR_OK);
    assert_string_equal(got.cred.id, local);
    assert_int_equal(got.cred.state, MODEL_STATE_CREATING);
    model_object_clear(&got);

    /* Without its token: the remote's row, orphaned with the reason. */
    const char *reason = "the remote's create reply held a malformed token (not stored): x";
    assert_int_equal(store_confirm_create_without_token(d->st, local, &reply, reason, &err),
                     ERROR_OK);
    model_object_clear(&reply);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, local, &got, &err), ERROR_OK);
    assert_string_equal(got.cred.id, REMOTE_ID);
    assert_int_equal(got.cred.state, MODEL_STATE_ORPHANED);
    assert_string_equal(got.cred.error, reason);
    model_object_clear(&got);
    char *token = NULL;
    assert_int_equal(store_token_get(d->st, local, &token, &err), ERROR_UNAVAILABLE);
    assert_null(token);
    assert_non_null(strstr(err.msg, reason));
    assert_non_null(strstr(err.msg, REMOTE_ID));

    /* A rule has no token to go without. */
    model_object rule = ts_rule("ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA", "10.0.0.0/8",
                                MODEL_ACTION_ALLOW, MODEL_STATE_SYNCED);
    assert_int_equal(store_confirm_create_without_token(d->st, local, &rule, reason, &err),
                     ERROR_INVALID);
}

/* A token an older version stored without the check is not handed out. */
static void test_held_malformed(void **state)
{
    ts_store_dir *d = *state;
    model_object c = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, TOKEN);
    ts_insert(d->st, &c, NULL);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(d->path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "UPDATE tokens SET token = ?1", -1, &s, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(s, 1, HOSTILE, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    sqlite3_close(db);
    char *token = NULL;
    error_info err;
    assert_int_equal(store_token_get(d->st, REMOTE_ID, &token, &err), ERROR_UNAVAILABLE);
    assert_null(token);
    assert_non_null(strstr(err.msg, "malformed"));
    assert_null(strstr(err.msg, "pwned"));
}

/* A token the store writes is not yet shown until marked; the first mark says so,
 * the second says it was shown before; the unseen list follows, across a reopen. */
static void test_shown(void **state)
{
    ts_store_dir *d = *state;
    char local[MODEL_ID_MAX + 1];
    creating(d->st, local);
    model_object reply = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, TOKEN);
    error_info err;
    assert_int_equal(store_confirm_create(d->st, local, &reply, &err), ERROR_OK);
    model_object_clear(&reply);
    char ids[2][MODEL_ID_MAX + 1];
    size_t n = 9, total = 9;
    assert_int_equal(store_token_unseen(d->st, ids, 2, &n, &total, &err), ERROR_OK);
    assert_int_equal(n, 1);
    assert_int_equal(total, 1);
    assert_string_equal(ids[0], REMOTE_ID);
    store_close(d->st); /* a restart: still not shown */
    d->st = ts_store_open(d->path);
    assert_int_equal(store_token_unseen(d->st, ids, 0, &n, &total, &err), ERROR_OK);
    assert_int_equal(n, 0);
    assert_int_equal(total, 1);
    bool before = true;
    assert_int_equal(store_token_mark_shown(d->st, local, &before, &err), ERROR_OK);
    assert_false(before); /* the alias reaches it too */
    assert_int_equal(store_token_mark_shown(d->st, REMOTE_ID, &before, &err), ERROR_OK);
    assert_true(before);
    assert_int_equal(store_token_unseen(d->st, ids, 2, &n, &total, &err), ERROR_OK);
    assert_int_equal(total, 0);
}

/* Rows in token_fetches, straight from the file (whatever the store's calls say). */
static int fetch_rows(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM token_fetches", -1, &s,
                                        NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

/* Fetches recorded by id or alias keep the latest time, follow the credential's
 * confirm, count only when recent, skip credentials not cached, and go with the
 * credential. */
static void test_fetches(void **state)
{
    ts_store_dir *d = *state;
    static const char OTHER[] = "cr_3Zz1lqOxDdQyVpYcAAAAAAAAAAA";
    const long long now = 1800000000, week = 7 * 86400;
    char local[MODEL_ID_MAX + 1];
    creating(d->st, local);
    model_object other = cred_with(OTHER, MODEL_STATE_SYNCED, NULL);
    error_info err;
    assert_int_equal(store_insert(d->st, &other, &err), ERROR_OK);
    model_object_clear(&other);
    store_fetch batch[4] = {{.at = now - 7200}, {.at = now - 8 * 86400},
                            {.at = now - 9 * 86400}, {.at = now}};
    strcpy(batch[0].cred_id, local);
    strcpy(batch[1].cred_id, OTHER);
    strcpy(batch[2].cred_id, local); /* older: never moves the last one back */
    strcpy(batch[3].cred_id, "cr_4Zz1lqOxDdQyVpYcAAAAAAAAAAA"); /* not cached: skipped */
    assert_int_equal(store_fetch_record_batch(d->st, batch, 4, &err), ERROR_OK);
    assert_int_equal(fetch_rows(d->path), 2);
    model_object reply = cred_with(REMOTE_ID, MODEL_STATE_SYNCED, TOKEN);
    assert_int_equal(store_confirm_create(d->st, local, &reply, &err), ERROR_OK);
    model_object_clear(&reply);

    const char *ids[] = {REMOTE_ID, OTHER, local};
    long long at[3] = {1, 1, 1};
    size_t found = 9;
    assert_int_equal(store_fetch_recent(d->st, ids, 3, now - week, at, &found, &err),
                     ERROR_OK);
    assert_int_equal(found, 2); /* the remote id and its alias; OTHER is too old */
    assert_true(at[0] == now - 7200 && at[1] == 0 && at[2] == now - 7200);
    assert_int_equal(store_fetch_recent(d->st, ids, 3, now - 10 * 86400, at, &found, &err),
                     ERROR_OK);
    assert_true(found == 3 && at[1] == now - 8 * 86400);

    assert_int_equal(store_remove(d->st, MODEL_KIND_CRED, REMOTE_ID, &err), ERROR_OK);
    assert_int_equal(fetch_rows(d->path), 1);
    assert_int_equal(store_fetch_recent(d->st, ids, 1, 0, at, &found, &err), ERROR_OK);
    assert_int_equal(found, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),
        cmocka_unit_test_setup_teardown(test_insert_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_confirm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fetches, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

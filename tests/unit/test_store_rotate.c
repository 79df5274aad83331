/* store: credential rotation (store_rotate.c) over a real database file: the
 * successor and its link, which of the pair a name finds, when the old one is
 * due to retire, retirement, cancel, a failed successor. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/store.h"
#include "test_support.h"

static const char OLD_ID[] = "cr_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char OLD_TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";
static const char NEW_ID[] = "cr_2Zz1lqOxDdQyVpYcBBBBBBBBBBB";
static const char NEW_TOKEN[] = "2Zz1lqOxDdQyVpYcBBBBBBBBBBB_n3wT0k3nV4lu3xyz1234";
static const long long T0 = 1800000000;

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-rotate-XXXXXX", "rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

/* A synced credential "web" with a token, an ACL, metadata and an owner. */
static void add_old(store *st)
{
    model_object c;
    ts_cred_init(&c, "web", "team=a", "bind:example.com");
    strcpy(c.cred.id, OLD_ID);
    strcpy(c.cred.owner_id, "usr_2Zz1lqOxDdQyVpYc");
    c.cred.state = MODEL_STATE_SYNCED;
    assert_int_equal(model_cred_set_token(&c.cred, OLD_TOKEN, NULL), ERROR_OK);
    ts_insert(st, &c, NULL);
}

/* The remote confirms the successor's create, with its token. */
static void confirm(store *st, const char *local)
{
    model_object r;
    ts_cred_init(&r, "web", "team=a", "bind:example.com");
    strcpy(r.cred.id, NEW_ID);
    r.cred.state = MODEL_STATE_SYNCED;
    assert_int_equal(model_cred_set_token(&r.cred, NEW_TOKEN, NULL), ERROR_OK);
    error_info err;
    assert_int_equal(store_confirm_create(st, local, &r, &err), ERROR_OK);
    model_object_clear(&r);
}

static size_t by_name(store *st, char (*ids)[MODEL_ID_MAX + 1])
{
    size_t n = 0;
    error_info err;
    assert_int_equal(store_cred_find_by_name(st, "web", ids, 4, &n, &err), ERROR_OK);
    return n;
}

static void start(store *st, long long grace, store_rotation_mode mode, char *local)
{
    error_info err = {0};
    error_code rc = store_rotation_start(st, OLD_ID, grace, mode, "", T0, local, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, ERROR_OK);
}

/* The successor copies the user's fields; until its token is held the name finds
 * the old one, then only the successor; the old id names its successor. */
static void successor_is_served_once_held(void **state)
{
    ts_store_dir *d = *state;
    add_old(d->st);
    char local[MODEL_ID_MAX + 1];
    start(d->st, 3600, STORE_ROTATE_GRACE, local);
    model_object s;
    model_object_init(&s, MODEL_KIND_CRED);
    error_info err;
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, local, &s, &err), ERROR_OK);
    assert_int_equal(s.cred.state, MODEL_STATE_NEW);
    assert_string_equal(s.cred.metadata, "team=a");
    assert_string_equal(s.cred.owner_id, "usr_2Zz1lqOxDdQyVpYc");
    assert_int_equal(s.cred.acl.count, 1);
    model_object_clear(&s);

    char ids[4][MODEL_ID_MAX + 1];
    assert_int_equal(by_name(d->st, ids), 1);
    assert_string_equal(ids[0], OLD_ID);
    char succ[MODEL_ID_MAX + 1];
    bool found = true;
    assert_int_equal(store_rotation_successor(d->st, OLD_ID, succ, &found, &err), ERROR_OK);
    assert_false(found);

    confirm(d->st, local);
    assert_int_equal(by_name(d->st, ids), 1);
    assert_string_equal(ids[0], NEW_ID);
    assert_int_equal(store_rotation_successor(d->st, OLD_ID, succ, &found, &err), ERROR_OK);
    assert_true(found);
    assert_string_equal(succ, NEW_ID);
    store_rotation r;
    assert_int_equal(store_rotation_get(d->st, local, &r, &err), ERROR_OK); /* the alias */
    assert_string_equal(r.new_id, NEW_ID);
    assert_int_equal(r.state, STORE_ROTATION_GRACE);
    /* The successor deleted by hand (its token still held until the sync): the
     * name finds the old one again, and the old id names no successor. */
    assert_int_equal(store_delete(d->st, MODEL_KIND_CRED, NEW_ID, NULL, &err), ERROR_OK);
    assert_int_equal(by_name(d->st, ids), 1);
    assert_string_equal(ids[0], OLD_ID);
    assert_int_equal(store_rotation_successor(d->st, OLD_ID, succ, &found, &err), ERROR_OK);
    assert_false(found);
    assert_int_equal(store_discard(d->st, MODEL_KIND_CRED, NEW_ID, NULL, &err), ERROR_OK);
    /* A second rotation of either is refused while this one runs. */
    char other[MODEL_ID_MAX + 1];
    assert_int_equal(store_rotation_start(d->st, OLD_ID, 0, STORE_ROTATE_GRACE, "", T0, other,
                                          &err), ERROR_STATE);
    assert_int_equal(store_rotation_start(d->st, NEW_ID, 0, STORE_ROTATE_GRACE, "", T0, other,
                                          &err), ERROR_STATE);
}

/* Grace, then quiet; a command must have run; a token never held waits for
 * --finish. */
static void due_after_grace_and_quiet(void **state)
{
    ts_store_dir *d = *state;
    add_old(d->st);
    char local[MODEL_ID_MAX + 1];
    error_info err;
    assert_int_equal(store_rotation_start(d->st, OLD_ID, 100, STORE_ROTATE_GRACE, "reload",
                                          T0, local, &err), ERROR_OK);
    store_rotation r;
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_false(store_rotation_due(&r, T0 + 1000, 10, NULL));
    confirm(d->st, local);
    assert_int_equal(store_rotation_settle(d->st, T0 + 5, 86400, NULL, &err), ERROR_OK);
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.held_at, T0 + 5);
    const char *why = NULL;
    assert_false(store_rotation_due(&r, T0 + 1000, 10, &why));
    assert_non_null(strstr(why, "command"));
    assert_int_equal(store_rotation_exec_done(d->st, OLD_ID, true, NULL, &err), ERROR_OK);
    store_fetch f = {.at = T0 + 100};
    strcpy(f.cred_id, OLD_ID);
    assert_int_equal(store_fetch_record_batch(d->st, &f, 1, &err), ERROR_OK);
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.old_served_at, T0 + 100);
    assert_false(store_rotation_due(&r, T0 + 104, 10, &why)); /* grace */
    assert_false(store_rotation_due(&r, T0 + 109, 10, &why)); /* quiet */
    assert_non_null(strstr(why, "quiet"));
    assert_true(store_rotation_due(&r, T0 + 110, 10, &why));
    r.old_held = false;
    assert_false(store_rotation_due(&r, T0 + 1000, 10, &why));
    assert_non_null(strstr(why, "--finish"));
    r.mode = STORE_ROTATE_FINISH;
    assert_true(store_rotation_due(&r, T0, 10, NULL));
}

/* Retirement deletes through the sync; once the old row is gone the link stays
 * (retired), naming the successor, until kept long enough. */
static void retire_then_forget(void **state)
{
    ts_store_dir *d = *state;
    add_old(d->st);
    char local[MODEL_ID_MAX + 1];
    start(d->st, 0, STORE_ROTATE_GRACE, local);
    error_info err;
    assert_int_equal(store_rotation_retire(d->st, OLD_ID, &err), ERROR_STATE); /* not held */
    confirm(d->st, local);
    assert_int_equal(store_rotation_retire(d->st, OLD_ID, &err), ERROR_OK);
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, OLD_ID, &o, &err), ERROR_OK);
    assert_int_equal(o.cred.state, MODEL_STATE_DELETING);
    assert_non_null(strstr(o.cred.error, NEW_ID));
    model_object_clear(&o);
    store_rotation r;
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.state, STORE_ROTATION_RETIRING);
    assert_int_equal(store_remove(d->st, MODEL_KIND_CRED, OLD_ID, &err), ERROR_OK);
    assert_int_equal(store_rotation_get(d->st, NEW_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.state, STORE_ROTATION_RETIRED);
    assert_true(r.retired_at > 0);
    char succ[MODEL_ID_MAX + 1];
    bool found = false;
    assert_int_equal(store_rotation_successor(d->st, OLD_ID, succ, &found, &err), ERROR_OK);
    assert_true(found);
    assert_int_equal(store_rotation_settle(d->st, r.retired_at + 10, 60, NULL, &err),
                     ERROR_OK);
    assert_int_equal(store_rotation_get(d->st, NEW_ID, &r, &err), ERROR_OK);
    assert_int_equal(store_rotation_settle(d->st, r.retired_at + 60, 60, NULL, &err),
                     ERROR_OK);
    assert_int_equal(store_rotation_get(d->st, NEW_ID, &r, &err), ERROR_NOT_FOUND);
}

/* --finish before the successor is held retires as soon as it is; --cancel of a
 * queued successor removes it and the link. */
static void finish_and_cancel(void **state)
{
    ts_store_dir *d = *state;
    add_old(d->st);
    char local[MODEL_ID_MAX + 1];
    start(d->st, 86400, STORE_ROTATE_GRACE, local);
    error_info err;
    bool retired = true;
    assert_int_equal(store_rotation_finish(d->st, OLD_ID, &retired, &err), ERROR_OK);
    assert_false(retired);
    store_rotation r;
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.mode, STORE_ROTATE_FINISH);
    char dropped[MODEL_ID_MAX + 1];
    assert_int_equal(store_rotation_cancel(d->st, OLD_ID, dropped, &err), ERROR_OK);
    assert_string_equal(dropped, local);
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_NOT_FOUND);
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, local, &o, &err), ERROR_NOT_FOUND);
    /* Held: --finish retires at once. */
    start(d->st, 86400, STORE_ROTATE_GRACE, local);
    confirm(d->st, local);
    assert_int_equal(store_rotation_finish(d->st, OLD_ID, &retired, &err), ERROR_OK);
    assert_true(retired);
    assert_int_equal(store_rotation_cancel(d->st, OLD_ID, dropped, &err), ERROR_STATE);
}

/* A successor the remote refused stops the rotation with its reason; the old one
 * stays and is the one the name finds. */
static void failed_successor_stops(void **state)
{
    ts_store_dir *d = *state;
    add_old(d->st);
    char local[MODEL_ID_MAX + 1];
    start(d->st, 0, STORE_ROTATE_NOW, local);
    error_info err;
    assert_int_equal(store_set_state(d->st, MODEL_KIND_CRED, local, MODEL_STATE_FAILED,
                                     "403 may not create credentials for that owner", &err),
                     ERROR_OK);
    size_t stopped = 0;
    assert_int_equal(store_rotation_settle(d->st, T0, 86400, &stopped, &err), ERROR_OK);
    assert_int_equal(stopped, 1);
    store_rotation r;
    assert_int_equal(store_rotation_get(d->st, OLD_ID, &r, &err), ERROR_OK);
    assert_int_equal(r.state, STORE_ROTATION_STOPPED);
    assert_non_null(strstr(r.error, "403"));
    assert_false(store_rotation_due(&r, T0 + 100, 0, NULL));
    char ids[4][MODEL_ID_MAX + 1];
    assert_int_equal(by_name(d->st, ids), 1);
    assert_string_equal(ids[0], OLD_ID);
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    assert_int_equal(store_get(d->st, MODEL_KIND_CRED, OLD_ID, &o, &err), ERROR_OK);
    assert_int_equal(o.cred.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);
}

/* Only a credential that exists remotely can be rotated. */
static void refuses_a_queued_create(void **state)
{
    ts_store_dir *d = *state;
    model_object c;
    ts_cred_init(&c, "web", "", NULL);
    char local[MODEL_ID_MAX + 1], succ[MODEL_ID_MAX + 1];
    ts_insert(d->st, &c, local);
    error_info err;
    assert_int_equal(store_rotation_start(d->st, local, 0, STORE_ROTATE_GRACE, "", T0, succ,
                                          &err), ERROR_STATE);
    assert_non_null(strstr(err.msg, "exists remotely"));
    assert_int_equal(store_rotation_start(d->st, "cr_nope", 0, STORE_ROTATE_GRACE, "", T0,
                                          succ, &err), ERROR_NOT_FOUND);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(successor_is_served_once_held),
        T(due_after_grace_and_quiet),
        T(retire_then_forget),
        T(finish_and_cancel),
        T(failed_successor_stops),
        T(refuses_a_queued_create),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

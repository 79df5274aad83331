/*
 * The push's durable steps, counted on a real database file: each create's row is
 * claimed (committed, as another connection sees it) before its request goes out,
 * every reply is committed before the next request, and the two ride in one
 * commit (the reply of one create with the claim of the next), so a push of N
 * creates costs about N commits, not 2N. Paced, each stays its own transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sqlite3.h>

/* Only the fake's create, list and clock are used here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fake_remote.h"
#pragma GCC diagnostic pop
#include "rampart/store.h"
#include "../../src/core/store/store_internal.h" /* the store's handle, for its commit hook */

#define POLICY "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a"

typedef struct fixture {
    ts_store_dir dir;
    sqlite3 *witness;   /* a second connection: sees only what was committed */
    fake_remote *remote;
    fake_clock clock;
    sync_options opt;
    sync_report report;
    error_info err;
    unsigned commits;
    unsigned creates_seen;
    unsigned not_claimed; /* requests whose row was not committed as creating */
    unsigned unrecorded;  /* requests sent before an earlier reply was committed */
} fixture;

static fixture *current;

static int count_commit(void *ctx)
{
    ((fixture *)ctx)->commits++;
    return 0;
}

/* The committed state of row `id`, as the witness connection reads it. */
static void committed_state(fixture *f, const char *id, char *out, size_t size)
{
    sqlite3_stmt *s;
    out[0] = '\0';
    assert_int_equal(sqlite3_prepare_v2(f->witness, "SELECT state FROM rules WHERE id = ?1",
                                        -1, &s, NULL), SQLITE_OK);
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        snprintf(out, size, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

static int committed_count(fixture *f, const char *state)
{
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(f->witness,
                                        "SELECT count(*) FROM rules WHERE state = ?1", -1, &s,
                                        NULL), SQLITE_OK);
    sqlite3_bind_text(s, 1, state, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* The remote's create, after checking what the cache has committed by now. */
static sync_outcome witnessed_create(void *ctx, const model_object *in, model_object *out,
                                     sync_result *res)
{
    fixture *f = current;
    char state[32];
    committed_state(f, model_object_id(in), state, sizeof state);
    if (strcmp(state, "creating") != 0)
        f->not_claimed++;
    if (committed_count(f, "synced") != (int)f->creates_seen)
        f->unrecorded++;
    f->creates_seen++;
    return fake_ops.create(ctx, in, out, res);
}

static sync_api_ops witnessed_ops;

static int setup(void **state)
{
    fixture *f = ts_zalloc(sizeof *f);
    ts_store_dir_open(&f->dir, "/tmp/rampart-commits-XXXXXX", "cache.db");
    assert_int_equal(sqlite3_open_v2(f->dir.path, &f->witness, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    f->remote = ts_zalloc(sizeof *f->remote);
    f->remote->limit = 10;
    f->remote->clock = &f->clock;
    f->clock.now = 1000;
    f->opt = (sync_options){
        .push = true,
        .clock = {.now = fake_now, .sleep = fake_sleep, .ctx = &f->clock},
    };
    witnessed_ops = fake_ops;
    witnessed_ops.create = witnessed_create;
    current = f;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sqlite3_close(f->witness);
    assert_int_equal(ts_store_dir_close(&f->dir), 0);
    fake_free(f->remote);
    free(f);
    return 0;
}

/* `n` rules queued, then a push counting the cache's commits. */
static void push(fixture *f, int n)
{
    for (int i = 0; i < n; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.%d.0/24", i / 256, i % 256);
        ts_insert_rule(f->dir.st, POLICY, cidr, MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    }
    sqlite3_commit_hook(f->dir.st->db, count_commit, f);
    assert_int_equal(sync_run(f->dir.st, &witnessed_ops, f->remote, &f->opt, &f->report,
                              &f->err), ERROR_OK);
    sqlite3_commit_hook(f->dir.st->db, NULL, NULL);
    assert_int_equal(f->report.created, n);
    assert_int_equal((int)f->creates_seen, n);
    assert_int_equal(f->not_claimed, 0);
    assert_int_equal(f->unrecorded, 0);
    assert_int_equal(committed_count(f, "synced"), n);
}

/* Unpaced: one commit per create, plus one claim per page of the outbox walk (32
 * rows) and the run's own bookkeeping. */
static void test_one_commit_per_create(void **state)
{
    fixture *f = *state;
    enum { N = 70 };
    push(f, N);
    assert_true(f->commits <= N + 3 + 4);
    assert_true(f->commits >= N);
}

/* Paced, the claim waits for the request's slot: two commits per create. */
static void test_paced_claims_are_their_own(void **state)
{
    fixture *f = *state;
    enum { N = 12 };
    f->opt.rate_per_min = 600;
    push(f, N);
    assert_true(f->commits >= 2 * N);
}

/* A run cancelled while a row claimed with the last reply waits: it is new again,
 * not left creating (which would cost the next sync a listing first). */
static bool cancel_flag;

static sync_outcome cancelling_create(void *ctx, const model_object *in, model_object *out,
                                      sync_result *res)
{
    sync_outcome o = witnessed_create(ctx, in, out, res);
    cancel_flag = true;
    return o;
}

static void test_cancel_unclaims_the_next_row(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 5; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.9.%d.0/24", i);
        ts_insert_rule(f->dir.st, POLICY, cidr, MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    }
    cancel_flag = false;
    f->opt.cancel = &cancel_flag;
    witnessed_ops.create = cancelling_create;
    assert_int_equal(sync_run(f->dir.st, &witnessed_ops, f->remote, &f->opt, &f->report,
                              &f->err), ERROR_OK);
    assert_true(f->report.cancelled);
    assert_int_equal(f->report.created, 1);
    assert_int_equal(committed_count(f, "creating"), 0);
    assert_int_equal(committed_count(f, "new"), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_commit_per_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paced_claims_are_their_own, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_unclaims_the_next_row, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

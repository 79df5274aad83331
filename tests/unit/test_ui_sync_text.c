#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rampart/ui_sync_text.h"

/* What the console says about a sync: causes from their type, waits with their
 * countdowns, paces, ages, the cache's last-sync time, the auto-pull's budget. */

static sync_failure failure(sync_failure_kind kind, int status, const char *msg,
                            const char *op)
{
    sync_failure f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.http_status = status;
    f.retry_after_s = -1;
    snprintf(f.server_msg, sizeof f.server_msg, "%s", msg);
    snprintf(f.operation_id, sizeof f.operation_id, "%s", op);
    return f;
}

static void test_failure_causes(void **state)
{
    (void)state;
    char b[256];
    static const struct {
        sync_failure_kind kind;
        int status;
        const char *text;
    } cases[] = {
        {SYNC_FAILURE_UNREACHABLE, 0, "unreachable"},
        {SYNC_FAILURE_TIMED_OUT, 0, "timed out"},
        {SYNC_FAILURE_CONNECTION_LOST, 0, "connection lost"},
        {SYNC_FAILURE_RATE_LIMITED, 429, "rate limited (429)"},
        {SYNC_FAILURE_AUTH, 401, "API key refused"},
        {SYNC_FAILURE_AUTH, 403, "API key refused"},
        {SYNC_FAILURE_NOT_FOUND, 404, "not found (404)"},
        {SYNC_FAILURE_SERVER_ERROR, 503, "server error 503"},
        {SYNC_FAILURE_SERVER_ERROR, 0, "server error"},
        {SYNC_FAILURE_REJECTED, 422, "refused 422"},
        {SYNC_FAILURE_REJECTED, 0, "refused"},
        {SYNC_FAILURE_BAD_REPLY, 200, "unusable reply"},
        {SYNC_FAILURE_DATABASE, 0, "local database error"},
        {SYNC_FAILURE_BUSY, 0, "another sync is running"},
        {SYNC_FAILURE_LOCAL, 0, "local error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* The message never decides the cause: a 500 that says "rate limit" is a 500. */
        sync_failure f = failure(cases[i].kind, cases[i].status, "rate limit", "");
        assert_string_equal(ui_failure_text(&f, false, b, sizeof b), cases[i].text);
    }
    assert_string_equal(ui_failure_text(NULL, true, b, sizeof b), "");
    sync_failure none = failure(SYNC_FAILURE_NONE, 0, "x", "op_1");
    assert_string_equal(ui_failure_text(&none, true, b, sizeof b), "");
}

static void test_failure_detail(void **state)
{
    (void)state;
    char b[256];
    sync_failure f = failure(SYNC_FAILURE_SERVER_ERROR, 503, "upstream down", "op_123");
    assert_string_equal(ui_failure_text(&f, true, b, sizeof b),
                        "server error 503: upstream down (op_123)");
    f = failure(SYNC_FAILURE_SERVER_ERROR, 500, "", "op_9");
    assert_string_equal(ui_failure_text(&f, true, b, sizeof b), "server error 500 (op_9)");
    f = failure(SYNC_FAILURE_REJECTED, 400, "bad\ncidr\x1b[31m", "");
    assert_string_equal(ui_failure_text(&f, true, b, sizeof b), "refused 400: bad?cidr?[31m");
    /* Cut, terminated. */
    char small[8];
    assert_string_equal(ui_failure_text(&f, true, small, sizeof small), "refused");
}

static void test_wait_texts(void **state)
{
    (void)state;
    char b[256];
    sync_failure r = failure(SYNC_FAILURE_RATE_LIMITED, 429, "slow down", "op_r");
    assert_string_equal(ui_wait_text(SYNC_WAIT_RATE_LIMITED, &r, 11.2, 0, false, b, sizeof b),
                        "rate limited (429), retry in 12s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_RATE_LIMITED, NULL, 3, 0, true, b, sizeof b),
                        "rate limited (429), retry in 3s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_RATE_LIMITED, &r, 1, 0, true, b, sizeof b),
                        "rate limited (429), retry in 1s");
    sync_failure s = failure(SYNC_FAILURE_SERVER_ERROR, 503, "busy", "op_s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BACKOFF, &s, 4, 0, true, b, sizeof b),
                        "server error 503: busy (op_s), retry in 4s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BACKOFF, &s, 4, 0, false, b, sizeof b),
                        "server error 503, retry in 4s");
    sync_failure u = failure(SYNC_FAILURE_UNREACHABLE, 0, "", "");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BACKOFF, &u, 30, 0, true, b, sizeof b),
                        "unreachable, retry in 30s");
    sync_failure t = failure(SYNC_FAILURE_TIMED_OUT, 0, "", "");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BACKOFF, &t, 0.4, 0, false, b, sizeof b),
                        "timed out, retry in 1s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BACKOFF, NULL, -2, 0, false, b, sizeof b),
                        "backing off, retry in 0s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BUDGET, NULL, 0.5, 9.6, true, b, sizeof b),
                        "paced: 9.6 req/s");
    assert_string_equal(ui_wait_text(SYNC_WAIT_BUDGET, NULL, 0.5, 0, true, b, sizeof b),
                        "paced");
    assert_string_equal(ui_wait_text(SYNC_WAIT_NONE, NULL, 12, 0, true, b, sizeof b),
                        "paused 12s");
}

static void test_pace(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(ui_pace_text(1.6, b, sizeof b), "paced: 1.6 req/s");
    assert_string_equal(ui_pace_text(0.05, b, sizeof b), "paced: 0.05 req/s");
    assert_string_equal(ui_pace_text(0, b, sizeof b), "");
}

static void test_auto_pull_budget(void **state)
{
    (void)state;
    sync_budget b = {.requests = 120, .window_s = 60, .share = 0.8, .give_up_windows = 2};
    sync_budget a = ui_auto_pull_budget(&b);
    assert_true(a.share <= 0.1 && a.share > 0);
    assert_int_equal(a.requests, 120);
    assert_true(a.window_s == 60 && a.give_up_windows == 2);
    b.share = 0; /* the engine's default, 0.8 */
    assert_true(ui_auto_pull_budget(&b).share == UI_AUTO_PULL_SHARE);
    b.share = 0.05;
    assert_true(ui_auto_pull_budget(&b).share == 0.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_causes),     cmocka_unit_test(test_failure_detail),
        cmocka_unit_test(test_wait_texts),         cmocka_unit_test(test_pace),
        cmocka_unit_test(test_auto_pull_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rampart/sync.h"

/* The one summary of a run the command line and the console both print. */

static void test_counts(void **state)
{
    (void)state;
    char b[512];
    sync_report r;
    memset(&r, 0, sizeof r);
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "0 created, 0 deleted, 0 failed");
    /* Edits pushed are said: the console once left them out. */
    r.updated = 2;
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "0 created, 0 deleted, 0 failed; 2 updated");
    memset(&r, 0, sizeof r);
    r.created = 3;
    r.deleted = 1;
    r.pulled_rules = 4;
    r.pulled_creds = 1;
    r.remote_added = 2;
    r.refused = 1;
    r.adopted = 1;
    r.orphans_deleted = 1;
    r.pending = 2;
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "3 created, 1 deleted, 0 failed; remote has 4 rules, 1 credentials; "
                        "2 new there, 0 deleted there; 1 remote objects refused (see the "
                        "warnings); 1 unsure creates found remotely; 1 credentials without "
                        "their token deleted and queued again; 2 pending");
}

/* A conflict is not a failure: each cause is named by its own word. */
static void test_causes(void **state)
{
    (void)state;
    char b[512];
    sync_report r;
    memset(&r, 0, sizeof r);
    r.conflicts = 2;
    r.attention = 2;
    r.conflicted = 2;
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "0 created, 0 deleted, 0 failed; 2 new conflicts; 2 conflicts to "
                        "resolve");
    memset(&r, 0, sizeof r);
    r.failed = 1;
    r.attention = 2;
    r.conflicted = 1;
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "0 created, 0 deleted, 1 failed; 1 conflict to resolve; 1 failed "
                        "row to fix");
    memset(&r, 0, sizeof r);
    r.attention = 3;
    assert_string_equal(sync_report_summary(&r, b, sizeof b),
                        "0 created, 0 deleted, 0 failed; 3 failed rows to fix");
}

static void test_bounds(void **state)
{
    (void)state;
    char b[12];
    sync_report r;
    memset(&r, 0, sizeof r);
    r.updated = 5;
    assert_string_equal(sync_report_summary(&r, b, sizeof b), "0 created, ");
    assert_string_equal(sync_report_summary(NULL, b, sizeof b), "");
    char one[1] = {'x'};
    assert_string_equal(sync_report_summary(&r, one, sizeof one), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_causes),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

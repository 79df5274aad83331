/* duration: the one formatter of durations, ages and countdowns, and the
 * parser of the times an age counts from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rampart/duration.h"

static void test_text(void **state)
{
    (void)state;
    char b[DURATION_TEXT_MAX];
    assert_string_equal(duration_text(42, b, sizeof b), "42s");
    assert_string_equal(duration_text(0.3, b, sizeof b), "1s"); /* rounded up */
    assert_string_equal(duration_text(59.5, b, sizeof b), "1m00s"); /* never "60s" */
    assert_string_equal(duration_text(185, b, sizeof b), "3m05s");
    assert_string_equal(duration_text(7800, b, sizeof b), "2h10m");
    assert_string_equal(duration_text(-4, b, sizeof b), "0s");
    assert_string_equal(duration_text(1e30, b, sizeof b), "277777h46m"); /* capped */
    char small[3];
    assert_string_equal(duration_text(185, small, sizeof small), "3m"); /* cut */
}

static void test_age_and_countdown(void **state)
{
    (void)state;
    char b[DURATION_TEXT_MAX];
    assert_string_equal(duration_age(12.9, b, sizeof b), "12s"); /* rounded down */
    assert_string_equal(duration_age(-3, b, sizeof b), "0s");
    assert_string_equal(duration_age(125, b, sizeof b), "2m");
    assert_string_equal(duration_age(7200, b, sizeof b), "2h");
    assert_string_equal(duration_age(3 * 86400 + 5, b, sizeof b), "3d");
    assert_string_equal(duration_countdown(11.01, b, sizeof b), "12s"); /* rounded up */
    assert_string_equal(duration_countdown(12, b, sizeof b), "12s");
    assert_string_equal(duration_countdown(-1, b, sizeof b), "0s");
}

static void test_parse_time(void **state)
{
    (void)state;
    double t = -1;
    assert_true(duration_parse_time("1970-01-01T00:00:00Z", &t));
    assert_true(t == 0);
    assert_true(duration_parse_time("2026-11-25T11:57:51Z", &t));
    assert_true(t == 1795607871.0);
    assert_true(duration_parse_time("2000-02-29T12:00:00.5Z", &t));
    assert_true(t == 951825600.5);
    t = 7;
    assert_false(duration_parse_time("", &t));
    assert_false(duration_parse_time("2026-11-25 11:57:51", &t));
    assert_false(duration_parse_time("2026-11-25T11:57:51+02:00", &t));
    assert_false(duration_parse_time("2026-13-25T11:57:51Z", &t));
    assert_false(duration_parse_time(NULL, &t));
    assert_true(t == 7);
}

/* What a person types: one unit or several, a bare number of seconds; never a
 * sign, a fraction, a space, an unknown unit or more than DURATION_MAX. */
static void test_parse(void **state)
{
    (void)state;
    const struct {
        const char *text;
        long long s;
    } good[] = {{"90", 90}, {"24h", 86400}, {"2w", 1209600}, {"1h30m", 5400},
                {"0s", 0}, {"0", 0}, {"90d", 7776000}, {"1w", 604800},
                {"3650d", 3650LL * 86400}};
    long long s = -1;
    error_info e;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(duration_parse(good[i].text, "--grace", &s, &e), ERROR_OK);
        assert_int_equal(s, good[i].s);
    }
    const char *bad[] = {"", "h", "-1h", "1.5h", "1hh", "1y", " 1h", "9999999999s", "3651d",
                         "1h30", "99999999999999999999s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(duration_parse(bad[i], "--since", &s, &e), ERROR_INVALID);
        assert_non_null(strstr(e.msg, "--since: "));
    }
    assert_int_equal(duration_parse(NULL, "x", &s, NULL), ERROR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_age_and_countdown),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests_name("duration", tests, NULL, NULL);
}

/* words: a command line split as rampart runs commands without a shell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rampart/words.h"

static void expect_words(const char *text, const char *const *want, size_t n)
{
    words w;
    error_info e = {0};
    assert_int_equal(words_split(text, &w, &e), ERROR_OK);
    assert_int_equal(w.argc, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(w.argv[i], want[i]);
    assert_null(w.argv[n]);
    words_free(&w);
    assert_null(w.argv);
}

static void test_split(void **state)
{
    (void)state;
    const char *const a[] = {"pass", "show", "api/staging"};
    expect_words("pass show api/staging", a, 3);
    expect_words("  pass\tshow \n api/staging  ", a, 3);
    const char *const b[] = {"sh", "-c", "pass show x | head -n 1"};
    expect_words("sh -c 'pass show x | head -n 1'", b, 3);
    const char *const c[] = {"a b", "c\"d", "e'f", "g h"};
    expect_words("\"a b\" c\\\"d \"e'f\" g\\ h", c, 4);
    const char *const d[] = {"$HOME", "*"};
    expect_words("$HOME *", d, 2); /* no shell: taken as written */
    const char *const e[] = {"x", ""};
    expect_words("x ''", e, 2);
}

static void test_refusals(void **state)
{
    (void)state;
    words w;
    error_info e = {0};
    assert_int_equal(words_split("pass 'show", &w, &e), ERROR_INVALID);
    assert_string_equal(e.msg, "a quote is not closed");
    assert_null(w.argv);
    assert_int_equal(words_split("   ", &w, &e), ERROR_INVALID);
    assert_string_equal(e.msg, "no command given");
    words_free(&w); /* a zeroed one is a no-op */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("words", tests, NULL, NULL);
}

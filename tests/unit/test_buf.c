/* buf: growth, termination, JSON strings, sticky failure, hand-over, wiping,
 * and the growth of arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"

static void test_empty(void **state)
{
    (void)state;
    buf_t b = {0};
    assert_null(b.data);
    char *s = buf_take(&b);
    assert_non_null(s); /* an empty text is "", not NULL: NULL means failure */
    assert_string_equal(s, "");
    free(s);
    buf_free(&b);
    buf_free(NULL);
}

static void test_append_grows_and_terminates(void **state)
{
    (void)state;
    buf_t b = {0};
    assert_true(buf_puts(&b, "ab"));
    assert_int_equal(b.len, 2);
    assert_string_equal(b.data, "ab");
    /* Past BUF_MIN many times over: every byte kept, always terminated. */
    for (int i = 0; i < 10000; i++)
        assert_true(buf_append(&b, "xyz", 3));
    assert_int_equal(b.len, 2 + 30000);
    assert_true(b.cap > b.len);
    assert_int_equal(b.data[b.len], '\0');
    assert_memory_equal(b.data + b.len - 3, "xyz", 3);
    /* NUL bytes are data like any other. */
    assert_true(buf_append(&b, "a\0b", 3));
    assert_int_equal(b.len, 30005);
    assert_memory_equal(b.data + 30002, "a\0b", 3);
    buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
}

static void test_reserve_and_commit(void **state)
{
    (void)state;
    buf_t b = {0};
    buf_puts(&b, "head:");
    assert_true(buf_reserve(&b, 100));
    assert_true(b.cap - b.len - 1 >= 100);
    memcpy(b.data + b.len, "filled", 6);
    buf_commit(&b, 6);
    assert_string_equal(b.data, "head:filled");
    assert_int_equal(b.len, 11);
    buf_free(&b);
}

static void test_reset_keeps_memory(void **state)
{
    (void)state;
    buf_t b = {.wipe = true};
    buf_puts(&b, "secret-token");
    char *block = b.data;
    size_t cap = b.cap;
    buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    assert_ptr_equal(b.data, block);
    assert_int_equal(b.cap, cap);
    /* Wiped, not only emptied. */
    for (size_t i = 0; i < strlen("secret-token"); i++)
        assert_int_equal(block[i], '\0');
    buf_puts(&b, "next");
    assert_string_equal(b.data, "next");
    assert_true(b.wipe);
    buf_free(&b);
    assert_true(b.wipe); /* the setting outlives the memory */
}

static void test_wiping_growth(void **state)
{
    (void)state;
    buf_t b = {.wipe = true};
    char chunk[200];
    memset(chunk, 'k', sizeof chunk);
    for (int i = 0; i < 50; i++)
        assert_true(buf_append(&b, chunk, sizeof chunk));
    assert_int_equal(b.len, 50 * sizeof chunk);
    for (size_t i = 0; i < b.len; i++)
        assert_int_equal(b.data[i], 'k');
    char *s = buf_take(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 50 * sizeof chunk);
    assert_null(b.data);
    assert_true(b.wipe);
    free(s);
}

static void test_json_string(void **state)
{
    (void)state;
    buf_t b = {0};
    buf_json_string(&b, "plain");
    assert_string_equal(b.data, "\"plain\"");
    buf_reset(&b);
    buf_json_string(&b, "q\"b\\s/");
    assert_string_equal(b.data, "\"q\\\"b\\\\s/\"");
    buf_reset(&b);
    buf_json_string(&b, "t\tn\nesc\x1b" "del\x7f" "\x01");
    assert_string_equal(b.data, "\"t\\u0009n\\u000aesc\\u001bdel\\u007f\\u0001\"");
    buf_reset(&b);
    buf_json_string(&b, "caf\xc3\xa9"); /* UTF-8 as it is */
    assert_string_equal(b.data, "\"caf\xc3\xa9\"");
    buf_reset(&b);
    buf_json_string(&b, NULL);
    assert_string_equal(b.data, "\"\"");
    buf_free(&b);
}

static void test_failure_is_sticky(void **state)
{
    (void)state;
    buf_t b = {0};
    buf_puts(&b, "kept");
    /* A size that cannot be: fails without touching what is there. */
    assert_false(buf_reserve(&b, SIZE_MAX));
    assert_true(b.failed);
    assert_string_equal(b.data, "kept");
    assert_false(buf_puts(&b, "more"));
    assert_false(buf_json_string(&b, "x"));
    assert_int_equal(b.len, 4);
    assert_null(buf_take(&b)); /* freed, and ready again */
    assert_false(b.failed);
    assert_null(b.data);
    assert_true(buf_puts(&b, "again"));
    assert_string_equal(b.data, "again");
    /* buf_reset starts a new text, failure included. */
    buf_reserve(&b, SIZE_MAX);
    buf_reset(&b);
    assert_false(b.failed);
    assert_true(buf_puts(&b, "fresh"));
    assert_string_equal(b.data, "fresh");
    buf_free(&b);
}

static void test_grow_array(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_true(buf_grow_array((void **)&a, &cap, 0, sizeof *a)); /* nothing needed */
    assert_null(a);
    assert_true(buf_grow_array((void **)&a, &cap, 1, sizeof *a));
    assert_int_equal(cap, BUF_ARRAY_MIN);
    /* Doubling: every element written so far is kept. */
    for (size_t n = 0; n < 1000; n++) {
        assert_true(buf_grow_array((void **)&a, &cap, n + 1, sizeof *a));
        assert_true(cap >= n + 1);
        a[n] = (int)n;
    }
    assert_int_equal(cap, 1024);
    for (size_t n = 0; n < 1000; n++)
        assert_int_equal(a[n], (int)n);
    /* A size that would overflow fails and keeps the array as it was. */
    int *before = a;
    assert_false(buf_grow_array((void **)&a, &cap, SIZE_MAX / 2, sizeof *a));
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 1024);
    assert_int_equal(a[999], 999);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_append_grows_and_terminates),
        cmocka_unit_test(test_reserve_and_commit),
        cmocka_unit_test(test_reset_keeps_memory),
        cmocka_unit_test(test_wiping_growth),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_failure_is_sticky),
        cmocka_unit_test(test_grow_array),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}

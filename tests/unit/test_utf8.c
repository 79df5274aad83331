/* utf8: the one decoder, strict (RFC 3629), with reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rampart/utf8.h"

/* Decode all of `s` (its strlen) as one sequence. */
static int decode(const char *s, uint32_t *cp)
{
    return utf8_decode(s, strlen(s), cp);
}

static void test_valid(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int len;
        uint32_t cp;
    } cases[] = {
        {"a", 1, 'a'},
        {"\x7f", 1, 0x7f},
        {"\xc2\x80", 2, 0x80},            /* smallest two-byte */
        {"\xc3\xa9", 2, 0xe9},            /* é */
        {"\xdf\xbf", 2, 0x7ff},
        {"\xe0\xa0\x80", 3, 0x800},       /* smallest three-byte */
        {"\xe2\x82\xac", 3, 0x20ac},      /* € */
        {"\xed\x9f\xbf", 3, 0xd7ff},      /* just below the surrogates */
        {"\xee\x80\x80", 3, 0xe000},      /* just above them */
        {"\xef\xbf\xbf", 3, 0xffff},
        {"\xf0\x90\x80\x80", 4, 0x10000}, /* smallest four-byte */
        {"\xf0\x9f\x98\x80", 4, 0x1f600}, /* an emoji */
        {"\xf4\x8f\xbf\xbf", 4, 0x10ffff}, /* the last code point */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0;
        int n = decode(cases[i].text, &cp);
        if (n != cases[i].len || cp != cases[i].cp)
            fail_msg("case %zu: got %d U+%04X", i, n, (unsigned)cp);
    }
    /* NUL is a character when the caller hands it over. */
    uint32_t cp = 1;
    assert_int_equal(utf8_decode("", 1, &cp), 1);
    assert_int_equal(cp, 0);
    /* Only the first sequence is read. */
    assert_int_equal(utf8_decode("\xc3\xa9xyz", 5, &cp), 2);
    assert_int_equal(cp, 0xe9);
}

static void test_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t len;
        int error;
    } cases[] = {
        {"", 0, UTF8_ERR_TRUNCATED},
        {"\xc3\xa9", 1, UTF8_ERR_TRUNCATED},           /* cut by len */
        {"\xe2\x82", 2, UTF8_ERR_TRUNCATED},
        {"\xf0\x9f\x98", 3, UTF8_ERR_TRUNCATED},
        {"\xc3" "A", 2, UTF8_ERR_TRUNCATED},           /* not a continuation byte */
        {"\xe2\x82" "A", 3, UTF8_ERR_TRUNCATED},
        {"\x80", 1, UTF8_ERR_CONTINUATION},
        {"\xbf\x80", 2, UTF8_ERR_CONTINUATION},
        {"\xc0\x80", 2, UTF8_ERR_OVERLONG},            /* NUL in two bytes */
        {"\xc1\xbf", 2, UTF8_ERR_OVERLONG},
        {"\xe0\x80\x80", 3, UTF8_ERR_OVERLONG},
        {"\xe0\x9f\xbf", 3, UTF8_ERR_OVERLONG},        /* U+07FF in three */
        {"\xf0\x80\x80\x80", 4, UTF8_ERR_OVERLONG},
        {"\xf0\x8f\xbf\xbf", 4, UTF8_ERR_OVERLONG},    /* U+FFFF in four */
        {"\xed\xa0\x80", 3, UTF8_ERR_SURROGATE},       /* U+D800 */
        {"\xed\xbf\xbf", 3, UTF8_ERR_SURROGATE},       /* U+DFFF */
        {"\xf4\x90\x80\x80", 4, UTF8_ERR_TOO_BIG},     /* U+110000 */
        {"\xf5\x80\x80\x80", 4, UTF8_ERR_TOO_BIG},
        {"\xf7\xbf\xbf\xbf", 4, UTF8_ERR_TOO_BIG},
        {"\xf8\x88\x80\x80\x80", 5, UTF8_ERR_BYTE},
        {"\xfe", 1, UTF8_ERR_BYTE},
        {"\xff", 1, UTF8_ERR_BYTE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0xabcd;
        int n = utf8_decode(cases[i].text, cases[i].len, &cp);
        if (n != cases[i].error)
            fail_msg("case %zu: got %d, want %d", i, n, cases[i].error);
        assert_int_equal(cp, 0xabcd); /* left alone */
    }
}

/* Never a byte past len, even when the lead byte promises more. */
static void test_never_reads_past_len(void **state)
{
    (void)state;
    char four[4] = {'\xf0', '\x9f', '\x98', '\x80'};
    uint32_t cp;
    for (size_t len = 1; len < 4; len++)
        assert_int_equal(utf8_decode(four, len, &cp), UTF8_ERR_TRUNCATED);
    assert_int_equal(utf8_decode(four, 4, &cp), 4);
}

static void test_error_text(void **state)
{
    (void)state;
    assert_string_equal(utf8_error_text(UTF8_ERR_TRUNCATED), "truncated sequence");
    assert_string_equal(utf8_error_text(UTF8_ERR_CONTINUATION),
                        "continuation byte without a lead byte");
    assert_string_equal(utf8_error_text(UTF8_ERR_OVERLONG), "overlong encoding");
    assert_string_equal(utf8_error_text(UTF8_ERR_SURROGATE), "surrogate (U+D800..U+DFFF)");
    assert_string_equal(utf8_error_text(UTF8_ERR_TOO_BIG), "code point above U+10FFFF");
    assert_string_equal(utf8_error_text(UTF8_ERR_BYTE), "byte that never occurs in UTF-8");
    assert_string_equal(utf8_error_text(2), "");
}

static void test_find_invalid(void **state)
{
    (void)state;
    utf8_error why = 0;
    const char *ok = "plain caf\xc3\xa9 \xf0\x9f\x98\x80";
    assert_int_equal(utf8_find_invalid(ok, strlen(ok), &why), strlen(ok));
    assert_int_equal(utf8_find_invalid("", 0, NULL), 0);
    const char *bad = "ab\xc3\xa9" "c\xed\xa0\x80" "d";
    assert_int_equal(utf8_find_invalid(bad, strlen(bad), &why), 5);
    assert_int_equal(why, UTF8_ERR_SURROGATE);
    /* Cut inside the last character: the offset of its lead byte. */
    assert_int_equal(utf8_find_invalid("ab\xc3\xa9", 3, &why), 2);
    assert_int_equal(why, UTF8_ERR_TRUNCATED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_never_reads_past_len),
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_find_invalid),
    };
    return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}

/* termsafe: every class of character that must not reach a terminal as is is
 * shown escaped, ordinary text is kept, widths count columns as shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/termsafe.h"

/* `text` as shown, in a heap string. */
static char *shown(const char *text, size_t len)
{
    buf_t b = {0};
    assert_true(termsafe_append(&b, text, len));
    char *s = buf_take(&b);
    assert_non_null(s);
    return s;
}

typedef struct escape_case {
    const char *what, *in, *out;
    size_t width; /* columns of out */
} escape_case;

static const escape_case cases[] = {
    /* C0, with the three that have a name */
    {"newline", "a\nb", "a\\nb", 4},
    {"tab", "a\tb", "a\\tb", 4},
    {"carriage return", "a\rb", "a\\rb", 4},
    {"ESC of a CSI", "\x1b[2J", "\\x1b[2J", 7},
    {"OSC title with BEL", "\x1b]0;t\x07", "\\x1b]0;t\\x07", 12},
    {"SOH", "\x01", "\\x01", 4},
    {"unit separator", "\x1f", "\\x1f", 4},
    {"DEL", "x\x7f", "x\\x7f", 5},
    /* C1 as characters (valid UTF-8) */
    {"C1 NEL", "\xc2\x85", "\\u0085", 6},
    {"C1 CSI", "\xc2\x9b" "31m", "\\u009b31m", 9},
    {"C1 first", "\xc2\x80", "\\u0080", 6},
    {"C1 last", "\xc2\x9f", "\\u009f", 6},
    /* bytes that are not UTF-8 */
    {"stray 0x9b (8-bit CSI)", "\x9b" "31m", "\\x9b31m", 7},
    {"0xff", "a\xff", "a\\xff", 5},
    {"overlong NUL", "\xc0\x80", "\\xc0\\x80", 8},
    {"truncated sequence", "\xe2\x80", "\\xe2\\x80", 8},
    {"truncated before ASCII", "\xe2\x80x", "\\xe2\\x80x", 9},
    {"surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80", 12},
    {"above U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", 16},
    /* bidi controls and separators */
    {"RLO U+202E", "abc\xe2\x80\xae" "def", "abc\\u202edef", 12},
    {"LRE U+202A", "\xe2\x80\xaa", "\\u202a", 6},
    {"PDF U+202C", "\xe2\x80\xac", "\\u202c", 6},
    {"LRI U+2066", "\xe2\x81\xa6", "\\u2066", 6},
    {"PDI U+2069", "\xe2\x81\xa9", "\\u2069", 6},
    {"LRM U+200E", "\xe2\x80\x8e", "\\u200e", 6},
    {"RLM U+200F", "\xe2\x80\x8f", "\\u200f", 6},
    {"ALM U+061C", "\xd8\x9c", "\\u061c", 6},
    {"line separator U+2028", "\xe2\x80\xa8", "\\u2028", 6},
    {"paragraph separator U+2029", "\xe2\x80\xa9", "\\u2029", 6},
    /* other characters that draw nothing */
    {"zero-width space", "a\xe2\x80\x8b" "b", "a\\u200bb", 8},
    {"BOM", "\xef\xbb\xbf", "\\ufeff", 6},
    {"soft hyphen", "\xc2\xad", "\\u00ad", 6},
    {"combining acute", "e\xcc\x81", "e\\u0301", 7},
    {"tag character", "\xf3\xa0\x81\x81", "\\U000e0041", 10},
    /* kept as they are */
    {"ASCII", "plain text ~!", "plain text ~!", 13},
    {"backslash", "C:\\dir", "C:\\dir", 6},
    {"e acute", "caf\xc3\xa9", "caf\xc3\xa9", 4},
    {"no-break space", "a\xc2\xa0" "b", "a\xc2\xa0" "b", 3},
    {"CJK", "\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", 4},
    {"emoji", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 2},
    {"euro", "\xe2\x82\xac", "\xe2\x82\xac", 1},
    {"empty", "", "", 0},
};

static void test_classes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const escape_case *c = &cases[i];
        char *out = shown(c->in, strlen(c->in));
        if (strcmp(out, c->out) != 0)
            fail_msg("%s: got \"%s\", want \"%s\"", c->what, out, c->out);
        size_t w = termsafe_width(c->in, strlen(c->in));
        if (w != c->width)
            fail_msg("%s: width %zu, want %zu", c->what, w, c->width);
        /* What comes out is its own escaped form. */
        char *again = shown(out, strlen(out));
        if (strcmp(again, out) != 0)
            fail_msg("%s: escaping twice changed it", c->what);
        free(again);
        free(out);
    }
}

static void test_glyphs(void **state)
{
    (void)state;
    termsafe_glyph g;
    assert_int_equal(termsafe_next("\x1b[", 2, &g), 1);
    assert_true(g.escaped);
    assert_string_equal(g.text, "\\x1b");
    assert_int_equal(g.width, 4);
    assert_int_equal(termsafe_next("\xe6\x97\xa5x", 4, &g), 3);
    assert_false(g.escaped);
    assert_int_equal(g.width, 2);
    assert_int_equal(g.len, 3);
    /* A NUL handed over is a character like the others. */
    assert_int_equal(termsafe_next("", 1, &g), 1);
    assert_string_equal(g.text, "\\x00");
    /* A sequence cut by `len` is bytes, one at a time. */
    assert_int_equal(termsafe_next("\xc3\xa9", 1, &g), 1);
    assert_string_equal(g.text, "\\xc3");
    assert_int_equal(termsafe_next("\xf0\x9f\x98\x80", 4, &g), 4);
    assert_string_equal(g.text, "\xf0\x9f\x98\x80");
}

static void test_cp_width(void **state)
{
    (void)state;
    static const struct {
        uint32_t cp;
        int width;
    } widths[] = {
        {'a', 1},     {0x1b, 0},    {0x7f, 0},    {0x85, 0},     {0xa0, 1},
        {0xad, 0},    {0xe9, 1},    {0x301, 0},   {0x61c, 0},    {0x200e, 0},
        {0x2028, 0},  {0x202e, 0},  {0x2066, 0},  {0x2069, 0},   {0x4e00, 2},
        {0xac00, 2},  {0xff01, 2},  {0x1f600, 2}, {0xe0041, 0},  {0x10ffff, 1},
    };
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        if (termsafe_cp_width(widths[i].cp) != widths[i].width)
            fail_msg("U+%04X: width %d, want %d", (unsigned)widths[i].cp,
                     termsafe_cp_width(widths[i].cp), widths[i].width);
    }
}

/* Run `fn` writing to a memory stream; return what it wrote (heap). */
static char *written(void (*fn)(FILE *))
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_non_null(f);
    fn(f);
    fclose(f);
    return data;
}

static void write_line(FILE *f)
{
    assert_true(termsafe_fprintf(f, "rampart: unknown option '%s'\n", "--x\x1b[2J\n"));
}

static void write_long(FILE *f)
{
    char arg[2000];
    memset(arg, 'a', sizeof arg - 2);
    arg[sizeof arg - 2] = '\x07';
    arg[sizeof arg - 1] = '\0';
    assert_true(termsafe_fprintf(f, "%s|", arg));
}

static void write_puts(FILE *f)
{
    assert_true(termsafe_fputs("ok\xe2\x80\xae\n", f));
}

static void test_writers(void **state)
{
    (void)state;
    /* The value's newline is escaped; the format's final one ends the line. */
    char *s = written(write_line);
    assert_string_equal(s, "rampart: unknown option '--x\\x1b[2J\\n'\n");
    free(s);
    /* Longer than the writer's own stack buffer. */
    s = written(write_long);
    assert_int_equal(strlen(s), 1998 + 4 + 1);
    assert_string_equal(s + 1998, "\\x07|");
    free(s);
    s = written(write_puts);
    assert_string_equal(s, "ok\\u202e\\n");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_glyphs),
        cmocka_unit_test(test_cp_width),
        cmocka_unit_test(test_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* ui_canvas: cells, widths, clipping, ellipsis, escaped control characters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rampart/ui_canvas.h"

static const ui_style plain = {0, UI_COLOR_DEFAULT};

static void canvas(ui_canvas *c, int w, int h, bool ascii)
{
    error_info err;
    assert_int_equal(ui_canvas_init(c, w, h, ascii, &err), ERROR_OK);
}

static const char *row(const ui_canvas *c, int y)
{
    static char buf[1024];
    ui_canvas_row_text(c, y, buf, sizeof buf);
    return buf;
}

static void clear_flags(ui_canvas *c)
{
    for (int y = 0; y < c->height; y++)
        c->row_changed[y] = false;
}

static void test_plain_text_and_trim(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 20, 3, false);
    assert_int_equal(ui_canvas_text(&c, 1, 2, -1, "hello", plain, false), 5);
    assert_string_equal(row(&c, 0), "");
    assert_string_equal(row(&c, 1), "  hello");
    ui_canvas_free(&c);
}

static void test_utf8_and_wide(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 10, 1, false);
    /* "é" is one column, "日本" two each. */
    assert_int_equal(ui_canvas_text(&c, 0, 0, -1, "\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac", plain,
                                    false), 5);
    assert_string_equal(row(&c, 0), "\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac");
    assert_string_equal(c.cells[2].text, ""); /* continuation of 日 */
    assert_int_equal(ui_canvas_width(&c, "\xe6\x97\xa5x", 100), 3);
    ui_canvas_free(&c);
}

static void test_wide_at_right_edge(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 4, 1, false);
    ui_canvas_text(&c, 0, 0, -1, "abc\xe6\x97\xa5", plain, false);
    /* 日 needs two columns, one is left: a space. */
    assert_string_equal(c.cells[3].text, " ");
    assert_string_equal(row(&c, 0), "abc");
    ui_canvas_free(&c);
}

static void test_overwriting_half_a_wide_char(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 6, 1, false);
    ui_canvas_text(&c, 0, 0, -1, "\xe6\x97\xa5\xe6\x97\xa5", plain, false);
    ui_canvas_text(&c, 0, 1, 1, "x", plain, false); /* the right half of the first */
    assert_string_equal(row(&c, 0), " x\xe6\x97\xa5");
    ui_canvas_free(&c);
}

static void test_control_chars_escaped(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 60, 2, false);
    /* ESC, BEL, C1 CSI (U+009B), DEL, a bidi override (U+202E), invalid UTF-8:
     * each shown as its escape (termsafe), a character a cell. */
    const char *text = "a\x1b[2Jb\x07" "c\xc2\x9b" "d\x7f" "e\xe2\x80\xae" "f\xff" "g";
    const char *shown = "a\\x1b[2Jb\\x07c\\u009bd\\x7fe\\u202ef\\xffg";
    assert_int_equal(ui_canvas_text(&c, 0, 0, -1, text, plain, false), (int)strlen(shown));
    assert_string_equal(row(&c, 0), shown);
    assert_int_equal(ui_canvas_width(&c, text, 100), (int)strlen(shown));
    /* An escape is cut like text: what fits of it, then the ellipsis. */
    ui_canvas_text(&c, 1, 0, 6, "ab\xe2\x80\xae" "cd", plain, true);
    assert_string_equal(row(&c, 1), "ab\\u2\xe2\x80\xa6");
    size_t len = 0;
    assert_int_equal(ui_canvas_char_width(&c, "\x1bx", &len), 4);
    assert_int_equal(len, 1);
    assert_int_equal(ui_canvas_char_width(&c, "\xe6\x97\xa5", &len), 2);
    assert_int_equal(len, 3);
    assert_int_equal(ui_canvas_char_width(&c, "\xff", &len), 4);
    assert_int_equal(len, 1);
    ui_canvas_free(&c);
}

static void test_wrap(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 40, 1, false);
    /* Fits: all of it. */
    assert_int_equal(ui_canvas_wrap(&c, "short", 10), 5);
    /* At the last space that keeps half the line. */
    assert_int_equal(ui_canvas_wrap(&c, "hello big world", 10), 10); /* "hello big " */
    /* A space too early (under half): cut by characters instead. */
    assert_int_equal(ui_canvas_wrap(&c, "a bcdefghijklmnop", 10), 10);
    /* Wide characters and escapes count their columns: 3 wide = 6, then the
     * escape (4) no longer fits 9. */
    assert_int_equal(ui_canvas_wrap(&c, "\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5\x1bz", 9), 9);
    /* At least one character, even wider than the line. */
    assert_int_equal(ui_canvas_wrap(&c, "\x1b", 2), 1);
    assert_int_equal(ui_canvas_wrap(&c, "", 5), 0);
    ui_canvas_free(&c);
}

static void test_ascii_mode(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 10, 3, true);
    ui_canvas_text(&c, 0, 0, -1, "caf\xc3\xa9 \xe6\x97\xa5", plain, false);
    assert_string_equal(row(&c, 0), "caf? ?");
    ui_canvas_box(&c, (ui_rect){0, 1, 4, 2}, plain);
    assert_string_equal(row(&c, 1), "+--+");
    ui_canvas_free(&c);
}

static void test_clipping(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 5, 2, false);
    ui_canvas_text(&c, 0, 3, -1, "abcdef", plain, false);
    ui_canvas_text(&c, 5, 0, -1, "out", plain, false);   /* below: ignored */
    ui_canvas_text(&c, -1, 0, -1, "out", plain, false);  /* above */
    ui_canvas_text(&c, 1, -2, -1, "xyzw", plain, false); /* starts left of the edge */
    ui_canvas_clear(&c, 1, 4, 10, plain);
    assert_string_equal(row(&c, 0), "   ab");
    assert_string_equal(row(&c, 1), "zw");
    ui_canvas_free(&c);
}

static void test_ellipsis(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 20, 2, false);
    assert_int_equal(ui_canvas_text(&c, 0, 0, 5, "abcdefgh", plain, true), 5);
    assert_string_equal(row(&c, 0), "abcd\xe2\x80\xa6");
    assert_int_equal(ui_canvas_text(&c, 1, 0, 5, "abcde", plain, true), 5); /* fits */
    assert_string_equal(row(&c, 1), "abcde");
    ui_canvas_free(&c);
    canvas(&c, 20, 1, true);
    ui_canvas_text(&c, 0, 0, 4, "abcdefgh", plain, true);
    assert_string_equal(row(&c, 0), "abc~");
    ui_canvas_free(&c);
}

static void test_change_flags(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 10, 3, false);
    for (int y = 0; y < 3; y++)
        assert_true(c.row_changed[y]);
    ui_canvas_text(&c, 1, 0, -1, "same", plain, false);
    clear_flags(&c);
    ui_canvas_text(&c, 1, 0, -1, "same", plain, false); /* nothing differs */
    assert_false(c.row_changed[1]);
    ui_canvas_text(&c, 1, 0, -1, "same", (ui_style){UI_ATTR_BOLD, UI_COLOR_OK}, false);
    assert_true(c.row_changed[1]);
    assert_false(c.row_changed[0]);
    assert_false(c.row_changed[2]);
    error_info err;
    assert_int_equal(ui_canvas_resize(&c, 12, 2, &err), ERROR_OK);
    assert_true(c.row_changed[0] && c.row_changed[1]);
    assert_string_equal(row(&c, 1), "");
    assert_int_equal(ui_canvas_resize(&c, 0, 2, &err), ERROR_INVALID);
    ui_canvas_free(&c);
}

static void test_printf_box_and_dump(void **state)
{
    (void)state;
    ui_canvas c;
    canvas(&c, 8, 4, false);
    ui_canvas_printf(&c, 0, 0, plain, "%d-%s", 42, "x");
    ui_canvas_box(&c, (ui_rect){0, 1, 3, 3}, plain);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ui_canvas_dump(&c, f);
    fclose(f);
    assert_string_equal(buf, "42-x\n"
                             "\xe2\x94\x8c\xe2\x94\x80\xe2\x94\x90\n"
                             "\xe2\x94\x82 \xe2\x94\x82\n"
                             "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x98\n"
                             "----\n");
    free(buf);
    ui_canvas_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_and_trim),
        cmocka_unit_test(test_utf8_and_wide),
        cmocka_unit_test(test_wide_at_right_edge),
        cmocka_unit_test(test_overwriting_half_a_wide_char),
        cmocka_unit_test(test_control_chars_escaped),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_ascii_mode),
        cmocka_unit_test(test_clipping),
        cmocka_unit_test(test_ellipsis),
        cmocka_unit_test(test_change_flags),
        cmocka_unit_test(test_printf_box_and_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

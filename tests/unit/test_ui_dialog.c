#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/ui_dialog.h"

/* The dialogs' models: confirm answers and drawing, the token box, OSC 52. */

static ui_confirm *question(void)
{
    ui_confirm *d = NULL;
    assert_int_equal(ui_confirm_new("Delete 2 rules?", "Delete", &d, NULL), ERROR_OK);
    assert_int_equal(ui_confirm_add_line(d, "ipr_a  allow 10.0.0.0/8  ipp_x  synced", NULL),
                     ERROR_OK);
    assert_int_equal(ui_confirm_add_line(d, "local_b  deny 10.1.0.0/16  ipp_x  new", NULL),
                     ERROR_OK);
    return d;
}

static void screen_of(void (*draw)(void *, ui_canvas *, ui_rect), void *arg, bool ascii,
                      char *out, size_t size)
{
    ui_canvas c;
    assert_int_equal(ui_canvas_init(&c, 80, 24, ascii, NULL), ERROR_OK);
    draw(arg, &c, (ui_rect){0, 1, 80, 22});
    size_t used = 0;
    out[0] = '\0';
    for (int y = 0; y < 24 && used + 1 < size; y++) {
        char row[1024];
        ui_canvas_row_text(&c, y, row, sizeof row);
        used += (size_t)snprintf(out + used, size - used, "%s\n", row);
    }
    ui_canvas_free(&c);
}

static void draw_confirm(void *d, ui_canvas *c, ui_rect area) { ui_confirm_draw(d, c, area); }

static void test_confirm_defaults_to_no(void **state)
{
    (void)state;
    ui_confirm *d = question();
    assert_false(ui_confirm_yes_selected(d));
    assert_int_equal(ui_confirm_key(d, 'x'), UI_ANSWER_NONE);
    assert_int_equal(ui_confirm_key(d, UI_KEY_ENTER), UI_ANSWER_NO);
    ui_confirm_key(d, UI_KEY_RIGHT);
    assert_true(ui_confirm_yes_selected(d));
    assert_int_equal(ui_confirm_key(d, UI_KEY_ENTER), UI_ANSWER_YES);
    ui_confirm_key(d, UI_KEY_TAB);
    assert_false(ui_confirm_yes_selected(d));
    assert_int_equal(ui_confirm_key(d, 'y'), UI_ANSWER_YES);
    assert_int_equal(ui_confirm_key(d, 'n'), UI_ANSWER_NO);
    assert_int_equal(ui_confirm_key(d, 'q'), UI_ANSWER_NO);
    assert_int_equal(ui_confirm_key(d, UI_KEY_ESC), UI_ANSWER_NO);
    ui_confirm_free(d);
}

static void test_confirm_names_rows(void **state)
{
    (void)state;
    ui_confirm *d = question();
    char screen[8192];
    screen_of(draw_confirm, d, false, screen, sizeof screen);
    assert_non_null(strstr(screen, " Delete 2 rules? "));
    assert_non_null(strstr(screen, "ipr_a  allow 10.0.0.0/8  ipp_x  synced"));
    assert_non_null(strstr(screen, "local_b  deny 10.1.0.0/16"));
    assert_non_null(strstr(screen, ">[ No ]<  [ Delete ]"));
    ui_confirm_key(d, UI_KEY_LEFT);
    screen_of(draw_confirm, d, true, screen, sizeof screen);
    assert_non_null(strstr(screen, "[ No ]  >[ Delete ]<"));
    ui_confirm_free(d);
}

typedef struct token_args {
    const char *token;
    bool copied;
} token_args;

static void draw_token(void *p, ui_canvas *c, ui_rect area)
{
    token_args *a = p;
    ui_token_draw("cr_2VhYfCwqPkX0n4sF5nYfW3eJb1a", "web agent", a->token, a->copied, false, c, area);
}

static void test_token_box(void **state)
{
    (void)state;
    char long_token[201];
    memset(long_token, 'k', 200);
    long_token[200] = '\0';
    token_args a = {"2VhYfCwqPkX0n4sF5nYfW3eJb1a_tokentoken", false};
    char screen[8192];
    screen_of(draw_token, &a, false, screen, sizeof screen);
    assert_non_null(strstr(screen, "New token: cr_2VhYfCwqPkX0n4sF5nYfW3eJb1a"));
    assert_non_null(strstr(screen, "web agent"));
    assert_non_null(strstr(screen, "2VhYfCwqPkX0n4sF5nYfW3eJb1a_tokentoken"));
    assert_non_null(strstr(screen, "Y copy"));
    assert_null(strstr(screen, "OSC 52"));
    a.copied = true;
    a.token = long_token;
    screen_of(draw_token, &a, false, screen, sizeof screen);
    assert_non_null(strstr(screen, "OSC 52"));
    /* A long token wraps: every byte is on screen. */
    size_t ks = 0;
    for (const char *p = screen; *p; p++)
        ks += *p == 'k';
    assert_true(ks >= 200);
}

static void test_mask(void **state)
{
    (void)state;
    assert_string_equal(ui_token_mask(true), "****");
    assert_string_equal(ui_token_mask(false), "\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2");
}

static void test_osc52(void **state)
{
    (void)state;
    size_t n = 0;
    char *s = ui_osc52_encode("tok", false, &n);
    assert_non_null(s);
    assert_int_equal(n, strlen("\033]52;c;dG9r\a"));
    assert_memory_equal(s, "\033]52;c;dG9r\a", n);
    free(s);
    /* Inside tmux: the plain one (tmux's clipboard), then the wrapped one (the
     * outer terminal), every ESC inside the passthrough doubled. */
    s = ui_osc52_encode("to", true, &n);
    const char want[] = "\033]52;c;dG8=\a\033Ptmux;\033\033]52;c;dG8=\a\033\\";
    assert_int_equal(n, sizeof want - 1);
    assert_memory_equal(s, want, n);
    free(s);
    s = ui_osc52_encode("t", false, &n);
    assert_memory_equal(s, "\033]52;c;dA==\a", n);
    free(s);
    s = ui_osc52_encode("", false, &n);
    assert_memory_equal(s, "\033]52;c;\a", n);
    free(s);
}

/* ---- the choice (a conflict's Keep local / Take remote / Cancel) ----------------- */

static ui_choose *resolve_question(void)
{
    ui_choose *d = NULL;
    assert_int_equal(ui_choose_new("Resolve the conflict of rule ipr_a", &d, NULL), ERROR_OK);
    assert_int_equal(ui_choose_add_line(d, "cidr: local 10.2.0.0/16, remote 10.3.0.0/16",
                                        NULL), ERROR_OK);
    assert_int_equal(ui_choose_add_button(d, "Keep local", NULL), ERROR_OK);
    assert_int_equal(ui_choose_add_button(d, "Take remote", NULL), ERROR_OK);
    assert_int_equal(ui_choose_add_button(d, "Cancel", NULL), ERROR_OK);
    return d;
}

static void draw_choose(void *d, ui_canvas *c, ui_rect area) { ui_choose_draw(d, c, area); }

static void test_choose_keys(void **state)
{
    (void)state;
    ui_choose *d = resolve_question();
    assert_int_equal(ui_choose_selected(d), 2); /* the last, harmless one first */
    assert_int_equal(ui_choose_key(d, UI_KEY_ENTER), 2);
    assert_int_equal(ui_choose_key(d, UI_KEY_RIGHT), UI_CHOOSE_NONE);
    assert_int_equal(ui_choose_selected(d), 0); /* round */
    assert_int_equal(ui_choose_key(d, UI_KEY_TAB), UI_CHOOSE_NONE);
    assert_int_equal(ui_choose_key(d, UI_KEY_ENTER), 1);
    assert_int_equal(ui_choose_key(d, UI_KEY_BTAB), UI_CHOOSE_NONE);
    assert_int_equal(ui_choose_key(d, UI_KEY_BTAB), UI_CHOOSE_NONE);
    assert_int_equal(ui_choose_selected(d), 2);
    assert_int_equal(ui_choose_key(d, 'k'), 0);     /* first letters answer */
    assert_int_equal(ui_choose_key(d, 'T'), 1);
    assert_int_equal(ui_choose_key(d, 'z'), UI_CHOOSE_NONE);
    assert_int_equal(ui_choose_key(d, UI_KEY_ESC), UI_CHOOSE_CANCEL);
    assert_int_equal(ui_choose_key(d, 'q'), UI_CHOOSE_CANCEL);
    assert_int_equal(ui_choose_add_button(d, "Four", NULL), ERROR_OK);
    error_info e = {0};
    assert_int_equal(ui_choose_add_button(d, "Five", &e), ERROR_INVALID);
    ui_choose_free(d);
}

static void test_choose_draw(void **state)
{
    (void)state;
    ui_choose *d = resolve_question();
    char screen[8192];
    screen_of(draw_choose, d, false, screen, sizeof screen);
    assert_non_null(strstr(screen, " Resolve the conflict of rule ipr_a "));
    assert_non_null(strstr(screen, "cidr: local 10.2.0.0/16, remote 10.3.0.0/16"));
    assert_non_null(strstr(screen, "[ Keep local ]"));
    assert_non_null(strstr(screen, "[ Take remote ]"));
    assert_non_null(strstr(screen, ">[ Cancel ]<"));
    ui_choose_key(d, UI_KEY_RIGHT);
    screen_of(draw_choose, d, true, screen, sizeof screen);
    assert_non_null(strstr(screen, ">[ Keep local ]<"));
    ui_choose_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confirm_defaults_to_no),
        cmocka_unit_test(test_confirm_names_rows),
        cmocka_unit_test(test_token_box),
        cmocka_unit_test(test_mask),
        cmocka_unit_test(test_osc52),
        cmocka_unit_test(test_choose_keys),
        cmocka_unit_test(test_choose_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

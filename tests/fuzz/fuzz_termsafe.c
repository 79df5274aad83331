/*
 * Fuzz target: termsafe, the one writer of terminal text, and its two users that
 * lay text out in columns: the command line's cells (cli_put_cell) and the
 * console's canvas. Whatever the input, what comes out must be valid UTF-8 with no
 * byte below 0x20, no DEL, no C1 control, no bidi control and no character that
 * draws nothing; it must be its own escaped form; and the widths must agree: the
 * sum of the glyphs', termsafe_width, the columns of what was written, a cell's
 * padding and cut, the canvas's columns.
 *   input: byte 0 the cell's width (% 64), byte 1 its max (% 64), then the text
 *          (all of it for termsafe, NULs included; up to the first NUL for the cell
 *          and the canvas, which take C strings)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/cli.h"
#include "rampart/termsafe.h"
#include "rampart/ui_canvas.h"
#include "rampart/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_bidi(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* `len` bytes of shown text obey the contract; returns the columns they take. */
static size_t check_shown(const char *s, size_t len)
{
    if (utf8_find_invalid(s, len, NULL) != len)
        abort();
    size_t cols = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int n = utf8_decode(s + i, len - i, &cp);
        if (n <= 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || is_bidi(cp))
            abort();
        int w = termsafe_cp_width(cp);
        if (w <= 0)
            abort(); /* nothing invisible is left as it is */
        cols += (size_t)w;
        i += (size_t)n;
    }
    return cols;
}

static void check_writer(const char *text, size_t len)
{
    buf_t b = {0};
    if (!termsafe_append(&b, text, len)) {
        buf_free(&b);
        return; /* out of memory */
    }
    size_t cols = check_shown(b.data ? b.data : "", b.len);
    size_t glyph_cols = 0;
    for (size_t i = 0; i < len;) {
        termsafe_glyph g;
        size_t n = termsafe_next(text + i, len - i, &g);
        if (n == 0 || n > len - i || g.len == 0 || g.len >= TERMSAFE_GLYPH_MAX ||
            strlen(g.text) != g.len || (g.escaped && g.width != (int)g.len))
            abort();
        glyph_cols += (size_t)g.width;
        i += n;
    }
    if (cols != glyph_cols || cols != termsafe_width(text, len))
        abort();
    /* Its own escaped form. */
    buf_t again = {0};
    if (termsafe_append(&again, b.data ? b.data : "", b.len) &&
        (again.len != b.len || (b.len && memcmp(again.data, b.data, b.len) != 0)))
        abort();
    buf_free(&again);
    buf_free(&b);
}

/* cli_put_cell: padded to `width`, cut to `max` with "…" (an escape never halved). */
static void check_cell(const char *text, int width, int max)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return;
    cli_put_cell(f, text, width, max);
    fclose(f);
    size_t cols = check_shown(out, len);
    size_t total = termsafe_width(text, strlen(text));
    size_t trailing = 0;
    while (trailing < len && out[len - 1 - trailing] == ' ')
        trailing++;
    size_t printed = cols - trailing; /* before the padding (spaces of the text too) */
    if (max > 0 && total > (size_t)max) {
        const char *dots = "\xe2\x80\xa6";
        if (cols > (size_t)(max > width ? max : width) || !strstr(out, dots))
            abort();
        if (printed + TERMSAFE_GLYPH_MAX < (size_t)max)
            abort(); /* cut far too early */
    } else if (cols != (total > (size_t)width ? total : (size_t)width)) {
        abort();
    }
    free(out);
}

/* The canvas: every cell holds one character that draws itself, or continues a
 * wide one; the columns drawn are the columns measured. */
static void check_canvas(const char *text)
{
    static ui_canvas c;
    static bool ready;
    error_info err;
    if (!ready && ui_canvas_init(&c, 48, 1, false, &err) != ERROR_OK)
        return;
    ready = true;
    ui_canvas_clear(&c, 0, 0, -1, (ui_style){0, UI_COLOR_DEFAULT});
    int used = ui_canvas_text(&c, 0, 0, -1, text, (ui_style){0, UI_COLOR_DEFAULT}, true);
    int want = ui_canvas_width(&c, text, 1 << 20);
    if (used > c.width || (want <= c.width && used != want))
        abort();
    for (int x = 0; x < c.width; x++) {
        const char *cell = c.cells[x].text;
        if (cell[0] && check_shown(cell, strlen(cell)) == 0)
            abort();
    }
    for (size_t at = 0; text[at];) {
        size_t n;
        if (ui_canvas_char_width(&c, text + at, &n) <= 0 || n == 0)
            abort();
        at += n;
    }
    size_t line = ui_canvas_wrap(&c, text, 20);
    if (text[0] && (line == 0 || line > strlen(text)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int width = data[0] % 64, max = data[1] % 64;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    check_writer(text, len);
    char *cstr = strndup(text, len);
    if (!cstr)
        return 0;
    check_cell(cstr, width, max);
    check_canvas(cstr);
    free(cstr);
    return 0;
}

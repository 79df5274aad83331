/*
 * ui_canvas: the screen as a grid of cells that model code draws into (rows render
 * to a buffer, as in htop). No curses here: the terminal layer (ui/term/term.c) copies
 * the rows that changed into curses windows, and headless mode dumps the grid as
 * text, so both show the same thing.
 *
 * - Text is UTF-8. Each cell holds one character of display width 1, or the first
 *   half of a width-2 character (the next cell is then a continuation). A wide
 *   character that would not fit at the right edge is drawn as a space.
 * - Text is drawn as termsafe shows it (rampart/termsafe.h, the writer the
 *   command line uses too): control characters (C0, C1, DEL), bidi controls,
 *   zero-width characters and bytes that are not UTF-8 are drawn as their escape
 *   ("\x1b", "\u202e"), one cell per character of it, so nothing from the remote
 *   can move the cursor, retitle the terminal or reorder a row, and the admin
 *   sees that it is there. In ASCII mode every other non-ASCII character is drawn
 *   as '?'.
 * - Style is attributes plus a colour role; the terminal maps roles to colours, or
 *   drops them with NO_COLOR. Never make colour the only signal: pair it with an
 *   attribute or text.
 * - Drawing outside the grid is clipped, never an error.
 * - Each row has a change flag set by every write to it; the terminal layer clears
 *   it once the row is on screen.
 */
#ifndef RAMPART_UI_CANVAS_H
#define RAMPART_UI_CANVAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rampart/error.h"

enum ui_attr {
    UI_ATTR_NONE = 0,
    UI_ATTR_BOLD = 1u << 0,
    UI_ATTR_REVERSE = 1u << 1,
    UI_ATTR_UNDERLINE = 1u << 2,
    UI_ATTR_DIM = 1u << 3
};

typedef enum ui_color {
    UI_COLOR_DEFAULT,
    UI_COLOR_TITLE,    /* header and status bars */
    UI_COLOR_CURSOR,   /* the selected row (also REVERSE) */
    UI_COLOR_MARK,     /* marked rows (also a '*' in the mark column) */
    UI_COLOR_OK,       /* synced, valid */
    UI_COLOR_PENDING,  /* new, creating, deleting */
    UI_COLOR_ERROR,    /* failed, invalid field, errors */
    /* plain colours, in config_color's order after "none" (a profile's colour) */
    UI_COLOR_RED, UI_COLOR_GREEN, UI_COLOR_YELLOW, UI_COLOR_BLUE, UI_COLOR_MAGENTA,
    UI_COLOR_CYAN,
    UI_COLOR_COUNT
} ui_color;

typedef struct ui_style {
    uint8_t attr;   /* enum ui_attr bits */
    uint8_t color;  /* ui_color */
} ui_style;

typedef struct ui_cell {
    char text[5];   /* UTF-8 of one character, NUL-terminated; "" continues a wide one */
    ui_style style;
} ui_cell;

typedef struct ui_canvas {
    int width, height;
    bool ascii;
    ui_cell *cells;      /* width * height, row-major */
    bool *row_changed;   /* height flags */
} ui_canvas;

typedef struct ui_rect {
    int x, y, width, height;
} ui_rect;

/* A blank canvas of width x height (each >= 1). Free with ui_canvas_free. */
error_code ui_canvas_init(ui_canvas *c, int width, int height, bool ascii, error_info *err);

/* Change the size; the content is blanked and every row marked changed. */
error_code ui_canvas_resize(ui_canvas *c, int width, int height, error_info *err);

void ui_canvas_free(ui_canvas *c);

/* Blank `width` cells of row y from x with `style` (width < 0: to the right edge). */
void ui_canvas_clear(ui_canvas *c, int y, int x, int width, ui_style style);

/*
 * Draw `text` at (x, y) in at most `max_width` columns (< 0: to the right edge),
 * clipping at a character boundary. When the text is cut and `ellipsis` is true,
 * the last column shows "…" ('~' in ASCII mode). Returns the columns used.
 */
int ui_canvas_text(ui_canvas *c, int y, int x, int max_width, const char *text,
                   ui_style style, bool ellipsis);

/*
 * Where a text wrapped to `width` columns (as this canvas draws it) ends its first
 * line: the bytes of `text` that go on it. All of it when it fits; else up to and
 * with the last space that keeps at least half the line, else as many characters
 * as fit (at least one, so a caller always goes on). The next line starts at the
 * byte returned (spaces there are the caller's to skip).
 */
size_t ui_canvas_wrap(const ui_canvas *c, const char *text, int width);

/* printf-style ui_canvas_text to the right edge, without ellipsis. */
int ui_canvas_printf(ui_canvas *c, int y, int x, ui_style style, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A box border around `r` (UTF-8 line drawing, or +-| in ASCII mode), interior
 * cleared to `style`. */
void ui_canvas_box(ui_canvas *c, ui_rect r, ui_style style);

/* Display width of `text` as this canvas would draw it (capped at `max`). */
int ui_canvas_width(const ui_canvas *c, const char *text, int max);

/* The columns the first character of the NUL-terminated `s` takes as this canvas
 * draws it (an escape: one per character of it), and its length in bytes in *len
 * (1 for a byte that is not UTF-8). Every layout that counts columns (wrapping,
 * cutting, a cursor) counts them with this. */
int ui_canvas_char_width(const ui_canvas *c, const char *s, size_t *len);

/* Row y as plain text (trailing spaces trimmed) into buf; returns its length. */
size_t ui_canvas_row_text(const ui_canvas *c, int y, char *buf, size_t size);

/* Every row as text, then a line "----". */
void ui_canvas_dump(const ui_canvas *c, FILE *out);

#endif

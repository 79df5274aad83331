/*
 * ui_line: the one-line UTF-8 editor (ui/widgets/line.c) of every text the console
 * takes: the form fields and the status row's prompt (`/` filter, `:` command).
 * Private to ui/.
 *
 * Keys: Left/Right, Home/End and Ctrl-A/Ctrl-E move; Backspace (Ctrl-H) and Del
 * (Ctrl-D) delete a whole character; Ctrl-U deletes to the start, Ctrl-K to the
 * end, Ctrl-W the word before the cursor; printable characters are inserted.
 */
#ifndef RAMPART_UI_LINE_H
#define RAMPART_UI_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

/* Bytes a field holds beyond its limit: one more character, so the limit's own
 * message shows instead of keys silently doing nothing. */
#define UI_LINE_SLACK 4

typedef struct ui_line {
    char *buf;      /* NUL-terminated UTF-8, `cap` + 1 bytes allocated */
    size_t len;     /* bytes */
    size_t cursor;  /* byte offset, always at a character boundary */
    size_t cap;     /* most bytes it holds */
} ui_line;

typedef enum ui_line_effect {
    UI_LINE_IGNORED, /* not an editing key */
    UI_LINE_MOVED,   /* the cursor moved (or a refused insert): text unchanged */
    UI_LINE_CHANGED  /* the text changed */
} ui_line_effect;

/* A line holding up to max_bytes + UI_LINE_SLACK bytes, starting as `initial`
 * (NULL: empty; cut at a character boundary when longer), cursor at the end. */
error_code ui_line_init(ui_line *l, const char *initial, size_t max_bytes, error_info *err);

/* Wipe and free. Safe on a zeroed line. */
void ui_line_free(ui_line *l);

/* Replace the text (cut to fit at a character boundary); cursor at the end. */
void ui_line_set(ui_line *l, const char *text);

/* One editing key: a character to insert, or a cursor / delete key. */
ui_line_effect ui_line_key(ui_line *l, int key);

/* Encode code point `cp` as UTF-8 into out (4 bytes room); returns the length, 0
 * for a surrogate or a value beyond U+10FFFF. */
size_t ui_utf8_encode(unsigned cp, char out[4]);

#endif

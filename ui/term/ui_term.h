/*
 * ui_term: the terminal (ncurses), in ui/term/term.c: the only code under ui/ that
 * calls curses; everything else draws into a ui_canvas. Private to ui/.
 *
 * - ui_term_open sets the terminal up: newterm on stdin/stdout, cbreak, noecho,
 *   keypad, ESC delay 25 ms, mouse off, invisible cursor where the terminal can,
 *   colours unless no_color (or the terminal has none), and three windows (header,
 *   body, status). It also takes SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGWINCH:
 *   they only write to a self-pipe (ui_term_signal_fd) that the loop polls, so the
 *   terminal is restored on those exits by ui_term_close like on any other.
 * - ui_term_utf8: whether the locale's character set is UTF-8 (else the console
 *   draws ASCII only).
 * - ui_term_draw copies into the windows only the canvas rows whose change flag is
 *   set, clears those flags, then wnoutrefresh per window and one doupdate. A
 *   character whose width the terminal's locale sees differently from the canvas
 *   is drawn as '?' so columns never drift. Queued raw bytes (ui_app_raw) are
 *   written after the update.
 * - ui_term_close restores the terminal (endwin, signal handlers); NULL is a no-op.
 *   No global state except the self-pipe the signal handlers write to.
 */
#ifndef RAMPART_UI_TERM_H
#define RAMPART_UI_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/ui_canvas.h"

typedef struct ui_term ui_term;

typedef struct ui_term_options {
    bool no_color;
} ui_term_options;

error_code ui_term_open(const ui_term_options *o, ui_term **out, error_info *err);
void ui_term_close(ui_term *t);

bool ui_term_utf8(const ui_term *t);
void ui_term_size(const ui_term *t, int *width, int *height);

/* File descriptors to poll for input: the keyboard and the signal pipe. */
int ui_term_input_fd(const ui_term *t);
int ui_term_signal_fd(const ui_term *t);

/* The next signal taken (SIGWINCH, SIGINT, …) or 0 when none is pending. */
int ui_term_take_signal(ui_term *t);

/* The next key as a ui_key (0 when none is waiting; never blocks). */
int ui_term_key(ui_term *t);

/* The terminal changed size: read the new size and resize curses' screen. */
error_code ui_term_resize(ui_term *t, error_info *err);

/* Window layout: `header` rows on top, `status` rows at the bottom, the body in
 * between (the canvas rows map one to one). */
void ui_term_layout(ui_term *t, int header, int status);

/* Copy the changed rows, update the screen once, then write `raw` (n bytes). The
 * hardware cursor is left at (cursor_y, cursor_x) when visible is true. */
void ui_term_draw(ui_term *t, ui_canvas *c, int cursor_y, int cursor_x, bool visible,
                  const char *raw, size_t n);

/* Ctrl-L: the next draw repaints the whole screen. */
void ui_term_repaint(ui_term *t);

/* Give the terminal back for a while (a command that may ask the user something
 * runs in between: the shell's screen and modes, as after endwin), then take it
 * again; the next draw repaints the whole screen. */
void ui_term_suspend(ui_term *t);
void ui_term_resume(ui_term *t);

#endif

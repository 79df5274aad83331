/*
 * termsafe: the one writer of text meant for a terminal. What reaches a terminal
 * from the cache, the remote, a file or the user's own arguments goes through it,
 * on the command line (src/cli) as in the console (ui/: the canvas), so a
 * description, a server's message or a file name shows what it holds but can
 * never drive the terminal, reorder what is read, or hide part of itself.
 *
 * Contract:
 * - Text is read with the one UTF-8 decoder (utf8.h). A character is shown as
 *   itself when it draws something: printable ASCII, and every other valid
 *   character but those below.
 * - Shown escaped, in printable ASCII, never interpreted:
 *     C0 controls and DEL       \n \r \t, the others \xNN      ("\x1b")
 *     C1 controls U+0080..009F  \u0080 .. \u009f (as characters; see bytes below)
 *     bidi controls             \u061c \u200e \u200f \u202a..\u202e \u2066..\u2069
 *     line/paragraph separators \u2028 \u2029
 *     every other character that draws nothing: combining marks, zero-width and
 *     format characters (U+200B, U+FEFF, U+00AD, tags, ...): \uXXXX, or
 *     \UXXXXXXXX above U+FFFF. A grid of cells has no column for them, and
 *     they can hide or reorder text.
 *     a byte that does not start a valid UTF-8 sequence (a stray 0x9b, a cut or
 *     overlong sequence): \xNN, one byte at a time.
 *   Hex digits are lower case. A backslash stays as it is: an escape is for the
 *   eye, not a format to parse back.
 * - Width: a character shown as itself takes 1 column, or 2 when East Asian
 *   wide or fullwidth (or an emoji presentation character); an escape takes one
 *   column per character ("\u202e": 6). The table is built in, so widths never
 *   depend on the locale and a headless dump is the same everywhere.
 * - What comes out is valid UTF-8 with no byte below 0x20, no DEL, no C1 and no
 *   bidi control, and is its own escaped form (escaping it again changes
 *   nothing).
 * - No state, no allocation but in the caller's buf_t; thread-safe. The FILE
 *   writers report a write error through their result and ferror(out).
 */
#ifndef RAMPART_TERMSAFE_H
#define RAMPART_TERMSAFE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rampart/buf.h"

enum { TERMSAFE_GLYPH_MAX = 11 }; /* "\U0010ffff" and its NUL */

/* One character of a text as a terminal is to show it. */
typedef struct termsafe_glyph {
    char text[TERMSAFE_GLYPH_MAX]; /* the character's own bytes, or its escape; NUL-ended */
    size_t len;                    /* bytes in text */
    int width;                     /* columns: 1 or 2 as itself, len when escaped */
    bool escaped;
} termsafe_glyph;

/*
 * Read the character at the start of `s` (`len` > 0 bytes readable; a NUL byte
 * counts as the character U+0000) into *g, and return how many bytes of `s` it
 * took (1..4). An invalid sequence takes one byte.
 */
size_t termsafe_next(const char *s, size_t len, termsafe_glyph *g);

/* The columns code point `cp` takes when shown as itself (1 or 2), or 0 when it is
 * one that termsafe shows escaped. */
int termsafe_cp_width(uint32_t cp);

/* Append `len` bytes of `s` as shown (escaped) to `b`. False when `b` failed. */
bool termsafe_append(buf_t *b, const char *s, size_t len);

/* The columns `len` bytes of `s` take once shown. */
size_t termsafe_width(const char *s, size_t len);

/* Write the NUL-terminated `s` as shown to `out`. False on a write error. */
bool termsafe_fputs(const char *s, FILE *out);

/*
 * printf, then write the whole formatted text as shown: the format's own words
 * and every value in it alike, but for one final newline, which still ends the
 * line. For lines made of our words and outside values (an error echoing an
 * argument, a message of the remote); never for the terminal control the program
 * writes on purpose (a progress line's "\r\033[K"). False on a write error or
 * when out of memory (nothing is then written).
 */
bool termsafe_fprintf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same with a va_list. */
bool termsafe_vfprintf(FILE *out, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif

/*
 * termsafe: the one writer of text meant for a terminal, for the command line and
 * the console's canvas alike: text from the cache, the remote, a file or argv
 * shows what it holds but never drives the terminal, reorders or hides itself.
 *
 * - Text is read with utf8.h. A valid character that draws something is shown as
 *   itself; the rest is shown escaped, in printable ASCII, never interpreted:
 *     C0 controls and DEL       \n \r \t, the others \xNN      ("\x1b")
 *     C1 controls U+0080..009F  \u0080 .. \u009f (as characters; see bytes below)
 *     bidi controls             \u061c \u200e \u200f \u202a..\u202e \u2066..\u2069
 *     line/paragraph separators \u2028 \u2029
 *     other characters that draw nothing (combining marks, zero-width, format
 *     characters, tags): \uXXXX, or \UXXXXXXXX above U+FFFF
 *     a byte that does not start valid UTF-8 (stray, cut, overlong): \xNN
 *   Hex digits are lower case. A backslash stays as it is: an escape is for the
 *   eye, not a format to parse back.
 * - Width: a character shown as itself takes 1 column, or 2 when East Asian
 *   wide or fullwidth (or an emoji presentation character); an escape one column
 *   per character ("\u202e": 6). Built in: widths never depend on the locale.
 * - What comes out is valid UTF-8 with no byte below 0x20, no DEL, no C1 and no
 *   bidi control, and escaping it again changes nothing.
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

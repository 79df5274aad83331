/*
 * utf8: the one UTF-8 decoder. Validation (validate.c), message cleaning
 * (sync/api_classify.c), terminal cells (src/cli, ui/) all read text through it,
 * so they agree on what a character is.
 *
 * - Strict RFC 3629: the shortest form only (no overlongs, so no "\xC0\x80"
 *   for NUL), no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. Every
 *   invalid sequence is an error with a reason; none is ever repaired here.
 * - Reads at most `len` bytes and never past them; a NUL byte is the character
 *   U+0000, so a caller that stops at NUL passes only the bytes before it (or
 *   the NUL itself to read it).
 * - Pure functions: no allocation, no state, thread-safe.
 */
#ifndef RAMPART_UTF8_H
#define RAMPART_UTF8_H

#include <stddef.h>
#include <stdint.h>

enum { UTF8_SEQ_MAX = 4 }; /* bytes in the longest sequence */

/* Why a sequence is not UTF-8 (utf8_decode's negative results). */
typedef enum utf8_error {
    UTF8_ERR_TRUNCATED = -1,    /* `len` ends inside it, or a byte in it is not a
                                   continuation byte; also len 0 */
    UTF8_ERR_CONTINUATION = -2, /* a continuation byte without a lead byte */
    UTF8_ERR_OVERLONG = -3,     /* a longer form than the code point needs */
    UTF8_ERR_SURROGATE = -4,    /* U+D800..U+DFFF */
    UTF8_ERR_TOO_BIG = -5,      /* above U+10FFFF */
    UTF8_ERR_BYTE = -6          /* 0xF8..0xFF: never in UTF-8 */
} utf8_error;

/*
 * Decode the sequence at the start of `s` (`len` bytes readable). Returns its
 * length (1..4) and the code point in *cp, or a negative utf8_error (then *cp
 * is left alone). The error is about the first sequence only: skip one byte to
 * go on past it.
 */
int utf8_decode(const char *s, size_t len, uint32_t *cp);

/* The reason of a utf8_decode error as a phrase for messages ("overlong
 * encoding"); "" for a length (>= 0). */
const char *utf8_error_text(int rc);

/* Offset of the first byte that does not start a valid sequence in `s` (`len`
 * bytes), with its reason in *why when `why` is not NULL; `len` when all of it
 * is valid UTF-8. */
size_t utf8_find_invalid(const char *s, size_t len, utf8_error *why);

/* The length of the longest prefix of the NUL-terminated `s` that is at most `max`
 * bytes and does not end inside a sequence: where to cut a text to fit. */
size_t utf8_prefix(const char *s, size_t max);

/* Drop a sequence left incomplete at the end of the NUL-terminated `s` (what a
 * snprintf that ran out of room leaves). */
void utf8_trim_partial(char *s);

#endif

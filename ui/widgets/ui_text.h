/*
 * ui_text: UTF-8 decoding and counts for the console, shared by the canvas, the
 * terminal layer and the text fields. Private to ui/. What a character looks like
 * on screen and how wide it is are termsafe's (rampart/termsafe.h), the one
 * writer the command line uses too.
 *
 * - ui_text_decode reads one strictly valid UTF-8 sequence (no overlongs, no
 *   surrogates, nothing above U+10FFFF): returns its length (1-4) and the code
 *   point, or 0 for invalid input (the caller skips one byte).
 */
#ifndef RAMPART_UI_TEXT_H
#define RAMPART_UI_TEXT_H

#include <stddef.h>
#include <stdint.h>

size_t ui_text_decode(const char *s, uint32_t *cp);

/* `n` with thousands separators ("1,000,000") into buf. */
void ui_text_count(size_t n, char *buf, size_t size);

/* Length of the longest prefix of s (at most `max` bytes) that ends on a UTF-8
 * character boundary. */
size_t ui_text_prefix(const char *s, size_t max);

#endif

/*
 * textcat: appending to a text in a fixed array, for sentences built clause by
 * clause (src/core/textcat.c).
 *
 * textcat_add appends printf-style to the NUL-terminated text in `buf` of `size`
 * bytes, cut where it does not fit; the text stays terminated. A full `buf` is
 * left as it is.
 */
#ifndef RAMPART_TEXTCAT_H
#define RAMPART_TEXTCAT_H

#include <stddef.h>

void textcat_add(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

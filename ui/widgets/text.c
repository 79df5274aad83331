/* ui_text: strict UTF-8 decoding and counts for the console (widths: termsafe.h). */
#include "ui_text.h"

#include <stdio.h>
#include <string.h>

#include "rampart/utf8.h"

size_t ui_text_decode(const char *s, uint32_t *cp)
{
    /* Up to the NUL included: it reads as U+0000 and ends any sequence early. */
    int n = utf8_decode(s, strnlen(s, UTF8_SEQ_MAX - 1) + 1, cp);
    return n > 0 ? (size_t)n : 0;
}

void ui_text_count(size_t n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", n);
    size_t o = 0;
    for (int i = 0; i < len && o + 1 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    if (size)
        buf[o < size ? o : size - 1] = '\0';
}

size_t ui_text_prefix(const char *s, size_t max)
{
    return utf8_prefix(s, max);
}

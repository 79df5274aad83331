/* utf8: see rampart/utf8.h. */
#include "rampart/utf8.h"

#include <stdbool.h>
#include <string.h>

int utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    if (len == 0)
        return UTF8_ERR_TRUNCATED;
    const unsigned char *u = (const unsigned char *)s;
    unsigned char b = u[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    /* Lead bytes that can never start a valid sequence are refused before the
     * length is looked at, so their reason does not depend on what follows. */
    if (b < 0xC0)
        return UTF8_ERR_CONTINUATION;
    if (b < 0xC2)
        return UTF8_ERR_OVERLONG;
    if (b >= 0xF8)
        return UTF8_ERR_BYTE;
    if (b >= 0xF5)
        return UTF8_ERR_TOO_BIG;
    size_t need = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t c = b & (0x7Fu >> need);
    for (size_t i = 1; i < need; i++) {
        if (i >= len || (u[i] & 0xC0) != 0x80)
            return UTF8_ERR_TRUNCATED;
        c = (c << 6) | (u[i] & 0x3Fu);
    }
    /* The second-byte ranges of RFC 3629's table, as code point bounds. */
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[need])
        return UTF8_ERR_OVERLONG;
    if (c >= 0xD800 && c <= 0xDFFF)
        return UTF8_ERR_SURROGATE;
    if (c > 0x10FFFF)
        return UTF8_ERR_TOO_BIG;
    *cp = c;
    return (int)need;
}

const char *utf8_error_text(int rc)
{
    switch (rc) {
    case UTF8_ERR_TRUNCATED:
        return "truncated sequence";
    case UTF8_ERR_CONTINUATION:
        return "continuation byte without a lead byte";
    case UTF8_ERR_OVERLONG:
        return "overlong encoding";
    case UTF8_ERR_SURROGATE:
        return "surrogate (U+D800..U+DFFF)";
    case UTF8_ERR_TOO_BIG:
        return "code point above U+10FFFF";
    case UTF8_ERR_BYTE:
        return "byte that never occurs in UTF-8";
    default:
        return "";
    }
}

size_t utf8_find_invalid(const char *s, size_t len, utf8_error *why)
{
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(s + i, len - i, &cp);
        if (n < 0) {
            if (why)
                *why = (utf8_error)n;
            return i;
        }
        i += (size_t)n;
    }
    return len;
}

static bool is_continuation(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

size_t utf8_prefix(const char *s, size_t max)
{
    size_t len = strnlen(s, max + 1);
    if (len <= max)
        return len;
    len = max;
    while (len > 0 && is_continuation((unsigned char)s[len]))
        len--;
    return len;
}

void utf8_trim_partial(char *s)
{
    size_t len = strlen(s);
    size_t i = len;
    while (i > 0 && is_continuation((unsigned char)s[i - 1]))
        i--;
    uint32_t cp;
    if (i > 0 && utf8_decode(s + i - 1, len - (i - 1), &cp) == UTF8_ERR_TRUNCATED)
        s[i - 1] = '\0';
}

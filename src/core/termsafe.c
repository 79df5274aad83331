/* termsafe: see rampart/termsafe.h. */
#include "rampart/termsafe.h"

#include <stdlib.h>
#include <string.h>

#include "rampart/utf8.h"

typedef struct range {
    uint32_t first, last;
} range;

/* Characters that draw nothing of their own: combining marks (they would merge
 * with the column to their left), and invisible format characters, among them
 * every bidi control (U+061C, U+200E/F, U+202A..E, U+2066..9), the line and
 * paragraph separators (U+2028/9), zero-width spaces and joiners, the soft hyphen,
 * the BOM and the tag characters. Sorted, for the binary search. */
static const range zero_width[] = {
    {0x00ad, 0x00ad}, {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd},
    {0x05bf, 0x05bf}, {0x05c1, 0x05c2}, {0x05c4, 0x05c5}, {0x05c7, 0x05c7},
    {0x0600, 0x0605}, {0x0610, 0x061a}, {0x061c, 0x061c}, {0x064b, 0x065f},
    {0x0670, 0x0670}, {0x06d6, 0x06dd}, {0x06df, 0x06e4}, {0x06e7, 0x06e8},
    {0x06ea, 0x06ed}, {0x070f, 0x070f}, {0x0e31, 0x0e31}, {0x0e34, 0x0e3a},
    {0x0e47, 0x0e4e}, {0x1160, 0x11ff}, {0x180e, 0x180e}, {0x1ab0, 0x1aff},
    {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x2028, 0x202e}, {0x2060, 0x206f},
    {0x20d0, 0x20ff}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xfeff, 0xfeff},
    {0xfff9, 0xfffb}, {0x110bd, 0x110bd}, {0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
};

/* East Asian Wide and Fullwidth, and the emoji presentation blocks. */
static const range wide[] = {
    {0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec},
    {0x23f0, 0x23f0}, {0x23f3, 0x23f3}, {0x25fd, 0x25fe}, {0x2614, 0x2615},
    {0x2648, 0x2653}, {0x267f, 0x267f}, {0x2693, 0x2693}, {0x26a1, 0x26a1},
    {0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5}, {0x26ce, 0x26ce},
    {0x26d4, 0x26d4}, {0x26ea, 0x26ea}, {0x26f2, 0x26f3}, {0x26f5, 0x26f5},
    {0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b},
    {0x2728, 0x2728}, {0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755},
    {0x2757, 0x2757}, {0x2795, 0x2797}, {0x27b0, 0x27b0}, {0x27bf, 0x27bf},
    {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55}, {0x2e80, 0x303e},
    {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf},
    {0xa960, 0xa97f}, {0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19},
    {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6}, {0x16fe0, 0x16fe4},
    {0x17000, 0x18cff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
    {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251}, {0x1f300, 0x1f64f},
    {0x1f680, 0x1f6ff}, {0x1f900, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd},
    {0x30000, 0x3fffd},
};

static bool in_ranges(uint32_t cp, const range *r, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].first)
            hi = mid;
        else if (cp > r[mid].last)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

int termsafe_cp_width(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
        return 0;
    if (cp < 0x300)
        return cp == 0xad ? 0 : 1;
    if (in_ranges(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
        return 0;
    if (in_ranges(cp, wide, sizeof wide / sizeof wide[0]))
        return 2;
    return 1;
}

/* The escape of an ASCII control or of a byte that is not UTF-8. */
static void escape_byte(unsigned char byte, termsafe_glyph *g)
{
    static const char hex[] = "0123456789abcdef";
    char named = byte == '\n' ? 'n' : byte == '\r' ? 'r' : byte == '\t' ? 't' : 0;
    g->text[0] = '\\';
    if (named) {
        g->text[1] = named;
        g->len = 2;
    } else {
        g->text[1] = 'x';
        g->text[2] = hex[byte >> 4];
        g->text[3] = hex[byte & 0xf];
        g->len = 4;
    }
    g->text[g->len] = '\0';
}

static void escape_cp(uint32_t cp, termsafe_glyph *g)
{
    if (cp < 0x80) {
        escape_byte((unsigned char)cp, g);
        return;
    }
    int n = cp > 0xffff ? snprintf(g->text, sizeof g->text, "\\U%08x", (unsigned)cp)
                        : snprintf(g->text, sizeof g->text, "\\u%04x", (unsigned)cp);
    g->len = (size_t)n;
}

size_t termsafe_next(const char *s, size_t len, termsafe_glyph *g)
{
    uint32_t cp;
    int n = utf8_decode(s, len, &cp);
    g->escaped = true;
    if (n <= 0) {
        escape_byte((unsigned char)s[0], g);
        g->width = (int)g->len;
        return 1;
    }
    int w = termsafe_cp_width(cp);
    if (w == 0) {
        escape_cp(cp, g);
        g->width = (int)g->len;
        return (size_t)n;
    }
    memcpy(g->text, s, (size_t)n);
    g->text[n] = '\0';
    g->len = (size_t)n;
    g->width = w;
    g->escaped = false;
    return (size_t)n;
}

/* Printable ASCII: one byte, one column, nothing to escape. Most text is this. */
static size_t plain_run(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)
        i++;
    return i;
}

bool termsafe_append(buf_t *b, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t run = plain_run(s + i, len - i);
        if (run) {
            buf_append(b, s + i, run);
            i += run;
            continue;
        }
        termsafe_glyph g;
        i += termsafe_next(s + i, len - i, &g);
        buf_append(b, g.text, g.len);
    }
    return !b->failed;
}

size_t termsafe_width(const char *s, size_t len)
{
    size_t i = 0, cols = 0;
    while (i < len) {
        size_t run = plain_run(s + i, len - i);
        cols += run;
        i += run;
        if (i == len)
            break;
        termsafe_glyph g;
        i += termsafe_next(s + i, len - i, &g);
        cols += (size_t)g.width;
    }
    return cols;
}

bool termsafe_fputs(const char *s, FILE *out)
{
    size_t len = strlen(s), i = 0;
    while (i < len) {
        size_t run = plain_run(s + i, len - i);
        if (run && fwrite(s + i, 1, run, out) != run)
            return false;
        i += run;
        if (i == len)
            break;
        termsafe_glyph g;
        i += termsafe_next(s + i, len - i, &g);
        if (fwrite(g.text, 1, g.len, out) != g.len)
            return false;
    }
    return true;
}

bool termsafe_vfprintf(FILE *out, const char *fmt, va_list ap)
{
    char small[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    char *text = small;
    if (n >= (int)sizeof small) {
        text = malloc((size_t)n + 1);
        if (text)
            vsnprintf(text, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (n < 0 || !text)
        return false;
    size_t len = (size_t)n;
    bool line_end = len > 0 && text[len - 1] == '\n';
    if (line_end)
        text[len - 1] = '\0';
    bool ok = termsafe_fputs(text, out) && (!line_end || fputc('\n', out) != EOF);
    if (text != small)
        free(text);
    return ok;
}

bool termsafe_fprintf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = termsafe_vfprintf(out, fmt, ap);
    va_end(ap);
    return ok;
}

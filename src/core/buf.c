/* buf: see rampart/buf.h. */
#include "rampart/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/model.h"

static void release(buf_t *b)
{
    if (b->wipe)
        model_free_wiped(b->data);
    else
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool buf_reserve(buf_t *b, size_t extra)
{
    if (b->failed)
        return false;
    /* +1: the terminator is always there, and never counted. */
    if (extra > SIZE_MAX - 1 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : BUF_MIN;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *grown = b->wipe ? model_realloc_wiped(b->data, cap) : realloc(b->data, cap);
    if (!grown) {
        b->failed = true;
        return false;
    }
    b->data = grown;
    b->cap = cap;
    b->data[b->len] = '\0'; /* a first block holds "" at once */
    return true;
}

void buf_commit(buf_t *b, size_t n)
{
    if (b->failed || !b->data)
        return;
    b->len += n;
    b->data[b->len] = '\0';
}

bool buf_append(buf_t *b, const void *data, size_t n)
{
    if (!buf_reserve(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, data, n);
    buf_commit(b, n);
    return true;
}

bool buf_puts(buf_t *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

bool buf_json_string(buf_t *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    buf_append(b, "\"", 1);
    const char *run = s ? s : "";
    for (const char *p = run;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F)
            continue;
        /* Plain bytes go in runs: one copy per stretch, not one per byte. */
        buf_append(b, run, (size_t)(p - run));
        if (c == 0)
            break;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            buf_append(b, esc, sizeof esc);
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            buf_append(b, esc, sizeof esc);
        }
        run = p + 1;
    }
    return buf_append(b, "\"", 1);
}

void buf_reset(buf_t *b)
{
    /* Past len nothing was ever written since the last reset: len bytes do. */
    if (b->data && b->wipe)
        model_wipe(b->data, b->len);
    b->len = 0;
    b->failed = false;
    if (b->data)
        b->data[0] = '\0';
}

char *buf_take(buf_t *b)
{
    if (!b->data)
        buf_reserve(b, 0);
    if (b->failed) {
        release(b);
        b->failed = false;
        return NULL;
    }
    char *out = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

void buf_free(buf_t *b)
{
    if (!b)
        return;
    release(b);
    b->failed = false;
}

bool buf_grow_array(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : BUF_ARRAY_MIN;
    while (n < need)
        n = n > SIZE_MAX / 2 ? need : n * 2;
    if (elem && n > SIZE_MAX / elem)
        return false;
    void *more = realloc(*items, n * elem);
    if (!more)
        return false;
    *items = more;
    *cap = n;
    return true;
}

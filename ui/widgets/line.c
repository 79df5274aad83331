/*
 * The one-line UTF-8 editor (ui/ui_line.h) of the form fields and the prompt. The
 * cursor is a byte offset kept on character boundaries, so every key acts on
 * whole characters and the buffer stays valid UTF-8 when it started so.
 */
#include <stdlib.h>
#include <string.h>

#include "ui_line.h"
#include "rampart/model.h"
#include "rampart/ui_key.h"
#include "rampart/utf8.h"

enum {
    CTRL_A = 1, CTRL_D = 4, CTRL_E = 5, CTRL_H = 8, CTRL_K = 11, CTRL_U = 21, CTRL_W = 23
};

static bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

size_t ui_utf8_encode(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF)
        return 0;
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

error_code ui_line_init(ui_line *l, const char *initial, size_t max_bytes, error_info *err)
{
    memset(l, 0, sizeof *l);
    l->cap = max_bytes + UI_LINE_SLACK;
    l->buf = calloc(l->cap + 1, 1);
    if (!l->buf)
        return error_set(err, ERROR_NOMEM, "out of memory");
    ui_line_set(l, initial ? initial : "");
    return ERROR_OK;
}

void ui_line_free(ui_line *l)
{
    if (l->buf) {
        model_wipe(l->buf, l->cap + 1);
        free(l->buf);
    }
    memset(l, 0, sizeof *l);
}

void ui_line_set(ui_line *l, const char *text)
{
    size_t n = utf8_prefix(text, l->cap); /* cut to fit on a character boundary */
    model_wipe(l->buf, l->cap + 1);
    memcpy(l->buf, text, n);
    l->buf[n] = '\0';
    l->len = n;
    l->cursor = n;
}

static size_t next_char(const ui_line *l, size_t at)
{
    if (at >= l->len)
        return l->len;
    at++;
    while (at < l->len && is_continuation((unsigned char)l->buf[at]))
        at++;
    return at;
}

static size_t prev_char(const ui_line *l, size_t at)
{
    return at == 0 ? 0 : utf8_prefix(l->buf, at - 1); /* the start of the one before */
}

/* Remove bytes [from, to) and put the cursor at `from`. */
static ui_line_effect cut(ui_line *l, size_t from, size_t to)
{
    if (from >= to)
        return UI_LINE_MOVED;
    memmove(l->buf + from, l->buf + to, l->len - to + 1);
    l->len -= to - from;
    model_wipe(l->buf + l->len + 1, to - from);
    l->cursor = from;
    return UI_LINE_CHANGED;
}

static ui_line_effect insert(ui_line *l, int key)
{
    char enc[4];
    size_t n = ui_utf8_encode((unsigned)key, enc);
    if (n == 0 || l->len + n > l->cap)
        return UI_LINE_MOVED;
    memmove(l->buf + l->cursor + n, l->buf + l->cursor, l->len - l->cursor + 1);
    memcpy(l->buf + l->cursor, enc, n);
    l->len += n;
    l->cursor += n;
    return UI_LINE_CHANGED;
}

static bool is_space(char ch) { return ch == ' ' || ch == '\t'; }

/* Ctrl-W: back over spaces, then over the word before them. */
static size_t word_start(const ui_line *l)
{
    size_t at = l->cursor;
    while (at > 0 && is_space(l->buf[at - 1]))
        at--;
    while (at > 0 && !is_space(l->buf[at - 1]))
        at--;
    return utf8_prefix(l->buf, at);
}

static ui_line_effect move_to(ui_line *l, size_t at)
{
    l->cursor = at;
    return UI_LINE_MOVED;
}

ui_line_effect ui_line_key(ui_line *l, int key)
{
    switch (key) {
    case UI_KEY_LEFT:
        return move_to(l, prev_char(l, l->cursor));
    case UI_KEY_RIGHT:
        return move_to(l, next_char(l, l->cursor));
    case UI_KEY_HOME:
    case CTRL_A:
        return move_to(l, 0);
    case UI_KEY_END:
    case CTRL_E:
        return move_to(l, l->len);
    case UI_KEY_BACKSPACE:
    case CTRL_H:
        return cut(l, prev_char(l, l->cursor), l->cursor);
    case UI_KEY_DEL:
    case CTRL_D:
        return cut(l, l->cursor, next_char(l, l->cursor));
    case CTRL_U:
        return cut(l, 0, l->cursor);
    case CTRL_K:
        return cut(l, l->cursor, l->len);
    case CTRL_W:
        return cut(l, word_start(l), l->cursor);
    default:
        break;
    }
    /* Characters only: no C0/C1 controls, DEL, or keys beyond Unicode. */
    if (key < 0x20 || key == 0x7F || (key >= 0x80 && key < 0xA0) || key >= UI_KEY_SPECIAL)
        return UI_LINE_IGNORED;
    return insert(l, key);
}

/*
 * The list splitter (codec_split_*): reads a JSON array of objects, or an API list
 * object holding one, through a read callback in chunks, and hands out each
 * element of the array as its own byte range. Only the bytes between elements
 * (brackets, commas, whitespace, the list object's other members) are judged
 * here; every element, member name and member value is handed whole to jansson
 * (by the caller, or here for the list object's other members), so what is
 * accepted is exactly what a whole-document parse would accept, while memory is
 * one chunk plus the largest element, whatever the size of the input.
 *
 * An element's end is found by counting brackets outside strings: for valid JSON
 * that is its end, and for anything else the range still holds the bad bytes,
 * which jansson then refuses with its own message.
 */
#include "codec_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"

enum {
    SPLIT_CHUNK = 64 << 10, /* the least room a read is given */
    /* A rule or credential is a few KiB at most (4 KiB of metadata, escaped); a
     * larger element is refused rather than buffered without bound. */
    SPLIT_ELEMENT_MAX = 1 << 20
};

typedef enum split_phase {
    PHASE_START,         /* nothing read yet */
    PHASE_ITEMS_FIRST,   /* after '[': an element or ']' */
    PHASE_ITEMS_NEXT,    /* after an element: ',' or ']' */
    PHASE_MEMBERS_FIRST, /* after the list object's '{': a name or '}' */
    PHASE_MEMBERS_NEXT,  /* after a member: ',' or '}' */
    PHASE_END,           /* the document is closed: only whitespace may follow */
    PHASE_DONE
} split_phase;

struct codec_split {
    const kind_desc *kind;
    codec_read_fn read;
    void *read_ctx;
    char *buf;
    size_t cap;
    size_t tail;           /* buf[0, tail) holds input */
    size_t pos;            /* the next byte to look at */
    size_t mark;           /* buf[mark, pos) is the value being read: kept by a refill */
    bool eof;
    uint64_t base;         /* input offset of buf[0] */
    size_t line;           /* 1-based line of `pos` */
    uint64_t line_start;   /* input offset where that line starts */
    split_phase phase;
    bool in_object;        /* the array is the list object's member */
    bool saw_list;         /* the list object's array member was met */
    size_t index;          /* elements handed out */
};

error_code codec_split_open(model_kind kind, codec_read_fn read, void *read_ctx,
                            codec_split **out, error_info *err)
{
    *out = NULL;
    codec_split *sp = calloc(1, sizeof *sp);
    if (sp)
        sp->buf = malloc(2 * SPLIT_CHUNK);
    if (!sp || !sp->buf) {
        free(sp);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    sp->kind = kind_get(kind);
    sp->read = read;
    sp->read_ctx = read_ctx;
    sp->cap = 2 * SPLIT_CHUNK;
    sp->line = 1;
    *out = sp;
    return ERROR_OK;
}

void codec_split_free(codec_split *sp)
{
    if (!sp)
        return;
    free(sp->buf);
    free(sp);
}

/* ---- input ---------------------------------------------------------------- */

static size_t column_at(const codec_split *sp, size_t at)
{
    return (size_t)(sp->base + at - sp->line_start) + 1;
}

/* Read more input behind buf[tail], first moving buf[mark, tail) to the front.
 * Returns 1 when bytes were added, 0 at the end of input, -1 on error. */
static int refill(codec_split *sp, error_info *err)
{
    if (sp->eof)
        return 0;
    if (sp->mark > 0) {
        memmove(sp->buf, sp->buf + sp->mark, sp->tail - sp->mark);
        sp->base += sp->mark;
        sp->pos -= sp->mark;
        sp->tail -= sp->mark;
        sp->mark = 0;
    }
    if (sp->cap - sp->tail < SPLIT_CHUNK) {
        if (sp->tail >= SPLIT_ELEMENT_MAX) {
            error_set(err, ERROR_FORMAT, "larger than %d KiB", SPLIT_ELEMENT_MAX >> 10);
            return -1;
        }
        char *bigger = realloc(sp->buf, sp->cap * 2);
        if (!bigger) {
            error_set(err, ERROR_NOMEM, "out of memory");
            return -1;
        }
        sp->buf = bigger;
        sp->cap *= 2;
    }
    size_t got = 0;
    if (sp->read(sp->read_ctx, sp->buf + sp->tail, sp->cap - sp->tail, &got, err) != ERROR_OK)
        return -1;
    if (got == 0) {
        sp->eof = true;
        return 0;
    }
    sp->tail += got;
    return 1;
}

/* Skip whitespace; *c is then the next byte (not consumed) or -1 at the end of
 * input. False on a read error. */
static bool peek(codec_split *sp, int *c, error_info *err)
{
    for (;;) {
        while (sp->pos < sp->tail) {
            char b = sp->buf[sp->pos];
            if (b == '\n') {
                sp->line++;
                sp->line_start = sp->base + sp->pos + 1;
            } else if (b != ' ' && b != '\t' && b != '\r') {
                *c = (unsigned char)b;
                return true;
            }
            sp->pos++;
        }
        sp->mark = sp->pos; /* nothing to keep between values */
        int got = refill(sp, err);
        if (got < 0)
            return false;
        if (got == 0) {
            *c = -1;
            return true;
        }
    }
}

/* ---- values --------------------------------------------------------------- */

static bool is_delimiter(char b)
{
    return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == ',' || b == ':' ||
           b == '[' || b == ']' || b == '{' || b == '}' || b == '"';
}

typedef struct scan {
    size_t depth;     /* open brackets */
    bool in_string;
    bool escaped;     /* the previous byte was a backslash inside a string */
    bool scalar;      /* a number or literal: ends at a delimiter */
} scan;

/* Advance over buf[pos, tail) within the value; true once it is complete. */
static bool scan_bytes(codec_split *sp, scan *s)
{
    const char *b = sp->buf;
    size_t i = sp->pos;
    for (; i < sp->tail; i++) {
        char c = b[i];
        if (s->scalar) {
            if (is_delimiter(c))
                break; /* not consumed: a newline is counted where it is read */
            continue;
        }
        if (c == '\n') {
            sp->line++;
            sp->line_start = sp->base + i + 1;
        }
        if (s->in_string) {
            if (s->escaped)
                s->escaped = false;
            else if (c == '\\')
                s->escaped = true;
            else if (c == '"') {
                s->in_string = false;
                if (s->depth == 0) {
                    i++;
                    break;
                }
            }
            continue;
        }
        if (c == '"') {
            s->in_string = true;
        } else if (c == '{' || c == '[') {
            s->depth++;
        } else if ((c == '}' || c == ']') && --s->depth == 0) {
            i++;
            break;
        }
    }
    bool done = i < sp->tail || (i == sp->tail && !s->scalar && !s->in_string &&
                                 s->depth == 0);
    sp->pos = i;
    return done;
}

/*
 * The value starting at pos (a non-space byte): buf[mark, pos) once read. A byte
 * that cannot start a value is taken alone, for jansson to name. The caller puts
 * the value's name in front of a message ("unexpected end of input").
 */
static error_code read_value(codec_split *sp, error_info *err)
{
    sp->mark = sp->pos;
    char first = sp->buf[sp->pos];
    scan s = {0};
    if (first == '"' || first == '{' || first == '[') {
        s.in_string = first == '"';
        s.depth = first == '"' ? 0 : 1;
        sp->pos++;
    } else if (is_delimiter(first)) {
        sp->pos++;
        return ERROR_OK;
    } else {
        s.scalar = true;
    }
    for (;;) {
        if (scan_bytes(sp, &s))
            return ERROR_OK;
        int got = refill(sp, err);
        if (got < 0)
            return err->code;
        if (got == 0)
            return s.scalar ? ERROR_OK
                            : error_set(err, ERROR_FORMAT, "unexpected end of input");
    }
}

error_code codec_split_parse(const codec_split_item *item, json_t **out, error_info *err)
{
    json_error_t jerr;
    *out = json_loadb(item->json, item->len, CODEC_LOAD_FLAGS, &jerr);
    if (*out)
        return ERROR_OK;
    /* jansson counts from the start of the range: make it the file's place. */
    size_t line = item->line + (size_t)(jerr.line > 1 ? jerr.line - 1 : 0);
    size_t column = (size_t)(jerr.column > 0 ? jerr.column : 1);
    if (jerr.line <= 1)
        column += item->column - 1;
    return error_set(err, codec_jansson_code(&jerr), "invalid JSON at line %zu, column %zu: %s",
                     line, column, codec_jansson_text(&jerr));
}

/* The value at sp->pos read into `item`: its range and the place it began
 * (item->line is set for a failure's message too). */
static error_code read_item(codec_split *sp, codec_split_item *item, error_info *err)
{
    item->line = sp->line;
    item->column = column_at(sp, sp->pos);
    if (read_value(sp, err))
        return err->code;
    item->json = sp->buf + sp->mark;
    item->len = sp->pos - sp->mark;
    item->index = sp->index;
    return ERROR_OK;
}

/* A member's name or value, read and parsed into *value (the caller's); `what`
 * names it in a failure's message. */
static error_code parse_item(codec_split *sp, const char *what, json_t **value, error_info *err)
{
    codec_split_item item = {0};
    *value = NULL;
    if (read_item(sp, &item, err))
        return error_prefix(err, "%s at line %zu", what, item.line);
    return codec_split_parse(&item, value, err);
}

/* ---- the document around the elements -------------------------------------- */

static error_code unexpected(const codec_split *sp, const char *expected, error_info *err)
{
    return error_set(err, ERROR_FORMAT, "expected %s at line %zu, column %zu", expected,
                     sp->line, column_at(sp, sp->pos));
}

static error_code start(codec_split *sp, error_info *err)
{
    while (sp->tail - sp->pos < 3 && !sp->eof) {
        if (refill(sp, err) < 0)
            return err->code;
    }
    /* A UTF-8 byte order mark, as some editors write. */
    if (sp->tail - sp->pos >= 3 && memcmp(sp->buf + sp->pos, "\xEF\xBB\xBF", 3) == 0) {
        sp->pos += 3;
        sp->line_start = 3;
    }
    int c;
    if (!peek(sp, &c, err))
        return err->code;
    if (c == -1)
        return error_set(err, ERROR_FORMAT, "empty document");
    if (c != '[' && c != '{')
        return error_set(err, ERROR_FORMAT, "expected a JSON array or object of %s",
                         sp->kind->plural);
    sp->pos++;
    sp->phase = c == '[' ? PHASE_ITEMS_FIRST : PHASE_MEMBERS_FIRST;
    return ERROR_OK;
}

/* An element of the array: buf[mark, pos) and its place. */
static error_code element(codec_split *sp, codec_split_item *item, error_info *err)
{
    if (read_item(sp, item, err))
        return error_prefix(err, "%s %zu (line %zu)", sp->kind->noun, sp->index + 1,
                            item->line);
    sp->index++;
    sp->phase = PHASE_ITEMS_NEXT;
    return ERROR_OK;
}

/* Where the array may go: an element, or its end. *got says an element was read. */
static error_code items(codec_split *sp, codec_split_item *item, bool *got, error_info *err)
{
    int c;
    if (!peek(sp, &c, err))
        return err->code;
    if (c == ']') {
        sp->pos++;
        sp->phase = sp->in_object ? PHASE_MEMBERS_NEXT : PHASE_END;
        return ERROR_OK;
    }
    if (sp->phase == PHASE_ITEMS_NEXT) {
        if (c == -1)
            return error_set(err, ERROR_FORMAT,
                             "unexpected end of input after %s %zu: expected ',' or ']'",
                             sp->kind->noun, sp->index);
        if (c != ',') {
            char after[64];
            snprintf(after, sizeof after, "',' or ']' after %s %zu", sp->kind->noun,
                     sp->index);
            return unexpected(sp, after, err);
        }
        sp->pos++;
        if (!peek(sp, &c, err))
            return err->code;
    }
    if (c == -1)
        return error_set(err, ERROR_FORMAT, "%s %zu (line %zu): unexpected end of input",
                         sp->kind->noun, sp->index + 1, sp->line);
    *got = true;
    return element(sp, item, err);
}

/* A member name of the list object, decoded; true when it is the array's. */
static error_code member_name(codec_split *sp, bool *is_list, error_info *err)
{
    json_t *value = NULL;
    if (parse_item(sp, "a member name", &value, err))
        return err->code;
    const char *key = sp->kind->api_plural;
    *is_list = json_is_string(value) && json_string_length(value) == strlen(key) &&
               memcmp(json_string_value(value), key, strlen(key)) == 0;
    bool is_string = json_is_string(value);
    json_decref(value);
    if (!is_string) {
        sp->pos = sp->mark;
        return unexpected(sp, "a member name", err);
    }
    int c;
    if (!peek(sp, &c, err))
        return err->code;
    if (c != ':')
        return unexpected(sp, "':'", err);
    sp->pos++;
    return peek(sp, &c, err) ? ERROR_OK : err->code;
}

static const char *type_word(int c)
{
    switch (c) {
    case '{':
        return "an object";
    case '"':
        return "a string";
    case 't':
    case 'f':
        return "a boolean";
    case 'n':
        return "null";
    case -1:
        return "nothing";
    default:
        return "a number";
    }
}

/* One member of the list object: the array's start, or another member's value
 * (checked as JSON and dropped). */
static error_code member(codec_split *sp, error_info *err)
{
    bool is_list = false;
    if (member_name(sp, &is_list, err))
        return err->code;
    const char *key = sp->kind->api_plural;
    int c = sp->pos < sp->tail ? (unsigned char)sp->buf[sp->pos] : -1;
    if (is_list) {
        if (sp->saw_list)
            return error_set(err, ERROR_FORMAT, "%s: duplicate member", key);
        if (c != '[')
            return error_set(err, ERROR_FORMAT, "%s: expected an array, got %s", key,
                             type_word(c));
        sp->saw_list = true;
        sp->in_object = true;
        sp->pos++;
        sp->phase = PHASE_ITEMS_FIRST;
        return ERROR_OK;
    }
    if (c == -1)
        return error_set(err, ERROR_FORMAT, "unexpected end of input in the list object");
    json_t *value = NULL;
    if (parse_item(sp, "a member", &value, err))
        return err->code;
    json_decref(value);
    sp->phase = PHASE_MEMBERS_NEXT;
    return ERROR_OK;
}

static error_code members(codec_split *sp, error_info *err)
{
    int c;
    if (!peek(sp, &c, err))
        return err->code;
    if (c == '}') {
        sp->pos++;
        if (!sp->saw_list)
            return error_set(err, ERROR_FORMAT, "%s: missing", sp->kind->api_plural);
        sp->phase = PHASE_END;
        return ERROR_OK;
    }
    if (sp->phase == PHASE_MEMBERS_NEXT) {
        if (c == -1)
            return error_set(err, ERROR_FORMAT, "unexpected end of input in the list object");
        if (c != ',')
            return unexpected(sp, "',' or '}'", err);
        sp->pos++;
        if (!peek(sp, &c, err))
            return err->code;
    }
    if (c == -1)
        return error_set(err, ERROR_FORMAT, "unexpected end of input in the list object");
    if (c != '"')
        return unexpected(sp, "a member name", err);
    return member(sp, err);
}

static error_code end(codec_split *sp, error_info *err)
{
    int c;
    if (!peek(sp, &c, err))
        return err->code;
    if (c != -1)
        return error_set(err, ERROR_FORMAT, "unexpected data after the %s at line %zu, column %zu",
                         sp->in_object ? "list object" : "array", sp->line,
                         column_at(sp, sp->pos));
    sp->phase = PHASE_DONE;
    return ERROR_OK;
}

error_code codec_split_next(codec_split *sp, codec_split_item *item, bool *more,
                            error_info *err)
{
    *more = false;
    memset(item, 0, sizeof *item);
    sp->mark = sp->pos; /* the previous item is given up */
    while (sp->phase != PHASE_DONE) {
        error_code rc = ERROR_OK;
        switch (sp->phase) {
        case PHASE_START:
            rc = start(sp, err);
            break;
        case PHASE_ITEMS_FIRST:
        case PHASE_ITEMS_NEXT:
            rc = items(sp, item, more, err);
            break;
        case PHASE_MEMBERS_FIRST:
        case PHASE_MEMBERS_NEXT:
            rc = members(sp, err);
            break;
        case PHASE_END:
            rc = end(sp, err);
            break;
        case PHASE_DONE:
            break;
        }
        if (rc != ERROR_OK) {
            sp->phase = PHASE_DONE; /* a broken document says nothing more */
            *more = false;
            return rc;
        }
        if (*more)
            return ERROR_OK;
    }
    return ERROR_OK;
}

/* ---- readers ---------------------------------------------------------------- */

error_code codec_read_memory(void *ctx, char *buf, size_t size, size_t *got, error_info *err)
{
    (void)err;
    codec_memory_input *in = ctx;
    size_t left = in->len - in->pos;
    size_t n = left < size ? left : size;
    if (n)
        memcpy(buf, in->data + in->pos, n);
    in->pos += n;
    *got = n;
    return ERROR_OK;
}

/*
 * Fast path for the common shape of an imported rule: an object of known keys
 * whose values are plain strings (no escapes), null, or, for "ip_policy", one such
 * object. jansson's lexer costs more than a database insert per rule, which would
 * halve import speed; this scanner fills the rule straight from the buffer.
 *
 * It only ever accepts: on anything unusual (escapes, numbers, unknown or
 * duplicate keys, a value that would fail a check) it declines and the element goes
 * through jansson, which gives the one authoritative answer and error message. So
 * for every input it either agrees with the full decoder or stays out of the way.
 *
 * A list page of rules is walked the same way (codec_page_fast): a pull reads a
 * thousand pages of a hundred rules, and jansson's tree of each page (built,
 * walked, freed with wiping) cost more than staging the rules.
 */
#include "codec_internal.h"

#include "rampart/buf.h"
#include "rampart/utf8.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum key {
    KEY_ID,
    KEY_URI,
    KEY_CREATED_AT,
    KEY_DESCRIPTION,
    KEY_METADATA,
    KEY_CIDR,
    KEY_ERROR,
    KEY_IP_POLICY,
    KEY_IP_POLICY_ID,
    KEY_ACTION,
    KEY_STATE,
    KEY_COUNT
};

#define RULE_TEXT(name, member)                                                    \
    { name, sizeof(name) - 1, offsetof(model_rule, member),                         \
      sizeof((model_rule *)0)->member }

/* Text keys come first, in enum order, and land directly in the rule. */
static const struct {
    const char *name;
    size_t len;
    size_t offset;
    size_t size;
} keys[KEY_COUNT] = {
    [KEY_ID] = RULE_TEXT("id", id),
    [KEY_URI] = RULE_TEXT("uri", uri),
    [KEY_CREATED_AT] = RULE_TEXT("created_at", created_at),
    [KEY_DESCRIPTION] = RULE_TEXT("description", description),
    [KEY_METADATA] = RULE_TEXT("metadata", metadata),
    [KEY_CIDR] = RULE_TEXT("cidr", cidr),
    [KEY_ERROR] = RULE_TEXT("error", error),
    [KEY_IP_POLICY] = {"ip_policy", 9, 0, 0},
    [KEY_IP_POLICY_ID] = {"ip_policy_id", 12, 0, 0},
    [KEY_ACTION] = {"action", 6, 0, 0},
    [KEY_STATE] = {"state", 5, 0, 0},
};

typedef struct cursor {
    const unsigned char *p;
    const unsigned char *end;
} cursor;

/* A string or null value: `text` is NULL for null. */
typedef struct value {
    const char *text;
    size_t len;
} value;

typedef struct fast_rule {
    model_rule *rule;
    unsigned seen;    /* keys met, to leave duplicates to jansson */
    unsigned present; /* keys with a non-null value */
    unsigned policy_seen;
    value policy_id;
    value ip_policy_id;
    value action;
    value state;
} fast_rule;

static void skip_space(cursor *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool at(const cursor *c, unsigned char ch)
{
    return c->p < c->end && *c->p == ch;
}

/* A string without escapes or control characters, in valid UTF-8. */
static bool scan_string(cursor *c, value *out)
{
    const unsigned char *start = ++c->p;
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            out->text = (const char *)start;
            out->len = (size_t)(c->p - start);
            c->p++;
            return true;
        }
        if (ch == '\\' || ch < 0x20)
            return false;
        uint32_t cp;
        int n = ch < 0x80 ? 1 : utf8_decode((const char *)c->p, (size_t)(c->end - c->p), &cp);
        if (n <= 0)
            return false;
        c->p += n;
    }
    return false;
}

static bool scan_value(cursor *c, value *out)
{
    if (at(c, '"'))
        return scan_string(c, out);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        out->text = NULL;
        out->len = 0;
        return true;
    }
    return false;
}

/* Reads one element of a container at c (an object's member, an array's item). */
typedef bool (*element_fn)(void *ctx, cursor *c);

/* The elements of the container opened at c->p, each read by `element`,
 * separated by commas, up to `close`. */
static bool scan_elements(cursor *c, unsigned char close, void *ctx, element_fn element)
{
    c->p++;
    skip_space(c);
    if (at(c, close)) {
        c->p++;
        return true;
    }
    for (;;) {
        if (!element(ctx, c))
            return false;
        skip_space(c);
        if (at(c, close)) {
            c->p++;
            return true;
        }
        if (!at(c, ','))
            return false;
        c->p++;
        skip_space(c);
    }
}

/* Reads one member's value at c; ctx is the caller's (a fast_rule, a fast_page). */
typedef bool (*member_fn)(void *ctx, const value *key, cursor *c);

typedef struct object_scan {
    void *ctx;
    member_fn member;
} object_scan;

/* One member: its key, ':', and its value, read by the scan's `member`. */
static bool object_member(void *ctx, cursor *c)
{
    const object_scan *o = ctx;
    value key;
    if (!at(c, '"') || !scan_string(c, &key))
        return false;
    skip_space(c);
    if (!at(c, ':'))
        return false;
    c->p++;
    skip_space(c);
    return o->member(o->ctx, &key, c);
}

/* The members of the object at c->p, each handed to `member` to read its value. */
static bool scan_object(cursor *c, void *ctx, member_fn member)
{
    object_scan o = {ctx, member};
    return scan_elements(c, '}', &o, object_member);
}

static bool key_is(const value *key, const char *name, size_t len)
{
    return key->len == len && memcmp(key->text, name, len) == 0;
}

static bool policy_member(void *ctx, const value *key, cursor *c)
{
    fast_rule *f = ctx;
    unsigned bit;
    value v;
    if (key_is(key, "id", 2))
        bit = 1;
    else if (key_is(key, "uri", 3))
        bit = 2;
    else
        return false;
    if ((f->policy_seen & bit) || !scan_value(c, &v))
        return false;
    f->policy_seen |= bit;
    if (bit == 1) {
        f->policy_id = v;
        return true;
    }
    if (v.len >= sizeof f->rule->policy_uri)
        return false;
    memcpy(f->rule->policy_uri, v.text ? v.text : "", v.len);
    f->rule->policy_uri[v.len] = '\0';
    return true;
}

static bool store_text(fast_rule *f, enum key k, const value *v)
{
    if (v->len >= keys[k].size)
        return false;
    char *dst = (char *)f->rule + keys[k].offset;
    memcpy(dst, v->text ? v->text : "", v->len);
    dst[v->len] = '\0';
    return true;
}

static bool rule_member(void *ctx, const value *key, cursor *c)
{
    fast_rule *f = ctx;
    enum key k = 0;
    while (k < KEY_COUNT && !key_is(key, keys[k].name, keys[k].len))
        k++;
    if (k == KEY_COUNT || (f->seen & (1u << k)))
        return false;
    f->seen |= 1u << k;
    if (k == KEY_IP_POLICY && at(c, '{')) {
        f->present |= 1u << k;
        return scan_object(c, f, policy_member);
    }
    value v;
    if (!scan_value(c, &v) || (k == KEY_IP_POLICY && v.text))
        return false;
    if (v.text)
        f->present |= 1u << k;
    if (k == KEY_IP_POLICY)
        return true; /* null: no policy given this way; nothing to keep */
    if (k < KEY_IP_POLICY)
        return store_text(f, k, &v);
    value *slot = k == KEY_IP_POLICY_ID ? &f->ip_policy_id
                  : k == KEY_ACTION     ? &f->action
                                        : &f->state;
    *slot = v;
    return true;
}

/* A copy of a short value, for the parsers that want a C string. */
static bool word(const value *v, char *buf, size_t size)
{
    if (!v->text || v->len >= size)
        return false;
    memcpy(buf, v->text, v->len);
    buf[v->len] = '\0';
    return true;
}

static bool same(const value *a, const value *b)
{
    return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
}

/* The policy rules of codec_rule_from_json, on the values collected. */
static bool resolve_policy(fast_rule *f)
{
    model_rule *r = f->rule;
    const value *id = &f->ip_policy_id;
    if (f->present & (1u << KEY_IP_POLICY)) {
        if (!f->policy_id.text)
            return false;
        if (id->text && !same(id, &f->policy_id))
            return false;
        id = &f->policy_id;
    }
    return word(id, r->policy_id, sizeof r->policy_id);
}

static bool resolve(fast_rule *f)
{
    model_rule *r = f->rule;
    char text[16];
    if (!(f->present & (1u << KEY_CIDR)) || !resolve_policy(f))
        return false;
    if (!word(&f->action, text, sizeof text) || !model_action_parse(text, &r->action))
        return false;
    r->state = r->id[0] ? MODEL_STATE_SYNCED : MODEL_STATE_NEW;
    if (!f->state.text)
        return true;
    return word(&f->state, text, sizeof text) && model_state_parse(text, &r->state);
}

bool codec_rule_fast(const char *json, size_t len, size_t *end, model_rule *out)
{
    cursor c = {(const unsigned char *)json, (const unsigned char *)json + len};
    fast_rule f = {.rule = out};
    if (!at(&c, '{'))
        return false;
    for (enum key k = 0; k < KEY_IP_POLICY; k++)
        ((char *)out + keys[k].offset)[0] = '\0';
    out->policy_uri[0] = '\0';
    if (!scan_object(&c, &f, rule_member) || !resolve(&f))
        return false;
    *end = (size_t)(c.p - (const unsigned char *)json);
    return true;
}

/* ---- a rules list page ------------------------------------------------------ */

/* The page's members: each once, nothing else (anything else goes to jansson). */
enum page_member { PAGE_ITEMS = 1u << 0, PAGE_URI = 1u << 1, PAGE_NEXT = 1u << 2 };

typedef struct fast_page {
    codec_page *page;
    size_t cap;
    unsigned seen;
} fast_page;

/* A URL member: a string of at most MODEL_URI_MAX bytes, or null (""). An empty
 * next_page_uri is an error the full decoder names. */
static bool page_text(cursor *c, char *dst, bool empty_ok)
{
    value v;
    if (!scan_value(c, &v) || v.len > MODEL_URI_MAX || (v.text && !v.len && !empty_ok))
        return false;
    memcpy(dst, v.text ? v.text : "", v.len);
    dst[v.len] = '\0';
    return true;
}

/* Room for one more item. The array grows by doubling and is never zeroed:
 * codec_rule_fast writes every field of a rule. */
static bool page_room(fast_page *f)
{
    codec_page *page = f->page;
    return buf_grow_array((void **)&page->items, &f->cap, page->count + 1, sizeof *page->items);
}

/* One rule of the page's array, appended to the page. */
static bool page_item(void *ctx, cursor *c)
{
    fast_page *f = ctx;
    if (!page_room(f))
        return false;
    model_object *item = &f->page->items[f->page->count];
    size_t used;
    item->kind = MODEL_KIND_RULE;
    if (!codec_rule_fast((const char *)c->p, (size_t)(c->end - c->p), &used, &item->rule))
        return false;
    f->page->count++;
    c->p += used;
    return true;
}

static bool page_items(fast_page *f, cursor *c)
{
    return at(c, '[') && scan_elements(c, ']', f, page_item);
}

static bool page_member(void *ctx, const value *key, cursor *c)
{
    fast_page *f = ctx;
    unsigned bit = key_is(key, "ip_policy_rules", 15) ? PAGE_ITEMS
                   : key_is(key, "uri", 3)            ? PAGE_URI
                   : key_is(key, "next_page_uri", 13) ? PAGE_NEXT
                                                      : 0;
    if (!bit || (f->seen & bit))
        return false;
    f->seen |= bit;
    if (bit == PAGE_ITEMS)
        return page_items(f, c);
    if (bit == PAGE_URI)
        return page_text(c, f->page->uri, true);
    return page_text(c, f->page->next_page_uri, false);
}

bool codec_page_fast(model_kind kind, const char *json, size_t len, codec_page *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (kind != MODEL_KIND_RULE || !json)
        return false;
    cursor c = {(const unsigned char *)json, (const unsigned char *)json + len};
    fast_page f = {.page = out};
    skip_space(&c);
    bool ok = at(&c, '{') && scan_object(&c, &f, page_member);
    skip_space(&c);
    /* The items and the end of the listing must be said; nothing may follow. */
    ok = ok && c.p == c.end && (f.seen & PAGE_ITEMS) && (f.seen & PAGE_NEXT);
    if (!ok) {
        free(out->items); /* rules own no heap: nothing to clear item by item */
        memset(out, 0, sizeof *out);
        out->kind = kind;
    }
    return ok;
}

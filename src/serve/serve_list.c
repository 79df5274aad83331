/* List pages in the remote API's shape: see rampart/serve_list.h. */
#include "rampart/serve_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/codec.h"
#include "rampart/validate.h"

/* ---- query ---- */

static bool parse_limit(const char *text, size_t *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 3 || strspn(text, "0123456789") != len)
        return false;
    long v = strtol(text, NULL, 10);
    if (v < 1 || v > SERVE_LIST_LIMIT_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* A parameter name as it may appear in a message: short, no controls. */
static void shown_name(char *dst, size_t size, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < size && i < 40; i++) {
        unsigned char ch = (unsigned char)name[i];
        dst[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    dst[i] = '\0';
}

static bool take_param(const http_param *p, const char *prefix, serve_list_query *q,
                       unsigned *seen, char *why, size_t why_size)
{
    static const char *const names[] = {"limit", "before_id"};
    unsigned which = 0;
    while (which < 2 && strcmp(p->name, names[which]) != 0)
        which++;
    if (which == 2) {
        char name[48];
        shown_name(name, sizeof name, p->name);
        snprintf(why, why_size, "unknown query parameter '%s': the supported ones are "
                 "limit and before_id", name);
        return false;
    }
    if (*seen & (1u << which)) {
        snprintf(why, why_size, "query parameter %s given more than once", names[which]);
        return false;
    }
    *seen |= 1u << which;
    if (which == 0 && !parse_limit(p->value, &q->limit)) {
        snprintf(why, why_size, "limit must be a whole number from 1 to %d",
                 SERVE_LIST_LIMIT_MAX);
        return false;
    }
    if (which == 1 && validate_id(p->value, prefix, "before_id", NULL) != ERROR_OK) {
        snprintf(why, why_size, "before_id must be an id of this collection (%s_…)", prefix);
        return false;
    }
    if (which == 1)
        q->before_id = p->value;
    return true;
}

bool serve_list_parse(const http_request *req, model_kind kind, serve_list_query *q,
                      char *why, size_t why_size)
{
    const char *prefix = kind_get(kind)->id_prefix;
    q->limit = SERVE_LIST_LIMIT_MAX;
    q->before_id = NULL;
    if (req->query_nul) {
        snprintf(why, why_size, "a query parameter holds a NUL character");
        return false;
    }
    if (req->query_overflow) {
        snprintf(why, why_size, "too many query parameters: the supported ones are limit "
                 "and before_id");
        return false;
    }
    unsigned seen = 0;
    for (size_t i = 0; i < req->nquery; i++) {
        if (!take_param(&req->query[i], prefix, q, &seen, why, why_size))
            return false;
    }
    return true;
}

/* ---- uris ---- */

const char *serve_list_noun(model_kind kind)
{
    return kind_get(kind)->api_noun;
}

void serve_list_uris(const char *base, model_object *obj)
{
    const kind_desc *d = kind_get(obj->kind);
    snprintf(obj->head.uri, sizeof obj->head.uri, "%s%s/%s", base, d->api_path, obj->head.id);
    if (obj->kind == MODEL_KIND_RULE) /* the rule's policy is a resource of its own */
        snprintf(obj->rule.policy_uri, sizeof obj->rule.policy_uri, "%s/ip_policies/%s", base,
                 obj->rule.policy_id);
}

/* ---- the page ---- */

/* {"<plural>":[items],"uri":…,"next_page_uri":…|null}; `items` newest first, and
 * `next_before` the id the next page starts before (NULL: this is the last page). */
static char *assemble(const kind_desc *d, const char *base, const serve_list_query *q,
                      char *const *items, size_t count, const char *next_before)
{
    buf_t t = {0};
    buf_puts(&t, "{\"");
    buf_puts(&t, d->api_plural);
    buf_puts(&t, "\":[");
    for (size_t i = 0; i < count; i++) {
        buf_puts(&t, i ? "," : "");
        buf_puts(&t, items[i]);
    }
    char uri[MODEL_URI_MAX + 128];
    snprintf(uri, sizeof uri, "%s%s", base, d->api_path);
    buf_puts(&t, "],\"uri\":");
    buf_json_string(&t, uri);
    buf_puts(&t, ",\"next_page_uri\":");
    if (next_before) {
        snprintf(uri, sizeof uri, "%s%s?before_id=%s&limit=%zu", base, d->api_path,
                 next_before, q->limit);
        buf_json_string(&t, uri);
    } else {
        buf_puts(&t, "null");
    }
    buf_puts(&t, "}");
    return buf_take(&t);
}

/* The page's rows (ascending, as the store gives them) encoded newest first and
 * assembled; `more` says the oldest row only proves a next page. */
static char *encode_page(const kind_desc *d, const char *base, const serve_list_query *q,
                         model_object *rows, size_t n, bool more)
{
    size_t first = more ? 1 : 0;
    char **items = calloc(n + 1, sizeof *items);
    bool encoded = items != NULL;
    size_t count = 0;
    for (size_t i = n; encoded && i-- > first;) {
        serve_list_uris(base, &rows[i]);
        items[count] = codec_object_encode(&rows[i], 0); /* a credential's token: null */
        encoded = items[count++] != NULL;
    }
    char *body = encoded ? assemble(d, base, q, items, count,
                                    more ? model_object_id(&rows[first]) : NULL)
                         : NULL;
    for (size_t i = 0; items && i < count; i++)
        free(items[i]);
    free(items);
    return body;
}

error_code serve_list_page(store *st, model_kind kind, const serve_list_query *q,
                           unsigned states, const char *base, char **body, error_info *err)
{
    *body = NULL;
    model_object *rows = calloc(q->limit + 1, sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    store_query sq = {.sort = STORE_SORT_ID, .states = states};
    size_t n = 0;
    /* Newest first: read backward from the cursor, one row more than asked. */
    error_code rc = store_page(st, kind, &sq, q->before_id ? q->before_id : "",
                               STORE_BACKWARD, q->limit + 1, rows, &n, err);
    if (rc == ERROR_OK) {
        *body = encode_page(kind_get(kind), base, q, rows, n, n > q->limit);
        if (!*body)
            rc = error_set(err, ERROR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        model_object_clear(&rows[i]);
    free(rows);
    return rc;
}

/* ---- entity tags ---- */

/* FNV-1a, 64 bits, over `text` and a separator: enough to tell what was asked
 * apart (collisions only matter within one cache id and counter). */
static unsigned long long fnv_add(unsigned long long h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (h ^ 0x0aull) * 1099511628211ull;
}

void serve_list_etag(const store_change_tag *tag, const char *base, model_kind kind,
                     const serve_list_query *q, const char *id, char *out, size_t size)
{
    char limit[24] = "";
    unsigned long long h = 14695981039346656037ull;
    h = fnv_add(h, base);
    h = fnv_add(h, kind_get(kind)->api_path);
    if (q) {
        snprintf(limit, sizeof limit, "limit=%zu", q->limit);
        h = fnv_add(h, limit);
        h = fnv_add(h, q->before_id ? q->before_id : "");
    } else {
        h = fnv_add(h, "id");
        h = fnv_add(h, id ? id : "");
    }
    /* The kind by its command's letter: 'r' rules, 'c' creds. */
    snprintf(out, size, "\"%s-%c%lld-%016llx\"", tag->cache_id,
             kind_get(kind)->command[0], tag->counter, h);
}

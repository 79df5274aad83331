/* List pages in the remote API's shape: see rampart/serve_list.h. */
#include "rampart/serve_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool serve_list_parse(const http_request *req, const char *prefix, serve_list_query *q,
                      char *why, size_t why_size)
{
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

void serve_list_rule_uris(const char *base, model_rule *rule)
{
    snprintf(rule->uri, sizeof rule->uri, "%s/ip_policy_rules/%s", base, rule->id);
    snprintf(rule->policy_uri, sizeof rule->policy_uri, "%s/ip_policies/%s", base,
             rule->policy_id);
}

void serve_list_cred_uri(const char *base, model_cred *cred)
{
    snprintf(cred->uri, sizeof cred->uri, "%s/credentials/%s", base, cred->id);
}

/* ---- the page ---- */

/* Encoded items, newest first, and the id the next page starts before. */
typedef struct page_items {
    char **items;
    size_t count;
    const char *next_before; /* NULL: last page */
} page_items;

typedef struct text {
    char *data;
    size_t len, cap;
    bool failed;
} text;

static void put(text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n + 1);
    t->len += n;
}

/* A JSON string of a uri: built from the base (validated, no controls) and ids;
 * quotes and backslashes are escaped all the same. */
static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (char one[2] = {0}; *s; s++) {
        if (*s == '"' || *s == '\\')
            put(t, "\\");
        one[0] = *s;
        put(t, one);
    }
    put(t, "\"");
}

/* {"<path>":[items],"uri":…,"next_page_uri":…|null} */
static char *assemble(const char *base, const char *path, const serve_list_query *q,
                      const page_items *p)
{
    text t = {0};
    put(&t, "{\"");
    put(&t, path);
    put(&t, "\":[");
    for (size_t i = 0; i < p->count; i++) {
        put(&t, i ? "," : "");
        put(&t, p->items[i]);
    }
    char uri[MODEL_URI_MAX + 128];
    snprintf(uri, sizeof uri, "%s/%s", base, path);
    put(&t, "],\"uri\":");
    put_string(&t, uri);
    put(&t, ",\"next_page_uri\":");
    if (p->next_before) {
        snprintf(uri, sizeof uri, "%s/%s?before_id=%s&limit=%zu", base, path,
                 p->next_before, q->limit);
        put_string(&t, uri);
    } else {
        put(&t, "null");
    }
    put(&t, "}");
    if (t.failed) {
        free(t.data);
        return NULL;
    }
    return t.data;
}

static error_code finish(const char *base, const char *path, const serve_list_query *q,
                         page_items *p, char **body, error_info *err)
{
    bool encoded = true;
    for (size_t i = 0; i < p->count; i++)
        encoded = encoded && p->items[i];
    *body = encoded ? assemble(base, path, q, p) : NULL;
    for (size_t i = 0; i < p->count; i++)
        free(p->items[i]);
    free(p->items);
    return *body ? ERROR_OK : error_set(err, ERROR_NOMEM, "out of memory");
}

error_code serve_list_rules(store *st, const serve_list_query *q, unsigned states,
                            const char *base, char **body, error_info *err)
{
    *body = NULL;
    model_rule *rows = calloc(q->limit + 1, sizeof *rows);
    page_items p = {.items = calloc(q->limit + 1, sizeof(char *))};
    if (!rows || !p.items) {
        free(rows);
        free(p.items);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    store_query sq = {.sort = STORE_SORT_ID, .states = states};
    size_t n = 0;
    error_code rc = store_rule_page(st, &sq, q->before_id ? q->before_id : "", STORE_BACKWARD,
                                    q->limit + 1, rows, &n, err);
    /* rows[] ascends; with limit+1 rows, rows[0] only proves there is more. */
    size_t oldest = n > q->limit ? 1 : 0;
    for (size_t i = n; rc == ERROR_OK && i-- > oldest;) {
        serve_list_rule_uris(base, &rows[i]);
        p.items[p.count++] = codec_rule_encode(&rows[i], 0);
    }
    p.next_before = rc == ERROR_OK && oldest ? rows[oldest].id : NULL;
    if (rc == ERROR_OK)
        rc = finish(base, "ip_policy_rules", q, &p, body, err);
    else
        free(p.items);
    free(rows);
    return rc;
}

error_code serve_list_creds(store *st, const serve_list_query *q, unsigned states,
                            const char *base, char **body, error_info *err)
{
    *body = NULL;
    model_cred *rows = calloc(q->limit + 1, sizeof *rows);
    page_items p = {.items = calloc(q->limit + 1, sizeof(char *))};
    if (!rows || !p.items) {
        free(rows);
        free(p.items);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    store_query sq = {.sort = STORE_SORT_ID, .states = states};
    size_t n = 0;
    error_code rc = store_cred_page(st, &sq, q->before_id ? q->before_id : "", STORE_BACKWARD,
                                    q->limit + 1, rows, &n, err);
    size_t oldest = n > q->limit ? 1 : 0;
    for (size_t i = n; rc == ERROR_OK && i-- > oldest;) {
        serve_list_cred_uri(base, &rows[i]);
        p.items[p.count++] = codec_cred_encode(&rows[i], 0); /* token: null */
    }
    p.next_before = rc == ERROR_OK && oldest ? rows[oldest].id : NULL;
    if (rc == ERROR_OK)
        rc = finish(base, "credentials", q, &p, body, err);
    else
        free(p.items);
    for (size_t i = 0; i < n; i++)
        model_cred_clear(&rows[i]);
    free(rows);
    return rc;
}

/*
 * emulator: list pages, newest first. The store pages in ascending id order, so a
 * page is read BACKWARD from the cursor (before_id, or the end) with one row more
 * than asked: that row, when it comes, says a next page exists and is not sent.
 * The codec encodes one object at a time; the page around them is assembled here.
 */
#include "emulator_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/validate.h"

enum { LIMIT_MAX = 100 };

typedef struct list_query {
    size_t limit;
    const char *before_id; /* NULL: from the newest */
} list_query;

/* What a collection needs to know about its kind of row. */
typedef struct collection {
    const char *path;   /* "ip_policy_rules" */
    const char *prefix; /* of before_id: "ipr" */
} collection;

static const collection rules_coll = {"ip_policy_rules", "ipr"};
static const collection creds_coll = {"credentials", "cr"};

/* ---- query ---- */

static bool parse_limit(const char *text, size_t *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 3 || strspn(text, "0123456789") != len)
        return false;
    long v = strtol(text, NULL, 10);
    if (v < 1 || v > LIMIT_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* Check one argument; false (and `resp` holds the 400) when it is not acceptable. */
static bool take_param(const http_param *p, const collection *c, list_query *q,
                       unsigned *seen, http_response *resp)
{
    static const char *const names[] = {"limit", "before_id"};
    unsigned which = 0;
    while (which < 2 && strcmp(p->name, names[which]) != 0)
        which++;
    if (which == 2) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "unknown query parameter '%.40s': the "
                  "supported ones are limit and before_id", p->name);
        return false;
    }
    if (*seen & (1u << which)) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "query parameter %s given more than once",
                  names[which]);
        return false;
    }
    *seen |= 1u << which;
    if (which == 0 && !parse_limit(p->value, &q->limit)) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "limit must be a whole number from 1 to %d",
                  LIMIT_MAX);
        return false;
    }
    if (which == 1 && validate_id(p->value, c->prefix, "before_id", NULL) != ERROR_OK) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "before_id must be an id of this "
                  "collection (%s_…)", c->prefix);
        return false;
    }
    if (which == 1)
        q->before_id = p->value;
    return true;
}

static bool parse_query(const http_request *req, const collection *c, list_query *q,
                        http_response *resp)
{
    q->limit = LIMIT_MAX;
    q->before_id = NULL;
    if (req->query_nul) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "a query parameter holds a NUL character");
        return false;
    }
    if (req->query_overflow) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "too many query parameters: the supported "
                  "ones are limit and before_id");
        return false;
    }
    unsigned seen = 0;
    for (size_t i = 0; i < req->nquery; i++) {
        if (!take_param(&req->query[i], c, q, &seen, resp))
            return false;
    }
    return true;
}

/* ---- a growing JSON text ---- */

typedef struct jbuf {
    char *data;
    size_t len, cap;
    bool failed;
} jbuf;

static void put_raw(jbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void put_text(jbuf *b, const char *s)
{
    put_raw(b, s, strlen(s));
}

/* A JSON string literal. Only uris go through here: built from the base URL (no
 * spaces or controls, see validate_uri) and ids; quotes and backslashes are
 * escaped all the same. */
static void put_string(jbuf *b, const char *s)
{
    put_raw(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            put_raw(b, "\\", 1);
        put_raw(b, s, 1);
    }
    put_raw(b, "\"", 1);
}

/* Takes over `item` (an encoded object). */
static void put_item(jbuf *b, char *item, bool first)
{
    if (!item)
        b->failed = true;
    if (!first)
        put_raw(b, ",", 1);
    if (item)
        put_text(b, item);
    free(item);
}

/* `{"<path>":[` */
static void open_page(jbuf *b, const collection *c)
{
    put_text(b, "{\"");
    put_text(b, c->path);
    put_text(b, "\":[");
}

/* `],"uri":…,"next_page_uri":…}`; `last_id` NULL: no next page. */
static void close_page(jbuf *b, const emulator *em, const collection *c,
                       const list_query *q, const char *last_id)
{
    char uri[EMU_BASE_URL_MAX + 256];
    snprintf(uri, sizeof uri, "%s/%s", em->base_url, c->path);
    put_text(b, "],\"uri\":");
    put_string(b, uri);
    put_text(b, ",\"next_page_uri\":");
    if (!last_id) {
        put_text(b, "null}");
        return;
    }
    snprintf(uri, sizeof uri, "%s/%s?before_id=%s&limit=%zu", em->base_url, c->path,
             last_id, q->limit);
    put_string(b, uri);
    put_text(b, "}");
}

static void send_page(jbuf *b, http_response *resp)
{
    if (b->failed) {
        free(b->data);
        emu_error(resp, 500, "ERR_INTERNAL", "out of memory");
        return;
    }
    http_response_set(resp, 200, b->data);
}

/* ---- the two lists ---- */

void emu_list_rules(emulator *em, const http_request *req, http_response *resp)
{
    list_query q;
    if (!parse_query(req, &rules_coll, &q, resp))
        return;
    model_rule *rows = calloc(q.limit + 1, sizeof *rows);
    if (!rows) {
        emu_error(resp, 500, "ERR_INTERNAL", "out of memory");
        return;
    }
    store_query sq = {.sort = STORE_SORT_ID};
    size_t n = 0;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_rule_page(em->st, &sq, q.before_id ? q.before_id : "",
                                    STORE_BACKWARD, q.limit + 1, rows, &n, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK) {
        free(rows);
        emu_store_error(resp, &e);
        return;
    }
    /* rows[] ascends; with limit+1 rows, rows[0] only proves there is more. */
    size_t oldest = n > q.limit ? 1 : 0;
    jbuf b = {0};
    open_page(&b, &rules_coll);
    for (size_t i = n; i-- > oldest;) {
        emu_rule_uris(em, &rows[i]);
        put_item(&b, codec_rule_encode(&rows[i], 0), i + 1 == n);
    }
    close_page(&b, em, &rules_coll, &q, oldest ? rows[oldest].id : NULL);
    free(rows);
    send_page(&b, resp);
}

void emu_list_creds(emulator *em, const http_request *req, http_response *resp)
{
    list_query q;
    if (!parse_query(req, &creds_coll, &q, resp))
        return;
    model_cred *rows = calloc(q.limit + 1, sizeof *rows);
    if (!rows) {
        emu_error(resp, 500, "ERR_INTERNAL", "out of memory");
        return;
    }
    store_query sq = {.sort = STORE_SORT_ID};
    size_t n = 0;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_cred_page(em->st, &sq, q.before_id ? q.before_id : "",
                                    STORE_BACKWARD, q.limit + 1, rows, &n, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK) {
        free(rows);
        emu_store_error(resp, &e);
        return;
    }
    size_t oldest = n > q.limit ? 1 : 0;
    jbuf b = {0};
    open_page(&b, &creds_coll);
    for (size_t i = n; i-- > oldest;) {
        emu_cred_uri(em, &rows[i]);
        put_item(&b, codec_cred_encode(&rows[i], 0), i + 1 == n); /* token: null */
    }
    close_page(&b, em, &creds_coll, &q, oldest ? rows[oldest].id : NULL);
    for (size_t i = 0; i < n; i++)
        model_cred_clear(&rows[i]);
    free(rows);
    send_page(&b, resp);
}

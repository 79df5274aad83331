/*
 * A list page (codec_page_decode): the envelope, its items of one kind through
 * the object decoders (codec_decode.c), an item that does not decode refused
 * with its reason. The common shape of a rules page takes the fast path
 * (codec_fast.c) first. The kind descriptor gives the names; codec_decode.c
 * itself never reads it, so kind.c and the decoders depend one way.
 */
#include "codec_internal.h"

#include "rampart/kind.h"

#include <stdlib.h>
#include <string.h>

/* The list envelope; `*items` is the array under `key`. */
static error_code page_envelope(const json_t *root, const char *key,
                                const json_t **items, char *uri, char *next,
                                error_info *err)
{
    error_code rc = codec_need_object(root, err);
    if (rc != ERROR_OK)
        return rc;
    *items = json_object_get(root, key);
    if (!*items)
        return error_set(err, ERROR_FORMAT, "%s: missing", key);
    if (!json_is_array(*items))
        return error_set(err, ERROR_FORMAT, "%s: expected an array, got %s", key,
                         codec_type_name(*items));
    rc = codec_get_text(root, "uri", "uri", uri, MODEL_URI_MAX + 1, false, err);
    if (rc == ERROR_OK)
        rc = codec_get_text(root, "next_page_uri", "next_page_uri", next, MODEL_URI_MAX + 1,
                      false, err);
    return rc;
}

/*
 * The end of a listing must be said (null), never implied by a missing or empty
 * field: a sync takes absence from a complete listing as deletion. Checked after
 * the items, whose errors say more.
 */
static error_code page_end_said(const json_t *root, const char *next, error_info *err)
{
    const json_t *v = json_object_get(root, "next_page_uri");
    if (!v)
        return error_set(err, ERROR_FORMAT, "next_page_uri: missing (null on the last page)");
    if (json_is_string(v) && !next[0])
        return error_set(err, ERROR_FORMAT, "next_page_uri: empty (null on the last page)");
    return ERROR_OK;
}

/* How a list page's items of one kind are read from their parsed JSON. */
typedef error_code (*item_decoder)(const json_t *value, model_object *out, error_info *err);

static error_code rule_item(const json_t *value, model_object *out, error_info *err)
{
    return codec_rule_from_json(value, &out->rule, err);
}

static error_code cred_item(const json_t *value, model_object *out, error_info *err)
{
    return codec_cred_from_json(value, &out->cred, err);
}

static const item_decoder item_decoders[MODEL_KIND_COUNT] = {
    [MODEL_KIND_RULE] = rule_item,
    [MODEL_KIND_CRED] = cred_item,
};

/* An item that did not decode is left out of the page, with its id and the
 * reason, so the rest of the page is kept; one without a readable id says
 * nothing anyone could act on, and fails the page. */
static error_code refuse_item(const json_t *value, codec_page *page, error_info *why)
{
    const json_t *id = json_is_object(value) ? json_object_get(value, "id") : NULL;
    const char *text = json_is_string(id) ? json_string_value(id) : "";
    if (!text[0] || strlen(text) > MODEL_ID_MAX)
        return why->code;
    codec_refusal *r = &page->refused[page->refused_count++];
    memcpy(r->id, text, strlen(text) + 1);
    memcpy(r->msg, why->msg, sizeof r->msg);
    return ERROR_OK;
}

/* The items into a heap array; page->count counts the decoded ones, even on
 * failure, so codec_page_free releases exactly those. */
static error_code decode_items(const json_t *array, codec_page *page, error_info *err)
{
    size_t n = json_array_size(array);
    if (n == 0)
        return ERROR_OK;
    page->items = calloc(n, sizeof *page->items);
    page->refused = calloc(n, sizeof *page->refused);
    if (!page->items || !page->refused)
        return error_set(err, ERROR_NOMEM, "out of memory");
    const char *noun = kind_get(page->kind)->noun;
    for (size_t i = 0; i < n; i++) {
        const json_t *value = json_array_get(array, i);
        model_object *item = &page->items[page->count];
        model_object_init(item, page->kind);
        error_code rc = item_decoders[page->kind](value, item, err);
        if (rc == ERROR_OK) {
            page->count++;
            continue;
        }
        model_object_clear(item);
        error_prefix(err, "%s %zu", noun, i + 1);
        if (rc == ERROR_NOMEM || refuse_item(value, page, err) != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

error_code codec_page_decode(model_kind kind, const char *json, size_t len, codec_page *out,
                             error_info *err)
{
    /* The common shape without jansson (codec_fast.c); anything else through it. */
    if ((unsigned)kind < MODEL_KIND_COUNT && codec_page_fast(kind, json, len, out))
        return ERROR_OK;
    return codec_page_decode_json(kind, json, len, out, err);
}

error_code codec_page_decode_json(model_kind kind, const char *json, size_t len,
                                  codec_page *out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err); /* an item's refusal keeps its reason, asked for or not */
    memset(out, 0, sizeof *out);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "a list page of unknown kind %d", (int)kind);
    out->kind = kind;
    json_t *root;
    const json_t *array = NULL;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = page_envelope(root, kind_get(kind)->api_plural, &array, out->uri,
                           out->next_page_uri, err);
    if (rc == ERROR_OK)
        rc = decode_items(array, out, err);
    if (rc == ERROR_OK)
        rc = page_end_said(root, out->next_page_uri, err);
    json_decref(root);
    if (rc != ERROR_OK)
        codec_page_free(out);
    return rc;
}

void codec_page_free(codec_page *page)
{
    if (!page)
        return;
    /* Only a kind that owns heap (a credential's ACL, its token wiped) is cleared
     * item by item: a page of rules is freed at once. */
    bool owns = model_kind_owns_heap(page->kind);
    for (size_t i = 0; owns && i < page->count; i++)
        model_object_clear(&page->items[i]);
    free(page->items);
    free(page->refused);
    memset(page, 0, sizeof *page);
}

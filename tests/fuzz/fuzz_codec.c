/*
 * Fuzz target: every decoder of the codec (rule, credential, both list pages,
 * error bodies, the streaming import, read whole and in chunks of 1 to 7 bytes,
 * which must agree). The first byte picks the decoder, the rest is the document.
 * Whatever decodes is encoded again (every encoder and flag) and the encoding must
 * decode to the same value: the wire format round-trips. A rules page the fast
 * path takes must read the same through jansson alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "../../src/core/codec/codec_internal.h" /* the fast page path against jansson's */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every encoding of a value must be made: the JSON with state is kept (the others
 * are freed) for the read back. */
static char *encoded(char *json, char *pretty, char *create)
{
    if (!json || !pretty || !create)
        abort();
    free(pretty);
    free(create);
    return json;
}

/* The value read back, encoded again, must be `json` to the byte. Frees both. */
static void same_again(char *again, char *json)
{
    if (!again || strcmp(again, json) != 0)
        abort();
    free(again);
    free(json);
}

/* A value the codec wrote must read back to itself. */
static void rule_roundtrip(const model_rule *rule)
{
    char *json = encoded(codec_rule_encode(rule, CODEC_WITH_STATE),
                         codec_rule_encode(rule, CODEC_PRETTY), codec_rule_create_body(rule));
    model_rule back;
    error_info err = {0};
    if (codec_rule_decode(json, strlen(json), &back, &err) != ERROR_OK)
        abort();
    same_again(codec_rule_encode(&back, CODEC_WITH_STATE), json);
}

static void cred_roundtrip(const model_cred *cred)
{
    char *json = encoded(codec_cred_encode(cred, CODEC_WITH_STATE),
                         codec_cred_encode(cred, CODEC_PRETTY), codec_cred_create_body(cred));
    model_cred back = {0};
    error_info err = {0};
    if (codec_cred_decode(json, strlen(json), &back, &err) != ERROR_OK)
        abort();
    same_again(codec_cred_encode(&back, CODEC_WITH_STATE), json);
    model_cred_clear(&back);
}

/* Where the fast page path takes a rules page, jansson's reading is the same. */
static void fast_page_agrees(const char *json, size_t len)
{
    codec_page quick, full;
    if (!codec_page_fast(MODEL_KIND_RULE, json, len, &quick))
        return;
    if (codec_page_decode_json(MODEL_KIND_RULE, json, len, &full, NULL) != ERROR_OK ||
        full.count != quick.count || full.refused_count != 0 ||
        strcmp(full.uri, quick.uri) != 0 || strcmp(full.next_page_uri, quick.next_page_uri) != 0)
        abort();
    for (size_t i = 0; i < quick.count; i++) {
        char *a = codec_rule_encode(&quick.items[i].rule, CODEC_WITH_STATE);
        char *b = codec_rule_encode(&full.items[i].rule, CODEC_WITH_STATE);
        if (!a || !b || strcmp(a, b) != 0)
            abort();
        free(a);
        free(b);
    }
    codec_page_free(&quick);
    codec_page_free(&full);
}

/* A list page's item, by its kind. */
static void object_roundtrip(const model_object *obj)
{
    if (obj->kind == MODEL_KIND_CRED)
        cred_roundtrip(&obj->cred);
    else
        rule_roundtrip(&obj->rule);
}

static error_code each_rule(void *ctx, const model_rule *rule, size_t index, error_info *err)
{
    (void)err;
    size_t *count = ctx;
    if (index != *count)
        abort(); /* indexes come in order, from 0 */
    (*count)++;
    rule_roundtrip(rule);
    return ERROR_OK;
}

/* The input handed out `chunk` bytes at a time. */
typedef struct small_input {
    const char *data;
    size_t len, pos, chunk;
} small_input;

static error_code read_small(void *ctx, char *buf, size_t size, size_t *got, error_info *err)
{
    (void)err;
    small_input *in = ctx;
    size_t n = in->len - in->pos;
    n = n < in->chunk ? n : in->chunk;
    n = n < size ? n : size;
    memcpy(buf, in->data + in->pos, n);
    in->pos += n;
    *got = n;
    return ERROR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned pick = data[0] % 6;
    const char *json = (const char *)data + 1;
    size_t len = size - 1;
    error_info err = {0};
    switch (pick) {
    case 0: {
        model_rule rule;
        if (codec_rule_decode(json, len, &rule, &err) == ERROR_OK)
            rule_roundtrip(&rule);
        break;
    }
    case 1: {
        model_cred cred = {0};
        if (codec_cred_decode(json, len, &cred, &err) == ERROR_OK)
            cred_roundtrip(&cred);
        model_cred_clear(&cred);
        break;
    }
    case 2:
    case 3: {
        /* A list page of either kind. */
        codec_page page;
        model_kind kind = pick == 2 ? MODEL_KIND_RULE : MODEL_KIND_CRED;
        if (kind == MODEL_KIND_RULE)
            fast_page_agrees(json, len);
        if (codec_page_decode(kind, json, len, &page, &err) == ERROR_OK) {
            for (size_t i = 0; i < page.count; i++)
                object_roundtrip(&page.items[i]);
        }
        codec_page_free(&page);
        break;
    }
    case 4: {
        codec_api_error e;
        if (codec_api_error_decode(json, len, &e, &err) == ERROR_OK) {
            char *body = codec_api_error_encode(&e);
            if (!body)
                abort();
            free(body);
        }
        break;
    }
    default: {
        /* Read whole, then in small chunks: the list splitter's answer must not
         * depend on where the reads end. */
        size_t count = 0, again = 0;
        error_code rc = codec_rule_stream(json, len, each_rule, &count, &err);
        small_input in = {json, len, 0, (size_t)(data[0] / 6) % 7 + 1};
        error_info err2 = {0};
        if (codec_rule_stream_read(read_small, &in, each_rule, &again, &err2) != rc ||
            again != count || strcmp(err.msg, err2.msg) != 0)
            abort();
        break;
    }
    }
    /* A message is one bounded, terminated sentence whatever happened. */
    if (memchr(err.msg, '\0', sizeof err.msg) == NULL)
        abort();
    return 0;
}

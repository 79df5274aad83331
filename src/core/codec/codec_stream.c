/*
 * Import of rule lists. A top-level array is walked here by hand, one element at a
 * time, so an import of a million rules never holds more than one parsed rule.
 * Each element goes through the fast scanner (codec_fast.c) or, when that declines,
 * through jansson; both report where the element ended, which is where the
 * separator check resumes, so no byte is scanned twice.
 */
#include "codec_internal.h"

#include <string.h>

typedef struct stream {
    const char *json;
    size_t len;
    size_t pos;
    codec_rule_fn fn;
    void *ctx;
    model_rule rule; /* reused for every element */
} stream;

/* Messages count rules from 1, as a person reading the file would. */
static error_code emit(stream *s, const json_t *value, size_t index, error_info *err)
{
    error_code rc = codec_rule_from_json(value, &s->rule, err);
    if (rc != ERROR_OK) {
        error_prefix(err, "rule %zu", index + 1);
        return rc;
    }
    return s->fn(s->ctx, &s->rule, index, err);
}

static error_code stream_object(stream *s, error_info *err)
{
    json_t *root;
    error_code rc = codec_load(s->json, s->len, &root, err);
    if (rc != ERROR_OK)
        return rc;
    const json_t *items = json_object_get(root, "ip_policy_rules");
    if (!items)
        rc = error_set(err, ERROR_FORMAT, "ip_policy_rules: missing");
    else if (!json_is_array(items))
        rc = error_set(err, ERROR_FORMAT, "ip_policy_rules: expected an array, got %s",
                       codec_type_name(items));
    for (size_t i = 0; rc == ERROR_OK && i < json_array_size(items); i++)
        rc = emit(s, json_array_get(items, i), i, err);
    json_decref(root);
    return rc;
}

/* Parse the element starting at s->pos and leave s->pos just past it. */
static error_code stream_element(stream *s, size_t index, error_info *err)
{
    size_t start = codec_skip_space(s->json, s->len, s->pos);
    if (start == s->len)
        return error_set(err, ERROR_FORMAT, "rule %zu: unexpected end of input",
                         index + 1);
    size_t used;
    if (codec_rule_fast(s->json + start, s->len - start, &used, &s->rule)) {
        s->pos = start + used;
        return s->fn(s->ctx, &s->rule, index, err);
    }
    json_error_t jerr;
    json_t *value = json_loadb(s->json + start, s->len - start,
                               CODEC_LOAD_FLAGS | JSON_DISABLE_EOF_CHECK, &jerr);
    if (!value) {
        size_t at = start + (size_t)(jerr.position > 0 ? jerr.position : 0);
        return error_set(err, codec_jansson_code(&jerr),
                         "rule %zu: invalid JSON at offset %zu: %s", index + 1, at,
                         codec_jansson_text(&jerr));
    }
    /* jansson keeps the offset in an int: refuse a single element past 2 GiB. */
    if (jerr.position <= 0) {
        json_decref(value);
        return error_set(err, ERROR_FORMAT, "rule %zu: element too large", index + 1);
    }
    s->pos = start + (size_t)jerr.position;
    error_code rc = emit(s, value, index, err);
    json_decref(value);
    return rc;
}

static error_code expect_end(const stream *s, error_info *err)
{
    size_t at = codec_skip_space(s->json, s->len, s->pos);
    if (at != s->len)
        return error_set(err, ERROR_FORMAT, "unexpected data after the array at offset %zu",
                         at);
    return ERROR_OK;
}

static error_code stream_array(stream *s, error_info *err)
{
    s->pos = codec_skip_space(s->json, s->len, s->pos + 1);
    if (s->pos < s->len && s->json[s->pos] == ']') {
        s->pos++;
        return expect_end(s, err);
    }
    for (size_t index = 0;; index++) {
        error_code rc = stream_element(s, index, err);
        if (rc != ERROR_OK)
            return rc;
        s->pos = codec_skip_space(s->json, s->len, s->pos);
        if (s->pos == s->len)
            return error_set(err, ERROR_FORMAT,
                             "unexpected end of input after rule %zu: expected ',' or ']'",
                             index + 1);
        char c = s->json[s->pos++];
        if (c == ']')
            return expect_end(s, err);
        if (c != ',')
            return error_set(err, ERROR_FORMAT,
                             "after rule %zu: expected ',' or ']' at offset %zu", index + 1,
                             s->pos - 1);
    }
}

error_code codec_rule_stream(const char *json, size_t len, codec_rule_fn fn, void *ctx,
                             error_info *err)
{
    if (!json)
        return error_set(err, ERROR_FORMAT, "empty document");
    stream s;
    memset(&s, 0, sizeof s);
    s.json = json;
    s.len = len;
    s.fn = fn;
    s.ctx = ctx;
    s.pos = codec_skip_space(s.json, s.len, 0);
    if (s.pos == s.len)
        return error_set(err, ERROR_FORMAT, "empty document");
    if (s.json[s.pos] == '[')
        return stream_array(&s, err);
    if (s.json[s.pos] == '{')
        return stream_object(&s, err);
    return error_set(err, ERROR_FORMAT, "expected a JSON array or object of rules");
}

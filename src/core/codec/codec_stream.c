/*
 * Import of rule lists. The list splitter (codec_split.c) hands out one element at
 * a time from input read in chunks, so an import of a million rules never holds
 * more than one chunk and one parsed rule. Each element goes through the fast
 * scanner (codec_fast.c) or, when that declines, through jansson.
 */
#include "codec_internal.h"

#include <string.h>

/* One element into `rule`: the fast scanner when it takes the whole range. */
static error_code decode_item(const codec_split_item *item, model_rule *rule,
                              error_info *err)
{
    size_t used;
    if (codec_rule_fast(item->json, item->len, &used, rule) && used == item->len)
        return ERROR_OK;
    memset(rule, 0, sizeof *rule);
    json_t *value;
    if (codec_split_parse(item, &value, err))
        return err->code;
    error_code rc = codec_rule_from_json(value, rule, err);
    json_decref(value);
    return rc;
}

error_code codec_rule_stream_read(codec_read_fn read, void *read_ctx, codec_rule_fn fn,
                                  void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    codec_split *sp;
    if (codec_split_open(MODEL_KIND_RULE, read, read_ctx, &sp, err))
        return err->code;
    model_rule rule; /* reused for every element */
    codec_split_item item;
    bool more = true;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && (rc = codec_split_next(sp, &item, &more, err)) == ERROR_OK &&
           more) {
        rc = decode_item(&item, &rule, err);
        if (rc == ERROR_OK)
            rc = fn(ctx, &rule, item.index, err);
        /* Messages count rules from 1, as a person reading the file would. */
        if (rc != ERROR_OK)
            error_prefix(err, "rule %zu (line %zu)", item.index + 1, item.line);
    }
    codec_split_free(sp);
    return rc;
}

error_code codec_rule_stream(const char *json, size_t len, codec_rule_fn fn, void *ctx,
                             error_info *err)
{
    codec_memory_input in = {json, json ? len : 0, 0};
    return codec_rule_stream_read(codec_read_memory, &in, fn, ctx, err);
}

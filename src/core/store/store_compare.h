/*
 * store: two rows of one kind compared field by field, each field as its
 * column's text (store_field_text), for the edit code and the import.
 */
#ifndef RAMPART_STORE_COMPARE_H
#define RAMPART_STORE_COMPARE_H

#include "store_internal.h"

/* Called with the descriptor's field i and its column text in each row. */
typedef error_code (*store_compare_fn)(size_t i, const char *a, const char *b, void *ctx,
                                       error_info *err);

/* `fn` for each field of a's kind in `fields` (a kind_field_bit set), in the
 * descriptor's order, or with `differing` only those whose texts differ; stops
 * at the first failure (a text, or fn's). */
error_code store_compare_fields(const model_object *a, const model_object *b, unsigned fields,
                                bool differing, store_compare_fn fn, void *ctx,
                                error_info *err);

#endif

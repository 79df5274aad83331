/* store: two rows compared field by field (store_compare.h). */
#include "store_compare.h"

#include <stdlib.h>
#include <string.h>

error_code store_compare_fields(const model_object *a, const model_object *b, unsigned fields,
                                bool differing, store_compare_fn fn, void *ctx,
                                error_info *err)
{
    const kind_desc *d = kind_get(a->kind);
    error_code rc = ERROR_OK;
    for (size_t i = 0; rc == ERROR_OK && i < d->field_count; i++) {
        if (!(fields & (1u << i)))
            continue;
        char *ha = NULL, *hb = NULL;
        const char *ta = store_field_text(a, &d->fields[i], &ha, err);
        const char *tb = ta ? store_field_text(b, &d->fields[i], &hb, err) : NULL;
        if (!tb)
            rc = err->code;
        else if (!differing || strcmp(ta, tb) != 0)
            rc = fn(i, ta, tb, ctx, err);
        free(ha);
        free(hb);
    }
    return rc;
}

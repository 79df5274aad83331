/* kind_same: one field compared across two objects (rampart/kind_same.h). */
#include "rampart/kind_same.h"

#include <string.h>

static bool same_acl(const model_acl *a, const model_acl *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++) {
        if (strcmp(a->rules[i], b->rules[i]) != 0)
            return false;
    }
    return true;
}

bool kind_field_same(const kind_field *f, const model_object *a, const model_object *b)
{
    const void *x = kind_field_at(a, f), *y = kind_field_at(b, f);
    switch (f->type) {
    case KIND_FIELD_ACL:
        return same_acl(x, y);
    case KIND_FIELD_ACTION:
        return *(const model_action *)x == *(const model_action *)y;
    case KIND_FIELD_TEXT:
        break;
    }
    return strcmp(x, y) == 0;
}

/*
 * engine: the creation marker, the one thing only credentials need to be found
 * again after an ambiguous create (rules have a natural key: policy, cidr,
 * action). The create sends the user's metadata plus a last line
 * SYNC_MARKER_KEY "<local id>"; a pull strips that line again and hands the local
 * id to the store's merge, which recognises its own creates by it.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether rows of `kind` carry the marker. */
static bool marked_kind(model_kind kind)
{
    return kind == MODEL_KIND_CRED;
}

/* The metadata a credential's create sends: the user's plus the marker line.
 * false when it does not fit in `size`. */
static bool marked_metadata(const char *user, const char *local_id, char *out, size_t size)
{
    int n = snprintf(out, size, "%s%s" SYNC_MARKER_KEY "%s", user, user[0] ? "\n" : "",
                     local_id);
    return n >= 0 && (size_t)n < size;
}

bool engine_mark_request(model_object *req)
{
    if (!marked_kind(req->kind))
        return true;
    model_cred *c = &req->cred;
    char marked[sizeof c->metadata];
    if (!marked_metadata(c->metadata, c->id, marked, sizeof marked))
        return false;
    memcpy(c->metadata, marked, sizeof marked);
    return true;
}

/* The local id in the marker (the last metadata line when it is SYNC_MARKER_KEY +
 * id) into `marker`, and that line stripped from `metadata`; "" when none. */
static void strip_marker(char *metadata, char *marker)
{
    marker[0] = '\0';
    char *nl = strrchr(metadata, '\n');
    char *line = nl ? nl + 1 : metadata;
    size_t key = strlen(SYNC_MARKER_KEY);
    if (strncmp(line, SYNC_MARKER_KEY, key) != 0)
        return;
    const char *id = line + key;
    size_t len = strlen(id);
    if (len == 0 || len > MODEL_ID_MAX || strchr(id, '\r'))
        return;
    memcpy(marker, id, len + 1);
    *(nl ? nl : metadata) = '\0';
}

error_code engine_markers_take(codec_page *page, engine_markers *m, error_info *err)
{
    memset(m, 0, sizeof *m);
    if (!marked_kind(page->kind) || page->count == 0)
        return ERROR_OK;
    m->ids = calloc(page->count, sizeof *m->ids);
    m->ptrs = calloc(page->count, sizeof *m->ptrs);
    if (!m->ids || !m->ptrs)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < page->count; i++) {
        strip_marker(page->items[i].cred.metadata, m->ids[i]);
        m->ptrs[i] = m->ids[i];
    }
    return ERROR_OK;
}

void engine_markers_free(engine_markers *m)
{
    free(m->ids);
    free(m->ptrs);
    memset(m, 0, sizeof *m);
}

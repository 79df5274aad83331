/*
 * engine: the creation marker, the one thing only credentials need to be found
 * again after an ambiguous create (rules have a natural key: policy, cidr,
 * action). The create sends the user's metadata plus a last line
 * SYNC_MARKER_KEY "<local id>" (that line alone when both do not fit); a pull
 * strips that line again and hands the local id, and the metadata as listed, to
 * the store's merge, which recognises its own creates by it. The edit pass of the
 * same sync PATCHes the user's metadata back (store_confirm_create records the
 * marked metadata as the base of a metadata edit).
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether rows of `kind` carry the marker. */
static bool marked_kind(model_kind kind)
{
    return (kind_get(kind)->traits & KIND_MARKED) != 0;
}

/* The metadata a credential's create sends: the user's, a newline and the marker
 * line when they fit in `size`, else the marker line alone (which always fits: a
 * local id is at most MODEL_ID_MAX bytes). */
static void marked_metadata(const char *user, const char *local_id, char *out, size_t size)
{
    int n = snprintf(out, size, "%s%s" SYNC_MARKER_KEY "%s", user, user[0] ? "\n" : "",
                     local_id);
    if (n < 0 || (size_t)n >= size)
        snprintf(out, size, SYNC_MARKER_KEY "%s", local_id);
}

void engine_mark_request(model_object *req)
{
    if (!marked_kind(req->kind))
        return;
    model_cred *c = &req->cred;
    char marked[sizeof c->metadata];
    marked_metadata(c->metadata, c->id, marked, sizeof marked);
    memcpy(c->metadata, marked, sizeof marked);
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

/* One item: its marker's id into m->ids[i] and, when it has one, the metadata as
 * listed into m->raw[i] before the line is stripped. */
static bool take_one(char *metadata, engine_markers *m, size_t i)
{
    char *raw = strdup(metadata);
    if (!raw)
        return false;
    strip_marker(metadata, m->ids[i]);
    m->ptrs[i] = m->ids[i];
    if (m->ids[i][0])
        m->raw[i] = raw;
    else
        free(raw);
    return true;
}

error_code engine_markers_take(codec_page *page, engine_markers *m, error_info *err)
{
    memset(m, 0, sizeof *m);
    if (!marked_kind(page->kind) || page->count == 0)
        return ERROR_OK;
    m->count = page->count;
    m->ids = calloc(page->count, sizeof *m->ids);
    m->ptrs = calloc(page->count, sizeof *m->ptrs);
    m->raw = calloc(page->count, sizeof *m->raw);
    if (!m->ids || !m->ptrs || !m->raw)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < page->count; i++) {
        if (!take_one(page->items[i].cred.metadata, m, i))
            return error_set(err, ERROR_NOMEM, "out of memory");
    }
    return ERROR_OK;
}

void engine_markers_free(engine_markers *m)
{
    for (size_t i = 0; m->raw && i < m->count; i++)
        free(m->raw[i]);
    free(m->raw);
    free(m->ids);
    free(m->ptrs);
    memset(m, 0, sizeof *m);
}

void engine_unmark_like(model_object *looked, const model_object *row)
{
    if (!marked_kind(looked->kind) || row->kind != looked->kind)
        return;
    char *meta = looked->cred.metadata;
    if (strcmp(meta, row->cred.metadata) == 0)
        return;
    char copy[sizeof looked->cred.metadata], marker[MODEL_ID_MAX + 1];
    memcpy(copy, meta, sizeof copy);
    strip_marker(copy, marker);
    if (marker[0] && strcmp(copy, row->cred.metadata) == 0)
        memcpy(meta, copy, sizeof copy);
}

bool engine_marker_only(const model_object *looked, const model_object *sent,
                        unsigned fields)
{
    if (!marked_kind(sent->kind) || looked->kind != sent->kind)
        return false;
    const kind_field *meta = kind_field_by_name(sent->kind, "metadata");
    if (!meta || fields != kind_field_bit(sent->kind, meta))
        return false;
    char copy[sizeof looked->cred.metadata], marker[MODEL_ID_MAX + 1];
    memcpy(copy, looked->cred.metadata, sizeof copy);
    strip_marker(copy, marker);
    return marker[0] && strcmp(copy, sent->cred.metadata) == 0;
}

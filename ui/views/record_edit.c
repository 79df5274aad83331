/*
 * A row's edit in the console (ui_record.h), the same for every kind: which states
 * the edit form opens on, the lines the details add for an edited or conflicting
 * row (per field: base -> local, and the remote's value in a conflict, from
 * store_edit_get), and the wording of a conflict for the resolve dialog. The store
 * stays the gate: store_edit refuses what this only spares the user from trying.
 */
#include <stdio.h>
#include <string.h>

#include "rampart/utf8.h"
#include "ui_record.h"

bool ui_record_editable(model_state state, const char **why)
{
    switch (state) {
    case MODEL_STATE_NEW:
    case MODEL_STATE_FAILED:
    case MODEL_STATE_SYNCED:
    case MODEL_STATE_EDITED:
    case MODEL_STATE_CONFLICT:
        *why = "";
        return true;
    case MODEL_STATE_CREATING:
    case MODEL_STATE_UNKNOWN:
        *why = "its create is in flight: sync first ('s')";
        return false;
    case MODEL_STATE_DELETING:
        *why = "it is being deleted: nothing to edit";
        return false;
    case MODEL_STATE_REMOTE_DELETED:
        *why = "it was deleted remotely: 'r' creates it again, 'x' discards it";
        return false;
    case MODEL_STATE_ORPHANED:
        *why = "its token was lost: the next sync replaces it";
        return false;
    default:
        *why = "its state does not allow edits";
        return false;
    }
}

void ui_edit_value_text(const char *text, char *out, size_t size)
{
    if (!text || !text[0]) {
        snprintf(out, size, "(empty)");
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = text; *p && len + 1 < size;) {
        size_t n = strcspn(p, "\n");
        len += (size_t)snprintf(out + len, size - len, "%s%.*s", len ? ", " : "", (int)n, p);
        p += n;
        while (*p == '\n')
            p++;
    }
    if (len >= size)
        utf8_trim_partial(out); /* cut to fit: never half a character */
}

const char *ui_conflict_reason(const store_edit_info *info, const char *error, char *buf,
                               size_t size)
{
    switch (info->conflict) {
    case STORE_CONFLICT_FIELDS:
        return "the remote changed a field edited here";
    case STORE_CONFLICT_GONE:
        return "the remote object was deleted while edited here";
    case STORE_CONFLICT_KEY:
        snprintf(buf, size, "remote rule %s holds its policy and cidr",
                 info->other_id[0] ? info->other_id : "(unknown)");
        return buf;
    case STORE_CONFLICT_REJECTED:
        snprintf(buf, size, "the server refused the edit: %s",
                 error && error[0] ? error : "(no reason given)");
        utf8_trim_partial(buf);
        return buf;
    case STORE_CONFLICT_CHANGED:
        return "deleted here, changed remotely";
    case STORE_CONFLICT_CROSSED:
        return "someone else wrote while the edit was sent";
    default:
        return "";
    }
}

const char *ui_conflict_choice(store_conflict reason, store_side side)
{
    bool keep = side == STORE_KEEP_LOCAL;
    switch (reason) {
    case STORE_CONFLICT_FIELDS:
        return keep ? "the next sync sends the local values"
                    : "the remote's values replace the local ones";
    case STORE_CONFLICT_GONE:
        return keep ? "created again by the next sync" : "removed here too";
    case STORE_CONFLICT_KEY:
        return keep ? "the remote rule is deleted, this one kept"
                    : "this row becomes the remote rule";
    case STORE_CONFLICT_REJECTED:
        return keep ? "sent again as it is" : "back to the remote's values";
    case STORE_CONFLICT_CHANGED:
        return keep ? "deleted anyway by the next sync" : "kept: the delete is dropped";
    case STORE_CONFLICT_CROSSED:
        return "taken as it is now";
    default:
        return "";
    }
}

/* ---- the details ------------------------------------------------------------- */

/* One edited field: "cidr  10.1.0.0/16 -> 10.2.0.0/16", and its remote's value
 * on a line of its own when it conflicts. */
static void field_lines(model_kind kind, const store_edit_field *ef, ui_table_detail_fn fn,
                        void *ctx)
{
    const kind_desc *d = kind_get(kind);
    const char *name = ef->field < d->field_count ? d->fields[ef->field].name : "?";
    char base[256], local[256], line[540];
    ui_edit_value_text(ef->base, base, sizeof base);
    ui_edit_value_text(ef->local, local, sizeof local);
    snprintf(line, sizeof line, "%s -> %s", base, local);
    utf8_trim_partial(line);
    fn(ctx, name, line);
    if (ef->remote) {
        char remote[256];
        ui_edit_value_text(ef->remote, remote, sizeof remote);
        fn(ctx, "  remote", remote);
    }
}

void ui_record_edit_details(store *st, const model_object *obj, ui_table_detail_fn fn,
                            void *ctx)
{
    model_state state = model_object_state(obj);
    if (state != MODEL_STATE_EDITED && state != MODEL_STATE_CONFLICT)
        return;
    store_edit_info info;
    memset(&info, 0, sizeof info);
    error_info e = {0};
    if (store_edit_get(st, obj->kind, model_object_id(obj), &info, &e) != ERROR_OK) {
        fn(ctx, "edit", e.msg);
        return;
    }
    fn(ctx, "", "");
    if (state == MODEL_STATE_CONFLICT) {
        char buf[MODEL_ERROR_MAX + 64];
        char line[MODEL_ERROR_MAX + 96];
        snprintf(line, sizeof line, "%s (R resolves it)",
                 ui_conflict_reason(&info, model_object_error(obj), buf, sizeof buf));
        utf8_trim_partial(line);
        fn(ctx, "conflict", line);
    }
    fn(ctx, "edit", info.count ? "base -> local" : "(no field differs from its base)");
    for (size_t i = 0; i < info.count; i++)
        field_lines(obj->kind, &info.field[i], fn, ctx);
    store_edit_info_clear(&info);
}

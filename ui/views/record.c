/*
 * ui_record (ui_record.h): a record's values by name, templates, its row in a
 * record view and its details, the same code for every kind; what differs is the
 * kind's data (ui/views/record_kinds.c) and its field table (kind.h).
 */
#include "ui_record.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rampart/duration.h"
#include "rampart/ui_dialog.h"
#include "rampart/ui_sync_text.h"
#include "rampart/utf8.h"
#include "../widgets/ui_text.h"

enum { VALUE_MAX = 512 };

void ui_cell_set(char *cell, const char *text)
{
    size_t n = ui_text_prefix(text ? text : "", UI_TABLE_CELL_MAX - 1);
    memcpy(cell, text ? text : "", n);
    cell[n] = '\0';
}

ui_style ui_state_style(model_state state)
{
    switch (state) {
    case MODEL_STATE_SYNCED:
        return (ui_style){0, UI_COLOR_OK};
    case MODEL_STATE_NEW:
    case MODEL_STATE_CREATING:
    case MODEL_STATE_DELETING:
    case MODEL_STATE_EDITED:
        return (ui_style){0, UI_COLOR_PENDING};
    default:
        return (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR};
    }
}

void ui_state_note(model_state state, const char *error, ui_table_row *row)
{
    bool settled = state == MODEL_STATE_SYNCED || state == MODEL_STATE_NEW ||
                   state == MODEL_STATE_CREATING || state == MODEL_STATE_DELETING ||
                   state == MODEL_STATE_EDITED;
    bool conflict = state == MODEL_STATE_CONFLICT; /* the choice is the user's: say how */
    if (conflict && (!error || !error[0]))
        error = "keep the local values or take the remote's";
    if (settled || !error || !error[0]) {
        row->note[0] = '\0';
        return;
    }
    char note[UI_TABLE_CELL_MAX];
    snprintf(note, sizeof note, "%s%s: %s", model_state_name(state),
             conflict ? " (R resolves it)" : "", error);
    ui_cell_set(row->note, note);
}

const ui_record_input *ui_record_input_of(model_kind kind, const char *name)
{
    const ui_record_kind *k = ui_record_kind_get(kind);
    for (size_t i = 0; i < k->ninputs; i++) {
        if (strcmp(k->inputs[i].name, name) == 0)
            return &k->inputs[i];
    }
    return NULL;
}

void *ui_record_field(model_object *obj, const kind_field *f)
{
    return kind_field_at_mut(obj, f);
}

/* "created_at:date": the date of an RFC 3339 time ("2026-11-29", UTC as the
 * remote gives it); the whole time is in the details. */
static const char *date_of(const model_object *obj, const char *name, size_t len,
                           char *scratch, size_t size)
{
    char field[64];
    snprintf(field, sizeof field, "%.*s", (int)len, name);
    const char *v = kind_value(obj, field, NULL, 0);
    if (strlen(v) < 10 || v[4] != '-' || v[7] != '-' || size == 0)
        return v;
    snprintf(scratch, size, "%.10s", v);
    return scratch;
}

const char *ui_record_value(const model_object *obj, const char *name, char *scratch,
                            size_t size)
{
    const char *form = strchr(name, ':');
    if (form && strcmp(form, ":date") == 0)
        return date_of(obj, name, (size_t)(form - name), scratch, size);
    const char *v = kind_value(obj, name, scratch, size);
    const kind_field *f = kind_field_by_name(obj->kind, name);
    return f && f->type == KIND_FIELD_ACL && !v[0] ? "(any)" : v; /* an empty ACL */
}

void ui_record_format(const model_object *obj, const char *tmpl, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p && len + 1 < size;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            size_t n = strcspn(p + 1, "{") + 1;
            len += (size_t)snprintf(out + len, size - len, "%.*s", (int)n, p);
            p += n;
            continue;
        }
        char name[64], scratch[VALUE_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(close - p - 1), p + 1);
        len += (size_t)snprintf(out + len, size - len, "%s",
                                ui_record_value(obj, name, scratch, sizeof scratch));
        p = close + 1;
    }
    utf8_trim_partial(out); /* a snprintf that ran out of room may have cut a character */
}

void ui_record_row(const model_object *obj, ui_table_row *row)
{
    const ui_record_kind *k = ui_record_kind_get(obj->kind);
    const char *id = model_object_id(obj);
    snprintf(row->key, sizeof row->key, "%s", id);
    snprintf(row->id, sizeof row->id, "%s", id);
    row->kind = (int)obj->kind;
    row->style = ui_state_style(model_object_state(obj));
    row->style_col = -1;
    for (int i = 0; i < k->ncols; i++) {
        char scratch[UI_TABLE_CELL_MAX];
        ui_cell_set(row->cells[i], ui_record_value(obj, k->values[i], scratch, sizeof scratch));
        if (strcmp(k->values[i], "state") == 0)
            row->style_col = i; /* the colour goes with the state's own text */
    }
    ui_state_note(model_object_state(obj), model_object_error(obj), row);
}

/* A credential's rotation ("to cr_…: grace 23h left"), then when the old token
 * was last handed out here; nothing when it is not in one. */
static void rotation_line(store *st, const model_object *obj, const char *label,
                          ui_table_detail_fn fn, void *ctx)
{
    store_rotation r;
    if (store_rotation_get(st, model_object_id(obj), &r, NULL) != ERROR_OK)
        return;
    long long now = (long long)time(NULL);
    bool is_old = strcmp(r.old_id, model_object_id(obj)) == 0;
    char text[VALUE_MAX + MODEL_ERROR_MAX + 128], left[32], served[32];
    int n = snprintf(text, sizeof text, "%s %s: ", is_old ? "to" : "from",
                     is_old ? r.new_id : r.old_id);
    size_t at = n > 0 && (size_t)n < sizeof text ? (size_t)n : 0;
    if (r.state == STORE_ROTATION_GRACE && r.held_at && now < r.held_at + r.grace_s)
        snprintf(text + at, sizeof text - at, "grace %s left",
                 duration_countdown((double)(r.held_at + r.grace_s - now), left, sizeof left));
    else
        snprintf(text + at, sizeof text - at, "%s%s%s", store_rotation_state_name(r.state),
                 r.error[0] ? ": " : "", r.error);
    fn(ctx, label, text);
    if (r.state == STORE_ROTATION_RETIRED)
        return;
    if (r.old_served_at)
        snprintf(text, sizeof text, "%s ago",
                 duration_age((double)(now - r.old_served_at), served, sizeof served));
    fn(ctx, "old served", r.old_served_at ? text : "never");
}

/* One line of the details; a value made of several lines (an ACL) gives several. */
static void detail_line(store *st, const model_object *obj, const ui_record_line *l,
                        ui_table_detail_fn fn, void *ctx)
{
    const kind_field *f = kind_field_by_name(obj->kind, l->value);
    if (f && f->type == KIND_FIELD_ACL) {
        ui_acl_details(kind_field_at(obj, f), l->label, fn, ctx);
        return;
    }
    if (strcmp(l->value, "token") == 0) {
        fn(ctx, l->label, ui_token_status(st, model_object_id(obj)));
        return;
    }
    if (strcmp(l->value, "rotation") == 0) {
        rotation_line(st, obj, l->label, fn, ctx);
        return;
    }
    char scratch[VALUE_MAX];
    fn(ctx, l->label, ui_record_value(obj, l->value, scratch, sizeof scratch));
}

error_code ui_record_details(store *st, model_kind kind, const char *id, ui_table_detail_fn fn,
                             void *ctx, error_info *err)
{
    model_object obj;
    model_object_init(&obj, kind); /* store_get clears it first */
    if (store_get(st, kind, id, &obj, err) != ERROR_OK)
        return err->code;
    const ui_record_kind *k = ui_record_kind_get(kind);
    for (size_t i = 0; i < k->ndetails; i++)
        detail_line(st, &obj, &k->details[i], fn, ctx);
    ui_record_edit_details(st, &obj, fn, ctx);
    model_object_clear(&obj);
    return ERROR_OK;
}

/*
 * The edit form as an overlay, one for every kind: 'e' opens the kind's form
 * pre-filled with the row (ui_form_record_edit: the fields that never change are
 * read-only); a submit that passes every check is compared with the row, and the
 * fields that changed go to store_edit, which checks the merged row itself. The
 * status line says what the edit did (the queued create changed; edited, sync
 * pending; back to the remote's values; still a conflict). A refusal keeps the
 * form open with the reason under the field it is about; Esc leaves nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../views/ui_record.h"
#include "app_internal.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/ui_form.h"

typedef struct edit_overlay {
    ui_form *form;
    model_object row; /* the row as it was read when the form opened */
} edit_overlay;

static void edit_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const edit_overlay *o = self;
    ui_form_draw(o->form, c, area);
}

/* The status line after store_edit: what happened, in the kind's words. */
static void say_saved(ui_app *app, const model_object *obj, unsigned fields,
                      store_edit_result res)
{
    char names[160];
    kind_field_names(obj->kind, fields, names, sizeof names);
    const char *noun = kind_get(obj->kind)->noun, *label = kind_label(obj);
    switch (res) {
    case STORE_EDIT_CREATE:
        ui_app_status(app, false, "%s %s: queued create changed (%s; 's' syncs it)", noun,
                      label, names);
        break;
    case STORE_EDIT_EDITED:
        ui_app_status(app, false, "%s %s edited, sync pending: %s ('s' sends it)", noun,
                      label, names);
        break;
    case STORE_EDIT_UNCHANGED:
        ui_app_status(app, false, "%s %s: back to the remote's values, nothing to sync",
                      noun, label);
        break;
    default:
        ui_app_status(app, false, "%s %s: %s changed, still a conflict (R resolves it)",
                      noun, label, names);
        break;
    }
}

/* A refusal the user can fix stays in the form, under the field it is about: the
 * one the gate names (kind_check_row), or for a clash with another row
 * (ERROR_CONFLICT) the editable field of the natural key. */
static void refused(edit_overlay *o, const kind_field *bad, const error_info *e)
{
    model_kind kind = o->row.kind;
    const char *key = ui_record_kind_get(kind)->key_field;
    if (!bad && e->code == ERROR_CONFLICT && key)
        bad = kind_field_by_name(kind, key);
    ui_form_record_refused(o->form, kind, bad, e->msg);
    ui_form_set_message(o->form, "not saved: %s", e->msg);
}

/* Store the changed fields. Returns whether the form closes: saved, nothing
 * changed, or the row can no longer be edited (gone, its state moved on). */
static bool save(edit_overlay *o, ui_app *app)
{
    model_object obj;
    unsigned fields = 0;
    store_edit_result res = STORE_EDIT_EDITED;
    const kind_field *bad = NULL;
    error_info e = {0};
    error_code rc = ui_form_record_changes(o->form, &o->row, &obj, &fields, &e);
    if (rc == ERROR_OK && fields == 0) {
        model_object_clear(&obj);
        ui_app_status(app, false, "nothing changed: nothing saved");
        return true;
    }
    if (rc == ERROR_OK) /* the gate first, so a refusal names its field as a value */
        rc = kind_check_row(&obj, &bad, &e);
    if (rc == ERROR_OK)
        rc = store_edit(ui_app_store(app), &obj, fields, &res, &e);
    if (rc == ERROR_OK)
        say_saved(app, &obj, fields, res);
    else if (rc == ERROR_STATE || rc == ERROR_NOT_FOUND)
        ui_app_status(app, true, "not saved: %s", e.msg);
    else
        refused(o, bad, &e);
    model_object_clear(&obj);
    return rc == ERROR_OK || rc == ERROR_STATE || rc == ERROR_NOT_FOUND;
}

static bool save_edit(void *self, ui_app *app)
{
    return save(self, app);
}

static ui_overlay_result edit_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    edit_overlay *o = self;
    return ui_form_overlay_key(o->form, app, key, save_edit, o);
}

static size_t edit_hints(const void *self, ui_key_hint *out, size_t max)
{
    const edit_overlay *o = self;
    return ui_form_hints(o->form, out, max);
}

static void edit_free(void *self)
{
    edit_overlay *o = self;
    if (!o)
        return;
    ui_form_free(o->form);
    model_object_clear(&o->row);
    free(o);
}

/* The overlay's name for logs: "edit rule", "edit credential". */
static const ui_overlay_ops edit_ops[MODEL_KIND_COUNT] = {
    [MODEL_KIND_RULE] = {"edit rule", NULL, edit_draw, edit_key, edit_free, edit_hints},
    [MODEL_KIND_CRED] = {"edit credential", NULL, edit_draw, edit_key, edit_free, edit_hints},
};

error_code ui_form_edit_open(ui_app *app, const model_object *row, error_info *err)
{
    edit_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    model_object_init(&o->row, row->kind);
    error_code rc = model_object_copy(&o->row, row, err);
    if (rc == ERROR_OK)
        rc = ui_form_record_edit(&o->row, &o->form, err);
    if (rc != ERROR_OK) {
        edit_free(o);
        return rc;
    }
    return ui_app_push(app, &edit_ops[row->kind], o, err);
}

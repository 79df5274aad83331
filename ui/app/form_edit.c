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
static void refused(ui_form_overlay *o, const kind_field *bad, const error_info *e)
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
static bool save(ui_form_overlay *o, ui_app *app)
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

error_code ui_form_edit_open(ui_app *app, const model_object *row, error_info *err)
{
    ui_form_overlay *o = ui_form_overlay_new(row->kind, save);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = model_object_copy(&o->row, row, err);
    if (rc == ERROR_OK)
        rc = ui_form_record_edit(&o->row, &o->form, err);
    if (rc != ERROR_OK) {
        ui_form_overlay_free(o);
        return rc;
    }
    return ui_form_overlay_push(app, o, UI_FORM_OVERLAY_EDIT, err);
}

/*
 * The create form as an overlay, one for every kind: 'c' in a record view opens
 * the form of its kind; a submit that passes every check is read back as a row,
 * validated again as a whole and stored as new (the next sync sends it); Esc
 * leaves nothing behind. The store checks every write itself: when it refuses,
 * its reason shows in the form, under the field it names.
 */
#include <stdlib.h>

#include "../views/ui_record.h"
#include "app_internal.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/ui_form.h"

/* Store the submitted row; on a refusal the form says why and stays open. The
 * store's gate runs here first (the store runs it again) so that a refusal names
 * its field as a value (kind_check_row), and goes under that field. */
static bool save(ui_form_overlay *o, ui_app *app)
{
    model_kind kind = o->row.kind;
    const ui_record_kind *k = ui_record_kind_get(kind);
    model_object obj;
    error_info e = {0};
    const kind_field *bad = NULL;
    bool ok = ui_form_record_get(o->form, kind, &obj, &e) == ERROR_OK &&
              kind_check_row(&obj, &bad, &e) == ERROR_OK &&
              store_insert(ui_app_store(app), &obj, &e) == ERROR_OK;
    if (ok) {
        /* A credential's token shows once a sync brings it (ui_token_show_unseen). */
        char msg[256];
        ui_record_format(&obj, k->queued, msg, sizeof msg);
        ui_app_status(app, false, "%s", msg);
    } else {
        ui_form_record_refused(o->form, kind, bad, e.msg);
        ui_form_set_message(o->form, "not saved: %s", e.msg);
    }
    model_object_clear(&obj);
    return ok;
}

error_code ui_form_create_open(ui_app *app, model_kind kind, error_info *err)
{
    const ui_record_kind *k = ui_record_kind_get(kind);
    ui_form_overlay *o = ui_form_overlay_new(kind, save);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    ui_form_offer offer = {0};
    error_code rc = k->offer ? k->offer(app, &offer, err) : ERROR_OK;
    if (rc == ERROR_OK)
        rc = ui_form_record_new(kind, &offer, &o->form, err);
    free(offer.ids);
    if (rc != ERROR_OK) {
        ui_form_overlay_free(o);
        return rc;
    }
    return ui_form_overlay_push(app, o, UI_FORM_OVERLAY_CREATE, err);
}

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

typedef struct create_overlay {
    ui_form *form;
    model_kind kind;
} create_overlay;

static void create_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const create_overlay *o = self;
    ui_form_draw(o->form, c, area);
}

/* Store the submitted row; on a refusal the form says why and stays open. The
 * store's gate runs here first (the store runs it again) so that a refusal names
 * its field as a value (kind_check_row), and goes under that field. */
static bool save(create_overlay *o, ui_app *app)
{
    const ui_record_kind *k = ui_record_kind_get(o->kind);
    model_object obj;
    error_info e = {0};
    const kind_field *bad = NULL;
    bool ok = ui_form_record_get(o->form, o->kind, &obj, &e) == ERROR_OK &&
              kind_check_row(&obj, &bad, &e) == ERROR_OK &&
              store_insert(ui_app_store(app), &obj, &e) == ERROR_OK;
    if (ok) {
        /* A credential's token shows once a sync brings it (ui_token_show_unseen). */
        char msg[256];
        ui_record_format(&obj, k->queued, msg, sizeof msg);
        ui_app_status(app, false, "%s", msg);
    } else {
        ui_form_record_refused(o->form, o->kind, bad, e.msg);
        ui_form_set_message(o->form, "not saved: %s", e.msg);
    }
    model_object_clear(&obj);
    return ok;
}

static bool save_create(void *self, ui_app *app)
{
    return save(self, app);
}

static ui_overlay_result create_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    create_overlay *o = self;
    return ui_form_overlay_key(o->form, app, key, save_create, o);
}

ui_overlay_result ui_form_overlay_key(ui_form *form, ui_app *app, int key,
                                      bool (*save_fn)(void *self, ui_app *app), void *self)
{
    switch (ui_form_key(form, key)) {
    case UI_FORM_CANCEL:
        ui_app_status(app, false, "cancelled: nothing saved");
        return UI_OVERLAY_CLOSE;
    case UI_FORM_SUBMIT:
        if (ui_app_readonly(app)) {
            ui_app_status(app, true, "read-only: nothing saved");
            return UI_OVERLAY_CLOSE;
        }
        if (!save_fn(self, app))
            return UI_OVERLAY_KEEP;
        ui_app_reload(app);
        return UI_OVERLAY_CLOSE;
    default:
        return UI_OVERLAY_KEEP;
    }
}

static size_t create_hints(const void *self, ui_key_hint *out, size_t max)
{
    const create_overlay *o = self;
    return ui_form_hints(o->form, out, max);
}

static void create_free(void *self)
{
    create_overlay *o = self;
    if (!o)
        return;
    ui_form_free(o->form);
    free(o);
}

/* The overlay's name for logs: "create rule", "create credential". */
static const ui_overlay_ops create_ops[MODEL_KIND_COUNT] = {
    [MODEL_KIND_RULE] = {"create rule", NULL, create_draw, create_key, create_free,
                         create_hints},
    [MODEL_KIND_CRED] = {"create credential", NULL, create_draw, create_key, create_free,
                         create_hints},
};

error_code ui_form_create_open(ui_app *app, model_kind kind, error_info *err)
{
    const ui_record_kind *k = ui_record_kind_get(kind);
    create_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    o->kind = kind;
    ui_form_offer offer = {0};
    error_code rc = k->offer ? k->offer(app, &offer, err) : ERROR_OK;
    if (rc == ERROR_OK)
        rc = ui_form_record_new(kind, &offer, &o->form, err);
    free(offer.ids);
    if (rc != ERROR_OK) {
        create_free(o);
        return rc;
    }
    return ui_app_push(app, &create_ops[kind], o, err);
}

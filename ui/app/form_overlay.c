/*
 * What the create and the edit form overlays share (app_internal.h): the
 * overlay itself, drawing its form, its key hints, its keys and its end.
 */
#include <stdlib.h>

#include "app_internal.h"

ui_form_overlay *ui_form_overlay_new(model_kind kind,
                                     bool (*save)(ui_form_overlay *o, ui_app *app))
{
    ui_form_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    model_object_init(&o->row, kind);
    o->save = save;
    return o;
}

static void overlay_free(void *self)
{
    ui_form_overlay *o = self;
    if (!o)
        return;
    ui_form_free(o->form);
    model_object_clear(&o->row);
    free(o);
}

void ui_form_overlay_free(ui_form_overlay *o)
{
    overlay_free(o);
}

static void overlay_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const ui_form_overlay *o = self;
    ui_form_draw(o->form, c, area);
}

static size_t overlay_hints(const void *self, ui_key_hint *out, size_t max)
{
    const ui_form_overlay *o = self;
    return ui_form_hints(o->form, out, max);
}

/* Esc cancels, Enter saves through o->save, a read-only console saves nothing. */
static ui_overlay_result overlay_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    ui_form_overlay *o = self;
    switch (ui_form_key(o->form, key)) {
    case UI_FORM_CANCEL:
        ui_app_status(app, false, "cancelled: nothing saved");
        return UI_OVERLAY_CLOSE;
    case UI_FORM_SUBMIT:
        if (ui_app_readonly(app)) {
            ui_app_status(app, true, "read-only: nothing saved");
            return UI_OVERLAY_CLOSE;
        }
        if (!o->save(o, app))
            return UI_OVERLAY_KEEP;
        ui_app_reload(app);
        return UI_OVERLAY_CLOSE;
    default:
        return UI_OVERLAY_KEEP;
    }
}

#define FORM_OPS(name) {name, NULL, overlay_draw, overlay_key, overlay_free, overlay_hints}

/* The overlay's name for logs: "create rule", "edit credential". */
static const ui_overlay_ops form_ops[][MODEL_KIND_COUNT] = {
    [UI_FORM_OVERLAY_CREATE] = {[MODEL_KIND_RULE] = FORM_OPS("create rule"),
                                [MODEL_KIND_CRED] = FORM_OPS("create credential")},
    [UI_FORM_OVERLAY_EDIT] = {[MODEL_KIND_RULE] = FORM_OPS("edit rule"),
                              [MODEL_KIND_CRED] = FORM_OPS("edit credential")},
};

error_code ui_form_overlay_push(ui_app *app, ui_form_overlay *o, ui_form_overlay_use use,
                                error_info *err)
{
    return ui_app_push(app, &form_ops[use][o->row.kind], o, err);
}

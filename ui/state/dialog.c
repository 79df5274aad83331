/*
 * The confirmation and the choice as overlays of the loop (ui_dialog.h): the
 * confirmation runs its action on yes, the choice hands its answer (or a cancel)
 * to its caller. (The token dialog's overlay is in ui/state/token.c.)
 */
#include <stdlib.h>

#include "rampart/ui_dialog.h"
#include "ui_state.h"

/* One overlay for both: the model that is set (confirm or choose), what its
 * answer calls, and the caller's context. */
typedef struct dialog_overlay {
    ui_confirm *confirm;
    ui_choose *choose;
    ui_confirm_fn on_yes;
    ui_choose_fn on_answer;
    void *ctx;
    void (*free_ctx)(void *);
} dialog_overlay;

static void dialog_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const dialog_overlay *o = self;
    if (o->confirm)
        ui_confirm_draw(o->confirm, c, area);
    else
        ui_choose_draw(o->choose, c, area);
}

/* The caller's context and the model (the overlay itself stays). */
static void dialog_release(dialog_overlay *o)
{
    if (o->free_ctx)
        o->free_ctx(o->ctx);
    ui_confirm_free(o->confirm);
    ui_choose_free(o->choose);
}

static void dialog_free(void *self)
{
    if (!self)
        return;
    dialog_release(self);
    free(self);
}

/* ---- keys ------------------------------------------------------------------- */

/* The confirmation runs its action on yes. */
static ui_overlay_result confirm_key(dialog_overlay *o, ui_app *app, int key)
{
    ui_answer a = ui_confirm_key(o->confirm, key);
    if (a == UI_ANSWER_NONE)
        return UI_OVERLAY_KEEP;
    if (a == UI_ANSWER_YES && o->on_yes)
        o->on_yes(app, o->ctx);
    else if (a == UI_ANSWER_NO)
        ui_app_status(app, false, "cancelled: nothing changed");
    return UI_OVERLAY_CLOSE;
}

/* The choice hands its answer (or a cancel) over. */
static ui_overlay_result choose_key(dialog_overlay *o, ui_app *app, int key)
{
    int a = ui_choose_key(o->choose, key);
    if (a == UI_CHOOSE_NONE)
        return UI_OVERLAY_KEEP;
    if (o->on_answer)
        o->on_answer(app, o->ctx, a);
    return UI_OVERLAY_CLOSE;
}

static ui_overlay_result dialog_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    dialog_overlay *o = self;
    return o->confirm ? confirm_key(o, app, key) : choose_key(o, app, key);
}

/* ---- pushing ----------------------------------------------------------------- */

/* The overlay's name for logs: "confirm", "choose". */
static const ui_overlay_ops confirm_ops = {"confirm", NULL, dialog_draw, dialog_key,
                                           dialog_free, NULL};
static const ui_overlay_ops choose_ops = {"choose", NULL, dialog_draw, dialog_key,
                                          dialog_free, NULL};

/* Push `with` (what it holds is the overlay's from here, freed on failure). */
static error_code dialog_push(ui_app *app, dialog_overlay with, error_info *err)
{
    dialog_overlay *o = malloc(sizeof *o);
    if (!o) {
        dialog_release(&with);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *o = with;
    return ui_app_push(app, o->confirm ? &confirm_ops : &choose_ops, o, err);
}

error_code ui_dialog_confirm(ui_app *app, ui_confirm *d, ui_confirm_fn on_yes, void *ctx,
                             void (*free_ctx)(void *), error_info *err)
{
    dialog_overlay with = {.confirm = d, .on_yes = on_yes, .ctx = ctx, .free_ctx = free_ctx};
    return dialog_push(app, with, err);
}

error_code ui_dialog_choose(ui_app *app, ui_choose *d, ui_choose_fn fn, void *ctx,
                            void (*free_ctx)(void *), error_info *err)
{
    dialog_overlay with = {.choose = d, .on_answer = fn, .ctx = ctx, .free_ctx = free_ctx};
    return dialog_push(app, with, err);
}

/*
 * The confirmation and the choice as overlays of the loop (ui_dialog.h): the
 * confirmation runs its action on yes, the choice hands its answer (or a cancel)
 * to its caller. (The token dialog's overlay is in ui/state/token.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "rampart/ui_dialog.h"
#include "ui_state.h"

/* ---- confirm ---------------------------------------------------------------- */

typedef struct confirm_overlay {
    ui_confirm *d;
    ui_confirm_fn on_yes;
    void *ctx;
    void (*free_ctx)(void *);
} confirm_overlay;

static void confirm_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const confirm_overlay *o = self;
    ui_confirm_draw(o->d, c, area);
}

static ui_overlay_result confirm_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    confirm_overlay *o = self;
    ui_answer a = ui_confirm_key(o->d, key);
    if (a == UI_ANSWER_NONE)
        return UI_OVERLAY_KEEP;
    if (a == UI_ANSWER_YES && o->on_yes)
        o->on_yes(app, o->ctx);
    else if (a == UI_ANSWER_NO)
        ui_app_status(app, false, "cancelled: nothing changed");
    return UI_OVERLAY_CLOSE;
}

static void confirm_free(void *self)
{
    confirm_overlay *o = self;
    if (!o)
        return;
    if (o->free_ctx)
        o->free_ctx(o->ctx);
    ui_confirm_free(o->d);
    free(o);
}

static const ui_overlay_ops confirm_ops = {"confirm", NULL, confirm_draw, confirm_key,
                                           confirm_free, NULL};

error_code ui_dialog_confirm(ui_app *app, ui_confirm *d, ui_confirm_fn on_yes, void *ctx,
                             void (*free_ctx)(void *), error_info *err)
{
    confirm_overlay *o = calloc(1, sizeof *o);
    if (!o) {
        if (free_ctx)
            free_ctx(ctx);
        ui_confirm_free(d);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *o = (confirm_overlay){d, on_yes, ctx, free_ctx};
    return ui_app_push(app, &confirm_ops, o, err);
}

/* ---- choice ------------------------------------------------------------------ */

typedef struct choose_overlay {
    ui_choose *d;
    ui_choose_fn fn;
    void *ctx;
    void (*free_ctx)(void *);
} choose_overlay;

static void choose_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const choose_overlay *o = self;
    ui_choose_draw(o->d, c, area);
}

static ui_overlay_result choose_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    choose_overlay *o = self;
    int a = ui_choose_key(o->d, key);
    if (a == UI_CHOOSE_NONE)
        return UI_OVERLAY_KEEP;
    if (o->fn)
        o->fn(app, o->ctx, a);
    return UI_OVERLAY_CLOSE;
}

static void choose_free(void *self)
{
    choose_overlay *o = self;
    if (!o)
        return;
    if (o->free_ctx)
        o->free_ctx(o->ctx);
    ui_choose_free(o->d);
    free(o);
}

static const ui_overlay_ops choose_ops = {"choose", NULL, choose_draw, choose_key,
                                          choose_free, NULL};

error_code ui_dialog_choose(ui_app *app, ui_choose *d, ui_choose_fn fn, void *ctx,
                            void (*free_ctx)(void *), error_info *err)
{
    choose_overlay *o = calloc(1, sizeof *o);
    if (!o) {
        if (free_ctx)
            free_ctx(ctx);
        ui_choose_free(d);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *o = (choose_overlay){d, fn, ctx, free_ctx};
    return ui_app_push(app, &choose_ops, o, err);
}

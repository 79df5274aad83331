/*
 * The dialogs as overlays of the loop (ui_dialog.h): a confirmation that runs its
 * action on yes, and the token dialog that shows a new token once.
 */
#include <stdlib.h>
#include <string.h>

#include "rampart/ui_dialog.h"
#include "ui_internal.h"

/* ---- confirm ---------------------------------------------------------------- */

typedef struct confirm_overlay {
    ui_confirm *d;
    ui_confirm_fn on_yes;
    void *ctx;
    void (*free_ctx)(void *);
} confirm_overlay;

static void confirm_draw(void *self, ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    confirm_overlay *o = self;
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

static const ui_overlay_ops confirm_ops = {"confirm", confirm_draw, confirm_key, confirm_free};

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

/* ---- token -------------------------------------------------------------------- */

typedef struct token_overlay {
    char id[MODEL_ID_MAX + 1];
    char description[MODEL_DESCRIPTION_MAX + 1];
    char *token;  /* wiped when the dialog closes */
    bool copied;
} token_overlay;

static void token_draw(void *self, ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    token_overlay *o = self;
    ui_token_draw(o->id, o->description, o->token, o->copied, c, area);
}

static void copy_token(token_overlay *o, ui_app *app)
{
    const char *tmux = getenv("TMUX");
    size_t n = 0;
    char *seq = ui_osc52_encode(o->token, tmux && tmux[0], &n);
    if (!seq) {
        ui_app_status(app, true, "copy failed: out of memory");
        return;
    }
    ui_app_raw(app, seq, n);
    model_wipe(seq, n);
    free(seq);
    o->copied = true;
    ui_app_status(app, false, "token sent to the clipboard (if the terminal allows OSC 52)");
}

static ui_overlay_result token_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    token_overlay *o = self;
    if (key == 'c' || key == 'C' || key == 'y') {
        copy_token(o, app);
        return UI_OVERLAY_KEEP;
    }
    if (key == UI_KEY_ENTER || key == '\n' || key == UI_KEY_ESC || key == 'q') {
        ui_app_status(app, false, "token of %s hidden: %s ('t' on it shows it again)", o->id,
                      ui_token_mask(ui_app_canvas(app)->ascii));
        return UI_OVERLAY_CLOSE;
    }
    return UI_OVERLAY_KEEP;
}

static void token_free(void *self)
{
    token_overlay *o = self;
    if (!o)
        return;
    if (o->token) {
        model_wipe(o->token, strlen(o->token));
        free(o->token);
    }
    free(o);
}

static const ui_overlay_ops token_ops = {"token", token_draw, token_key, token_free};

error_code ui_dialog_token(ui_app *app, const char *cred_id, const char *description,
                           const char *token, error_info *err)
{
    token_overlay *o = calloc(1, sizeof *o);
    if (!o || !(o->token = strdup(token))) {
        free(o);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    model_copy_text(o->id, sizeof o->id, cred_id);
    model_copy_text(o->description, sizeof o->description, description);
    return ui_app_push(app, &token_ops, o, err);
}

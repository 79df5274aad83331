/*
 * A credential's token in the console (ui_dialog.h), in one place: the dialog that
 * shows it once (its model and drawing, the OSC 52 copy, the overlay), showing the
 * token of a credential from the store ('t' after asking), and whether this
 * machine holds one (the details). The token is wiped wherever it was copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/model.h"
#include "rampart/store.h"
#include "rampart/ui_dialog.h"
#include "ui_state.h"

enum { BOX_MAX_W = UI_DIALOG_MAX_W };

static const ui_style plain = {UI_ATTR_NONE, UI_COLOR_DEFAULT};
static const ui_style title_style = {UI_ATTR_BOLD, UI_COLOR_TITLE};
static const ui_style hint_style = {UI_ATTR_DIM, UI_COLOR_DEFAULT};
static const ui_style secret_style = {UI_ATTR_BOLD, UI_COLOR_OK};

/* ---- the dialog's model and drawing ------------------------------------------------ */

const char *ui_token_mask(bool ascii)
{
    return ascii ? "****" : "\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2";
}

void ui_token_draw(const char *cred_id, const char *description, const char *token,
                   bool copied, bool shown_before, ui_canvas *c, ui_rect area)
{
    int tlen = (int)strlen(token);
    int want = tlen + 2 > 60 ? tlen + 2 : 60;
    int inner = (want + 4 > BOX_MAX_W ? BOX_MAX_W : want + 4) - 4;
    if (inner > area.width - 4)
        inner = area.width - 4;
    if (inner < 8)
        inner = 8;
    int token_rows = (tlen + inner - 1) / inner;
    int rows = 7 + token_rows + (copied ? 1 : 0);
    char title[MODEL_ID_MAX + 32];
    snprintf(title, sizeof title, "%s: %s", shown_before ? "Token" : "New token", cred_id);
    ui_rect box = ui_dialog_box(c, area, want, rows, title);
    int x = box.x + 2, w = box.width - 4, y = box.y + 1;
    ui_canvas_text(c, y++, x, w, description[0] ? description : "(no description)", plain,
                   true);
    y++;
    /* The token is ASCII (store_token_check, in ui_dialog_token): split it into rows
     * of `w` bytes. */
    for (int off = 0; off < tlen && y < box.y + box.height - 1; off += w) {
        char part[BOX_MAX_W + 1];
        int n = tlen - off < w ? tlen - off : w;
        if (n > BOX_MAX_W)
            n = BOX_MAX_W;
        memcpy(part, token + off, (size_t)n);
        part[n] = '\0';
        ui_canvas_text(c, y++, x, w, part, secret_style, false);
        model_wipe(part, sizeof part);
    }
    y++;
    ui_canvas_text(c, y++, x, w, shown_before ? "Shown before on this machine: keep it secret."
                                              : "Shown this once: the API never sends it again.",
                   plain, true);
    ui_canvas_text(c, y++, x, w, "Agents on this machine can still fetch it from rampart.",
                   plain, true);
    if (copied)
        ui_canvas_text(c, y++, x, w, "Sent to the terminal's clipboard (OSC 52).",
                       title_style, true);
    ui_canvas_text(c, box.y + box.height - 2, x, w,
                   c->ascii ? "Y copy | Enter close" : "Y copy \xc2\xb7 Enter close",
                   hint_style, true);
}

/* ---- OSC 52 -------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t base64(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    return o;
}

/* The bytes of `framing` at `out`, without its NUL (the sequence is not a string
 * until the caller ends it). Returns how many. */
static size_t put_framing(char *out, const char *framing)
{
    size_t i = 0;
    for (; framing[i]; i++)
        out[i] = framing[i];
    return i;
}

/* One sequence at `out`: ESC ] 52;c; base64 BEL, inside ESC P tmux; … ESC \\ with
 * its ESC doubled when `wrapped`. Returns the bytes written. */
static size_t osc52_one(const char *text, size_t n, bool wrapped, char *out)
{
    size_t o = 0;
    if (wrapped)
        o += put_framing(out, "\033Ptmux;\033");
    o += put_framing(out + o, "\033]52;c;");
    o += base64((const unsigned char *)text, n, out + o);
    out[o++] = '\a';
    if (wrapped)
        o += put_framing(out + o, "\033\\");
    return o;
}

char *ui_osc52_encode(const char *text, bool tmux, size_t *len)
{
    size_t n = strlen(text), enc = (n + 2) / 3 * 4;
    /* Twice the sequence and its framing at most: plain, then wrapped. */
    char *out = malloc(2 * enc + 48);
    if (!out)
        return NULL;
    size_t o = osc52_one(text, n, false, out);
    /* Inside tmux the plain sequence reaches tmux's own clipboard (set-clipboard
     * on, which also passes it to the outer terminal) and the wrapped one the
     * outer terminal directly (allow-passthrough on); default tmux takes
     * neither, so the console only ever says the copy was sent. */
    if (tmux)
        o += osc52_one(text, n, true, out + o);
    out[o] = '\0';
    *len = o;
    return out;
}

bool ui_clipboard_send(ui_app *app, const char *text)
{
    const char *tmux = getenv("TMUX");
    size_t n = 0;
    char *seq = ui_osc52_encode(text, tmux && tmux[0], &n);
    if (!seq)
        return false;
    ui_app_raw(app, seq, n); /* written by the terminal layer after the next frame */
    model_wipe(seq, n);
    free(seq);
    return true;
}

/* ---- the dialog as an overlay ---------------------------------------------------- */

typedef struct token_overlay {
    char id[MODEL_ID_MAX + 1];
    char description[MODEL_DESCRIPTION_MAX + 1];
    char *token;  /* wiped when the dialog closes */
    bool copied;
    bool shown_before; /* the store had it marked shown when the dialog opened */
} token_overlay;

static void token_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    const token_overlay *o = self;
    ui_token_draw(o->id, o->description, o->token, o->copied, o->shown_before, c, area);
}

static void copy_token(token_overlay *o, ui_app *app)
{
    if (!ui_clipboard_send(app, o->token)) {
        ui_app_status(app, true, "copy failed: out of memory");
        return;
    }
    o->copied = true;
    ui_app_status(app, false, "token %s", UI_CLIPBOARD_SENT);
}

static ui_overlay_result token_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    token_overlay *o = self;
    /* Only an explicit 'Y' sends the token out: 'y' copies an id everywhere else. */
    if (key == 'Y') {
        copy_token(o, app);
        return UI_OVERLAY_KEEP;
    }
    if (key == 'c' || key == 'y') {
        ui_app_status(app, false, "'Y' sends the token to the terminal's clipboard");
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
    model_free_wiped(o->token);
    free(o);
}

static const ui_overlay_ops token_ops = {"token", NULL, token_draw, token_key, token_free,
                                         NULL};

error_code ui_dialog_token(ui_app *app, const char *cred_id, const char *description,
                           const char *token, error_info *err)
{
    /* Only a token's shape is shown (the store keeps no other): the dialog splits
     * it by bytes, and nothing else of it may reach the terminal. */
    if (store_token_check(token, err) != ERROR_OK)
        return error_prefix(err, "the token of %s is not shown", cred_id);
    token_overlay *o = calloc(1, sizeof *o);
    if (!o || !(o->token = strdup(token))) {
        free(o);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    model_copy_text(o->id, sizeof o->id, cred_id);
    model_copy_text(o->description, sizeof o->description, description);
    /* Marked when pushed, not when closed: a console killed while it shows has
     * still shown it. A read-only cache cannot mark it: it counts as new again. */
    if (store_token_mark_shown(ui_app_store(app), cred_id, &o->shown_before, NULL) != ERROR_OK)
        o->shown_before = false;
    return ui_app_push(app, &token_ops, o, err);
}

/* ---- the token of a cached credential ------------------------------------------ */

void ui_token_show(ui_app *app, const char *cred_id)
{
    store *st = ui_app_store(app);
    model_object obj;
    model_object_init(&obj, MODEL_KIND_CRED); /* store_get clears it first */
    char *token = NULL;
    error_info e = {0};
    if (store_get(st, MODEL_KIND_CRED, cred_id, &obj, &e) != ERROR_OK) {
        ui_app_status(app, true, "no token to show: %s", e.msg);
        return;
    }
    if (store_token_get(st, obj.cred.id, &token, &e) != ERROR_OK)
        ui_app_status(app, true, "no token to show: %s", e.msg);
    else if (ui_dialog_token(app, obj.cred.id, obj.cred.description, token, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    model_free_wiped(token);
    model_object_clear(&obj);
}

/* How many not-yet-shown tokens open a dialog at once; the rest are named by
 * count and come up at the next sync or start. */
enum { UNSEEN_SHOWN_MAX = 4 };

void ui_token_show_unseen(ui_app *app)
{
    if (ui_app_readonly(app))
        return;
    char ids[UNSEEN_SHOWN_MAX][MODEL_ID_MAX + 1];
    size_t n = 0, total = 0;
    error_info e = {0};
    if (store_token_unseen(ui_app_store(app), ids, UNSEEN_SHOWN_MAX, &n, &total, &e))
        return; /* the next sync or start tries again; 't' shows any token */
    /* Pushed last to first, so the oldest is on top and is read first. */
    for (size_t i = n; i-- > 0;)
        ui_token_show(app, ids[i]);
    if (total > n)
        ui_app_status(app, false, "%zu more new token%s not yet shown: they come next, or "
                      "'t' on each credential", total - n, total - n == 1 ? "" : "s");
}

const char *ui_token_status(store *st, const char *cred_id)
{
    char *token = NULL;
    error_info e = {0};
    if (store_token_get(st, cred_id, &token, &e) != ERROR_OK)
        return "not held on this machine";
    model_free_wiped(token); /* the details never show it: 't' does, after asking */
    return "held on this machine ('t' shows it)";
}

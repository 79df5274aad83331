/*
 * ui_dialog: the console's dialogs. A confirmation that names what it is about
 * and defaults to No; a choice among a few answers (a conflict's "Keep local" /
 * "Take remote" / "Cancel"); and the token of a new credential, shown once with
 * a copy to the clipboard through OSC 52, then masked.
 *
 * - The models (ui_confirm_*, ui_choose_*, ui_dialog_box, ui_token_draw,
 *   ui_osc52_encode) use no curses and no ui_app, so tests drive them directly.
 *   The overlays (ui_dialog_*) push them on the console's overlays with
 *   ui_app_push. The confirmation and the choice are in ui/widgets/dialog_model.c
 *   and ui/state/dialog.c; everything about a token (its
 *   dialog, its copy, showing it from the store, saying whether it is held) in
 *   ui/state/token.c.
 * - Confirm keys: y answers yes; n, q and Esc answer no; Left/Right, Tab/BTab, h/l
 *   move between the buttons; Enter answers the selected one, No at first.
 * - Token dialog keys: Y copies (OSC 52, ui_clipboard_send: plain, and also
 *   wrapped in tmux's DCS passthrough when $TMUX is set), Enter, q and Esc close
 *   it. The dialog keeps the only copy of
 *   the token it shows and wipes it when it closes; the status line then shows the
 *   token masked ("••••", "****" in ASCII mode).
 */
#ifndef RAMPART_UI_DIALOG_H
#define RAMPART_UI_DIALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/store.h"
#include "rampart/ui_canvas.h"
#include "rampart/ui_key.h"

/* The console (ui_app.h); the models below do not need it. */
typedef struct ui_app ui_app;

/* ---- the box of every dialog ---------------------------------------------------- */

enum { UI_DIALOG_MAX_W = 76 }; /* columns of a dialog's box at most */

/* A box titled `title` of `rows` inner rows, about `want_w` columns of text wide
 * (bounded; the whole width when the area is narrow), centred in `area` and
 * cleared; returns where it is. */
ui_rect ui_dialog_box(ui_canvas *c, ui_rect area, int want_w, int rows, const char *title);

/* ---- confirm model ------------------------------------------------------------- */

typedef enum ui_answer { UI_ANSWER_NONE, UI_ANSWER_YES, UI_ANSWER_NO } ui_answer;

typedef struct ui_confirm ui_confirm;

/* A question titled `title` ("Delete 2 rules?") whose yes button says `yes_label`
 * ("Delete"). Free with ui_confirm_free. */
error_code ui_confirm_new(const char *title, const char *yes_label, ui_confirm **out,
                          error_info *err);
/* One line of the body (what will be affected), copied. */
error_code ui_confirm_add_line(ui_confirm *d, const char *line, error_info *err);
void ui_confirm_free(ui_confirm *d);

/* A key: UI_ANSWER_NONE while no answer was given. */
ui_answer ui_confirm_key(ui_confirm *d, int key);
bool ui_confirm_yes_selected(const ui_confirm *d);

/* Centred box: title, body lines, then "[ No ]  [ Delete ]" with the selected
 * button in reverse video and between '>' '<'. */
void ui_confirm_draw(const ui_confirm *d, ui_canvas *c, ui_rect area);

/* ---- choice model (a question with several answers) ------------------------- */

/*
 * A question with two to four answers ("Keep local", "Take remote", "Cancel"),
 * each a button; the body lines say what it is about. The last button is selected
 * at first (make it the harmless one). Keys: Left/Right, Tab/BTab, h/l move;
 * Enter answers the selected button; the first letter of a button's label
 * answers it (case-insensitive; the first such button); Esc and q cancel.
 */
enum { UI_CHOOSE_BUTTONS_MAX = 4, UI_CHOOSE_NONE = -1, UI_CHOOSE_CANCEL = -2 };

typedef struct ui_choose ui_choose;

error_code ui_choose_new(const char *title, ui_choose **out, error_info *err);
/* One line of the body, copied (beyond 64 lines: ignored). */
error_code ui_choose_add_line(ui_choose *d, const char *line, error_info *err);
/* One more answer, copied; ERROR_INVALID beyond UI_CHOOSE_BUTTONS_MAX. */
error_code ui_choose_add_button(ui_choose *d, const char *label, error_info *err);
void ui_choose_free(ui_choose *d); /* NULL is a no-op */

/* A key: the index of the button answered, UI_CHOOSE_NONE while none was,
 * UI_CHOOSE_CANCEL for Esc or q. */
int ui_choose_key(ui_choose *d, int key);
size_t ui_choose_selected(const ui_choose *d);

/* Centred box: title, body lines, then the buttons ("[ Keep local ]  [ Take
 * remote ]  >[ Cancel ]<"), the selected one in reverse video between '>' '<'. */
void ui_choose_draw(const ui_choose *d, ui_canvas *c, ui_rect area);

/* ---- token ------------------------------------------------------------------------ */

/* The token dialog's box: the credential, its token (wrapped), the keys; once
 * `copied`, a line saying the copy was sent; `shown_before` says the token was
 * shown already (not "New token", not "shown this once"). */
void ui_token_draw(const char *cred_id, const char *description, const char *token,
                   bool copied, bool shown_before, ui_canvas *c, ui_rect area);

/* "••••" or "****" in ASCII mode: how a held token is shown when not revealed. */
const char *ui_token_mask(bool ascii);

/*
 * The OSC 52 sequence that asks the terminal to put `text` on the clipboard
 * (ESC ] 52 ; c ; base64 BEL); with `tmux` (inside tmux), that plain sequence for
 * tmux's own clipboard followed by the same wrapped in tmux's passthrough
 * (ESC P tmux; … ESC \ with every ESC inside doubled) for the outer terminal. A
 * heap string of *len bytes that the caller wipes (model_wipe) and frees; NULL
 * when out of memory.
 */
char *ui_osc52_encode(const char *text, bool tmux, size_t *len);

/* Queue the OSC 52 copy of `text` for the terminal layer (ui_app_raw), wrapped
 * as ui_osc52_encode does when $TMUX is set; false when out of memory. The
 * terminal may refuse it, and nothing tells: messages say it was sent, with
 * UI_CLIPBOARD_SENT after what was sent ("id sent to the terminal's …"). */
bool ui_clipboard_send(ui_app *app, const char *text);
#define UI_CLIPBOARD_SENT "sent to the terminal's clipboard (OSC 52; the terminal may refuse it)"

/* ---- overlays (ui/state/dialog.c, ui/state/token.c) ------------------------- */

/* Called with the confirm's context when the answer is yes. */
typedef void (*ui_confirm_fn)(ui_app *app, void *ctx);

/*
 * Push `d` as an overlay. When answered yes, on_yes(app, ctx) runs; either way,
 * when it closes, free_ctx(ctx) (may be NULL). Takes ownership of `d` and `ctx`
 * even when it fails (ERROR_NOMEM: both are released then).
 */
error_code ui_dialog_confirm(ui_app *app, ui_confirm *d, ui_confirm_fn on_yes, void *ctx,
                             void (*free_ctx)(void *), error_info *err);

/* Called when a choice dialog closes: the button's index, or UI_CHOOSE_CANCEL. */
typedef void (*ui_choose_fn)(ui_app *app, void *ctx, int chosen);

/* Push `d` as an overlay; fn(app, ctx, answer) runs once when it is answered or
 * cancelled, then free_ctx(ctx) (may be NULL) when it closes. Takes ownership of
 * `d` and `ctx` even when it fails (both released then). */
error_code ui_dialog_choose(ui_app *app, ui_choose *d, ui_choose_fn fn, void *ctx,
                            void (*free_ctx)(void *), error_info *err);

/* Push the token dialog for credential `cred_id` with a copy of `token`; a token
 * without a token's shape (store_token_check) is refused, ERROR_INVALID. */
error_code ui_dialog_token(ui_app *app, const char *cred_id, const char *description,
                           const char *token, error_info *err);

/* The token dialog of cached credential `cred_id` (id or alias), with the token
 * this machine holds; the status line says why when there is none to show. */
void ui_token_show(ui_app *app, const char *cred_id);

/* The token dialog for each credential whose token is not yet shown (a sync
 * brought it while nobody looked, or before a restart), the oldest on top; a few
 * at once, the status line counts the rest. Nothing on a read-only console. */
void ui_token_show_unseen(ui_app *app);

/* Whether this machine holds the token of credential `cred_id`, as the details
 * say it (the token itself is read and wiped at once, never returned). */
const char *ui_token_status(store *st, const char *cred_id);

#endif

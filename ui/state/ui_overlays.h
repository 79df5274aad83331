/*
 * ui_overlays: the generic overlays on the console's state (ui/state/
 * overlay_text.c): a scrollable box of label/value lines (the details, the help)
 * and a pick list (the policy picker). The confirmation and the token dialog are
 * in rampart/ui_dialog.h. Private to ui/.
 *
 * Contract: each is pushed on the state's overlay stack and owned by it from then
 * on; each lays itself out before a frame and draws from what it holds.
 */
#ifndef RAMPART_UI_OVERLAYS_H
#define RAMPART_UI_OVERLAYS_H

#include <stddef.h>

#include "ui_state.h"

typedef struct ui_text_overlay ui_text_overlay;

/* An overlay of label/value lines under a title, scrolled with the usual keys,
 * closed with q, Esc, Enter or the help key (Q quits). Push it with
 * ui_text_overlay_push. */
error_code ui_text_overlay_new(const char *title, ui_text_overlay **out, error_info *err);
error_code ui_text_overlay_add(ui_text_overlay *o, const char *label, const char *value,
                               error_info *err);
void ui_text_overlay_free(ui_text_overlay *o); /* NULL is a no-op */
/* Push (the state owns it from then on; freed on failure too, said in the status
 * line). */
void ui_text_overlay_push(ui_app *app, ui_text_overlay *o);

/* A pick list (the policy picker): `fn` gets the picked line's index and text,
 * or -1 (Esc, the console ending, or opening failed), exactly once, with `ctx`
 * (app may then be NULL). The items are copied. */
typedef void (*ui_pick_fn)(ui_app *app, void *ctx, int chosen, const char *text);
error_code ui_pick_open(ui_app *app, const char *title, const char *const *items,
                        size_t count, ui_pick_fn fn, void *ctx, error_info *err);

#endif

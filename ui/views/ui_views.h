/*
 * ui_views: the console's views (ui/views/), as the loop and the keys reach them:
 * a view is a table over a row source (struct ui_view, ui/state/ui_state.h). The
 * rules and credentials views are one record view over a kind (its data in
 * ui/views/record_kinds.c); the pending view shows the plan of both kinds; the log
 * view the state's log ring. Private to ui/.
 *
 * Contract: views read the cache through the state's browse store and draw into
 * the canvas only; their sources never write.
 */
#ifndef RAMPART_UI_VIEWS_H
#define RAMPART_UI_VIEWS_H

#include "../state/ui_state.h"

/* The record view of `kind` (the rules view, the credentials view). */
error_code ui_view_records_new(ui_app *app, model_kind kind, ui_view **out, error_info *err);

/* The plan: what the next sync does, both kinds. */
error_code ui_view_pending_new(ui_app *app, ui_view **out, error_info *err);

/* The log ring, newest first. */
error_code ui_view_log_new(ui_app *app, ui_view **out, error_info *err);

/* Free a view made above; NULL is a no-op. */
void ui_view_free(ui_view *v);

/* Details of the current row in an overlay (Enter); the status line says why
 * when there are none. */
void ui_view_details(ui_view *v, ui_app *app);

#endif

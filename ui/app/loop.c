/*
 * The console's loop (app_internal.h): it assembles a console (the state, the
 * views, the sync state, the handler of other threads' events), and makes each
 * frame in two steps: bring the state up to date (what another writer changed,
 * the current view's rows, the overlays' layout, the header's sync text), then
 * draw it, which only reads it. The terminal (ui.c) and the headless runner
 * (headless.c) drive it with the same calls, so both show the same screens.
 */
#include "sync_internal.h"

/* Each view of the console: the record view of a kind, or a view of its own. */
static error_code view_new(ui_app *app, ui_view_id id, ui_view **out, error_info *err)
{
    switch (id) {
    case UI_VIEW_RULES: return ui_view_records_new(app, MODEL_KIND_RULE, out, err);
    case UI_VIEW_CREDS: return ui_view_records_new(app, MODEL_KIND_CRED, out, err);
    case UI_VIEW_PENDING: return ui_view_pending_new(app, out, err);
    default: return ui_view_log_new(app, out, err);
    }
}

/* An event of another thread, on the ui thread: the sync worker's side sees every
 * sync event first (ui_sync_on_event); the log view gets the log lines; a sync's
 * end reloads every view. */
static void handle_event(ui_app *app, const ui_event *ev)
{
    switch (ev->kind) {
    case UI_EVENT_SYNC_PROGRESS:
        ui_sync_on_event(app, ev);
        break;
    case UI_EVENT_SYNC_LOG:
        ui_sync_on_event(app, ev);
        ui_app_log(app, ev->level, ev->line);
        break;
    case UI_EVENT_SYNC_DONE:
        ui_sync_on_event(app, ev);
        ui_app_reload(app);
        break;
    case UI_EVENT_AGENT_LOG:
        ui_app_log(app, SYNC_LOG_INFO, ev->line);
        break;
    }
}

error_code ui_app_new(const ui_options *opt, int width, int height, bool ascii,
                      ui_app **out, error_info *err)
{
    ui_app *app = NULL;
    if (ui_state_new(opt, width, height, ascii, &app, err) != ERROR_OK)
        return err->code;
    app->on_event = handle_event;
    error_code rc = ui_sync_new(&app->sync, err);
    for (int v = 0; v < UI_VIEW_COUNT && rc == ERROR_OK; v++)
        rc = view_new(app, (ui_view_id)v, &app->views[v], err);
    if (rc != ERROR_OK) {
        ui_app_free(app);
        return rc;
    }
    ui_sync_read_last_sync(app); /* the header's age survives a restart */
    *out = app;
    return ERROR_OK;
}

void ui_app_free(ui_app *app)
{
    if (!app)
        return;
    ui_app_close_all(app);
    /* The worker posts into this app until it is joined. */
    ui_sync_free(app->sync);
    app->sync = NULL;
    for (int v = 0; v < UI_VIEW_COUNT; v++) {
        ui_view_free(app->views[v]);
        app->views[v] = NULL;
    }
    ui_state_free(app);
}

bool ui_app_ticking(ui_app *app)
{
    return ui_sync_ticking(app);
}

/* The header's sync texts, as the frame shows them. */
static void update_sync_text(ui_app *app)
{
    app->nsync_text = ui_sync_texts(app, app->sync_text, UI_SYNC_TEXTS);
}

bool ui_app_tick(ui_app *app)
{
    bool started = ui_sync_idle(app);
    update_sync_text(app);
    return started;
}

/* ---- a frame ------------------------------------------------------------------ */

/* Another process (a CLI import, the sync worker's own handle) changed the cache. */
static void follow_other_writers(ui_app *app)
{
    if (ui_sync_running(app))
        return; /* the sync's end reloads everything once */
    long long v = 0;
    if (store_data_version(ui_app_browse_store(app), &v, NULL) != ERROR_OK)
        return;
    if (app->have_version && v != app->data_version) {
        ui_app_reload(app);
        ui_sync_read_last_sync(app); /* another process may have synced */
    }
    app->data_version = v;
    app->have_version = true;
}

/* What the frame shows, read before it is drawn: the current view's rows for the
 * screen's height, the overlays fitted to it, the sync state's text. */
static void update(ui_app *app)
{
    ui_canvas *c = ui_app_canvas(app);
    follow_other_writers(app);
    if (ui_app_too_small(app))
        return;
    ui_table *t = &ui_app_view(app)->table;
    ui_rect body = ui_app_body(app); /* a long message takes rows from the view */
    error_info e = {0};
    if (ui_table_set_height(t, ui_table_rows_for(body.height), &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    ui_table_refresh(t, false); /* a failure is shown in the table itself */
    for (int i = 0; i < app->noverlays; i++) {
        if (app->overlays[i].ops->layout)
            app->overlays[i].ops->layout(app->overlays[i].self, c, body);
    }
    update_sync_text(app);
}

void ui_app_render(ui_app *app)
{
    update(app);
    ui_app_draw(app, ui_app_canvas(app));
}

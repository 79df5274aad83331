/*
 * The console's loop (app_internal.h): it assembles a console (the state, the
 * views, the sync state, the handler of other threads' events), and makes each
 * frame in two steps: bring the state up to date (what another writer changed,
 * the current view's rows, the overlays' layout, the header's sync text), then
 * draw it, which only reads it. The terminal (ui.c) and the headless runner
 * (headless.c) drive it with the same calls, so both show the same screens.
 */
#include "sync_internal.h"

#include <stdio.h>
#include <string.h>

#include "../widgets/ui_text.h"
#include "rampart/ui_dialog.h"

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
        ui_impact_request(app->impact);
        break;
    case UI_EVENT_AGENT_LOG:
        ui_app_log(app, SYNC_LOG_INFO, ev->line);
        break;
    case UI_EVENT_IMPACT:
        snprintf(app->impact_text, sizeof app->impact_text, "%.*s",
                 (int)ui_text_prefix(ev->line, sizeof app->impact_text - 1), ev->line);
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
    app->impact = ui_impact_start(app, opt->db_path, opt->impact_log);
    *out = app;
    return ERROR_OK;
}

void ui_app_free(ui_app *app)
{
    if (!app)
        return;
    agent_stop(app->agent);
    app->agent = NULL;
    ui_impact_stop(app->impact); /* it posts into this app until joined */
    app->impact = NULL;
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
    if (app->queue_stale && !ui_sync_running(app)) {
        app->queue_stale = false;
        ui_sync_read_queue(app);
    }
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
        ui_impact_request(app->impact); /* the queue may have changed */
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

/* ---- the agent ---------------------------------------------------------------- */

/* Agent audit lines come from its server threads: into the loop's queue. */
static void agent_log(void *ctx, const char *line)
{
    ui_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = UI_EVENT_AGENT_LOG;
    snprintf(ev.line, sizeof ev.line, "agent: %s", line);
    ui_app_post(ctx, &ev);
}

void ui_app_start_agent(ui_app *app)
{
    const ui_options *opt = app->opt;
    if (!opt->agent)
        return;
    agent_options ao = {.db_path = opt->db_path, .profile = opt->profile,
                        .on_log = agent_log, .log_ctx = app,
                        .version_header = opt->api.version_header};
    if (opt->agent_listen && *opt->agent_listen) {
        ao.listen[0] = opt->agent_listen;
        ao.nlisten = 1;
    }
    error_info e = {0};
    if (agent_start(&ao, &app->agent, &e) != ERROR_OK) {
        app->agent = NULL;
        size_t n = ui_text_prefix(e.msg, sizeof app->agent_error - 1);
        memcpy(app->agent_error, e.msg, n);
        app->agent_error[n] = '\0';
        ui_app_log(app, SYNC_LOG_ERROR, e.msg);
    }
}

/* ---- profiles ----------------------------------------------------------------- */

bool ui_app_profile_allowed(ui_app *app, const char *name)
{
    const ui_options *opt = app->opt;
    if (!opt->profiles) {
        ui_app_status(app, true, "%s", opt->sandbox ? "the sandbox has no profiles: leave it "
                                                     "and run rampart --profile NAME"
                                                   : "this console cannot switch profiles");
        return false;
    }
    if (!*name) {
        ui_app_status(app, false, "profile %s: :profile NAME switches (rampart profiles "
                      "lists them)", opt->profile ? opt->profile : "default");
        return false;
    }
    if (opt->profile && strcmp(name, opt->profile) == 0) {
        ui_app_status(app, false, "already on profile %s", name);
        return false;
    }
    if (ui_sync_running(app)) {
        ui_app_status(app, true, "a sync is running: :profile %s when it has ended", name);
        return false;
    }
    if (app->noverlays > 0) {
        ui_app_status(app, true, "close what is open first (a form's edits would be lost)");
        return false;
    }
    return true;
}

/* The new console starts where the old one was seen from: the same clock (the
 * headless one is a fake), a whole repaint, and a line that says what changed. */
static void take_over(ui_app *fresh, const ui_app *old, const char *name)
{
    ui_app_set_clock(fresh, old->clock, old->clock_ctx);
    fresh->repaint = true;
    ui_app_status(fresh, false, "profile %s: cache %s", name, fresh->opt->db_path);
    char line[UI_LOG_TEXT];
    snprintf(line, sizeof line, "switched to profile %.64s (cache %.400s)", name,
             fresh->opt->db_path);
    ui_app_log(fresh, SYNC_LOG_INFO, line);
}

ui_app *ui_app_follow_profile(ui_app *app, const ui_term_hold *term)
{
    if (!app->profile_request[0])
        return app;
    char name[sizeof app->profile_request];
    memcpy(name, app->profile_request, sizeof name);
    app->profile_request[0] = '\0';
    const ui_profiles *p = app->opt->profiles;
    static const ui_term_hold no_term = {0};
    const ui_options *next = NULL;
    error_info e = {0};
    if (p->open(p->ctx, name, term ? term : &no_term, &next, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        app->repaint = true; /* a key_command may have written on the terminal */
        return app;
    }
    ui_app *fresh = NULL;
    if (ui_app_new(next, app->canvas.width, app->canvas.height, app->canvas.ascii, &fresh,
                   &e) != ERROR_OK ||
        !fresh) {
        p->finish(p->ctx, false);
        ui_app_status(app, true, "profile %s: %s", name, e.msg);
        return app;
    }
    take_over(fresh, app, name);
    ui_app_free(app);
    p->finish(p->ctx, true);
    ui_app_start_agent(fresh);
    ui_token_show_unseen(fresh);
    return fresh;
}

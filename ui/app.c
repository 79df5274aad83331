/*
 * The console's loop state and the services it offers to views and overlays
 * (ui_app.h): status line, log ring, reloads, marks, events from other threads.
 */
#include "app_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ui_text.h"

typedef error_code (*view_new_fn)(ui_app *app, ui_view **out, error_info *err);

static const view_new_fn view_makers[UI_VIEW_COUNT] = {
    [UI_VIEW_RULES] = ui_view_rules_new,
    [UI_VIEW_CREDS] = ui_view_creds_new,
    [UI_VIEW_PENDING] = ui_view_pending_new,
    [UI_VIEW_LOG] = ui_view_log_new,
};

static error_code make_wake_pipe(ui_app *app, error_info *err)
{
    if (pipe2(app->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        app->wake[0] = app->wake[1] = -1;
        return error_set(err, ERROR_IO, "cannot create a pipe: %s", strerror(errno));
    }
    return ERROR_OK;
}

static void open_browse_store(ui_app *app)
{
    const char *path = app->opt->db_path;
    if (!path || !*path || strcmp(path, ":memory:") == 0)
        return;
    error_info e = {0};
    if (store_open(path, STORE_READONLY, &app->browse, &e) != ERROR_OK)
        app->browse = NULL; /* the writer's handle serves both */
}

error_code ui_app_new(const ui_options *opt, int width, int height, bool ascii,
                      ui_app **out, error_info *err)
{
    *out = NULL;
    ui_app *app = calloc(1, sizeof *app);
    if (!app)
        return error_set(err, ERROR_NOMEM, "out of memory");
    app->opt = opt;
    app->st = opt->st;
    app->wake[0] = app->wake[1] = -1;
    pthread_mutex_init(&app->lock, NULL);
    app->log.lines = calloc(UI_LOG_LINES, sizeof *app->log.lines);
    app->queue = calloc(UI_QUEUE_MAX, sizeof *app->queue);
    app->log.next_seq = 1;
    error_code rc = ERROR_OK;
    if (!app->log.lines || !app->queue)
        rc = error_set(err, ERROR_NOMEM, "out of memory");
    if (rc == ERROR_OK)
        rc = make_wake_pipe(app, err);
    if (rc == ERROR_OK)
        open_browse_store(app);
    if (rc == ERROR_OK)
        rc = ui_canvas_init(&app->canvas, width, height, ascii, err);
    if (rc == ERROR_OK)
        rc = ui_sync_new(&app->sync, err);
    for (int v = 0; v < UI_VIEW_COUNT && rc == ERROR_OK; v++)
        rc = view_makers[v](app, &app->views[v], err);
    if (rc != ERROR_OK) {
        ui_app_free(app);
        return rc;
    }
    *out = app;
    return ERROR_OK;
}

void ui_app_free(ui_app *app)
{
    if (!app)
        return;
    ui_app_close_all(app);
    ui_app_prompt_close(app);
    /* The worker posts into this app until it is joined. */
    ui_sync_free(app->sync);
    app->sync = NULL;
    ui_app_raw_clear(app);
    for (int v = 0; v < UI_VIEW_COUNT; v++)
        ui_view_free(app->views[v]);
    ui_canvas_free(&app->canvas);
    store_close(app->browse);
    if (app->wake[0] >= 0) {
        close(app->wake[0]);
        close(app->wake[1]);
    }
    pthread_mutex_destroy(&app->lock);
    free(app->queue);
    free(app->log.lines);
    free(app);
}

/* ---- services (ui_app.h) ---------------------------------------------------- */

store *ui_app_store(ui_app *app)
{
    return app->st;
}

store *ui_app_browse_store(ui_app *app)
{
    return app->browse ? app->browse : app->st;
}

const ui_options *ui_app_options(ui_app *app)
{
    return app->opt;
}

bool ui_app_readonly(ui_app *app)
{
    return app->opt->readonly;
}

ui_sync *ui_app_sync(ui_app *app)
{
    return app ? app->sync : NULL;
}

ui_canvas *ui_app_canvas(ui_app *app)
{
    return &app->canvas;
}

ui_view *ui_app_view(ui_app *app)
{
    return app->views[app->view];
}

ui_view_id ui_app_view_id(ui_app *app)
{
    return app->view;
}

void ui_app_status(ui_app *app, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(app->status, sizeof app->status, fmt, ap);
    va_end(ap);
    app->status_error = error;
    if (error)
        ui_app_log(app, SYNC_LOG_ERROR, app->status);
}

const ui_log_line *ui_log_at(const ui_log_ring *r, size_t i)
{
    return &r->lines[(r->head + i) % UI_LOG_LINES];
}

const ui_log_ring *ui_app_log_ring(ui_app *app)
{
    return &app->log;
}

void ui_app_log(ui_app *app, sync_log_level level, const char *line)
{
    ui_log_ring *r = &app->log;
    ui_log_line *l;
    if (r->len < UI_LOG_LINES) {
        l = &r->lines[(r->head + r->len) % UI_LOG_LINES];
        r->len++;
    } else {
        l = &r->lines[r->head];
        r->head = (r->head + 1) % UI_LOG_LINES;
    }
    l->seq = r->next_seq++;
    l->level = level;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(l->time, sizeof l->time, "%H:%M:%S", &tm);
    size_t n = ui_text_prefix(line ? line : "", sizeof l->text - 1);
    memcpy(l->text, line ? line : "", n);
    l->text[n] = '\0';
    if (app->views[UI_VIEW_LOG])
        ui_table_reload(&app->views[UI_VIEW_LOG]->table);
}

void ui_app_reload(ui_app *app)
{
    for (int v = 0; v < UI_VIEW_COUNT; v++) {
        if (app->views[v])
            ui_table_reload(&app->views[v]->table);
    }
}

bool ui_app_current(ui_app *app, ui_kind *kind, char id[MODEL_ID_MAX + 1])
{
    ui_view *v = ui_app_view(app);
    if (!v->ops->records && app->view != UI_VIEW_PENDING)
        return false;
    ui_table_refresh(&v->table, false);
    const ui_table_row *row = ui_table_current(&v->table);
    if (!row || !row->id[0])
        return false;
    *kind = (ui_kind)row->kind;
    snprintf(id, MODEL_ID_MAX + 1, "%s", row->id);
    return true;
}

size_t ui_app_marked(ui_app *app, ui_kind *kind, char (*ids)[MODEL_ID_MAX + 1], size_t max)
{
    ui_table *t = &ui_app_view(app)->table;
    if (app->view == UI_VIEW_LOG)
        return 0;
    for (size_t i = 0; i < t->nmarks && i < max; i++)
        snprintf(ids[i], MODEL_ID_MAX + 1, "%s", t->marks[i].id);
    if (t->nmarks && kind)
        *kind = (ui_kind)t->marks[0].kind;
    return t->nmarks;
}

void ui_app_unmark_all(ui_app *app)
{
    ui_table_unmark_all(&ui_app_view(app)->table);
}

const char *ui_app_policy(ui_app *app)
{
    return app->views[UI_VIEW_RULES]->table.policy;
}

error_code ui_app_push(ui_app *app, const ui_overlay_ops *ops, void *self, error_info *err)
{
    if (app->noverlays >= UI_OVERLAYS_MAX) {
        if (ops->free)
            ops->free(self);
        return error_set(err, ERROR_STATE, "too many windows open: close one first");
    }
    app->overlays[app->noverlays++] = (ui_overlay){ops, self};
    return ERROR_OK;
}

void ui_app_set_cursor(ui_app *app, int y, int x)
{
    if (y < 0 || x < 0 || y >= app->canvas.height || x >= app->canvas.width)
        return;
    app->cursor_set = true;
    app->cursor_y = y;
    app->cursor_x = x;
}

void ui_app_close_top(ui_app *app)
{
    if (app->noverlays == 0)
        return;
    ui_overlay *o = &app->overlays[--app->noverlays];
    if (o->ops->free)
        o->ops->free(o->self);
    o->ops = NULL;
    o->self = NULL;
}

void ui_app_close_all(ui_app *app)
{
    while (app->noverlays > 0)
        ui_app_close_top(app);
}

bool ui_app_quitting(ui_app *app, int *status)
{
    if (status)
        *status = app->exit_status;
    return app->quit;
}

void ui_app_quit(ui_app *app, int status)
{
    app->quit = true;
    app->exit_status = status;
}

bool ui_app_take_repaint(ui_app *app)
{
    bool r = app->repaint;
    app->repaint = false;
    return r;
}

bool ui_app_ticking(ui_app *app)
{
    return ui_sync_running(app);
}

/* ---- size ------------------------------------------------------------------- */

error_code ui_app_resize(ui_app *app, int width, int height, error_info *err)
{
    if (width == app->canvas.width && height == app->canvas.height)
        return ERROR_OK;
    return ui_canvas_resize(&app->canvas, width, height, err);
}

/* ---- events from other threads ------------------------------------------------ */

int ui_app_wake_fd(ui_app *app)
{
    return app->wake[0];
}

static void wake(ui_app *app)
{
    char b = 1;
    if (write(app->wake[1], &b, 1) < 0) {
        /* full: the loop is already due to wake */
    }
}

bool ui_app_post(ui_app *app, const ui_event *ev)
{
    bool ok = true;
    pthread_mutex_lock(&app->lock);
    if (ev->kind == UI_EVENT_SYNC_PROGRESS && app->qlen > 0 &&
        app->queue[(app->qhead + app->qlen - 1) % UI_QUEUE_MAX].kind ==
            UI_EVENT_SYNC_PROGRESS) {
        /* Only the latest progress matters. */
        app->queue[(app->qhead + app->qlen - 1) % UI_QUEUE_MAX] = *ev;
    } else if (app->qlen < UI_QUEUE_MAX) {
        app->queue[(app->qhead + app->qlen) % UI_QUEUE_MAX] = *ev;
        app->qlen++;
    } else {
        ok = false;
        if (ev->kind == UI_EVENT_SYNC_PROGRESS) {
            app->progress = *ev;
            app->progress_pending = true;
        }
    }
    pthread_mutex_unlock(&app->lock);
    wake(app);
    return ok;
}

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

void ui_app_drain(ui_app *app)
{
    char buf[64];
    while (read(app->wake[0], buf, sizeof buf) > 0) {
    }
    for (;;) {
        ui_event ev;
        bool got = false;
        pthread_mutex_lock(&app->lock);
        if (app->qlen > 0) {
            ev = app->queue[app->qhead];
            app->qhead = (app->qhead + 1) % UI_QUEUE_MAX;
            app->qlen--;
            got = true;
        } else if (app->progress_pending) {
            ev = app->progress;
            app->progress_pending = false;
            got = true;
        }
        pthread_mutex_unlock(&app->lock);
        if (!got)
            break;
        handle_event(app, &ev);
    }
}

/* ---- the agent ---------------------------------------------------------------- */

void ui_app_agent_text(ui_app *app, char *buf, size_t size)
{
    if (app->agent) {
        agent_stats s;
        agent_stats_get(app->agent, &s);
        char n[32];
        ui_text_count(s.lookups, n, sizeof n);
        snprintf(buf, size, "agent: %s lookup%s", n, s.lookups == 1 ? "" : "s");
    } else if (app->agent_error[0]) {
        snprintf(buf, size, "agent: error %s", app->agent_error);
    } else {
        snprintf(buf, size, "agent: off");
    }
}

/*
 * The console's state (ui_state.h) and the services it offers to views, overlays
 * and actions (ui_app.h): status line, log ring, reloads, marks, the overlay
 * stack, the prompt, the current view, events from other threads. It calls nothing
 * above it.
 */
#include "ui_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../widgets/ui_text.h"

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

error_code ui_state_new(const ui_options *opt, int width, int height, bool ascii,
                        ui_app **out, error_info *err)
{
    *out = NULL;
    ui_app *app = calloc(1, sizeof *app);
    if (!app)
        return error_set(err, ERROR_NOMEM, "out of memory");
    app->opt = opt;
    app->st = opt->st;
    app->wake[0] = app->wake[1] = -1;
    app->raw.wipe = true; /* an OSC 52 copy holds a token */
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
    if (rc != ERROR_OK) {
        ui_state_free(app);
        return rc;
    }
    *out = app;
    return ERROR_OK;
}

void ui_state_free(ui_app *app)
{
    if (!app)
        return;
    ui_app_close_all(app);
    ui_app_prompt_close(app);
    ui_app_raw_clear(app);
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

const ui_options *ui_app_options(const ui_app *app)
{
    return app->opt;
}

bool ui_app_readonly(const ui_app *app)
{
    return app->opt->readonly;
}

const char *ui_app_readonly_why(const ui_app *app)
{
    return app->opt->readonly_why ? app->opt->readonly_why : "started with --readonly";
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

const ui_view *ui_app_view_const(const ui_app *app)
{
    return app->views[app->view];
}

ui_view_id ui_app_view_id(const ui_app *app)
{
    return app->view;
}

/* Drop `id` from the views to go back to. */
static void history_drop(ui_app *app, ui_view_id id)
{
    int kept = 0;
    for (int i = 0; i < app->nhistory; i++) {
        if (app->history[i] != id)
            app->history[kept++] = app->history[i];
    }
    app->nhistory = kept;
}

void ui_app_switch(ui_app *app, ui_view_id id)
{
    if (id >= UI_VIEW_COUNT)
        return;
    ui_app_close_all(app);
    ui_app_prompt_close(app);
    if (id == app->view)
        return;
    /* Each view once, the one just left last: 'q' walks back through them. */
    history_drop(app, id);
    history_drop(app, app->view);
    app->history[app->nhistory++] = app->view;
    app->view = id;
}

bool ui_app_go_back(ui_app *app)
{
    if (app->nhistory == 0)
        return false;
    ui_view_id to = app->history[--app->nhistory];
    ui_app_close_all(app);
    app->view = to;
    return true;
}

bool ui_app_can_go_back(const ui_app *app)
{
    const ui_table *t = &ui_app_view_const(app)->table;
    return t->filter[0] || ui_table_scoped(t) || app->nhistory > 0;
}

bool ui_app_too_small(const ui_app *app)
{
    return app->canvas.width < UI_MIN_WIDTH || app->canvas.height < UI_MIN_HEIGHT;
}

/* ---- the status area ------------------------------------------------------------ */

void ui_app_status_text(const ui_app *app, char *buf, size_t size)
{
    bool prompt = app->prompt.kind != UI_PROMPT_NONE && app->noverlays == 0;
    if (prompt || !app->status[0]) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "%s%s", app->status_error ? "error: " : "", app->status);
}

int ui_app_status_rows(const ui_app *app)
{
    const ui_canvas *c = &app->canvas;
    char text[sizeof app->status + 16];
    ui_app_status_text(app, text, sizeof text);
    int most = (c->height - UI_HEADER_ROWS) / 2;
    most = most > UI_STATUS_ROWS_MAX ? UI_STATUS_ROWS_MAX : most;
    int rows = 0, width = c->width - 1;
    for (const char *s = text; *s && width > 0 && rows < most; rows++) {
        s += ui_canvas_wrap(c, s, width);
        while (*s == ' ')
            s++;
    }
    return rows > UI_STATUS_ROWS ? rows : UI_STATUS_ROWS;
}

ui_rect ui_app_body(const ui_app *app)
{
    const ui_canvas *c = &app->canvas;
    return (ui_rect){0, UI_HEADER_ROWS, c->width,
                     c->height - UI_HEADER_ROWS - ui_app_status_rows(app)};
}

/* ---- the prompt ---------------------------------------------------------------- */

void ui_app_prompt_open(ui_app *app, ui_prompt_kind kind)
{
    ui_prompt *p = &app->prompt;
    ui_app_prompt_close(app);
    const char *initial = kind == UI_PROMPT_FILTER ? ui_app_view(app)->table.filter : "";
    error_info e = {0};
    if (ui_line_init(&p->line, initial, UI_PROMPT_MAX - UI_LINE_SLACK, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    p->kind = kind;
}

void ui_app_prompt_close(ui_app *app)
{
    app->prompt.kind = UI_PROMPT_NONE;
    ui_line_free(&app->prompt.line);
}

bool ui_app_text_cursor(const ui_app *app, int *y, int *x)
{
    const ui_prompt *p = &app->prompt;
    if (p->kind == UI_PROMPT_NONE || app->noverlays > 0)
        return false;
    char before[UI_PROMPT_MAX + 1];
    memcpy(before, p->line.buf, p->line.cursor);
    before[p->line.cursor] = '\0';
    *y = app->canvas.height - 1;
    *x = 1 + ui_canvas_width(&app->canvas, before, app->canvas.width);
    if (*x >= app->canvas.width)
        *x = app->canvas.width - 1;
    return true;
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

static double wall_now(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double ui_app_now(const ui_app *app)
{
    return app->clock ? app->clock(app->clock_ctx) : wall_now(NULL);
}

void ui_app_set_clock(ui_app *app, double (*now)(void *ctx), void *ctx)
{
    app->clock = now;
    app->clock_ctx = ctx;
}

bool ui_app_busy(const ui_app *app)
{
    return app->noverlays > 0 || app->prompt.kind != UI_PROMPT_NONE;
}

void ui_app_log_failure(ui_app *app, sync_log_level level, const char *line,
                        const sync_failure *f)
{
    ui_app_log(app, level, line);
    if (!f || app->log.len == 0)
        return;
    ui_log_line *l = &app->log.lines[(app->log.head + app->log.len - 1) % UI_LOG_LINES];
    l->failure = f->kind;
    l->http_status = f->http_status;
    model_copy_text(l->error_code, sizeof l->error_code, f->error_code);
    model_copy_text(l->operation_id, sizeof l->operation_id, f->operation_id);
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
    l->failure = SYNC_FAILURE_NONE;
    l->http_status = 0;
    l->error_code[0] = l->operation_id[0] = '\0';
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
    app->queue_stale = true;
    for (int v = 0; v < UI_VIEW_COUNT; v++) {
        if (app->views[v])
            ui_table_reload(&app->views[v]->table);
    }
}

/* Rows with an id are records (their kind is a model_kind); the log's are not. */
static bool row_ref(const char *id, int kind, ui_row_ref *out)
{
    if (!id[0])
        return false;
    out->kind = (model_kind)kind;
    snprintf(out->id, sizeof out->id, "%s", id);
    return true;
}

bool ui_app_current(ui_app *app, ui_row_ref *out)
{
    ui_table *t = &ui_app_view(app)->table;
    ui_table_refresh(t, false);
    const ui_table_row *row = ui_table_current(t);
    return row && row_ref(row->id, row->kind, out);
}

size_t ui_app_marked(ui_app *app, ui_row_ref *out, size_t max)
{
    const ui_table *t = &ui_app_view(app)->table;
    size_t n = 0;
    for (size_t i = 0; i < t->nmarks; i++) {
        ui_row_ref ref;
        if (!row_ref(t->marks[i].id, t->marks[i].kind, &ref))
            continue;
        if (n < max)
            out[n] = ref;
        n++;
    }
    return n;
}

void ui_app_unmark_all(ui_app *app)
{
    ui_table_unmark_all(&ui_app_view(app)->table);
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

void ui_app_close(ui_app *app, void *self)
{
    for (int i = app->noverlays - 1; i >= 0; i--) {
        if (app->overlays[i].self != self)
            continue;
        ui_overlay o = app->overlays[i];
        memmove(&app->overlays[i], &app->overlays[i + 1],
                (size_t)(app->noverlays - i - 1) * sizeof app->overlays[0]);
        app->noverlays--;
        if (o.ops->free)
            o.ops->free(o.self);
        return;
    }
}

void ui_app_close_all(ui_app *app)
{
    while (app->noverlays > 0)
        ui_app_close_top(app);
}

bool ui_app_quitting(const ui_app *app, int *status)
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

/* ---- size ------------------------------------------------------------------- */

error_code ui_app_resize(ui_app *app, int width, int height, error_info *err)
{
    if (width == app->canvas.width && height == app->canvas.height)
        return ERROR_OK;
    return ui_canvas_resize(&app->canvas, width, height, err);
}

/* ---- events from other threads ------------------------------------------------ */

int ui_app_wake_fd(const ui_app *app)
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
        if (app->on_event)
            app->on_event(app, &ev);
    }
}

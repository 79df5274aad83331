/*
 * ui_run: the console's entry. Headless runs the script; otherwise the terminal
 * loop: draw what changed, then sleep in poll() on the keyboard, the signal pipe
 * and the wake-up pipe of other threads. A timer of a second while the header's
 * sync state changes with time (an age, a countdown) or an idle auto-pull may
 * come; a tick that wakes for nothing else redraws the header alone.
 */
#include "rampart/ui.h"

#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../term/ui_term.h"
#include "../widgets/ui_text.h"
#include "app_internal.h"
#include "rampart/ui_dialog.h"

enum { TICK_MS = 1000 };

static void draw(ui_app *app, ui_term *t)
{
    ui_app_render(app);
    if (ui_app_take_repaint(app))
        ui_term_repaint(t);
    int y = 0, x = 0;
    bool visible = ui_app_text_cursor(app, &y, &x);
    size_t n = 0;
    const char *raw = ui_app_raw_peek(app, &n);
    ui_term_draw(t, ui_app_canvas(app), y, x, visible, raw, n);
    if (raw)
        ui_app_raw_clear(app);
}

/* Only the header (a clock tick changed nothing else): the canvas flags the row
 * when its text changed, and only then does it reach the terminal. */
static void draw_header(ui_app *app, ui_term *t)
{
    ui_app_draw_header(app, ui_app_canvas(app));
    int y = 0, x = 0;
    bool visible = ui_app_text_cursor(app, &y, &x);
    ui_term_draw(t, ui_app_canvas(app), y, x, visible, NULL, 0);
}

static void resized(ui_app *app, ui_term *t)
{
    error_info e = {0};
    if (ui_term_resize(t, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    int w, h;
    ui_term_size(t, &w, &h);
    if (ui_app_resize(app, w, h, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
}

/* A signal from the pipe: resize, or leave (exit status 128 + signal). */
static void on_signal(ui_app *app, ui_term *t, int signo)
{
    if (signo == SIGWINCH)
        resized(app, t);
    else if (signo)
        ui_app_quit(app, 128 + signo);
}

static void read_keys(ui_app *app, ui_term *t)
{
    int key;
    while (!ui_app_quitting(app, NULL) && (key = ui_term_key(t)) != UI_KEY_NONE)
        ui_app_key(app, key);
}

/* The terminal given back while a key_command runs (it may ask for a passphrase). */
static void term_pause(void *t) { ui_term_suspend(t); }
static void term_resume(void *t) { ui_term_resume(t); }

/* Runs until the user quits; *appp is replaced when `:profile` switched consoles. */
static int loop(ui_app **appp, ui_term *t)
{
    ui_app *app = *appp;
    const ui_term_hold hold = {term_pause, term_resume, t};
    int status = 0;
    bool whole = true; /* something besides the clock happened: a whole frame */
    while (!ui_app_quitting(app, &status)) {
        if (ui_app_tick(app) || whole)
            draw(app, t);
        else
            draw_header(app, t);
        struct pollfd fds[3] = {
            {ui_term_input_fd(t), POLLIN, 0},
            {ui_term_signal_fd(t), POLLIN, 0},
            {ui_app_wake_fd(app), POLLIN, 0},
        };
        int rc = poll(fds, 3, ui_app_ticking(app) ? TICK_MS : -1);
        whole = rc != 0;
        if (rc < 0)
            continue; /* EINTR: the signal is in the pipe */
        if (fds[1].revents & POLLIN)
            on_signal(app, t, ui_term_take_signal(t));
        if (fds[0].revents & (POLLHUP | POLLERR))
            ui_app_quit(app, 1); /* the terminal went away */
        else if (fds[0].revents & POLLIN)
            read_keys(app, t);
        if (fds[2].revents & POLLIN)
            ui_app_drain(app);
        *appp = app = ui_app_follow_profile(app, &hold);
    }
    return status;
}

static int run_terminal(const ui_options *opt, error_info *err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        error_set(err, ERROR_CONFIG, "the console needs a terminal on standard input and "
                                     "output (or --headless SCRIPT)");
        return 2;
    }
    setlocale(LC_CTYPE, "");
    ui_term *t = NULL;
    ui_term_options to = {.no_color = opt->no_color};
    if (ui_term_open(&to, &t, err) != ERROR_OK)
        return 1;
    int w, h;
    ui_term_size(t, &w, &h);
    ui_app *app = NULL;
    bool ascii = opt->ascii || !ui_term_utf8(t);
    if (ui_app_new(opt, w > 0 ? w : 1, h > 0 ? h : 1, ascii, &app, err) != ERROR_OK) {
        ui_term_close(t);
        return 1;
    }
    ui_term_layout(t, UI_HEADER_ROWS, UI_STATUS_ROWS);
    ui_app_start_agent(app);
    ui_token_show_unseen(app); /* tokens a sync brought before this start */
    int status = loop(&app, t);
    if (ui_sync_running(app)) {
        ui_app_status(app, false, "stopping the sync after its current request...");
        draw(app, t);
    }
    ui_app_free(app);
    ui_term_close(t);
    return status;
}

static int run_headless(const ui_options *opt, error_info *err)
{
    ui_app *app = NULL;
    int w = opt->width > 0 ? opt->width : 80;
    int h = opt->height > 0 ? opt->height : 24;
    if (ui_app_new(opt, w, h, opt->ascii, &app, err) != ERROR_OK)
        return 1;
    int status = 0;
    ui_app_start_agent(app);
    ui_token_show_unseen(app);
    error_code rc = ui_headless_run(&app, opt, err);
    ui_app_quitting(app, &status);
    ui_app_free(app);
    if (rc != ERROR_OK)
        return rc == ERROR_INVALID ? 2 : 1;
    return status;
}

int ui_run(const ui_options *opt, error_info *err)
{
    if (!opt || !opt->st) {
        error_set(err, ERROR_INVALID, "the console needs an open cache");
        return 2;
    }
    return opt->script ? run_headless(opt, err) : run_terminal(opt, err);
}

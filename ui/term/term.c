/*
 * ui_term: ncurses, and nothing else of the console. Rows of the canvas that
 * changed are copied into three windows; ncurses then sends the terminal only the
 * cells that differ from what it shows, so over SSH a cursor move costs a few
 * bytes, not a screen.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include "ui_term.h"

#include <curses.h>
#include <term.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "rampart/termsafe.h"
#include "rampart/ui_key.h"
#include "../widgets/ui_text.h"

enum { WIN_HEADER, WIN_BODY, WIN_STATUS, WIN_COUNT };

static const int taken_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH};
enum { NSIGNALS = sizeof taken_signals / sizeof taken_signals[0] };

struct ui_term {
    SCREEN *screen;
    WINDOW *win[WIN_COUNT];
    int first_row[WIN_COUNT]; /* canvas row of each window's first row */
    int rows[WIN_COUNT];
    int header, status;       /* the layout asked for */
    bool utf8;
    bool color;
    int cursor_shown;         /* -1 unknown, 0 hidden, 1 shown */
    int sig_pipe[2];
    struct sigaction old[NSIGNALS];
};

/* The one piece of global state: where the signal handlers write (the loop's). */
static volatile int sig_write_fd = -1;

static void on_signal(int signo)
{
    int saved = errno;
    unsigned char b = (unsigned char)signo;
    if (sig_write_fd >= 0 && write(sig_write_fd, &b, 1) < 0) {
        /* full pipe: a signal of that kind is already pending */
    }
    errno = saved;
}

static error_code take_signals(ui_term *t, error_info *err)
{
    if (pipe2(t->sig_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
        return error_set(err, ERROR_IO, "cannot create a pipe: %s", strerror(errno));
    sig_write_fd = t->sig_pipe[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIGNALS; i++)
        sigaction(taken_signals[i], &sa, &t->old[i]);
    return ERROR_OK;
}

static void give_back_signals(ui_term *t)
{
    if (t->sig_pipe[0] < 0)
        return;
    for (int i = 0; i < NSIGNALS; i++)
        sigaction(taken_signals[i], &t->old[i], NULL);
    sig_write_fd = -1;
    close(t->sig_pipe[0]);
    close(t->sig_pipe[1]);
    t->sig_pipe[0] = t->sig_pipe[1] = -1;
}

/* Colour roles over the terminal's own background. */
static void setup_colors(ui_term *t, bool no_color)
{
    if (no_color || !has_colors() || start_color() == ERR)
        return;
    short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
    static const short fg[UI_COLOR_COUNT] = {
        [UI_COLOR_TITLE] = COLOR_CYAN,   [UI_COLOR_CURSOR] = COLOR_YELLOW,
        [UI_COLOR_MARK] = COLOR_MAGENTA, [UI_COLOR_OK] = COLOR_GREEN,
        [UI_COLOR_PENDING] = COLOR_YELLOW, [UI_COLOR_ERROR] = COLOR_RED,
        [UI_COLOR_RED] = COLOR_RED,      [UI_COLOR_GREEN] = COLOR_GREEN,
        [UI_COLOR_YELLOW] = COLOR_YELLOW, [UI_COLOR_BLUE] = COLOR_BLUE,
        [UI_COLOR_MAGENTA] = COLOR_MAGENTA, [UI_COLOR_CYAN] = COLOR_CYAN,
    };
    for (short c = 1; c < UI_COLOR_COUNT; c++)
        init_pair(c, fg[c], bg);
    t->color = true;
}

/*
 * Keys as xterm, vt220 and tmux send them, for terminal descriptions that lack
 * them (TERM=vt100 in a modern emulator sends "\e[6~" for PgDn all the same):
 * without these, such a sequence would arrive as Esc, '[', '6', '~'.
 */
static const struct {
    const char *seq;
    int code;
} fallback_keys[] = {
    {"\033[5~", KEY_PPAGE}, {"\033[6~", KEY_NPAGE}, {"\033[1~", KEY_HOME},
    {"\033[4~", KEY_END},   {"\033[7~", KEY_HOME},  {"\033[8~", KEY_END},
    {"\033[H", KEY_HOME},   {"\033[F", KEY_END},    {"\033OH", KEY_HOME},
    {"\033OF", KEY_END},    {"\033[3~", KEY_DC},    {"\033[2~", KEY_IC},
    {"\033[A", KEY_UP},     {"\033[B", KEY_DOWN},   {"\033[C", KEY_RIGHT},
    {"\033[D", KEY_LEFT},   {"\033OA", KEY_UP},     {"\033OB", KEY_DOWN},
    {"\033OC", KEY_RIGHT},  {"\033OD", KEY_LEFT},   {"\033[Z", KEY_BTAB},
};

static void define_fallback_keys(void)
{
    for (size_t i = 0; i < sizeof fallback_keys / sizeof fallback_keys[0]; i++) {
        if (key_defined(fallback_keys[i].seq) == 0)
            define_key(fallback_keys[i].seq, fallback_keys[i].code);
    }
}

error_code ui_term_open(const ui_term_options *o, ui_term **out, error_info *err)
{
    *out = NULL;
    ui_term *t = calloc(1, sizeof *t);
    if (!t)
        return error_set(err, ERROR_NOMEM, "out of memory");
    t->sig_pipe[0] = t->sig_pipe[1] = -1;
    t->cursor_shown = -1;
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
    /* Before newterm: ncurses leaves alone the signals that already have a handler. */
    if (take_signals(t, err)) {
        free(t);
        return err->code;
    }
    t->screen = newterm(NULL, stdout, stdin);
    if (!t->screen) {
        give_back_signals(t);
        free(t);
        const char *term = getenv("TERM");
        return error_set(err, ERROR_CONFIG,
                         "cannot use the terminal type '%s' (set TERM to one this "
                         "machine knows, e.g. xterm-256color or vt100)",
                         term ? term : "");
    }
    set_term(t->screen);
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    set_escdelay(25);
    mousemask(0, NULL);
    define_fallback_keys();
    setup_colors(t, o->no_color);
    ui_term_layout(t, 0, 0);
    *out = t;
    return ERROR_OK;
}

/* A terminfo string capability, NULL when the terminal has none (tigetstr says
 * absent with NULL and "not a string" with (char *)-1). */
static const char *capability(const char *name)
{
    const char *s = tigetstr(name);
    return s && s != (const char *)-1 && *s ? s : NULL;
}

/* endwin gives a terminal with an alternate screen (xterm, tmux) its old screen
 * back; vt100 and the Linux console have none, so the last frame would stay under
 * the shell's prompt: clear it with the terminal's own sequence instead. */
static void leave_screen(void)
{
    bool alternate = capability("smcup") != NULL;
    endwin();
    const char *clear_seq = capability("clear");
    if (!alternate && clear_seq)
        putp(clear_seq);
}

void ui_term_close(ui_term *t)
{
    if (!t)
        return;
    for (int i = 0; i < WIN_COUNT; i++) {
        if (t->win[i])
            delwin(t->win[i]);
    }
    if (t->screen) {
        curs_set(1);
        leave_screen();
        delscreen(t->screen);
    }
    fflush(stdout);
    give_back_signals(t);
    free(t);
}

bool ui_term_utf8(const ui_term *t)
{
    return t->utf8;
}

void ui_term_size(const ui_term *t, int *width, int *height)
{
    (void)t;
    *width = COLS;
    *height = LINES;
}

int ui_term_input_fd(const ui_term *t)
{
    (void)t;
    return STDIN_FILENO;
}

int ui_term_signal_fd(const ui_term *t)
{
    return t->sig_pipe[0];
}

int ui_term_take_signal(ui_term *t)
{
    unsigned char b;
    ssize_t n = read(t->sig_pipe[0], &b, 1);
    return n == 1 ? b : 0;
}

void ui_term_layout(ui_term *t, int header, int status)
{
    t->header = header;
    t->status = status;
    if (header + status >= LINES)
        header = status = 0;
    int rows[WIN_COUNT] = {header, LINES - header - status, status};
    int y = 0;
    for (int i = 0; i < WIN_COUNT; i++) {
        if (t->win[i])
            delwin(t->win[i]);
        t->win[i] = NULL;
        t->first_row[i] = y;
        t->rows[i] = rows[i];
        if (rows[i] > 0 && COLS > 0) {
            t->win[i] = newwin(rows[i], COLS, y, 0);
            if (t->win[i]) {
                keypad(t->win[i], TRUE);
                nodelay(t->win[i], TRUE);
                leaveok(t->win[i], TRUE);
            }
        }
        y += rows[i];
    }
}

error_code ui_term_resize(ui_term *t, error_info *err)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0)
        return error_set(err, ERROR_IO, "cannot read the terminal size: %s",
                         strerror(errno));
    if (resizeterm(ws.ws_row, ws.ws_col) == ERR)
        return error_set(err, ERROR_IO, "cannot resize the screen");
    ui_term_layout(t, t->header, t->status);
    return ERROR_OK;
}

void ui_term_repaint(ui_term *t)
{
    (void)t;
    clearok(curscr, TRUE);
}

void ui_term_suspend(ui_term *t)
{
    (void)t;
    def_prog_mode();
    endwin();
    fflush(stdout);
}

void ui_term_resume(ui_term *t)
{
    reset_prog_mode();
    ui_term_repaint(t);
}

static int win_of(const ui_term *t, int y)
{
    for (int i = 0; i < WIN_COUNT; i++) {
        if (y >= t->first_row[i] && y < t->first_row[i] + t->rows[i])
            return i;
    }
    return -1;
}

static attr_t attrs_of(const ui_term *t, ui_style s, short *pair)
{
    attr_t a = A_NORMAL;
    if (s.attr & UI_ATTR_BOLD)
        a |= A_BOLD;
    if (s.attr & UI_ATTR_REVERSE)
        a |= A_REVERSE;
    if (s.attr & UI_ATTR_UNDERLINE)
        a |= A_UNDERLINE;
    if (s.attr & UI_ATTR_DIM)
        a |= A_DIM;
    *pair = t->color && s.color < UI_COLOR_COUNT ? (short)s.color : 0;
    return a;
}

/* One cell as ncurses shows it; '?' where the locale's width disagrees. */
static void put_cell(const ui_term *t, WINDOW *w, int y, int x, const ui_cell *cell)
{
    short pair;
    attr_t a = attrs_of(t, cell->style, &pair);
    wchar_t wc[2] = {L'?', L'\0'};
    uint32_t cp;
    if (ui_text_decode(cell->text, &cp) > 0) {
        int want = termsafe_cp_width(cp);
        int have = cp < 0x80 || t->utf8 ? wcwidth((wchar_t)cp) : -1;
        if (want > 0 && have == want)
            wc[0] = (wchar_t)cp;
    }
    cchar_t cc;
    setcchar(&cc, wc, a, pair, NULL);
    mvwadd_wch(w, y, x, &cc); /* ERR in a window's last cell: drawn all the same */
}

static void copy_row(ui_term *t, const ui_canvas *c, int y, bool *touched)
{
    int wi = win_of(t, y);
    if (wi < 0 || !t->win[wi])
        return;
    WINDOW *w = t->win[wi];
    int ly = y - t->first_row[wi];
    int width = c->width < COLS ? c->width : COLS;
    const ui_cell *row = &c->cells[(size_t)y * (size_t)c->width];
    for (int x = 0; x < width; x++) {
        if (row[x].text[0] == '\0')
            continue; /* the right half of a wide character */
        put_cell(t, w, ly, x, &row[x]);
    }
    touched[wi] = true;
}

static void show_cursor(ui_term *t, bool visible)
{
    int want = visible ? 1 : 0;
    if (t->cursor_shown == want)
        return;
    curs_set(want);
    t->cursor_shown = want;
}

void ui_term_draw(ui_term *t, ui_canvas *c, int cursor_y, int cursor_x, bool visible,
                  const char *raw, size_t n)
{
    bool touched[WIN_COUNT] = {false};
    for (int y = 0; y < c->height && y < LINES; y++) {
        if (!c->row_changed[y])
            continue;
        copy_row(t, c, y, touched);
        c->row_changed[y] = false;
    }
    int cw = visible ? win_of(t, cursor_y) : -1;
    for (int i = 0; i < WIN_COUNT; i++) {
        if (t->win[i] && (touched[i] || i == cw))
            wnoutrefresh(t->win[i]);
    }
    if (cw >= 0 && t->win[cw]) {
        /* The window refreshed last places the terminal's cursor. */
        leaveok(t->win[cw], FALSE);
        wmove(t->win[cw], cursor_y - t->first_row[cw], cursor_x);
        wnoutrefresh(t->win[cw]);
        leaveok(t->win[cw], TRUE);
    }
    show_cursor(t, visible);
    doupdate();
    if (raw && n) {
        fflush(stdout);
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(STDOUT_FILENO, raw + off, n - off);
            if (w <= 0 && errno != EINTR)
                break;
            if (w > 0)
                off += (size_t)w;
        }
    }
}

/* ---- keys ------------------------------------------------------------------ */

typedef struct key_map {
    int curses;
    int key;
} key_map;

static const key_map special_keys[] = {
    {KEY_UP, UI_KEY_UP},         {KEY_DOWN, UI_KEY_DOWN},     {KEY_LEFT, UI_KEY_LEFT},
    {KEY_RIGHT, UI_KEY_RIGHT},   {KEY_PPAGE, UI_KEY_PGUP},    {KEY_NPAGE, UI_KEY_PGDN},
    {KEY_HOME, UI_KEY_HOME},     {KEY_END, UI_KEY_END},       {KEY_BTAB, UI_KEY_BTAB},
    {KEY_DC, UI_KEY_DEL},        {KEY_IC, UI_KEY_INSERT},     {KEY_ENTER, UI_KEY_ENTER},
    {KEY_BACKSPACE, UI_KEY_BACKSPACE}, {KEY_RESIZE, UI_KEY_RESIZE},
    {KEY_A1, UI_KEY_HOME},       {KEY_C1, UI_KEY_END},        {KEY_A3, UI_KEY_PGUP},
    {KEY_C3, UI_KEY_PGDN},       {KEY_FIND, UI_KEY_HOME},     {KEY_SELECT, UI_KEY_END},
};

static int map_special(int code)
{
    if (code >= KEY_F(1) && code <= KEY_F(12))
        return UI_KEY_F1 + (code - KEY_F(1));
    for (size_t i = 0; i < sizeof special_keys / sizeof special_keys[0]; i++) {
        if (special_keys[i].curses == code)
            return special_keys[i].key;
    }
    return UI_KEY_NONE;
}

int ui_term_key(ui_term *t)
{
    WINDOW *w = t->win[WIN_BODY] ? t->win[WIN_BODY] : stdscr;
    for (;;) {
        wint_t ch;
        int rc = wget_wch(w, &ch);
        if (rc == ERR)
            return UI_KEY_NONE;
        if (rc == KEY_CODE_YES) {
            int k = map_special((int)ch);
            if (k != UI_KEY_NONE)
                return k;
            continue; /* a key the console has no use for */
        }
        if (ch == '\n' || ch == '\r')
            return UI_KEY_ENTER;
        if (ch == 8 || ch == 127)
            return UI_KEY_BACKSPACE;
        return (int)ch;
    }
}

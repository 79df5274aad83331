/*
 * Drawing the frame: the two header rows (views, sync and agent state; position,
 * sort, filter, marks), the current view, the overlays, the status row. Every
 * frame is drawn whole into the canvas; the canvas flags only the rows whose
 * cells differ, and only those reach the terminal. Drawing reads the state and
 * changes nothing in it: the loop brought it up to date before (ui/app/loop.c).
 */
#include "app_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../widgets/ui_text.h"

static const ui_style bar = {UI_ATTR_REVERSE, UI_COLOR_TITLE};
static const ui_style plain = {0, UI_COLOR_DEFAULT};

/*
 * The top row, by priority: the sync state (its longest text that fits: the
 * cause and countdown first, then the push's count with pace and ETA) is placed
 * first; the left part (profile name and view tabs) then takes the richest of its
 * forms that fits beside it:
 *   FULL         " rampart (staging)  [1 Rules]  2 Creds  3 Pending  4 Log "
 *   SHORT_TABS   " rampart (staging)  [1R] 2C  3P  4L "
 *   NAME_TABS    " staging  [1R] 2C  3P  4L "     (no profile: the tabs alone)
 *   NAME_VIEW    " staging  [1 Rules] "
 *   TIGHT        " staging [1R] "                 (the name cut to TIGHT_NAME_MAX)
 * With a profile, its name takes the profile's colour (profile_color).
 */
enum { FULL_NAME_MAX = 24, TIGHT_NAME_MAX = 12 };

typedef enum title_form {
    TITLE_FULL, TITLE_SHORT_TABS, TITLE_NAME_TABS, TITLE_NAME_VIEW, TITLE_TIGHT
} title_form;

static const ui_style title_style = {UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_TITLE};

/* One piece of the left part: its text and style. */
typedef struct title_piece {
    char text[96];
    ui_style style;
    int max_width; /* < 0: whole */
} title_piece;

typedef struct title_line {
    title_piece p[UI_VIEW_COUNT + 6];
    int n;
} title_line;

static void piece(title_line *l, ui_style style, int max_width, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void piece(title_line *l, ui_style style, int max_width, const char *fmt, ...)
{
    if (l->n >= (int)(sizeof l->p / sizeof l->p[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->p[l->n].text, sizeof l->p[l->n].text, fmt, ap);
    va_end(ap);
    l->p[l->n].style = style;
    l->p[l->n].max_width = max_width;
    l->n++;
}

/* The profile's name in its colour (the title's when it has none). */
static ui_style name_style(const ui_app *app)
{
    int n = ui_app_options(app)->profile_color;
    int c = n > 0 && UI_COLOR_RED + n - 1 < UI_COLOR_COUNT ? UI_COLOR_RED + n - 1
                                                           : UI_COLOR_TITLE;
    return (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, (uint8_t)c};
}

static void title_name(const ui_app *app, title_form form, title_line *l)
{
    const char *profile = ui_app_options(app)->profile;
    if (form <= TITLE_SHORT_TABS) {
        piece(l, title_style, -1, "%s", profile ? " rampart (" : " rampart  ");
        if (!profile)
            return;
        piece(l, name_style(app), FULL_NAME_MAX, "%s", profile);
        piece(l, title_style, -1, ")  ");
        return;
    }
    piece(l, title_style, -1, " ");
    if (!profile)
        return;
    piece(l, name_style(app), form == TITLE_TIGHT ? TIGHT_NAME_MAX : FULL_NAME_MAX, "%s",
          profile);
    piece(l, title_style, -1, form == TITLE_TIGHT ? " " : "  ");
}

static void title_tabs(const ui_app *app, title_form form, title_line *l)
{
    const ui_style current = {UI_ATTR_REVERSE | UI_ATTR_BOLD | UI_ATTR_UNDERLINE,
                              UI_COLOR_TITLE};
    bool one = form >= TITLE_NAME_VIEW, full = form == TITLE_FULL || form == TITLE_NAME_VIEW;
    for (int i = 0; i < UI_VIEW_COUNT; i++) {
        bool cur = (ui_view_id)i == app->view;
        if (one && !cur)
            continue;
        const char *title = app->views[i]->ops->title;
        if (full)
            piece(l, cur ? current : bar, -1, cur ? "[%d %s]" : " %d %s ", i + 1, title);
        else
            piece(l, cur ? current : bar, -1, cur ? "[%d%c]" : " %d%c ", i + 1, title[0]);
    }
    if (ui_app_readonly(app))
        piece(l, title_style, -1, "%s", form >= TITLE_NAME_VIEW ? " ro" : "  read-only");
}

static void title_build(const ui_app *app, title_form form, title_line *l)
{
    l->n = 0;
    title_name(app, form, l);
    title_tabs(app, form, l);
}

static int title_width(const ui_canvas *c, const title_line *l)
{
    int w = 0;
    for (int i = 0; i < l->n; i++) {
        int pw = ui_canvas_width(c, l->p[i].text, c->width);
        w += l->p[i].max_width >= 0 && pw > l->p[i].max_width ? l->p[i].max_width : pw;
    }
    return w;
}

static int title_draw(const title_line *l, ui_canvas *c)
{
    int x = 0;
    for (int i = 0; i < l->n && x < c->width; i++)
        x += ui_canvas_text(c, 0, x, l->p[i].max_width, l->p[i].text, l->p[i].style, true);
    return x;
}

/* Text flush right on row y, cut when there is less room than it needs. */
static void draw_right(ui_canvas *c, int y, int used, const char *text, ui_style style)
{
    int room = c->width - used - 2;
    int w = ui_canvas_width(c, text, c->width);
    if (w > room)
        w = room;
    if (w > 0)
        ui_canvas_text(c, y, c->width - w, w, text, style, true);
}

/* The sync state's i-th text as the header shows it. */
static void sync_text(const ui_app *app, int i, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s ", ui_app_options(app)->sandbox ? "sandbox: " : "",
             app->sync_text[i]);
}

/* The longest sync text that fits beside the poorest left part, then the richest
 * left part that fits beside it; the shortest text, cut, when none does. */
static void draw_top_row(const ui_app *app, ui_canvas *c)
{
    ui_canvas_clear(c, 0, 0, -1, bar);
    title_line l;
    title_build(app, TITLE_TIGHT, &l);
    int tight = title_width(c, &l);
    char right[UI_SYNC_TEXT_MAX + 16] = "";
    int rw = 0;
    for (int i = 0; i < app->nsync_text; i++) {
        sync_text(app, i, right, sizeof right);
        rw = ui_canvas_width(c, right, c->width);
        if (tight + rw + 2 <= c->width)
            break;
    }
    title_form f = TITLE_FULL;
    for (; f < TITLE_TIGHT; f++) {
        title_build(app, f, &l);
        if (title_width(c, &l) + rw + 2 <= c->width)
            break;
    }
    if (f == TITLE_TIGHT)
        title_build(app, TITLE_TIGHT, &l);
    draw_right(c, 0, title_draw(&l, c), right, bar);
}

void ui_app_draw_header(const ui_app *app, ui_canvas *c)
{
    if (!ui_app_too_small(app))
        draw_top_row(app, c);
}

/* The agent's header text ("agent: 3 lookups", "agent: off", "agent: error …"). */
static void agent_text(const ui_app *app, char *buf, size_t size)
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

/* The second row's pieces, in the order shown; when the row is too narrow the
 * least important go first (the page, the sort, the agent), so the position,
 * the marks and the filter stay; the view's own words (the policy scope, the
 * pending view's impact) come last and are cut to what is left, never dropped. */
enum { POS_ROWS, POS_PAGE, POS_MARKED, POS_SORT, POS_FILTER, POS_SCOPE, POS_AGENT, POS_N };
enum { POS_PIECE = sizeof ((ui_table *)0)->filter + 16 }; /* the whole filter fits */
static const int pos_drop_order[] = {POS_PAGE, POS_SORT, POS_AGENT};

static void position_pieces(const ui_app *app, char (*p)[POS_PIECE])
{
    const ui_view *v = ui_app_view_const(app);
    const ui_table *t = &v->table;
    char rows[96], page[64], count[32], extra[200] = "";
    for (int i = 0; i < POS_N; i++)
        p[i][0] = '\0';
    ui_table_position(t, rows, sizeof rows, page, sizeof page);
    snprintf(p[POS_ROWS], POS_PIECE, " %s", rows);
    snprintf(p[POS_PAGE], POS_PIECE, "  %s", page);
    if (t->nmarks) {
        ui_text_count(t->nmarks, count, sizeof count);
        snprintf(p[POS_MARKED], POS_PIECE, "  %s marked", count);
    }
    if (ui_table_sort_count(t) > 1 || t->descending)
        snprintf(p[POS_SORT], POS_PIECE, "  sort %s %s", ui_table_sort_name(t),
                 t->descending ? "desc" : "asc");
    if (v->ops->describe)
        v->ops->describe(v, extra, sizeof extra);
    if (extra[0])
        snprintf(p[POS_SCOPE], POS_PIECE, "  %s", extra);
    if (t->filter[0])
        snprintf(p[POS_FILTER], POS_PIECE, "  filter \"%s\"", t->filter);
    char agent_line[200];
    agent_text(app, agent_line, sizeof agent_line);
    snprintf(p[POS_AGENT], POS_PIECE, "%s ", agent_line);
}

static int pieces_width(const ui_canvas *c, char (*p)[POS_PIECE])
{
    int w = 0;
    for (int i = 0; i < POS_N; i++)
        w += ui_canvas_width(c, p[i], c->width);
    return w;
}

static void draw_position_row(const ui_app *app, ui_canvas *c)
{
    char p[POS_N][POS_PIECE];
    position_pieces(app, p);
    for (size_t i = 0; i < sizeof pos_drop_order / sizeof pos_drop_order[0]; i++) {
        if (pieces_width(c, p) + 2 <= c->width)
            break;
        p[pos_drop_order[i]][0] = '\0';
    }
    char line[POS_N * POS_PIECE];
    size_t n = 0;
    for (int i = 0; i < POS_AGENT; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s", p[i]);
    int aw = ui_canvas_width(c, p[POS_AGENT], c->width);
    ui_canvas_clear(c, 1, 0, -1, plain);
    int used = ui_canvas_text(c, 1, 0, aw && c->width - aw - 2 > 20 ? c->width - aw - 2 : -1,
                              line, (ui_style){UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    if (aw)
        draw_right(c, 1, used, p[POS_AGENT], (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT});
}

/* The row under the cursor needs attention (failed, orphaned…): its reason in
 * place of the key hints, so it shows without opening the details. */
static bool draw_note(const ui_app *app, ui_canvas *c, int y)
{
    const ui_table_row *row = ui_table_current(&ui_app_view_const(app)->table);
    if (!row || !row->note[0])
        return false;
    char msg[UI_TABLE_CELL_MAX + 4];
    snprintf(msg, sizeof msg, " ! %s", row->note); /* whole in the details (Enter) */
    ui_canvas_text(c, y, 0, -1, msg, (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
    return true;
}

static void draw_hints(const ui_app *app, ui_canvas *c, int y)
{
    char hints[512];
    ui_hint_bar(app, c->width, hints, sizeof hints);
    ui_canvas_text(c, y, 0, -1, hints, (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
}

/* An empty view says what to do (ui_hint_empty) where the table says it has no
 * rows: the first lines under its titles. */
static void draw_empty(const ui_app *app, ui_canvas *c, ui_rect body)
{
    ui_hint_lines h;
    ui_hint_empty(app, &h);
    for (int i = 0; i < h.n && i + 1 < body.height; i++) {
        int y = body.y + 1 + i;
        ui_canvas_clear(c, y, body.x, body.width, plain);
        ui_canvas_text(c, y, body.x + 2, body.width - 2, h.line[i],
                       (ui_style){i ? 0 : UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    }
}

/* The status message wrapped onto the status area's rows (ui_app_status_rows:
 * the layout made room for them), the last cut with "…" when it goes on. */
static void draw_message(const ui_app *app, ui_canvas *c, const char *text)
{
    ui_style s = app->status_error ? (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR} : plain;
    int rows = ui_app_status_rows(app), width = c->width - 1;
    for (int i = 0, y = c->height - rows; i < rows && *text; i++, y++) {
        size_t n = i + 1 < rows ? ui_canvas_wrap(c, text, width) : strlen(text);
        char line[sizeof app->status + 16];
        snprintf(line, sizeof line, "%.*s", (int)n, text);
        ui_canvas_text(c, y, 1, width, line, s, true);
        text += n;
        while (*text == ' ')
            text++;
    }
}

static void draw_status(const ui_app *app, ui_canvas *c)
{
    int y = c->height - 1, rows = ui_app_status_rows(app);
    for (int i = 0; i < rows; i++)
        ui_canvas_clear(c, c->height - 1 - i, 0, -1, plain);
    const ui_prompt *p = &app->prompt;
    if (p->kind != UI_PROMPT_NONE && app->noverlays == 0) {
        ui_canvas_text(c, y, 0, 1, p->kind == UI_PROMPT_FILTER ? "/" : ":", plain, false);
        ui_canvas_text(c, y, 1, -1, p->line.buf, plain, true);
        return;
    }
    char text[sizeof app->status + 16];
    ui_app_status_text(app, text, sizeof text);
    if (text[0]) {
        draw_message(app, c, text);
        return;
    }
    if (!draw_note(app, c, y))
        draw_hints(app, c, y);
}

static void draw_too_small(ui_canvas *c)
{
    for (int y = 0; y < c->height; y++)
        ui_canvas_clear(c, y, 0, -1, plain);
    char msg[96];
    snprintf(msg, sizeof msg, "terminal too small: need %dx%d (now %dx%d)", UI_MIN_WIDTH,
             UI_MIN_HEIGHT, c->width, c->height);
    ui_canvas_text(c, 0, 0, -1, msg, (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
    if (c->height > 1)
        ui_canvas_text(c, 1, 0, -1, "make the window bigger, or press q to quit", plain, true);
}

void ui_app_draw(const ui_app *app, ui_canvas *c)
{
    if (ui_app_too_small(app)) {
        draw_too_small(c);
        return;
    }
    const ui_view *v = ui_app_view_const(app);
    ui_rect body = ui_app_body(app);
    ui_table_draw(&v->table, c, body);
    draw_empty(app, c, body);
    draw_top_row(app, c);
    draw_position_row(app, c);
    for (int i = 0; i < app->noverlays; i++)
        app->overlays[i].ops->draw(app->overlays[i].self, app, c, body);
    draw_status(app, c);
}

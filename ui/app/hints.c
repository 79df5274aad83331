/*
 * What the console tells a user to press: the key bar of the status row and the
 * empty first screen. Both read the keys from the keymap (keymap.c), so a key
 * rebound there is the key shown here; this file only says which requests are
 * worth a place on a short row, in order of importance, and in which words.
 */
#include "app_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../views/ui_record.h"
#include "../widgets/ui_text.h"

#define R (1u << UI_VIEW_RULES)
#define C (1u << UI_VIEW_CREDS)
#define P (1u << UI_VIEW_PENDING)
#define L (1u << UI_VIEW_LOG)
#define VIEWS (R | C | P | L)
/* The details (a text box over the view: Enter, ?) take keys of their own. */
#define DETAILS (1u << UI_VIEW_COUNT)

typedef struct bar_key {
    unsigned where;    /* view bits, DETAILS */
    ui_request req;
    const char *label; /* NULL: said by bar_label (it depends on the state) */
} bar_key;

/* Most important first: at 60 columns the row ends where the next whole key no
 * longer fits, so what is left out is what matters least. */
static const bar_key bar[] = {
    {VIEWS, UI_REQ_HELP, "help"},
    {VIEWS, UI_REQ_BACK, NULL},
    {R | C, UI_REQ_CREATE, "create"},
    {VIEWS, UI_REQ_FILTER, "filter"},
    {VIEWS, UI_REQ_SYNC, "sync"},
    {R | C, UI_REQ_EDIT, "edit"},
    {R | C | P, UI_REQ_DELETE, "delete"},
    {C, UI_REQ_REVEAL, "token"},
    /* Space also moves down: said, so a second Space is not a surprise. */
    {R | C | P, UI_REQ_MARK, "mark+down"},
    {R | C | P, UI_REQ_UNDO, "undo"},
    {VIEWS, UI_REQ_ENTER, "details"},
    {VIEWS, UI_REQ_PROMPT, "command"},
    {R | C | P, UI_REQ_SORT, "sort"},
    {R | C, UI_REQ_ID_COLUMN, "id"},
    {R, UI_REQ_POLICY, "policy"},
    {VIEWS, UI_REQ_VIEW_NEXT, "views"},
    {DETAILS, UI_REQ_BACK, "close"},
    {DETAILS, UI_REQ_DOWN, "down"},
    {DETAILS, UI_REQ_UP, "up"},
    {DETAILS, UI_REQ_PAGE_DOWN, "page"},
    {DETAILS, UI_REQ_QUIT, "quit"},
};

bool ui_hint_key(ui_view_id view, ui_request req, char *name, size_t size)
{
    size_t n;
    const ui_keymap_entry *ent = ui_keymap_entries(&n);
    for (size_t i = 0; i < n; i++) {
        if (ent[i].req == req && (ent[i].views & (1u << view)) && ent[i].keys[0]) {
            ui_key_name(ent[i].keys[0], name, size);
            return true;
        }
    }
    return false;
}

/* The details box is open on top (the overlay's name says so: its ops are the
 * state's own). */
static bool details_open(const ui_app *app)
{
    return app->noverlays > 0 &&
           strcmp(app->overlays[app->noverlays - 1].ops->name, "text") == 0;
}

static const char *bar_label(const ui_app *app, const bar_key *b)
{
    if (b->label)
        return b->label;
    return ui_app_can_go_back(app) ? "back" : "quit";
}

/* Append "  KEY label" when it fits the row whole; false when it does not. */
static bool bar_add(char *buf, size_t size, size_t *used, int width, const char *key,
                    const char *label)
{
    char item[64];
    int n = snprintf(item, sizeof item, "%s%s %s", *used ? "  " : " ", key, label);
    if (n < 0 || *used + (size_t)n >= (size_t)width || *used + (size_t)n >= size)
        return false;
    memcpy(buf + *used, item, (size_t)n + 1);
    *used += (size_t)n;
    return true;
}

/* The overlay on top has keys of its own (a form): those, not the view's. */
static bool overlay_bar(const ui_app *app, int width, char *buf, size_t size)
{
    if (app->noverlays == 0)
        return false;
    const ui_overlay *top = &app->overlays[app->noverlays - 1];
    if (!top->ops->hints)
        return false;
    ui_key_hint h[8];
    size_t n = top->ops->hints(top->self, h, sizeof h / sizeof h[0]), used = 0;
    for (size_t i = 0; i < n; i++) {
        char key[16];
        ui_key_name(h[i].key, key, sizeof key);
        if (!bar_add(buf, size, &used, width, key, h[i].label))
            break; /* whole keys only */
    }
    return true;
}

void ui_hint_bar(const ui_app *app, int width, char *buf, size_t size)
{
    unsigned where = details_open(app) ? DETAILS : 1u << app->view;
    size_t used = 0;
    buf[0] = '\0';
    if (overlay_bar(app, width, buf, size))
        return;
    for (size_t i = 0; i < sizeof bar / sizeof bar[0]; i++) {
        char key[16];
        if (!(bar[i].where & where) || (ui_request_readonly_refused(bar[i].req) &&
                                        ui_app_readonly(app)))
            continue;
        if (!ui_hint_key(app->view, bar[i].req, key, sizeof key))
            continue;
        if (!bar_add(buf, size, &used, width, key, bar_label(app, &bar[i])))
            break; /* whole keys only: the rest matter less */
    }
}

/* ---- the empty screen --------------------------------------------------------- */

/* Append one line to the empty screen's lines. */
static void add_line(ui_hint_lines *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_line(ui_hint_lines *out, const char *fmt, ...)
{
    if (out->n >= UI_HINT_LINES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->line[out->n++], sizeof out->line[0], fmt, ap);
    va_end(ap);
}

/* A filter or a scope hides every row: say so, and how to see them again. */
static void hidden_lines(const ui_app *app, const ui_table *t, ui_hint_lines *out)
{
    char esc[16] = "Esc", back[16] = "q";
    ui_hint_key(app->view, UI_REQ_CANCEL, esc, sizeof esc);
    ui_hint_key(app->view, UI_REQ_BACK, back, sizeof back);
    if (t->filter[0])
        add_line(out, "No rows match the filter \"%s\" (%s clears it).", t->filter, esc);
    else
        add_line(out, "No rows in this policy (%s shows every policy).", back);
}

void ui_hint_empty(const ui_app *app, ui_hint_lines *out)
{
    out->n = 0;
    const ui_view *v = ui_app_view_const(app);
    const ui_table *t = &v->table;
    if (t->nrows || t->stale || t->error.code || details_open(app))
        return;
    if (t->filter[0] || ui_table_scoped(t)) {
        hidden_lines(app, t, out);
        return;
    }
    if (!v->ops->records)
        return;
    const char *what = kind_get(v->ops->kind)->plural;
    char key[16];
    add_line(out, "No %s in this cache yet.", what);
    if (ui_app_readonly(app))
        return;
    if (ui_hint_key(app->view, UI_REQ_CREATE, key, sizeof key))
        add_line(out, "  %s  create one here (a form; the next sync sends it)", key);
    if (ui_hint_key(app->view, UI_REQ_SYNC, key, sizeof key))
        add_line(out, "  %s  sync: pull the %s the remote has", key, what);
    const char *more = ui_record_kind_get(v->ops->kind)->empty_more;
    if (more)
        add_line(out, "%s", more);
}

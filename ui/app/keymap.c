/*
 * The keymap: one table from keys to requests, per view, with the text the help
 * overlay shows. A request listed twice (j and Down) is one help line.
 */
#include <stdio.h>
#include <string.h>

#include "../widgets/ui_text.h"
#include "app_internal.h"

#define R (1u << UI_VIEW_RULES)
#define C (1u << UI_VIEW_CREDS)
#define P (1u << UI_VIEW_PENDING)
#define A UI_VIEWS_ALL
#define CTRL(c) ((c) - 'a' + 1)

/* One row per request and view set, with every key bound to it (help lists a
 * row once, with its keys). The order is the order help shows. */
static const ui_keymap_entry entries[] = {
    {A, UI_REQ_DOWN, "down one row", {'j', UI_KEY_DOWN}},
    {A, UI_REQ_UP, "up one row", {'k', UI_KEY_UP}},
    {A, UI_REQ_PAGE_DOWN, "next page", {UI_KEY_PGDN, CTRL('f')}},
    {A, UI_REQ_PAGE_UP, "previous page", {UI_KEY_PGUP, CTRL('b')}},
    {A, UI_REQ_HALF_DOWN, "down half a page", {CTRL('d')}},
    {A, UI_REQ_HALF_UP, "up half a page", {CTRL('u')}},
    {A, UI_REQ_FIRST, "first row", {'g', UI_KEY_HOME}},
    {A, UI_REQ_LAST, "last row", {'G', UI_KEY_END}},
    {A, UI_REQ_ENTER, "details of the row", {UI_KEY_ENTER}},
    {A, UI_REQ_FILTER, "filter as you type (Enter keeps it, Esc clears it)", {'/'}},
    {R | C | P, UI_REQ_SORT, "sort by the next column to the right", {'o'}},
    {R | C | P, UI_REQ_SORT_REVERSE, "reverse the sort", {'O'}},
    {R | C, UI_REQ_ID_COLUMN, "hide or show the id column (Enter shows the id)", {'i'}},
    {R, UI_REQ_POLICY, "rules of one policy (pick from the cached ones)", {'p'}},
    {R | C | P, UI_REQ_MARK, "mark or unmark the row, then move down one row", {' '}},
    {R | C | P, UI_REQ_MARK_RANGE, "mark from the last mark to here", {'V'}},
    {R | C | P, UI_REQ_UNMARK_ALL, "unmark all", {'U'}},
    {R | C, UI_REQ_CREATE, "create", {'c'}},
    {R | C, UI_REQ_EDIT, "edit the row (fields fixed at creation are read-only)", {'e'}},
    {R | C | P, UI_REQ_RESOLVE, "resolve a conflict: keep local or take remote", {'R'}},
    {R | C | P, UI_REQ_DELETE, "delete the marked rows, or this one (asks first)", {'d'}},
    {R | C | P, UI_REQ_RETRY, "retry a failed or remotely deleted row", {'r'}},
    {R | C | P, UI_REQ_DISCARD, "discard a failed, new or remotely deleted row", {'x'}},
    {R | C | P, UI_REQ_UNDO, "undo the row's queued create, edit or delete", {'u'}},
    {C, UI_REQ_REVEAL, "show the credential's token (asks first)", {'t'}},
    {C, UI_REQ_ROTATE, "rotate the credential: a successor takes over its name", {'T'}},
    {R | C | P, UI_REQ_COPY_ID, "send the id to the terminal's clipboard (OSC 52)", {'y'}},
    {R | P, UI_REQ_COPY_CIDR, "send the rule's cidr to the terminal's clipboard", {'Y'}},
    {A, UI_REQ_SYNC, "sync now (push the queue, pull the remote)", {'s'}},
    {A, UI_REQ_HELP, "this help", {'?', UI_KEY_F1}},
    {A, UI_REQ_PROMPT, "command line (:help lists the commands)", {':'}},
    {A, UI_REQ_VIEW_NEXT, "next view", {UI_KEY_TAB}},
    {A, UI_REQ_VIEW_PREV, "previous view", {UI_KEY_BTAB}},
    {A, UI_REQ_VIEW_RULES, "rules", {'1'}},
    {A, UI_REQ_VIEW_CREDS, "credentials", {'2'}},
    {A, UI_REQ_VIEW_PENDING, "pending changes (what the next sync does)", {'3'}},
    {A, UI_REQ_VIEW_LOG, "sync and agent log", {'4'}},
    {A, UI_REQ_REDRAW, "repaint the screen", {CTRL('l')}},
    {A, UI_REQ_CANCEL, "clear the filter; the marks at a second Esc", {UI_KEY_ESC}},
    {A, UI_REQ_BACK, "back (clear the filter, the previous view), or quit", {'q'}},
    {A, UI_REQ_QUIT, "quit", {'Q'}},
};

ui_request ui_keymap_lookup(ui_view_id view, int key)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        if (!(entries[i].views & (1u << view)))
            continue;
        for (size_t k = 0; k < UI_KEYMAP_KEYS && entries[i].keys[k]; k++) {
            if (entries[i].keys[k] == key)
                return entries[i].req;
        }
    }
    return UI_REQ_NONE;
}

const ui_keymap_entry *ui_keymap_entries(size_t *count)
{
    *count = sizeof entries / sizeof entries[0];
    return entries;
}

bool ui_request_readonly_refused(ui_request req)
{
    switch (req) {
    case UI_REQ_CREATE:
    case UI_REQ_DELETE:
    case UI_REQ_RETRY:
    case UI_REQ_DISCARD:
    case UI_REQ_UNDO:
    case UI_REQ_EDIT:
    case UI_REQ_RESOLVE:
    case UI_REQ_SYNC:
    case UI_REQ_REVEAL:
    case UI_REQ_ROTATE:
        return true;
    default:
        return false;
    }
}

bool ui_request_refused(ui_app *app, ui_request req)
{
    if (!ui_request_readonly_refused(req) || !ui_app_readonly(app))
        return false;
    ui_app_status(app, false, "read-only console (%s): changes and tokens are off",
                  ui_app_readonly_why(app));
    return true;
}

typedef struct key_name {
    int key;
    const char *name;
} key_name;

static const key_name names[] = {
    {UI_KEY_UP, "Up"},       {UI_KEY_DOWN, "Down"},     {UI_KEY_LEFT, "Left"},
    {UI_KEY_RIGHT, "Right"}, {UI_KEY_PGUP, "PgUp"},     {UI_KEY_PGDN, "PgDn"},
    {UI_KEY_HOME, "Home"},   {UI_KEY_END, "End"},       {UI_KEY_ENTER, "Enter"},
    {UI_KEY_ESC, "Esc"},     {UI_KEY_TAB, "Tab"},       {UI_KEY_BTAB, "BTab"},
    {' ', "Space"},          {UI_KEY_BACKSPACE, "Backspace"}, {UI_KEY_DEL, "Del"},
    {UI_KEY_INSERT, "Insert"}, {UI_KEY_RESIZE, "Resize"},
};

void ui_key_name(int key, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (names[i].key == key) {
            snprintf(buf, size, "%s", names[i].name);
            return;
        }
    }
    if (key >= UI_KEY_F1 && key < UI_KEY_F1 + 12) {
        snprintf(buf, size, "F%d", key - UI_KEY_F1 + 1);
        return;
    }
    if (key >= 1 && key <= 26) {
        snprintf(buf, size, "C-%c", 'a' + key - 1);
        return;
    }
    if (key > 0x20 && key < 0x7f) {
        snprintf(buf, size, "%c", key);
        return;
    }
    snprintf(buf, size, "U+%04X", (unsigned)key);
}

int ui_key_parse(const char *name)
{
    size_t len = strlen(name);
    uint32_t cp;
    size_t n = len ? ui_text_decode(name, &cp) : 0;
    if (n && n == len)
        return (int)cp;
    if (len < 3 || name[0] != '<' || name[len - 1] != '>')
        return UI_KEY_NONE;
    char inner[32];
    if (len - 2 >= sizeof inner)
        return UI_KEY_NONE;
    memcpy(inner, name + 1, len - 2);
    inner[len - 2] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(inner, names[i].name) == 0)
            return names[i].key;
    }
    if (inner[0] == 'C' && inner[1] == '-' && inner[2] >= 'a' && inner[2] <= 'z' &&
        inner[3] == '\0')
        return CTRL(inner[2]);
    if (inner[0] == 'F') {
        int f = 0;
        for (const char *p = inner + 1; *p >= '0' && *p <= '9'; p++)
            f = f * 10 + (*p - '0');
        if (f >= 1 && f <= 12 && inner[1] && strspn(inner + 1, "0123456789") ==
                                                 strlen(inner + 1))
            return UI_KEY_F1 + f - 1;
    }
    return UI_KEY_NONE;
}

/*
 * ui_table: the console's paginated table widget. It holds only the rows on
 * screen and pages through a row source with keyset cursors (the store's pages,
 * the log ring), so a 1,000,000-row cache costs what a screenful does.
 *
 * - A source pages in ascending order of its sort, like store_page: rows after
 *   (STORE_FORWARD) or before (STORE_BACKWARD, still returned ascending) the row
 *   whose key is `cursor`; NULL starts at the beginning / the end. For a
 *   descending sort the widget asks for the other direction and reverses the rows:
 *   sources never see "descending".
 * - The query a source gets is the store's (store_query): the widget's filter and
 *   the store order of its sort, plus the scope its owner set (a policy, states):
 *   what narrows the rows beyond the filter (the log reads only the filter). The
 *   widget never knows what a scope means.
 * - Position: counted from the top as it pages and snapped to exact values at
 *   both ends ("rows 201-220 of 1,000,000"); a reload keeps the first visible row
 *   when it still exists.
 * - Changes (filter, sort, scope, height, reload) only mark the widget stale; the
 *   next ui_table_refresh (done by the console before each frame, and by every
 *   move) re-reads the count and the page once, however many keys came in between.
 * - Marks are kept by key across pages, filters and sorts. A source's error is
 *   kept in ui_table_error until the next good read (no rows meanwhile). Drawing is into a ui_canvas only: a
 *   gutter (cursor '>', mark '*'), the columns under their titles, the cursor's
 *   row a full-width reverse-video bar.
 */
#ifndef RAMPART_UI_TABLE_H
#define RAMPART_UI_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"
#include "rampart/ui_canvas.h"

enum {
    UI_TABLE_COLS_MAX = 8,
    UI_TABLE_CELL_MAX = 160, /* bytes kept per cell: more than any screen shows */
    UI_TABLE_KEY_MAX = 80,
    UI_TABLE_ROWS_MAX = 512  /* visible rows at most (taller screens show blank) */
};

/*
 * Layout (ui_table_draw), at any width: columns are placed in `rank` order (0 first;
 * equal ranks in table order), each at its minimum while it fits (a `whole` column
 * at the width of its widest cell on screen, title included, when that fits, even
 * below its minimum: a CIDR is read whole or not at all, and takes no more than
 * it shows), skipping the ones that do not; then, in the same order, each
 * grows toward its widest cell on screen (`fit`) or its max_width; what is left
 * goes to the first open-ended column (max_width 0). Shown in table order.
 */
typedef struct ui_table_col {
    const char *title;
    int min_width;  /* columns; the column is hidden when even this does not fit */
    int max_width;  /* 0: takes what is left */
    bool cut_middle;/* too long: keep both ends ("local_00V…k3J9x"): ids that share
                       a prefix differ at the end */
    int rank;       /* placement order (see above) */
    bool whole;     /* placed at its widest cell on screen, or else at min_width */
    bool fit;       /* grows only to its widest cell on screen */
    bool optional;  /* hidden by ui_table_toggle_optional (the id: Enter shows it) */
    const char *sort;    /* the name of the order this column sorts by ("cidr": `:sort`
                            and the position row say it); NULL: it does not sort */
    store_sort sort_key; /* that order in the store */
} ui_table_col;

typedef struct ui_table_row {
    char key[UI_TABLE_KEY_MAX];       /* the source's cursor for this row */
    int kind;                         /* the source's (a model_kind for records) */
    char id[MODEL_ID_MAX + 1];        /* the record's id; "" when not a record */
    char cells[UI_TABLE_COLS_MAX][UI_TABLE_CELL_MAX];
    ui_style style;                   /* of the row's cells (state colour) */
    int style_col;                    /* only this column takes `style` (-1: all) */
    char note[UI_TABLE_CELL_MAX];     /* what needs attention ("failed: why"), shown
                                         while the cursor is on it; "" none */
} ui_table_row;

/* Lines of a row's details: label and value, one call each. */
typedef void (*ui_table_detail_fn)(void *ctx, const char *label, const char *value);

typedef struct ui_table_source {
    const ui_table_col *cols; /* at least one of them sorts */
    int ncols;
    void *ctx;
    error_code (*page)(void *ctx, const store_query *q, const char *cursor, store_dir dir,
                       size_t limit, ui_table_row *rows, size_t *count, error_info *err);
    error_code (*count)(void *ctx, const store_query *q, size_t *out, error_info *err);
    /* The row's details, fresh from the source; may be NULL (no details). */
    error_code (*details)(void *ctx, const ui_table_row *row, ui_table_detail_fn fn,
                          void *fn_ctx, error_info *err);
} ui_table_source;

typedef struct ui_table_mark {
    char key[UI_TABLE_KEY_MAX];
    int kind;
    char id[MODEL_ID_MAX + 1];
} ui_table_mark;

typedef struct ui_table {
    const ui_table_source *src;
    ui_table_row *rows;  /* `height` slots; nrows of them shown */
    size_t nrows, height;
    size_t cursor;       /* index into rows */
    size_t top;          /* position of rows[0] among all rows, 0-based */
    size_t total;
    char filter[1025];
    char scope_policy[MODEL_ID_MAX + 1]; /* the owner's scope (ui_table_set_scope) */
    unsigned scope_states;
    int sort;            /* the column sorted by (one with a `sort`) */
    bool descending;
    bool hide_optional;  /* the `optional` columns are hidden (a key toggles it) */
    bool stale;          /* count and page to be read again */
    bool count_stale;
    char anchor[UI_TABLE_KEY_MAX]; /* where the next read starts (inclusive); "" top */
    size_t anchor_cursor;          /* cursor row to restore after it */
    ui_table_mark *marks; /* sorted by key */
    size_t nmarks, marks_cap;
    char last_mark[UI_TABLE_KEY_MAX]; /* start of a 'V' range */
    error_info error;
} ui_table;

/* A table over `src` (borrowed for the table's life), empty and stale. */
error_code ui_table_init(ui_table *t, const ui_table_source *src, error_info *err);
void ui_table_free(ui_table *t);

/* The number of visible rows (from the screen size). Keeps the first row. */
error_code ui_table_set_height(ui_table *t, size_t rows, error_info *err);

/* Read the count and the page again if stale (or `force`). Errors land in
 * t->error (and are returned). */
error_code ui_table_refresh(ui_table *t, bool force);

/* Everything changed (a sync, a delete): re-read, keeping the first visible row. */
void ui_table_reload(ui_table *t);

/* Query changes: each starts again at the top. ui_table_set_sort takes the index
 * of a column that sorts (any other: the first that does). */
void ui_table_set_filter(ui_table *t, const char *filter);
void ui_table_set_sort(ui_table *t, int col, bool descending);

/* Sorts are the columns': ui_table_sort_next is the next column that sorts after
 * the current one, in table order (the order on screen), wrapping round, leaving
 * out the optional columns while they are hidden; ui_table_sort_find the column
 * whose sort is `name` (-1: none); ui_table_sort_count how many sort;
 * ui_table_sort_name the current sort's name. */
int ui_table_sort_next(const ui_table *t);
int ui_table_sort_find(const ui_table *t, const char *name);
int ui_table_sort_count(const ui_table *t);
const char *ui_table_sort_name(const ui_table *t);

/* The owner's scope: its policy_id and states are copied and narrow every read
 * from now on (NULL or an empty one clears it); its filter and sort are ignored
 * (they are the widget's own). Starts again at the top when it changed. */
void ui_table_set_scope(ui_table *t, const store_query *scope);

/* Whether a scope is set. */
bool ui_table_scoped(const ui_table *t);

/* The query the source is asked with: the filter, the store order of the sort and
 * the scope. Its strings point into `t` and stay valid until the next change. */
void ui_table_query(const ui_table *t, store_query *out);

/* Cursor movement. Each returns an error only when the source failed. */
error_code ui_table_move(ui_table *t, long delta);   /* rows; pages past the screen */
error_code ui_table_page(ui_table *t, int pages);    /* +1 PgDn, -1 PgUp */
error_code ui_table_half(ui_table *t, int dir);      /* Ctrl-D / Ctrl-U */
error_code ui_table_first(ui_table *t);
error_code ui_table_last(ui_table *t);

/* The row under the cursor, NULL when empty. */
const ui_table_row *ui_table_current(const ui_table *t);

/* Toggle the mark of the current row (and remember it as a range start). */
error_code ui_table_mark_toggle(ui_table *t, error_info *err);
/* Mark every row from the last mark to the cursor (walking the source when they
 * are on other pages; at most `max` rows). ERROR_INVALID when nothing was marked
 * before. */
error_code ui_table_mark_range(ui_table *t, size_t max, size_t *added, error_info *err);
bool ui_table_is_marked(const ui_table *t, const char *key);
void ui_table_unmark_all(ui_table *t);

/* "rows 201-220 of 1,000,000" and "page 11/50000" (empty: "no rows"). */
void ui_table_position(const ui_table *t, char *rows, size_t rows_size, char *page,
                       size_t page_size);

/* Draw titles and the rows read last into `area` of the canvas (refresh first:
 * drawing reads the table, never the source). */
void ui_table_draw(const ui_table *t, ui_canvas *c, ui_rect area);

/* Hide or show the `optional` columns; returns whether they are hidden now. */
bool ui_table_toggle_optional(ui_table *t);

/* The widths of the columns drawn in an area `width` columns wide (gutter
 * included): widths[i] for column i, 0 when hidden. Reads the rows on screen. */
void ui_table_layout(const ui_table *t, const ui_canvas *c, int width,
                     int widths[UI_TABLE_COLS_MAX]);

/* The rows that fit an area of `height` canvas rows (minus the title row). */
size_t ui_table_rows_for(int height);

#endif

/*
 * ui_table: the paginated table widget. Only the visible rows are held; every
 * move past the screen is one keyset read of the rows it brings in.
 */
#include "rampart/ui_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_internal.h"
#include "ui_text.h"

void ui_table_set_text(char *dst, size_t size, const char *src)
{
    size_t n = ui_text_prefix(src ? src : "", size - 1);
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static bool sorts_by(const ui_table *t, int col)
{
    return col >= 0 && col < t->src->ncols && t->src->cols[col].sort;
}

error_code ui_table_init(ui_table *t, const ui_table_source *src, error_info *err)
{
    memset(t, 0, sizeof *t);
    t->src = src;
    t->sort = ui_table_sort_find(t, NULL);
    t->stale = true;
    t->count_stale = true;
    return ui_table_set_height(t, 1, err);
}

void ui_table_free(ui_table *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t->marks);
    memset(t, 0, sizeof *t);
}

size_t ui_table_rows_for(int height)
{
    if (height <= 1)
        return 1;
    size_t rows = (size_t)height - 1;
    return rows > UI_TABLE_ROWS_MAX ? UI_TABLE_ROWS_MAX : rows;
}

/* Keep the first visible row as the place to read from next time. */
static void anchor_here(ui_table *t)
{
    if (t->nrows) {
        ui_table_set_text(t->anchor, sizeof t->anchor, t->rows[0].key);
        t->anchor_cursor = t->cursor;
    }
}

error_code ui_table_set_height(ui_table *t, size_t rows, error_info *err)
{
    if (rows < 1)
        rows = 1;
    if (rows > UI_TABLE_ROWS_MAX)
        rows = UI_TABLE_ROWS_MAX;
    if (rows == t->height && t->rows)
        return ERROR_OK;
    ui_table_row *r = calloc(rows, sizeof *r);
    if (!r)
        return error_set(err, ERROR_NOMEM, "out of memory");
    anchor_here(t);
    free(t->rows);
    t->rows = r;
    t->height = rows;
    t->nrows = 0;
    t->stale = true;
    return ERROR_OK;
}

void ui_table_query(const ui_table *t, store_query *out)
{
    memset(out, 0, sizeof *out);
    out->filter = t->filter;
    out->sort = sorts_by(t, t->sort) ? t->src->cols[t->sort].sort_key : STORE_SORT_ID;
    out->policy_id = t->scope_policy;
    out->states = t->scope_states;
}

static void reverse_rows(ui_table_row *rows, size_t n)
{
    ui_table_row tmp;
    for (size_t i = 0; i < n / 2; i++) {
        tmp = rows[i];
        rows[i] = rows[n - 1 - i];
        rows[n - 1 - i] = tmp;
    }
}

/*
 * Rows after (forward) or before (backward) `cursor` in display order, returned
 * in display order. Descending sorts read the other way and turn the rows round.
 */
error_code ui_table_fetch(ui_table *t, const char *cursor, bool forward, size_t limit,
                          ui_table_row *out, size_t *n)
{
    *n = 0;
    if (limit == 0)
        return ERROR_OK;
    store_query q;
    ui_table_query(t, &q);
    store_dir dir = forward != t->descending ? STORE_FORWARD : STORE_BACKWARD;
    error_info e = {0};
    if (t->src->page(t->src->ctx, &q, cursor && *cursor ? cursor : NULL, dir, limit, out,
                     n, &e) != ERROR_OK) {
        *n = 0;
        t->error = e;
        t->nrows = 0;
        return e.code;
    }
    if (t->descending)
        reverse_rows(out, *n);
    return ERROR_OK;
}

static void clamp_cursor(ui_table *t)
{
    if (t->nrows == 0)
        t->cursor = 0;
    else if (t->cursor >= t->nrows)
        t->cursor = t->nrows - 1;
}

/* The page reached the end of the rows: the position is exact again. */
static void snap_end(ui_table *t)
{
    t->top = t->total >= t->nrows ? t->total - t->nrows : 0;
}

static error_code read_count(ui_table *t)
{
    store_query q;
    ui_table_query(t, &q);
    error_info e = {0};
    size_t n = 0;
    if (t->src->count(t->src->ctx, &q, &n, &e) != ERROR_OK) {
        t->error = e;
        t->nrows = 0;
        return e.code;
    }
    t->total = n;
    t->count_stale = false;
    return ERROR_OK;
}

/* Rows that came in after the last one: drop as many from the top. */
static void append_rows(ui_table *t, const ui_table_row *in, size_t m)
{
    size_t drop = t->nrows + m > t->height ? t->nrows + m - t->height : 0;
    if (drop) {
        memmove(t->rows, t->rows + drop, (t->nrows - drop) * sizeof *t->rows);
        t->nrows -= drop;
        t->top += drop;
    }
    memcpy(t->rows + t->nrows, in, m * sizeof *in);
    t->nrows += m;
}

/* Rows that came in above the first one: drop as many from the bottom. */
static void prepend_rows(ui_table *t, const ui_table_row *in, size_t m)
{
    size_t keep = t->nrows + m > t->height ? t->height - m : t->nrows;
    memmove(t->rows + m, t->rows, keep * sizeof *t->rows);
    memcpy(t->rows, in, m * sizeof *in);
    t->nrows = keep + m;
    t->top = t->top >= m ? t->top - m : 0;
}

/* Scratch rows for one read (the page size at most). */
static ui_table_row *scratch(ui_table *t, size_t n, error_info *e)
{
    ui_table_row *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) {
        error_set(e, ERROR_NOMEM, "out of memory");
        t->error = *e;
    }
    return s;
}

static error_code scroll_step(ui_table *t, bool down, size_t k, size_t *moved);

/* Move the view by up to `k` rows, a screenful per read (what scrolls past the
 * screen is read and dropped: keysets have no offset); *moved says how far. */
static error_code scroll(ui_table *t, bool down, size_t k, size_t *moved)
{
    *moved = 0;
    while (k > 0) {
        size_t step = k < t->height ? k : t->height, got = 0;
        error_code rc = scroll_step(t, down, step, &got);
        *moved += got;
        if (rc || got < step)
            return rc;
        k -= step;
    }
    return ERROR_OK;
}

static error_code scroll_step(ui_table *t, bool down, size_t k, size_t *moved)
{
    *moved = 0;
    if (t->nrows == 0 || k == 0)
        return ERROR_OK;
    error_info e = {0};
    ui_table_row *in = scratch(t, k, &e);
    if (!in)
        return e.code;
    size_t m = 0;
    const char *edge = down ? t->rows[t->nrows - 1].key : t->rows[0].key;
    error_code rc = ui_table_fetch(t, edge, down, k, in, &m);
    if (rc == ERROR_OK) {
        size_t before = t->top;
        if (down) {
            append_rows(t, in, m);
            *moved = t->top - before;
            if (m < k)
                snap_end(t);
        } else {
            prepend_rows(t, in, m);
            *moved = m;
            if (m < k)
                t->top = 0;
        }
    }
    free(in);
    return rc;
}

/* A full page forward from `cursor` (NULL: the start), or the last page. */
static error_code load_page(ui_table *t, const char *cursor, bool from_end)
{
    size_t n = 0;
    error_code rc = ui_table_fetch(t, cursor, !from_end, t->height, t->rows, &n);
    if (rc)
        return rc;
    t->nrows = n;
    if (from_end)
        snap_end(t);
    else if (!cursor || !*cursor)
        t->top = 0;
    return ERROR_OK;
}

/* Read again from the anchor (inclusive), filling the screen. */
static error_code load_from_anchor(ui_table *t)
{
    if (!t->anchor[0]) {
        error_code rc = load_page(t, NULL, false);
        t->cursor = 0;
        return rc;
    }
    ui_table_row before;
    size_t n = 0;
    error_code rc = ui_table_fetch(t, t->anchor, false, 1, &before, &n);
    if (rc)
        return rc;
    if (n == 0) {
        rc = load_page(t, NULL, false);
    } else {
        rc = load_page(t, before.key, false);
    }
    if (rc)
        return rc;
    t->cursor = t->anchor_cursor;
    if (t->nrows < t->height && t->nrows > 0) {
        /* Rows went away near the end: fill the screen from above. */
        size_t moved = 0;
        rc = scroll(t, false, t->height - t->nrows, &moved);
        t->cursor += moved;
        if (rc == ERROR_OK)
            snap_end(t);
    }
    if (n == 0)
        t->top = 0;
    return rc;
}

error_code ui_table_refresh(ui_table *t, bool force)
{
    if (!t->stale && !force)
        return ERROR_OK;
    error_clear(&t->error);
    t->stale = false;
    if (t->count_stale || force) {
        error_code rc = read_count(t);
        if (rc)
            return rc;
    }
    error_code rc = load_from_anchor(t);
    if (rc == ERROR_OK && t->top + t->nrows > t->total)
        snap_end(t); /* rows arrived since the count */
    clamp_cursor(t);
    anchor_here(t);
    return rc;
}

void ui_table_reload(ui_table *t)
{
    anchor_here(t);
    if (t->top == 0 && t->cursor == 0)
        t->anchor[0] = '\0'; /* at the very top: stay there, new first rows included */
    t->stale = true;
    t->count_stale = true;
}

static void restart(ui_table *t)
{
    t->anchor[0] = '\0';
    t->anchor_cursor = 0;
    t->top = 0;
    t->cursor = 0;
    t->stale = true;
    t->count_stale = true;
}

void ui_table_set_filter(ui_table *t, const char *filter)
{
    if (strcmp(t->filter, filter ? filter : "") == 0)
        return;
    ui_table_set_text(t->filter, sizeof t->filter, filter);
    restart(t);
}

void ui_table_set_scope(ui_table *t, const store_query *scope)
{
    const char *policy = scope && scope->policy_id ? scope->policy_id : "";
    unsigned states = scope ? scope->states : 0;
    if (strcmp(t->scope_policy, policy) == 0 && t->scope_states == states)
        return;
    ui_table_set_text(t->scope_policy, sizeof t->scope_policy, policy);
    t->scope_states = states;
    restart(t);
}

bool ui_table_scoped(const ui_table *t)
{
    return t->scope_policy[0] || t->scope_states;
}

int ui_table_sort_find(const ui_table *t, const char *name)
{
    for (int i = 0; i < t->src->ncols; i++) {
        if (sorts_by(t, i) && (!name || strcmp(t->src->cols[i].sort, name) == 0))
            return i;
    }
    return -1;
}

int ui_table_sort_next(const ui_table *t)
{
    int n = t->src->ncols;
    for (int k = 1; k < n; k++) {
        int i = (t->sort + k) % n;
        if (sorts_by(t, i) && !(t->src->cols[i].optional && t->hide_optional))
            return i;
    }
    return t->sort;
}

int ui_table_sort_count(const ui_table *t)
{
    int n = 0;
    for (int i = 0; i < t->src->ncols; i++)
        n += sorts_by(t, i);
    return n;
}

const char *ui_table_sort_name(const ui_table *t)
{
    return sorts_by(t, t->sort) ? t->src->cols[t->sort].sort : "";
}

void ui_table_set_sort(ui_table *t, int col, bool descending)
{
    t->sort = sorts_by(t, col) ? col : ui_table_sort_find(t, NULL);
    t->descending = descending;
    restart(t);
}

error_code ui_table_ready(ui_table *t)
{
    return ui_table_refresh(t, false);
}

error_code ui_table_move(ui_table *t, long delta)
{
    error_code rc = ui_table_ready(t);
    if (rc || t->nrows == 0)
        return rc;
    long target = (long)t->cursor + delta;
    size_t moved = 0;
    if (target >= (long)t->nrows) {
        rc = scroll(t, true, (size_t)(target - (long)t->nrows + 1), &moved);
        target -= (long)moved;
    } else if (target < 0) {
        rc = scroll(t, false, (size_t)(-target), &moved);
        target += (long)moved;
    }
    if (target < 0)
        target = 0;
    t->cursor = (size_t)target;
    clamp_cursor(t);
    anchor_here(t);
    return rc;
}

/* PgDn/PgUp and Ctrl-D/Ctrl-U: the view moves by `k` rows; what it cannot move
 * (the first or last rows are on screen), the cursor does. */
static error_code view_step(ui_table *t, bool down, size_t k)
{
    error_code rc = ui_table_ready(t);
    if (rc || t->nrows == 0)
        return rc;
    size_t moved = 0;
    rc = scroll(t, down, k, &moved);
    if (rc)
        return rc;
    size_t rest = k - moved;
    t->cursor = down ? t->cursor + rest : (t->cursor > rest ? t->cursor - rest : 0);
    clamp_cursor(t);
    anchor_here(t);
    return ERROR_OK;
}

error_code ui_table_page(ui_table *t, int pages)
{
    return view_step(t, pages > 0, t->height);
}

error_code ui_table_half(ui_table *t, int dir)
{
    return view_step(t, dir > 0, t->height / 2 ? t->height / 2 : 1);
}

error_code ui_table_first(ui_table *t)
{
    t->anchor[0] = '\0';
    t->anchor_cursor = 0;
    t->stale = true;
    return ui_table_ready(t);
}

error_code ui_table_last(ui_table *t)
{
    error_code rc = ui_table_ready(t);
    if (rc)
        return rc;
    rc = load_page(t, NULL, true);
    t->cursor = t->nrows ? t->nrows - 1 : 0;
    anchor_here(t);
    return rc;
}

const ui_table_row *ui_table_current(const ui_table *t)
{
    return t->nrows ? &t->rows[t->cursor] : NULL;
}

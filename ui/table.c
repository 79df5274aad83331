/*
 * ui_table: the paginated table widget. Only the visible rows are held; every
 * move past the screen is one keyset read of the rows it brings in.
 */
#include "rampart/ui_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_text.h"

static void set_text(char *dst, size_t size, const char *src)
{
    size_t n = ui_text_prefix(src ? src : "", size - 1);
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

error_code ui_table_init(ui_table *t, const ui_table_source *src, error_info *err)
{
    memset(t, 0, sizeof *t);
    t->src = src;
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
        set_text(t->anchor, sizeof t->anchor, t->rows[0].key);
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

static void query_of(const ui_table *t, ui_table_query *q)
{
    q->filter = t->filter;
    q->policy = t->policy;
    q->sort = t->sort;
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
static error_code fetch(ui_table *t, const char *cursor, bool forward, size_t limit,
                        ui_table_row *out, size_t *n)
{
    *n = 0;
    if (limit == 0)
        return ERROR_OK;
    ui_table_query q;
    query_of(t, &q);
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
    ui_table_query q;
    query_of(t, &q);
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

/* Move the view by up to `k` rows; *moved says how far it went. */
static error_code scroll(ui_table *t, bool down, size_t k, size_t *moved)
{
    *moved = 0;
    if (t->nrows == 0 || k == 0)
        return ERROR_OK;
    error_info e = {0};
    ui_table_row *in = scratch(t, k, &e);
    if (!in)
        return e.code;
    size_t m = 0;
    error_code rc = fetch(t, down ? t->rows[t->nrows - 1].key : t->rows[0].key, down, k,
                          in, &m);
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
    error_code rc = fetch(t, cursor, !from_end, t->height, t->rows, &n);
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
    error_code rc = fetch(t, t->anchor, false, 1, &before, &n);
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
    set_text(t->filter, sizeof t->filter, filter);
    restart(t);
}

void ui_table_set_policy(ui_table *t, const char *policy)
{
    if (strcmp(t->policy, policy ? policy : "") == 0)
        return;
    set_text(t->policy, sizeof t->policy, policy);
    restart(t);
}

void ui_table_set_sort(ui_table *t, int sort, bool descending)
{
    if (sort < 0 || sort >= t->src->nsorts)
        sort = 0;
    t->sort = sort;
    t->descending = descending;
    restart(t);
}

static error_code ready(ui_table *t)
{
    return ui_table_refresh(t, false);
}

error_code ui_table_move(ui_table *t, long delta)
{
    error_code rc = ready(t);
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

error_code ui_table_page(ui_table *t, int pages)
{
    error_code rc = ready(t);
    if (rc || t->nrows == 0)
        return rc;
    size_t moved = 0;
    rc = scroll(t, pages > 0, t->height, &moved);
    if (rc == ERROR_OK && moved == 0)
        t->cursor = pages > 0 ? t->nrows - 1 : 0;
    clamp_cursor(t);
    anchor_here(t);
    return rc;
}

error_code ui_table_half(ui_table *t, int dir)
{
    error_code rc = ready(t);
    if (rc || t->nrows == 0)
        return rc;
    size_t half = t->height / 2 ? t->height / 2 : 1;
    size_t moved = 0;
    rc = scroll(t, dir > 0, half, &moved);
    if (rc)
        return rc;
    /* What the view could not move, the cursor does. */
    long rest = (long)(half - moved);
    t->cursor = dir > 0 ? t->cursor + (size_t)rest
                        : (t->cursor > (size_t)rest ? t->cursor - (size_t)rest : 0);
    clamp_cursor(t);
    anchor_here(t);
    return ERROR_OK;
}

error_code ui_table_first(ui_table *t)
{
    t->anchor[0] = '\0';
    t->anchor_cursor = 0;
    t->stale = true;
    return ready(t);
}

error_code ui_table_last(ui_table *t)
{
    error_code rc = ready(t);
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

/* ---- marks ---------------------------------------------------------------- */

static size_t mark_find(const ui_table *t, const char *key, bool *found)
{
    size_t lo = 0, hi = t->nmarks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(key, t->marks[mid].key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *found = false;
    return lo;
}

bool ui_table_is_marked(const ui_table *t, const char *key)
{
    bool found;
    mark_find(t, key, &found);
    return found;
}

static error_code mark_add(ui_table *t, const ui_table_row *row, error_info *err)
{
    bool found;
    size_t at = mark_find(t, row->key, &found);
    if (found)
        return ERROR_OK;
    if (t->nmarks == t->marks_cap) {
        size_t cap = t->marks_cap ? t->marks_cap * 2 : 16;
        ui_table_mark *m = realloc(t->marks, cap * sizeof *m);
        if (!m)
            return error_set(err, ERROR_NOMEM, "out of memory");
        t->marks = m;
        t->marks_cap = cap;
    }
    memmove(t->marks + at + 1, t->marks + at, (t->nmarks - at) * sizeof *t->marks);
    ui_table_mark *m = &t->marks[at];
    set_text(m->key, sizeof m->key, row->key);
    set_text(m->id, sizeof m->id, row->id);
    m->kind = row->kind;
    t->nmarks++;
    return ERROR_OK;
}

error_code ui_table_mark_toggle(ui_table *t, error_info *err)
{
    const ui_table_row *row = ui_table_current(t);
    if (!row)
        return ERROR_OK;
    bool found;
    size_t at = mark_find(t, row->key, &found);
    set_text(t->last_mark, sizeof t->last_mark, row->key);
    if (found) {
        memmove(t->marks + at, t->marks + at + 1, (t->nmarks - at - 1) * sizeof *t->marks);
        t->nmarks--;
        return ERROR_OK;
    }
    return mark_add(t, row, err);
}

void ui_table_unmark_all(ui_table *t)
{
    t->nmarks = 0;
    t->last_mark[0] = '\0';
}

/* Walk from the cursor row towards the last mark in one direction, collecting
 * rows until it is found (then mark them all) or `max` rows were seen. */
static error_code walk_to_mark(ui_table *t, bool down, size_t max, bool *found,
                               size_t *added, error_info *err)
{
    enum { STEP = 64 };
    const ui_table_row *cur = ui_table_current(t);
    size_t cap = max + 1, n = 0;
    ui_table_row *seen = malloc(cap * sizeof *seen);
    ui_table_row *page = malloc(STEP * sizeof *page);
    error_code rc = ERROR_OK;
    *found = false;
    if (!seen || !page) {
        rc = error_set(err, ERROR_NOMEM, "out of memory");
        goto out;
    }
    seen[n++] = *cur;
    while (!*found && n < cap) {
        size_t got = 0;
        rc = fetch(t, seen[n - 1].key, down, STEP, page, &got);
        if (rc) {
            *err = t->error;
            goto out;
        }
        for (size_t i = 0; i < got && n < cap && !*found; i++) {
            const ui_table_row *r = down ? &page[i] : &page[got - 1 - i];
            seen[n++] = *r;
            *found = strcmp(r->key, t->last_mark) == 0;
        }
        if (got < STEP)
            break;
    }
    for (size_t i = 0; *found && i < n && rc == ERROR_OK; i++) {
        bool had = ui_table_is_marked(t, seen[i].key);
        rc = mark_add(t, &seen[i], err);
        *added += !had;
    }
out:
    free(seen);
    free(page);
    return rc;
}

error_code ui_table_mark_range(ui_table *t, size_t max, size_t *added, error_info *err)
{
    *added = 0;
    const ui_table_row *cur = ui_table_current(t);
    if (!cur)
        return ERROR_OK;
    if (!t->last_mark[0])
        return error_set(err, ERROR_INVALID, "mark a row with space first, then 'V' "
                                             "marks everything from it to the cursor");
    if (strcmp(cur->key, t->last_mark) == 0)
        return mark_add(t, cur, err);
    bool found = false;
    error_code rc = walk_to_mark(t, false, max, &found, added, err);
    if (rc == ERROR_OK && !found)
        rc = walk_to_mark(t, true, max, &found, added, err);
    if (rc == ERROR_OK && !found)
        return error_set(err, ERROR_INVALID, "the last mark is more than %zu rows away "
                                             "(or no longer shown): nothing marked", max);
    if (rc == ERROR_OK)
        set_text(t->last_mark, sizeof t->last_mark, cur->key);
    return rc;
}

/* ---- position and drawing --------------------------------------------------- */

void ui_table_position(const ui_table *t, char *rows, size_t rows_size, char *page,
                       size_t page_size)
{
    if (t->nrows == 0) {
        snprintf(rows, rows_size, "no rows");
        snprintf(page, page_size, "page 0/0");
        return;
    }
    char a[32], b[32], total[32];
    ui_text_count(t->top + 1, a, sizeof a);
    ui_text_count(t->top + t->nrows, b, sizeof b);
    ui_text_count(t->total, total, sizeof total);
    snprintf(rows, rows_size, "rows %s-%s of %s", a, b, total);
    size_t pages = (t->total + t->height - 1) / t->height;
    size_t p = t->top / t->height + 1;
    if (t->top + t->nrows >= t->total || p > pages)
        p = pages;
    if (pages == 0)
        pages = p = 1;
    snprintf(page, page_size, "page %zu/%zu", p, pages);
}

/* Column widths for `avail` columns: minimums in order while they fit, then the
 * rest to bounded columns in order, then to the first open-ended one. */
static int layout(const ui_table_source *src, int avail, int *widths)
{
    int used = 0, n = 0;
    for (int i = 0; i < src->ncols; i++) {
        int need = src->cols[i].min_width + (n ? 1 : 0);
        if (used + need > avail)
            break;
        widths[n++] = src->cols[i].min_width;
        used += need;
    }
    int extra = avail - used;
    for (int i = 0; i < n && extra > 0; i++) {
        int max = src->cols[i].max_width;
        if (max <= 0 || widths[i] >= max)
            continue;
        int add = max - widths[i] < extra ? max - widths[i] : extra;
        widths[i] += add;
        extra -= add;
    }
    for (int i = 0; i < n && extra > 0; i++) {
        if (src->cols[i].max_width <= 0) {
            widths[i] += extra;
            extra = 0;
        }
    }
    return n;
}

/* `text` cut to `width` columns in the middle ("abc…xyz") into out. */
static const char *cut_middle(const ui_canvas *c, const char *text, int width, char *out,
                              size_t size)
{
    int total = ui_canvas_width(c, text, 1 << 20);
    if (total <= width || width < 5)
        return text;
    int tail = (width - 1) / 2, head = width - 1 - tail;
    size_t len = strlen(text), h = 0, t = len;
    int w = 0;
    while (text[h]) { /* the head: `head` columns from the start */
        uint32_t cp;
        size_t n = ui_text_decode(text + h, &cp);
        int cw = n && ui_text_cp_width(cp) == 2 && !c->ascii ? 2 : 1;
        if (w + cw > head)
            break;
        w += cw;
        h += n ? n : 1;
    }
    while (t > h && ui_canvas_width(c, text + t, 1 << 20) < tail) {
        t--;
        while (t > h && ((unsigned char)text[t] & 0xc0) == 0x80)
            t--;
    }
    if (ui_canvas_width(c, text + t, 1 << 20) > tail) { /* a wide char too many */
        t++;
        while (text[t] && ((unsigned char)text[t] & 0xc0) == 0x80)
            t++;
    }
    const char *dots = c->ascii ? "~" : "\xe2\x80\xa6";
    snprintf(out, size, "%.*s%s%s", (int)h, text, dots, text + t);
    return out;
}

static void draw_row(ui_table *t, ui_canvas *c, int y, int x0, int width,
                     const ui_table_row *row, bool cursor, const int *widths, int n)
{
    ui_style plain = {0, UI_COLOR_DEFAULT};
    bool marked = ui_table_is_marked(t, row->key);
    ui_style cell = marked ? (ui_style){UI_ATTR_BOLD, UI_COLOR_MARK} : plain;
    ui_canvas_clear(c, y, x0, width, plain);
    ui_canvas_text(c, y, x0, 1, cursor ? (c->ascii ? ">" : "\xe2\x96\xb6") : " ",
                   cursor ? (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_CURSOR} : plain,
                   false);
    ui_canvas_text(c, y, x0 + 1, 1, marked ? "*" : " ", cell, false);
    int x = x0 + 2;
    for (int i = 0; i < n; i++) {
        ui_style s = cell;
        if (row->style_col < 0 || row->style_col == i) {
            s.color = marked ? cell.color : row->style.color;
            s.attr = (uint8_t)(s.attr | row->style.attr);
        }
        char cut[UI_TABLE_CELL_MAX + 8];
        const char *text = t->src->cols[i].cut_middle
                               ? cut_middle(c, row->cells[i], widths[i], cut, sizeof cut)
                               : row->cells[i];
        ui_canvas_text(c, y, x, widths[i], text, s, true);
        x += widths[i] + 1;
    }
}

void ui_table_draw(ui_table *t, ui_canvas *c, ui_rect area)
{
    ui_style plain = {0, UI_COLOR_DEFAULT};
    ui_style title = {UI_ATTR_BOLD | UI_ATTR_UNDERLINE, UI_COLOR_DEFAULT};
    ui_table_refresh(t, false);
    int widths[UI_TABLE_COLS_MAX];
    int n = layout(t->src, area.width - 2, widths);
    ui_canvas_clear(c, area.y, area.x, area.width, plain);
    int x = area.x + 2;
    for (int i = 0; i < n; i++) {
        ui_canvas_text(c, area.y, x, widths[i], t->src->cols[i].title, title, true);
        x += widths[i] + 1;
    }
    for (int r = 1; r < area.height; r++) {
        int y = area.y + r;
        size_t i = (size_t)(r - 1);
        if (i < t->nrows) {
            draw_row(t, c, y, area.x, area.width, &t->rows[i], i == t->cursor, widths, n);
            continue;
        }
        ui_canvas_clear(c, y, area.x, area.width, plain);
        if (r == 1 && t->error.code)
            ui_canvas_text(c, y, area.x + 2, area.width - 2, t->error.msg,
                           (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
        else if (r == 1)
            ui_canvas_text(c, y, area.x + 2, area.width - 2,
                           t->filter[0] || t->policy[0] ? "(no rows match)" : "(no rows)",
                           (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
    }
}

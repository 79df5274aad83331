/*
 * ui_table marks: kept by key (sorted, found by binary search) across pages,
 * filters and sorts; a range mark walks the source between the last mark and
 * the cursor.
 */
#include "rampart/ui_table.h"

#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "table_internal.h"

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
    if (!buf_grow_array((void **)&t->marks, &t->marks_cap, t->nmarks + 1, sizeof *t->marks))
        return error_set(err, ERROR_NOMEM, "out of memory");
    memmove(t->marks + at + 1, t->marks + at, (t->nmarks - at) * sizeof *t->marks);
    ui_table_mark *m = &t->marks[at];
    ui_table_set_text(m->key, sizeof m->key, row->key);
    ui_table_set_text(m->id, sizeof m->id, row->id);
    m->kind = row->kind;
    t->nmarks++;
    return ERROR_OK;
}

error_code ui_table_mark_toggle(ui_table *t, error_info *err)
{
    if (ui_table_ready(t) != ERROR_OK)
        return error_set(err, t->error.code, "%s", t->error.msg);
    const ui_table_row *row = ui_table_current(t);
    if (!row)
        return ERROR_OK;
    bool found;
    size_t at = mark_find(t, row->key, &found);
    ui_table_set_text(t->last_mark, sizeof t->last_mark, row->key);
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
        rc = ui_table_fetch(t, seen[n - 1].key, down, STEP, page, &got);
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
    if (ui_table_ready(t) != ERROR_OK)
        return error_set(err, t->error.code, "%s", t->error.msg);
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
        ui_table_set_text(t->last_mark, sizeof t->last_mark, cur->key);
    return rc;
}

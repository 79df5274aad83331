/*
 * ui_table over a real SQLite cache (a temp file): paging both ways, position text,
 * G then g, scrolling, marks, filter, every sort order of the store (ascending and
 * descending, walked page by page both ways), reloads and source errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rampart/cidrset.h"
#include "rampart/store.h"
#include "rampart/validate.h"
#include "rampart/ui_table.h"
#include "test_support.h"
#include "../../ui/views/ui_record.h"

enum { NROWS = 95, HEIGHT = 10 };

typedef struct fixture {
    ts_store_dir db;
    model_object buf[64];
    ui_table_source src;
    ui_table t;
    bool fail;
} fixture;

/* Column i sorts by sort i of sort_key() below; the page fills ID and CIDR. */
static const ui_table_col cols[] = {
    {"ID", 10, 33, true, 0, false, false, false, "id", STORE_SORT_ID},
    {"POLICY", 6, 6, false, 0, false, false, false, "policy", STORE_SORT_POLICY},
    {"CIDR", 10, 20, false, 0, false, false, false, "cidr", STORE_SORT_CIDR},
    {"ACTION", 6, 6, false, 0, false, false, false, "action", STORE_SORT_ACTION},
    {"STATE", 5, 5, false, 0, false, false, false, "state", STORE_SORT_STATE}};

static error_code page(void *ctx, const store_query *q, const char *cursor, store_dir dir,
                       size_t limit, ui_table_row *rows, size_t *count, error_info *err)
{
    fixture *f = ctx;
    if (f->fail)
        return error_set(err, ERROR_IO, "disk on fire");
    assert_true(limit <= 64);
    if (store_page(f->db.st, MODEL_KIND_RULE, q, cursor, dir, limit, f->buf, count, err) !=
        ERROR_OK)
        return err->code;
    for (size_t i = 0; i < *count; i++) {
        const model_rule *r = &f->buf[i].rule;
        memset(&rows[i], 0, sizeof rows[i]);
        snprintf(rows[i].key, sizeof rows[i].key, "%s", r->id);
        snprintf(rows[i].id, sizeof rows[i].id, "%s", r->id);
        snprintf(rows[i].cells[0], sizeof rows[i].cells[0], "%s", r->id);
        snprintf(rows[i].cells[2], sizeof rows[i].cells[2], "%s", r->cidr);
        rows[i].style_col = -1;
    }
    return ERROR_OK;
}

static error_code count_rows(void *ctx, const store_query *q, size_t *out, error_info *err)
{
    fixture *f = ctx;
    if (f->fail)
        return error_set(err, ERROR_IO, "disk on fire");
    return store_count(f->db.st, MODEL_KIND_RULE, q, out, err);
}

/* The generic store calls over a rule or a credential. */
static error_code insert_rule(store *st, const model_rule *r, error_info *err)
{
    model_object o = {.kind = MODEL_KIND_RULE, .rule = *r};
    return store_insert(st, &o, err);
}

static error_code insert_cred(store *st, model_cred *c, error_info *err)
{
    model_object o = {.kind = MODEL_KIND_CRED, .cred = *c}; /* the caller still owns c */
    return store_insert(st, &o, err);
}

static error_code get_rule(store *st, const char *id, model_rule *r, error_info *err)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    error_code rc = store_get(st, MODEL_KIND_RULE, id, &o, err);
    *r = o.rule;
    return rc;
}

/* Pages of rules / credentials as arrays of their own type (model_rule or model_cred,
 * by `kind`). A credential's heap goes with it: the caller clears rows[i]. */
static error_code kind_page(store *st, model_kind kind, const store_query *q, const char *cursor,
                            store_dir dir, size_t limit, void *rows, size_t *n, error_info *err)
{
    model_object *o = calloc(limit ? limit : 1, sizeof *o);
    assert_non_null(o);
    error_code rc = store_page(st, kind, q, cursor, dir, limit, o, n, err);
    for (size_t i = 0; i < *n; i++) {
        if (kind == MODEL_KIND_RULE)
            ((model_rule *)rows)[i] = o[i].rule;
        else
            ((model_cred *)rows)[i] = o[i].cred;
    }
    free(o);
    return rc;
}

#define rule_page(st, ...) kind_page(st, MODEL_KIND_RULE, __VA_ARGS__)
#define cred_page(st, ...) kind_page(st, MODEL_KIND_CRED, __VA_ARGS__)

static void rule_of(int i, model_rule *r)
{
    memset(r, 0, sizeof *r);
    /* Cidr order differs from id order ("10.0.1.x" < "10.0.10.x" < "10.0.2.x"). */
    snprintf(r->cidr, sizeof r->cidr, "10.0.%d.%d/32", (i * 7) % 13, i);
    snprintf(r->policy_id, sizeof r->policy_id, "ipp_p%d", (i * 5) % 4);
    r->action = i % 3 ? MODEL_ACTION_ALLOW : MODEL_ACTION_DENY;
    r->state = i % 4 == 0 ? MODEL_STATE_SYNCED : i % 4 == 1 ? MODEL_STATE_FAILED
                                                            : MODEL_STATE_NEW;
    snprintf(r->description, sizeof r->description, "rule %d", i);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    ts_store_dir_open(&f->db, "/tmp/rampart-uitable.XXXXXX", "cache.db");
    error_info err;
    assert_int_equal(store_begin(f->db.st, &err), ERROR_OK);
    for (int i = 0; i < NROWS; i++) {
        model_rule r;
        rule_of(i, &r);
        assert_int_equal(insert_rule(f->db.st, &r, &err), ERROR_OK);
    }
    assert_int_equal(store_commit(f->db.st, &err), ERROR_OK);
    f->src = (ui_table_source){cols, 5, f, page, count_rows, NULL};
    assert_int_equal(ui_table_init(&f->t, &f->src, &err), ERROR_OK);
    assert_int_equal(ui_table_set_height(&f->t, HEIGHT, &err), ERROR_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ui_table_free(&f->t);
    assert_int_equal(ts_store_dir_close(&f->db), 0);
    free(f);
    return 0;
}

static void assert_position(ui_table *t, const char *rows, const char *pg)
{
    char r[96], p[64];
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    ui_table_position(t, r, sizeof r, p, sizeof p);
    assert_string_equal(r, rows);
    assert_string_equal(p, pg);
}

static void test_paging(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    for (int i = 0; i < 3; i++)
        assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_position(t, "rows 31-40 of 95", "page 4/10");
    assert_int_equal(ui_table_page(t, -1), ERROR_OK);
    assert_position(t, "rows 21-30 of 95", "page 3/10");
    assert_int_equal(ui_table_last(t), ERROR_OK);
    assert_position(t, "rows 86-95 of 95", "page 10/10");
    assert_int_equal(t->cursor, HEIGHT - 1);
    assert_int_equal(ui_table_first(t), ERROR_OK);
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    assert_int_equal(t->cursor, 0);
    /* PgDn near the end fills the screen with the last rows. */
    for (int i = 0; i < 9; i++)
        assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_position(t, "rows 86-95 of 95", "page 10/10");
    assert_int_equal(ui_table_page(t, 1), ERROR_OK); /* at the end: cursor to the last */
    assert_int_equal(t->cursor, HEIGHT - 1);
    for (int i = 0; i < 12; i++)
        assert_int_equal(ui_table_page(t, -1), ERROR_OK);
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    assert_int_equal(t->cursor, 0);
}

/* A page key that can move the view only part way moves the cursor the rest, so
 * PgDn always goes a page further down the rows (as Ctrl-D does half a page). */
static void test_partial_page(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    for (int i = 0; i < 8; i++)
        assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_position(t, "rows 81-90 of 95", "page 9/10");
    assert_int_equal(t->cursor, 0);
    assert_int_equal(ui_table_page(t, 1), ERROR_OK); /* the view moves 5, the cursor 5 */
    assert_position(t, "rows 86-95 of 95", "page 10/10");
    assert_int_equal(t->cursor, 5);
    assert_int_equal(ui_table_first(t), ERROR_OK);
    assert_int_equal(ui_table_move(t, 14), ERROR_OK);
    assert_position(t, "rows 6-15 of 95", "page 1/10");
    assert_int_equal(t->cursor, HEIGHT - 1);
    assert_int_equal(ui_table_page(t, -1), ERROR_OK); /* the view moves 5, the cursor 5 */
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    assert_int_equal(t->cursor, HEIGHT - 1 - 5);
    assert_int_equal(ui_table_half(t, -1), ERROR_OK); /* nothing above: the cursor goes */
    assert_int_equal(t->cursor, 0);
}

static void test_scrolling(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    assert_int_equal(ui_table_move(t, 15), ERROR_OK);
    assert_position(t, "rows 7-16 of 95", "page 1/10");
    assert_int_equal(t->cursor, HEIGHT - 1);
    assert_int_equal(ui_table_move(t, -12), ERROR_OK);
    assert_position(t, "rows 4-13 of 95", "page 1/10");
    assert_int_equal(t->cursor, 0);
    assert_int_equal(ui_table_half(t, 1), ERROR_OK);
    assert_position(t, "rows 9-18 of 95", "page 1/10");
    assert_int_equal(ui_table_move(t, -100), ERROR_OK);
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    assert_int_equal(t->cursor, 0);
    assert_int_equal(ui_table_move(t, 1000), ERROR_OK);
    assert_position(t, "rows 86-95 of 95", "page 10/10");
}

static void test_marks(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    error_info err;
    size_t added;
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    assert_int_equal(ui_table_mark_range(t, 100, &added, &err), ERROR_INVALID);
    assert_int_equal(ui_table_move(t, 2), ERROR_OK);
    assert_int_equal(ui_table_mark_toggle(t, &err), ERROR_OK);
    const char *first = ui_table_current(t)->key;
    assert_true(ui_table_is_marked(t, first));
    assert_int_equal(t->nmarks, 1);
    /* Two pages further down: the range walks the rows in between. */
    assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_int_equal(ui_table_mark_range(t, 100, &added, &err), ERROR_OK);
    assert_int_equal(added, 20);
    assert_int_equal(t->nmarks, 21);
    /* Toggling unmarks; marks survive a filter and come back with it cleared. */
    assert_int_equal(ui_table_mark_toggle(t, &err), ERROR_OK);
    assert_int_equal(t->nmarks, 20);
    ui_table_set_filter(t, "no such thing");
    assert_position(t, "no rows", "page 0/0");
    assert_int_equal(t->nmarks, 20);
    ui_table_set_filter(t, "");
    assert_position(t, "rows 1-10 of 95", "page 1/10");
    assert_true(ui_table_is_marked(t, t->rows[2].key));
    assert_false(ui_table_is_marked(t, t->rows[1].key));
    /* A range the limit cannot reach marks nothing. */
    assert_int_equal(ui_table_last(t), ERROR_OK);
    assert_int_equal(ui_table_mark_range(t, 10, &added, &err), ERROR_INVALID);
    assert_int_equal(t->nmarks, 20);
    ui_table_unmark_all(t);
    assert_int_equal(t->nmarks, 0);
}

static void test_filter_and_policy(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    ui_table_set_filter(t, "rule 1");  /* rule 1, rule 10..19 */
    assert_position(t, "rows 1-10 of 11", "page 1/2");
    ui_table_set_filter(t, "10.0.0.");
    size_t expect = 0;
    for (int i = 0; i < NROWS; i++)
        expect += (i * 7) % 13 == 0;
    char rows[64];
    snprintf(rows, sizeof rows, "rows 1-%zu of %zu", expect, expect);
    assert_position(t, rows, "page 1/1");
    ui_table_set_filter(t, "");
    ui_table_set_scope(t, &(store_query){.policy_id = "ipp_p1"});
    size_t per = 0;
    for (int i = 0; i < NROWS; i++)
        per += (i * 5) % 4 == 1;
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    assert_int_equal(t->total, per);
    for (size_t i = 0; i < t->nrows; i++) {
        model_rule r;
        error_info err;
        assert_int_equal(get_rule(f->db.st, t->rows[i].id, &r, &err), ERROR_OK);
        assert_string_equal(r.policy_id, "ipp_p1");
    }
}

/* The expected order of `sort`: every row, by (key, id) as bytes. */
static const char *sort_key(const model_rule *r, int sort)
{
    switch (sort) {
    case 1: return r->policy_id;
    case 2: return r->cidr;
    case 3: return model_action_name(r->action);
    case 4: return model_state_name(r->state);
    default: return r->id;
    }
}

/* The cidr order is address order (cidrset_compare's), not text. */
static int cmp_cidr(const char *a, const char *b)
{
    validate_prefix pa, pb;
    assert_int_equal(validate_cidr(a, &pa, NULL, 0, NULL), ERROR_OK);
    assert_int_equal(validate_cidr(b, &pb, NULL, 0, NULL), ERROR_OK);
    return cidrset_compare(&pa, &pb);
}

static int g_sort;
static int cmp_rules(const void *a, const void *b)
{
    const model_rule *x = a, *y = b;
    int c = g_sort == 2 ? cmp_cidr(x->cidr, y->cidr)
                        : strcmp(sort_key(x, g_sort), sort_key(y, g_sort));
    return c ? c : strcmp(x->id, y->id);
}

static void expected_order(fixture *f, int sort, bool desc, char (*ids)[MODEL_ID_MAX + 1])
{
    static model_rule all[NROWS];
    size_t n = 0;
    error_info err;
    store_query q = {.sort = STORE_SORT_ID};
    assert_int_equal(rule_page(f->db.st, &q, NULL, STORE_FORWARD, NROWS, all, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, NROWS);
    g_sort = sort;
    qsort(all, n, sizeof all[0], cmp_rules);
    for (size_t i = 0; i < n; i++)
        memcpy(ids[desc ? n - 1 - i : i], all[i].id, sizeof all[i].id);
}

static void test_every_sort_both_ways(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    static char want[NROWS][MODEL_ID_MAX + 1];
    for (int sort = 0; sort < 5; sort++) {
        for (int desc = 0; desc < 2; desc++) {
            expected_order(f, sort, desc, want);
            ui_table_set_sort(t, sort, desc);
            /* Down: one row at a time, so every row passes the cursor. */
            assert_int_equal(ui_table_first(t), ERROR_OK);
            for (int i = 0; i < NROWS; i++) {
                assert_string_equal(ui_table_current(t)->id, want[i]);
                assert_int_equal(ui_table_move(t, 1), ERROR_OK);
            }
            assert_position(t, "rows 86-95 of 95", "page 10/10");
            /* Up again by pages from the end. */
            assert_int_equal(ui_table_last(t), ERROR_OK);
            for (int p = 0; p < 10; p++) {
                for (size_t r = 0; r < t->nrows; r++)
                    assert_string_equal(t->rows[r].id, want[t->top + r]);
                assert_int_equal(ui_table_page(t, -1), ERROR_OK);
            }
            assert_position(t, "rows 1-10 of 95", "page 1/10");
        }
    }
}

static void test_sort_store_errors(void **state)
{
    fixture *f = *state;
    model_rule r[2];
    model_cred c[2];
    size_t n;
    error_info err;
    store_query bad = {.sort = STORE_SORT_DESCRIPTION}; /* a credential order */
    assert_int_equal(rule_page(f->db.st, &bad, NULL, STORE_FORWARD, 2, r, &n, &err),
                     ERROR_INVALID);
    store_query bad2 = {.sort = STORE_SORT_CIDR}; /* a rule order */
    assert_int_equal(cred_page(f->db.st, &bad2, NULL, STORE_FORWARD, 2, c, &n, &err),
                     ERROR_INVALID);
    /* In any order but id, a cursor that is not a row gives an empty page. */
    store_query q = {.sort = STORE_SORT_CIDR};
    assert_int_equal(rule_page(f->db.st, &q, "ipr_nosuchrow", STORE_FORWARD, 2, r, &n,
                                     &err), ERROR_OK);
    assert_int_equal(n, 0);
}

/* Credentials by description (shared descriptions: id decides) and by state,
 * page by page both ways, straight from the store. */
static int cmp_creds(const void *a, const void *b)
{
    const model_cred *x = a, *y = b;
    int c = g_sort == 0 ? strcmp(x->description, y->description)
                        : strcmp(model_state_name(x->state), model_state_name(y->state));
    return c ? c : strcmp(x->id, y->id);
}

static void test_cred_sorts(void **state)
{
    fixture *f = *state;
    enum { N = 23, PAGE = 4 };
    error_info err;
    for (int i = 0; i < N; i++) {
        model_cred c = {0};
        snprintf(c.description, sizeof c.description, "agent %d", i % 5);
        c.state = i % 3 ? MODEL_STATE_NEW : MODEL_STATE_SYNCED;
        assert_int_equal(insert_cred(f->db.st, &c, &err), ERROR_OK);
        model_cred_clear(&c);
    }
    static model_cred all[N];
    size_t n = 0;
    store_query q = {.sort = STORE_SORT_ID};
    assert_int_equal(cred_page(f->db.st, &q, NULL, STORE_FORWARD, N, all, &n, &err),
                     ERROR_OK);
    assert_int_equal(n, N);
    const store_sort orders[] = {STORE_SORT_DESCRIPTION, STORE_SORT_STATE};
    for (int o = 0; o < 2; o++) {
        g_sort = o;
        qsort(all, N, sizeof all[0], cmp_creds);
        q.sort = orders[o];
        /* Forward from the start, then backward from the end. */
        char cursor[MODEL_ID_MAX + 1] = "";
        size_t seen = 0;
        model_cred page_rows[PAGE];
        for (;;) {
            size_t got = 0;
            assert_int_equal(cred_page(f->db.st, &q, cursor, STORE_FORWARD, PAGE, page_rows,
                                             &got, &err), ERROR_OK);
            for (size_t i = 0; i < got; i++) {
                assert_string_equal(page_rows[i].id, all[seen + i].id);
                if (i == got - 1)
                    memcpy(cursor, page_rows[i].id, sizeof cursor);
                model_cred_clear(&page_rows[i]);
            }
            seen += got;
            if (got < PAGE)
                break;
        }
        assert_int_equal(seen, N);
        cursor[0] = '\0';
        size_t left = N;
        while (left > 0) {
            size_t got = 0;
            assert_int_equal(cred_page(f->db.st, &q, cursor, STORE_BACKWARD, PAGE,
                                             page_rows, &got, &err), ERROR_OK);
            assert_true(got >= 1 && got <= left);
            for (size_t i = 0; i < got; i++)
                assert_string_equal(page_rows[i].id, all[left - got + i].id);
            memcpy(cursor, page_rows[0].id, sizeof cursor);
            for (size_t i = 0; i < got; i++)
                model_cred_clear(&page_rows[i]);
            left -= got;
        }
    }
    for (size_t i = 0; i < N; i++)
        model_cred_clear(&all[i]);
}

static void test_reload_keeps_first_row(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    error_info err;
    assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    assert_int_equal(ui_table_page(t, 1), ERROR_OK);
    char first[UI_TABLE_KEY_MAX];
    snprintf(first, sizeof first, "%s", t->rows[0].key);
    /* The first row on screen goes away. */
    assert_int_equal(store_remove(f->db.st, MODEL_KIND_RULE, t->rows[0].key, &err), ERROR_OK);
    ui_table_reload(t);
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    assert_int_equal(t->total, NROWS - 1);
    /* The first row was the one removed: the next one takes its place. */
    assert_string_not_equal(t->rows[0].key, first);
    char second[UI_TABLE_KEY_MAX];
    snprintf(second, sizeof second, "%s", t->rows[0].key);
    ui_table_reload(t);
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    assert_string_equal(t->rows[0].key, second);
    /* Deleting everything after the screen keeps it full, ending at the last row. */
    assert_int_equal(ui_table_last(t), ERROR_OK);
    char last[UI_TABLE_KEY_MAX];
    snprintf(last, sizeof last, "%s", t->rows[t->nrows - 1].key);
    assert_int_equal(store_remove(f->db.st, MODEL_KIND_RULE, last, &err), ERROR_OK);
    ui_table_reload(t);
    assert_position(t, "rows 84-93 of 93", "page 10/10");
}

static void test_source_errors(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    f->fail = true;
    ui_table_reload(t);
    assert_int_equal(ui_table_refresh(t, false), ERROR_IO);
    assert_string_equal(t->error.msg, "disk on fire");
    assert_null(ui_table_current(t));
    assert_int_equal(ui_table_page(t, 1), ERROR_OK); /* nothing to page: no crash */
    f->fail = false;
    ui_table_reload(t);
    assert_int_equal(ui_table_refresh(t, false), ERROR_OK);
    assert_int_equal(t->error.code, ERROR_OK);
    assert_non_null(ui_table_current(t));
}

static void test_draw(void **state)
{
    fixture *f = *state;
    ui_table *t = &f->t;
    ui_canvas c;
    error_info err;
    assert_int_equal(ui_canvas_init(&c, 40, HEIGHT + 1, false, &err), ERROR_OK);
    assert_int_equal(ui_table_mark_toggle(t, &err), ERROR_OK);
    ui_table_draw(t, &c, (ui_rect){0, 0, 40, HEIGHT + 1});
    char line[256];
    ui_canvas_row_text(&c, 0, line, sizeof line);
    assert_non_null(strstr(line, "ID"));
    ui_canvas_row_text(&c, 1, line, sizeof line);
    assert_memory_equal(line, "\xe2\x96\xb6*local_", 10); /* cursor, mark */
    assert_non_null(strstr(line, "\xe2\x80\xa6"));       /* the id cut in the middle */
    ui_canvas_row_text(&c, 2, line, sizeof line);
    assert_memory_equal(line, "  local_", 8);
    ui_canvas_free(&c);
}

/* A record view's columns at a width: which are shown and how wide. */
static void kind_layout(model_kind kind, ui_table_row *rows, size_t n, int width,
                        bool hide_id, int widths[UI_TABLE_COLS_MAX])
{
    const ui_record_kind *k = ui_record_kind_get(kind);
    ui_table_source src = {.cols = k->cols, .ncols = k->ncols};
    ui_table t = {.src = &src, .rows = rows, .nrows = n, .hide_optional = hide_id};
    ui_canvas c;
    error_info err;
    assert_int_equal(ui_canvas_init(&c, width, 4, false, &err), ERROR_OK);
    ui_table_layout(&t, &c, width, widths);
    ui_canvas_free(&c);
}

#define rule_layout(...) kind_layout(MODEL_KIND_RULE, __VA_ARGS__)

/* Columns: ID CIDR ACTION STATE POLICY DESCRIPTION (record_kinds.c). A full IPv6
 * /128 (43 columns) is whole at 80 and at 60 columns; the id shortens, then goes;
 * the description takes what is left. */
static void test_layout_adapts(void **state)
{
    (void)state;
    enum { ID, CIDR, ACTION, STATE, POLICY, DESC };
    ui_table_row rows[2];
    memset(rows, 0, sizeof rows);
    strcpy(rows[0].cells[ID], "ipr_2Zz1lqOxDdQyVpYcAAAAAAAAAAA");
    strcpy(rows[0].cells[CIDR], "2001:db81:aaaa:bbbb:cccc:dddd:eeee:ffff/128");
    strcpy(rows[0].cells[ACTION], "deny");
    strcpy(rows[0].cells[STATE], "synced");
    strcpy(rows[0].cells[POLICY], "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA");
    strcpy(rows[0].cells[DESC], "a host");
    rows[1] = rows[0];
    strcpy(rows[1].cells[CIDR], "10.0.0.0/8");
    int w[UI_TABLE_COLS_MAX];
    rule_layout(rows, 2, 80, false, w);
    assert_int_equal(w[CIDR], 43);
    assert_int_equal(w[ACTION], 6);
    assert_true(w[STATE] >= 6);
    assert_true(w[ID] >= 10 && w[ID] < 31); /* shortened in the middle */
    assert_true(w[DESC] >= 8);
    rule_layout(rows, 2, 80, true, w);
    assert_int_equal(w[ID], 0);
    assert_int_equal(w[CIDR], 43);
    assert_true(w[DESC] >= 8 + 11);
    rule_layout(rows, 2, 60, false, w);
    assert_int_equal(w[CIDR], 43);
    assert_int_equal(w[ACTION], 6);
    assert_true(w[STATE] >= 6);
    assert_int_equal(w[ID], 0);
    /* IPv4 only: room for the whole id and the policy at 120 columns. */
    rule_layout(rows + 1, 1, 120, false, w);
    assert_int_equal(w[CIDR], 10); /* its widest cell, below its minimum of 18 */
    assert_int_equal(w[ID], 31);
    assert_int_equal(w[POLICY], 31);
    int used = 2;
    for (int i = 0; i < 6; i++)
        used += w[i] + (i ? 1 : 0);
    assert_int_equal(used, 120); /* the description took the rest */
}

/* `o` goes through the columns that sort in the order they are on screen (the
 * kind's column table): rules id, cidr, action, state, policy; credentials id,
 * description, state; the id left out while it is hidden. */
static void test_sort_follows_columns(void **state)
{
    (void)state;
    static const char *const want[MODEL_KIND_COUNT][6] = {
        [MODEL_KIND_RULE] = {"cidr", "action", "state", "policy", "id", NULL},
        [MODEL_KIND_CRED] = {"description", "state", "id", NULL},
    };
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const ui_record_kind *rk = ui_record_kind_get((model_kind)k);
        ui_table_source src = {.cols = rk->cols, .ncols = rk->ncols};
        ui_table t = {.src = &src};
        ui_table_set_sort(&t, -1, false); /* no such column: the first that sorts */
        assert_string_equal(ui_table_sort_name(&t), "id");
        int n = 0;
        for (; want[k][n]; n++) {
            t.sort = ui_table_sort_next(&t);
            assert_string_equal(ui_table_sort_name(&t), want[k][n]);
        }
        assert_int_equal(ui_table_sort_count(&t), n);
        assert_int_equal(ui_table_sort_find(&t, "nope"), -1);
    }
    const ui_record_kind *rk = ui_record_kind_get(MODEL_KIND_RULE);
    ui_table_source src = {.cols = rk->cols, .ncols = rk->ncols};
    ui_table t = {.src = &src, .hide_optional = true};
    t.sort = ui_table_sort_find(&t, "policy");
    t.sort = ui_table_sort_next(&t);
    assert_string_equal(ui_table_sort_name(&t), "cidr"); /* not the hidden id */
}

/* Columns: ID DESCRIPTION STATE ACL OWNER CREATED (record_kinds.c). At 80
 * columns the ACL gets the room (not the owner, the same on most rows), the id is
 * cut to 14, the creation time is a date; at 60 the ACL and the id still show. */
static void test_cred_layout(void **state)
{
    (void)state;
    enum { ID, DESC, STATE, ACL, OWNER, CREATED };
    ui_table_row rows[1];
    memset(rows, 0, sizeof rows);
    strcpy(rows[0].cells[ID], "cr_00VcMQktbsPfJGrpbf0E4n6PahH");
    strcpy(rows[0].cells[DESC], "web agent");
    strcpy(rows[0].cells[STATE], "synced");
    strcpy(rows[0].cells[ACL], "bind:a.example.com, bind:*.b.example.org");
    strcpy(rows[0].cells[OWNER], "usr_2RaSandboxServer00000000");
    strcpy(rows[0].cells[CREATED], "2026-11-29");
    int w[UI_TABLE_COLS_MAX];
    kind_layout(MODEL_KIND_CRED, rows, 1, 80, false, w);
    assert_true(w[ACL] >= 30);
    assert_int_equal(w[ID], 14);
    assert_int_equal(w[CREATED], 10);
    assert_int_equal(w[OWNER], 0);
    kind_layout(MODEL_KIND_CRED, rows, 1, 60, false, w);
    assert_true(w[ACL] >= 22);
    assert_int_equal(w[ID], 14);
    assert_int_equal(w[CREATED], 0);
    kind_layout(MODEL_KIND_CRED, rows, 1, 100, false, w);
    assert_true(w[OWNER] >= 14);
    assert_true(w[ACL] >= 36);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_paging),
        T(test_partial_page),
        T(test_scrolling),
        T(test_marks),
        T(test_filter_and_policy),
        T(test_every_sort_both_ways),
        T(test_sort_store_errors),
        T(test_cred_sorts),
        cmocka_unit_test(test_sort_follows_columns),
        cmocka_unit_test(test_cred_layout),
        T(test_reload_keeps_first_row),
        T(test_source_errors),
        T(test_draw),
        cmocka_unit_test(test_layout_adapts),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

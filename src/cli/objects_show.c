/*
 * How rows of any kind look on the command line: the list table, the detail view of
 * `get`, JSON. Fields are found by name in the kind's descriptor (rampart/kind.h);
 * which ones a kind shows is its own (cli_object_kind). See cli_object.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_object.h"
#include "rampart/codec.h"

enum {
    PAGE_ROWS = 256,     /* rows per keyset page of a walk */
    CELL_MAX = 256,      /* bytes of a cell built from a list (an ACL) */
    LAST_CELL_COLS = 60, /* the last column is not padded, but cut */
    TABLE_MAX = CLI_OBJECT_FIELDS_MAX + 2
};

/* ---- a field's text ---- */

/* The fields every row has, wherever its kind keeps them; NULL for another name. */
static const char *head_text(const model_object *obj, const char *name)
{
    bool cred = obj->kind == MODEL_KIND_CRED;
    if (strcmp(name, "id") == 0)
        return model_object_id(obj);
    if (strcmp(name, "state") == 0)
        return model_state_name(model_object_state(obj));
    if (strcmp(name, "error") == 0)
        return model_object_error(obj);
    if (strcmp(name, "created_at") == 0)
        return cred ? obj->cred.created_at : obj->rule.created_at;
    if (strcmp(name, "uri") == 0)
        return cred ? obj->cred.uri : obj->rule.uri;
    return NULL;
}

/* Where a kind field lives in the row (kind_field offsets are into the kind's
 * member of the union). */
static const void *field_at(const model_object *obj, const kind_field *f)
{
    const char *member = obj->kind == MODEL_KIND_CRED ? (const char *)&obj->cred
                                                      : (const char *)&obj->rule;
    return member + f->offset;
}

/* ACL rules joined by ", " into `out`, cut to fit. */
static void join_acl(const model_acl *acl, char *out, size_t size)
{
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < acl->count && used + 1 < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", acl->rules[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* A field as one line of text (an empty ACL: "-"); built into `buf` when it must
 * be. */
static const char *field_text(const model_object *obj, const char *name, char *buf,
                              size_t size)
{
    const char *head = head_text(obj, name);
    if (head)
        return head;
    const kind_field *f = kind_field_by_name(obj->kind, name);
    if (!f)
        return "";
    switch (f->type) {
    case KIND_FIELD_ACTION:
        return model_action_name(*(const model_action *)field_at(obj, f));
    case KIND_FIELD_ACL:
        join_acl(field_at(obj, f), buf, size);
        return buf[0] ? buf : "-";
    case KIND_FIELD_TEXT:
    default:
        return field_at(obj, f);
    }
}

/* ---- the detail view ---- */

/* An ACL, one rule a line ("(none: no restriction)" when empty). */
static void put_acl(cli_ctx *ctx, const char *label, const model_acl *acl)
{
    if (acl->count == 0)
        cli_put_field(ctx, label, "(none: no restriction)");
    for (size_t i = 0; i < acl->count; i++)
        cli_put_field(ctx, i == 0 ? label : "", acl->rules[i]);
}

static void put_detail_field(cli_ctx *ctx, const model_object *obj,
                             const cli_object_field *f)
{
    const kind_field *kf = kind_field_by_name(obj->kind, f->field);
    if (kf && kf->type == KIND_FIELD_ACL) {
        put_acl(ctx, f->label, field_at(obj, kf));
        return;
    }
    char buf[CELL_MAX];
    cli_put_field(ctx, f->label, field_text(obj, f->field, buf, sizeof buf));
}

/* id, state and error first, created_at and uri last, the kind's fields between. */
static void put_detail(cli_ctx *ctx, const model_object *obj)
{
    static const char *const head[] = {"id", "state", "error"};
    static const char *const tail[] = {"created_at", "uri"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_put_field(ctx, head[i], head_text(obj, head[i]));
    const cli_object_field *details = cli_object_kind_of(obj->kind)->details;
    for (size_t i = 0; i < CLI_OBJECT_FIELDS_MAX && details[i].label; i++)
        put_detail_field(ctx, obj, &details[i]);
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        cli_put_field(ctx, tail[i], head_text(obj, tail[i]));
}

int cli_object_put(cli_ctx *ctx, const model_object *obj, bool json)
{
    if (json)
        return cli_put_json(ctx, kind_get(obj->kind)->encode(obj, CODEC_WITH_STATE |
                                                                      CODEC_PRETTY));
    put_detail(ctx, obj);
    return CLI_EXIT_OK;
}

/* ---- the list table ---- */

typedef struct table {
    const cli_object_field *cols[TABLE_MAX];
    int width[TABLE_MAX];
    size_t count;
} table;

/* ID and STATE, then the kind's columns. */
static void table_init(table *t, model_kind kind)
{
    static const cli_object_field head[] = {{"ID", "id", 0}, {"STATE", "state", 0}};
    const cli_object_field *own = cli_object_kind_of(kind)->columns;
    t->count = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        t->cols[t->count++] = &head[i];
    for (size_t i = 0; i < CLI_OBJECT_FIELDS_MAX && own[i].label; i++)
        t->cols[t->count++] = &own[i];
}

/* Widths from the first page: later rows may push a cell, never re-flow the table.
 * The last column is not padded, so not measured. */
static void table_measure(table *t, const model_object *rows, size_t n)
{
    char buf[CELL_MAX];
    for (size_t c = 0; c + 1 < t->count; c++) {
        size_t w = strlen(t->cols[c]->label);
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(field_text(&rows[i], t->cols[c]->field, buf, sizeof buf));
            w = len > w ? len : w;
        }
        if (t->cols[c]->max > 0 && w > (size_t)t->cols[c]->max)
            w = (size_t)t->cols[c]->max;
        t->width[c] = (int)w;
    }
}

static void table_header(cli_ctx *ctx, const table *t)
{
    for (size_t c = 0; c + 1 < t->count; c++)
        fprintf(ctx->out, "%-*s  ", t->width[c], t->cols[c]->label);
    fprintf(ctx->out, "%s\n", t->cols[t->count - 1]->label);
}

/* Cells through cli_put_cell: a hostile description cannot drive the terminal. */
static void table_row(cli_ctx *ctx, const table *t, const model_object *obj)
{
    char buf[CELL_MAX];
    for (size_t c = 0; c + 1 < t->count; c++) {
        int w = t->width[c];
        cli_put_cell(ctx->out, field_text(obj, t->cols[c]->field, buf, sizeof buf), w,
                     t->cols[c]->max > 0 ? w : 0);
        fputs("  ", ctx->out);
    }
    cli_put_cell(ctx->out, field_text(obj, t->cols[t->count - 1]->field, buf, sizeof buf), 0,
                 LAST_CELL_COLS);
    fputc('\n', ctx->out);
}

/* ---- the walk ---- */

typedef struct walk {
    cli_ctx *ctx;
    bool json;
    unsigned codec_flags;
    table t;
    size_t seen;
} walk;

static error_code emit_page(void *wp, model_object *rows, size_t count, error_info *err)
{
    (void)err;
    walk *w = wp;
    if (!w->json && w->seen == 0) {
        table_measure(&w->t, rows, count);
        table_header(w->ctx, &w->t);
    }
    for (size_t i = 0; i < count; i++, w->seen++) {
        if (!w->json) {
            table_row(w->ctx, &w->t, &rows[i]);
            continue;
        }
        char *text = kind_get(rows[i].kind)->encode(&rows[i], w->codec_flags);
        cli_json_array_sep(w->ctx, w->seen);
        fputs(text ? text : "null", w->ctx->out);
        free(text);
    }
    return ERROR_OK;
}

int cli_object_walk(cli_ctx *ctx, model_kind kind, const store_query *q, bool json,
                    unsigned codec_flags)
{
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    walk w = {.ctx = ctx, .json = json, .codec_flags = codec_flags};
    table_init(&w.t, kind);
    error_info e = {0};
    if (store_walk(st, kind, q, PAGE_ROWS, emit_page, &w, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (json)
        cli_json_array_end(ctx, w.seen);
    else if (w.seen == 0)
        fprintf(ctx->err, "no %s%s\n", kind_get(kind)->plural,
                q->filter || q->policy_id ? " match" : " in the cache");
    return CLI_EXIT_OK;
}

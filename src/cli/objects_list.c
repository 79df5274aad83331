/*
 * Lists of any kind and the output forms for scripts (-o table, wide, json, yaml,
 * name, csv; --no-headers, --sort, --limit), one piece of code over the kind: which
 * fields a kind shows is its cli_object_kind's, the orders are the store's
 * (store_sort_name, the console's), and the rows come from the store's keyset
 * pages in that order. See cli_object.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_object.h"
#include "rampart/codec.h"
#include "rampart/termsafe.h"

enum {
    PAGE_ROWS = 256,     /* rows per keyset page of a walk */
    CELL_MAX = 256,      /* bytes of a table cell built from a list (an ACL) */
    LAST_CELL_COLS = 60, /* the last column is not padded, but cut */
    SORT_NAME_MAX = 32,
    TABLE_MAX = 2 + 2 * CLI_OBJECT_FIELDS_MAX
};

/* ---- the options ---- */

/* The orders of `kind`, joined by ", " into `buf`: "id, policy, cidr, ...". */
static const char *sort_names(model_kind kind, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < STORE_SORT_COUNT && len < size; s++) {
        if (store_sort_offered(kind, (store_sort)s))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                                    store_sort_name((store_sort)s));
    }
    return buf;
}

void cli_object_sort_choices(FILE *out, const void *kind)
{
    const model_kind *k = kind;
    for (int s = 0; s < STORE_SORT_COUNT; s++) {
        if (store_sort_offered(*k, (store_sort)s))
            fprintf(out, "%s\n%s:desc\n", store_sort_name((store_sort)s),
                    store_sort_name((store_sort)s));
    }
}

static int check_sort(cli_ctx *ctx, const cli_object_call *call, const char *text,
                      cli_object_out *out)
{
    char field[SORT_NAME_MAX], names[128];
    bool desc = false;
    if (cli_output_parse_sort(text, field, sizeof field, &desc)) {
        for (int s = 0; s < STORE_SORT_COUNT; s++) {
            if (store_sort_offered(call->kind, (store_sort)s) &&
                strcmp(field, store_sort_name((store_sort)s)) == 0) {
                out->sort = (store_sort)s;
                out->descending = desc;
                return CLI_GO_ON;
            }
        }
    }
    return cli_usage_error(ctx, call->path,
                           "--sort: '%s' is not an order of %s: one of %s (FIELD:desc "
                           "reverses it)",
                           text, kind_get(call->kind)->plural,
                           sort_names(call->kind, names, sizeof names));
}

int cli_object_out_check(cli_ctx *ctx, const cli_object_call *call,
                         const cli_object_out_args *a, cli_object_out *out)
{
    *out = (cli_object_out){.format = CLI_OUTPUT_DEFAULT, .no_headers = a->no_headers,
                            .sort = STORE_SORT_ID, .codec_flags = CODEC_WITH_STATE};
    if (!cli_output_choose(ctx, call->path, a->output, a->json, false, &out->format))
        return CLI_EXIT_USAGE;
    if (a->limit && !cli_output_parse_limit(a->limit, &out->limit))
        return cli_usage_error(ctx, call->path, "--limit: '%s' is not a number of rows: "
                               "give a whole number above 0", a->limit);
    return a->sort ? check_sort(ctx, call, a->sort, out) : CLI_GO_ON;
}

/* ---- the table: ID, STATE, the kind's columns (and with wide its other fields) ---- */

typedef struct table {
    cli_object_field cols[TABLE_MAX];
    int width[TABLE_MAX];
    size_t count;
} table;

static void table_add(table *t, const cli_object_field *fields)
{
    for (size_t i = 0; i < CLI_OBJECT_FIELDS_MAX && fields[i].label && t->count < TABLE_MAX; i++)
        t->cols[t->count++] = fields[i];
}

static void table_init(table *t, model_kind kind, bool wide)
{
    static const cli_object_field head[] = {{"ID", "id", 0}, {"STATE", "state", 0}, {NULL, NULL, 0}};
    const cli_object_kind *k = cli_object_kind_of(kind);
    t->count = 0;
    table_add(t, head);
    table_add(t, k->columns);
    if (!wide)
        return;
    /* The narrow table's last column, cut there, is cut the same in the middle. */
    if (t->cols[t->count - 1].max == 0)
        t->cols[t->count - 1].max = LAST_CELL_COLS;
    table_add(t, k->wide);
}

/* Widths from the first page: later rows may push a cell, never re-flow the table.
 * The last column is not padded, so not measured. */
static void table_measure(table *t, const model_object *rows, size_t n, bool headers)
{
    char buf[CELL_MAX];
    for (size_t c = 0; c + 1 < t->count; c++) {
        size_t w = headers ? strlen(t->cols[c].label) : 0;
        for (size_t i = 0; i < n; i++) {
            const char *text = cli_object_text(&rows[i], t->cols[c].field, buf, sizeof buf);
            size_t len = termsafe_width(text, strlen(text)); /* columns, escapes included */
            w = len > w ? len : w;
        }
        if (t->cols[c].max > 0 && w > (size_t)t->cols[c].max)
            w = (size_t)t->cols[c].max;
        t->width[c] = (int)w;
    }
}

static void table_header(FILE *out, const table *t)
{
    for (size_t c = 0; c + 1 < t->count; c++)
        fprintf(out, "%-*s  ", t->width[c], t->cols[c].label);
    fprintf(out, "%s\n", t->cols[t->count - 1].label);
}

/* Cells through cli_put_cell (termsafe): a hostile description cannot drive the
 * terminal. */
static void table_row(FILE *out, const table *t, const model_object *obj)
{
    char buf[CELL_MAX];
    for (size_t c = 0; c + 1 < t->count; c++) {
        int w = t->width[c];
        cli_put_cell(out, cli_object_text(obj, t->cols[c].field, buf, sizeof buf), w,
                     t->cols[c].max > 0 ? w : 0);
        fputs("  ", out);
    }
    cli_put_cell(out, cli_object_text(obj, t->cols[t->count - 1].field, buf, sizeof buf), 0,
                 LAST_CELL_COLS);
    fputc('\n', out);
}

/* ---- CSV: the wide table's fields, named as the API names them ---- */

/* A field's whole text: kind_value, an ACL's rules all joined by ", " ("" when
 * empty). Into `b` (reset first). */
static void csv_value(buf_t *b, const model_object *obj, const char *name)
{
    buf_reset(b);
    const kind_field *f = kind_field_by_name(obj->kind, name);
    if (!f || f->type != KIND_FIELD_ACL) {
        buf_puts(b, kind_value(obj, name, NULL, 0));
        return;
    }
    const model_acl *acl = kind_field_at(obj, f);
    for (size_t i = 0; i < acl->count; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_puts(b, acl->rules[i]);
    }
}

typedef struct csv {
    buf_t line, cell, safe;
    bool termsafe; /* standard output is a terminal: cells as termsafe shows them */
} csv;

static void csv_put(csv *c, const char *text, bool first)
{
    if (!first)
        buf_puts(&c->line, ",");
    if (c->termsafe) {
        buf_reset(&c->safe);
        termsafe_append(&c->safe, text, strlen(text));
        text = c->safe.failed ? "?" : c->safe.data ? c->safe.data : "";
    }
    cli_output_csv_field(&c->line, text);
}

/* RFC 4180 ends each record with CRLF. */
static void csv_end(csv *c, FILE *out)
{
    buf_puts(&c->line, "\r\n");
    if (!c->line.failed)
        fwrite(c->line.data, 1, c->line.len, out);
    buf_reset(&c->line);
}

static void csv_header(csv *c, FILE *out, const table *t)
{
    for (size_t i = 0; i < t->count; i++)
        csv_put(c, t->cols[i].field, i == 0);
    csv_end(c, out);
}

static void csv_row(csv *c, FILE *out, const table *t, const model_object *obj)
{
    for (size_t i = 0; i < t->count; i++) {
        csv_value(&c->cell, obj, t->cols[i].field);
        csv_put(c, c->cell.failed ? "?" : c->cell.data ? c->cell.data : "", i == 0);
    }
    csv_end(c, out);
}

static void csv_free(csv *c)
{
    buf_free(&c->line);
    buf_free(&c->cell);
    buf_free(&c->safe);
}

/* ---- writing rows in a format ---- */

typedef struct writer {
    cli_ctx *ctx;
    const cli_object_out *out;
    table t;
    csv csv;
    cli_yaml *yaml;
    size_t seen;
} writer;

static bool is_table(cli_output_format f)
{
    return f == CLI_OUTPUT_DEFAULT || f == CLI_OUTPUT_TABLE || f == CLI_OUTPUT_WIDE;
}

static error_code writer_open(writer *w, cli_ctx *ctx, model_kind kind,
                              const cli_object_out *out, error_info *err)
{
    *w = (writer){.ctx = ctx, .out = out};
    table_init(&w->t, kind, out->format == CLI_OUTPUT_WIDE || out->format == CLI_OUTPUT_CSV);
    w->csv.termsafe = isatty(fileno(ctx->out)) == 1;
    if (out->format == CLI_OUTPUT_YAML)
        return cli_yaml_open(ctx->out, true, &w->yaml, err);
    return ERROR_OK;
}

static error_code put_encoded(writer *w, const model_object *obj, error_info *err)
{
    char *text = codec_object_encode(obj, w->out->codec_flags);
    error_code rc = ERROR_OK;
    if (w->yaml) {
        rc = text ? cli_yaml_add(w->yaml, text, strlen(text), err)
                  : error_set(err, ERROR_NOMEM, "out of memory");
    } else {
        cli_json_array_sep(w->ctx, w->seen);
        fputs(text ? text : "null", w->ctx->out);
    }
    free(text);
    return rc;
}

static error_code put_row(writer *w, const model_object *obj, error_info *err)
{
    FILE *out = w->ctx->out;
    switch (w->out->format) {
    case CLI_OUTPUT_JSON:
    case CLI_OUTPUT_YAML:
        return put_encoded(w, obj, err);
    case CLI_OUTPUT_NAME:
        cli_put_cell(out, model_object_id(obj), 0, 0);
        fputc('\n', out);
        return ERROR_OK;
    case CLI_OUTPUT_CSV:
        csv_row(&w->csv, out, &w->t, obj);
        return ERROR_OK;
    default:
        table_row(out, &w->t, obj);
        return ERROR_OK;
    }
}

/* Rows (the first ones decide a table's widths and bring the header). */
static error_code writer_rows(writer *w, const model_object *rows, size_t count,
                              error_info *err)
{
    if (w->seen == 0 && is_table(w->out->format)) {
        table_measure(&w->t, rows, count, !w->out->no_headers);
        if (!w->out->no_headers)
            table_header(w->ctx->out, &w->t);
    }
    if (w->seen == 0 && w->out->format == CLI_OUTPUT_CSV && !w->out->no_headers)
        csv_header(&w->csv, w->ctx->out, &w->t);
    for (size_t i = 0; i < count; i++, w->seen++) {
        if (put_row(w, &rows[i], err))
            return err->code;
    }
    return ERROR_OK;
}

/* A page of the walk (store_visit). */
static error_code writer_page(void *w, model_object *rows, size_t count, error_info *err)
{
    return writer_rows(w, rows, count, err);
}

/* The end of a list: JSON's closing bracket, YAML's end, a CSV header with no
 * row under it. */
static error_code writer_finish(writer *w, error_info *err)
{
    if (w->out->format == CLI_OUTPUT_JSON)
        cli_json_array_end(w->ctx, w->seen);
    if (w->out->format == CLI_OUTPUT_CSV && w->seen == 0 && !w->out->no_headers)
        csv_header(&w->csv, w->ctx->out, &w->t);
    return w->yaml ? cli_yaml_finish(w->yaml, err) : ERROR_OK;
}

static void writer_close(writer *w)
{
    cli_yaml_free(w->yaml);
    csv_free(&w->csv);
}

/* ---- the walk ---- */

static void swap_rows(model_object *a, model_object *b)
{
    model_object t = *a;
    *a = *b;
    *b = t;
}

/*
 * Keyset pages in q->sort's order, forward, or backward from the end for a
 * descending list (each backward page comes ascending: it is turned around), at
 * most `limit` rows (0: all), each page handed to `fn`.
 */
static error_code walk(store *st, model_kind kind, const store_query *q, bool descending,
                       size_t limit, store_visit fn, void *ctx, error_info *err)
{
    model_object *rows = calloc(PAGE_ROWS, sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    char cursor[MODEL_ID_MAX + 1] = "";
    size_t left = limit ? limit : SIZE_MAX;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && left > 0) {
        size_t want = left < PAGE_ROWS ? left : PAGE_ROWS, n = 0;
        rc = store_page(st, kind, q, cursor, descending ? STORE_BACKWARD : STORE_FORWARD,
                        want, rows, &n, err);
        if (rc != ERROR_OK || n == 0)
            break;
        for (size_t i = 0; descending && i < n / 2; i++)
            swap_rows(&rows[i], &rows[n - 1 - i]);
        snprintf(cursor, sizeof cursor, "%s", model_object_id(&rows[n - 1]));
        rc = fn(ctx, rows, n, err);
        for (size_t i = 0; i < n; i++)
            model_object_clear(&rows[i]);
        left -= n;
        if (n < want)
            break;
    }
    free(rows);
    return rc;
}

int cli_object_list(cli_ctx *ctx, model_kind kind, const store_query *q,
                    const cli_object_out *out)
{
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    store_query sorted = *q;
    sorted.sort = out->sort;
    writer w;
    error_info e = {0};
    error_code rc = writer_open(&w, ctx, kind, out, &e);
    if (rc == ERROR_OK)
        rc = walk(st, kind, &sorted, out->descending, out->limit, writer_page, &w, &e);
    if (rc == ERROR_OK)
        rc = writer_finish(&w, &e);
    size_t seen = w.seen;
    writer_close(&w);
    if (rc != ERROR_OK)
        return cli_fail(ctx, &e);
    if (seen == 0 && is_table(out->format))
        fprintf(ctx->err, "no %s%s\n", kind_get(kind)->plural,
                q->filter || q->policy_id ? " match" : " in the cache");
    return CLI_EXIT_OK;
}

/* ---- one row ---- */

/* get -o yaml: the JSON `get --json` prints, caught and written as YAML. */
static int show_yaml(cli_ctx *ctx, store *st, const model_object *obj)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    FILE *out = ctx->out;
    ctx->out = mem;
    int rc = cli_object_show(ctx, st, obj, true, NULL);
    ctx->out = out;
    bool failed = fclose(mem) != 0;
    error_info e = {0};
    if (rc == CLI_EXIT_OK && failed)
        rc = cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    else if (rc == CLI_EXIT_OK && cli_yaml_document(ctx->out, text, len, &e) != ERROR_OK)
        rc = cli_fail(ctx, &e);
    free(text);
    return rc;
}

int cli_object_get_as(cli_ctx *ctx, store *st, const model_object *obj,
                      const cli_object_out *out)
{
    if (out->format == CLI_OUTPUT_DEFAULT || out->format == CLI_OUTPUT_JSON)
        return cli_object_show(ctx, st, obj, out->format == CLI_OUTPUT_JSON, NULL);
    if (out->format == CLI_OUTPUT_YAML)
        return show_yaml(ctx, st, obj);
    writer w;
    error_info e = {0};
    error_code rc = writer_open(&w, ctx, obj->kind, out, &e);
    if (rc == ERROR_OK)
        rc = writer_rows(&w, obj, 1, &e);
    writer_close(&w);
    return rc == ERROR_OK ? CLI_EXIT_OK : cli_fail(ctx, &e);
}

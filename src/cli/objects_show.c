/*
 * How one row of any kind looks on the command line: the detail view of `get`,
 * JSON (lists and the forms for scripts: objects_list.c). Fields are found by name in the kind's descriptor (rampart/kind.h);
 * which ones a kind shows is its own (cli_object_kind). See cli_object.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_object.h"
#include "rampart/buf.h"
#include "rampart/codec.h"
#include "rampart/termsafe.h"

enum {
    CELL_MAX = 256 /* bytes of a cell built from a list (an ACL) */
};

/* ---- a field's text ---- */

const char *cli_object_text(const model_object *obj, const char *name, char *buf,
                            size_t size)
{
    const char *v = kind_value(obj, name, buf, size);
    const kind_field *f = kind_field_by_name(obj->kind, name);
    return f && f->type == KIND_FIELD_ACL && !v[0] ? "-" : v;
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
        put_acl(ctx, f->label, kind_field_at(obj, kf));
        return;
    }
    char buf[CELL_MAX];
    cli_put_field(ctx, f->label, cli_object_text(obj, f->field, buf, sizeof buf));
}

/* id, state and error first, created_at and uri last, the kind's fields between. */
static void put_detail(cli_ctx *ctx, const model_object *obj)
{
    static const char *const head[] = {"id", "state", "error"};
    static const char *const tail[] = {"created_at", "uri"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_put_field(ctx, head[i], kind_value(obj, head[i], NULL, 0));
    const cli_object_field *details = cli_object_kind_of(obj->kind)->details;
    for (size_t i = 0; i < CLI_OBJECT_FIELDS_MAX && details[i].label; i++)
        put_detail_field(ctx, obj, &details[i]);
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        cli_put_field(ctx, tail[i], kind_value(obj, tail[i], NULL, 0));
}

int cli_object_put(cli_ctx *ctx, const model_object *obj, bool json)
{
    if (json)
        return cli_put_json(ctx, codec_object_encode(obj, CODEC_WITH_STATE |
                                                                      CODEC_PRETTY));
    put_detail(ctx, obj);
    return CLI_EXIT_OK;
}

/* ---- an edit ---- */

/* Whether a row in `state` has an edit to show. */
static bool has_edit(model_state state)
{
    return state == MODEL_STATE_EDITED || state == MODEL_STATE_CONFLICT;
}

/* A value of an edit as one line: the store's column text, an ACL's rules (one a
 * line there) joined by ", ". */
static void edit_value(buf_t *b, const kind_field *f, const char *v)
{
    v = v ? v : "";
    if (f->type != KIND_FIELD_ACL) {
        if (!v[0])
            buf_puts(b, "\"\"");
        buf_puts(b, v);
        return;
    }
    if (!v[0])
        buf_puts(b, "(no restriction)");
    for (const char *p = v; *p; p++) {
        if (*p == '\n')
            buf_puts(b, ", ");
        else
            buf_append(b, p, 1);
    }
}

/* Why a row is a conflict, in words. */
static void conflict_why(buf_t *b, const store_edit_info *info)
{
    static const char *const why[STORE_CONFLICT_COUNT] = {
        [STORE_CONFLICT_FIELDS] = ": the remote changed a field edited here",
        [STORE_CONFLICT_GONE] = ": the remote deleted it while it was edited here",
        [STORE_CONFLICT_REJECTED] = ": the server refused the edit (see error)",
        [STORE_CONFLICT_CHANGED] = (": deleted here, changed remotely (each field: what "
                                    "this cache had -> the remote's now)"),
        [STORE_CONFLICT_CROSSED] = ": someone else wrote while this edit was sent (see error)",
    };
    store_conflict c = info->conflict;
    buf_puts(b, store_conflict_name(c));
    if (c == STORE_CONFLICT_KEY) {
        buf_puts(b, ": the remote rule ");
        buf_puts(b, info->other_id[0] ? info->other_id : "(unknown)");
        buf_puts(b, " holds its policy and cidr");
    } else if ((unsigned)c < STORE_CONFLICT_COUNT && why[c]) {
        buf_puts(b, why[c]);
    }
}

/* The detail view's lines of an edit: per field "name: base -> local" (and in a
 * conflict "(remote: value)"), then the conflict and how to resolve it. */
static void put_edit_detail(cli_ctx *ctx, const store_edit_info *info)
{
    const kind_desc *d = kind_get(info->kind);
    buf_t b = {0};
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *ef = &info->field[i];
        const kind_field *f = &d->fields[ef->field];
        buf_reset(&b);
        buf_puts(&b, f->name);
        buf_puts(&b, ": ");
        edit_value(&b, f, ef->base);
        buf_puts(&b, " -> ");
        edit_value(&b, f, ef->local);
        if (ef->remote) {
            buf_puts(&b, " (remote: ");
            edit_value(&b, f, ef->remote);
            buf_puts(&b, ")");
        }
        cli_put_field(ctx, i == 0 ? "edit" : "", b.failed ? "?" : b.data);
    }
    if (info->state == MODEL_STATE_CONFLICT) {
        buf_reset(&b);
        conflict_why(&b, info);
        cli_put_field(ctx, "conflict", b.failed ? "?" : b.data);
        fprintf(ctx->out, "%-12s %s %s resolve ", "resolve", ctx->program, d->command);
        cli_put_cell(ctx->out, info->id, 0, 0);
        fputs(" --keep-local|--take-remote\n", ctx->out);
    }
    buf_free(&b);
}

/* A value of an edit in JSON: a string, an ACL as an array of its rules, null. */
static void json_edit_value(buf_t *b, const kind_field *f, const char *v)
{
    if (!v) {
        buf_puts(b, "null");
        return;
    }
    if (f->type != KIND_FIELD_ACL) {
        buf_json_string(b, v);
        return;
    }
    buf_puts(b, "[");
    for (const char *p = v; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *rule = strndup(p, len);
        if (!rule) {
            b->failed = true;
            return;
        }
        if (p != v)
            buf_puts(b, ", ");
        buf_json_string(b, rule);
        free(rule);
        p += len + (end != NULL);
    }
    buf_puts(b, "]");
}

/* "edit": {"fields": {NAME: {"base", "local", "remote"}}, "conflict": NAME|null}
 * (and "other_id" for a conflict of key), indented as a member of the row. */
static void json_edit(buf_t *b, const store_edit_info *info)
{
    const kind_desc *d = kind_get(info->kind);
    buf_puts(b, "  \"edit\": {\n    \"fields\": {");
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *ef = &info->field[i];
        const kind_field *f = &d->fields[ef->field];
        buf_puts(b, i ? ",\n      " : "\n      ");
        buf_json_string(b, f->name);
        buf_puts(b, ": {\"base\": ");
        json_edit_value(b, f, ef->base ? ef->base : "");
        buf_puts(b, ", \"local\": ");
        json_edit_value(b, f, ef->local ? ef->local : "");
        buf_puts(b, ", \"remote\": ");
        json_edit_value(b, f, ef->remote);
        buf_puts(b, "}");
    }
    buf_puts(b, info->count ? "\n    },\n    \"conflict\": " : "},\n    \"conflict\": ");
    if (info->state == MODEL_STATE_CONFLICT)
        buf_json_string(b, store_conflict_name(info->conflict));
    else
        buf_puts(b, "null");
    if (info->state == MODEL_STATE_CONFLICT && info->conflict == STORE_CONFLICT_KEY) {
        buf_puts(b, ",\n    \"other_id\": ");
        buf_json_string(b, info->other_id);
    }
    buf_puts(b, "\n  }");
}

/*
 * The row's JSON (pretty, from the kind's encoder) with `extra` members (already
 * indented, joined by ",\n") added before its closing brace. The encoder's
 * object always has members, so the comma is right.
 */
static int put_json_with(cli_ctx *ctx, char *json, const buf_t *extra)
{
    if (!json || extra->failed) {
        free(json);
        return cli_put_json(ctx, NULL);
    }
    char *close = strrchr(json, '}');
    if (!close || !extra->len)
        return cli_put_json(ctx, json);
    while (close > json && (close[-1] == '\n' || close[-1] == ' '))
        close--;
    *close = '\0';
    fprintf(ctx->out, "%s,\n%s\n}\n", json, extra->data);
    free(json);
    return CLI_EXIT_OK;
}

int cli_object_show(cli_ctx *ctx, store *st, const model_object *obj, bool json,
                    const char *result)
{
    store_edit_info info = {0};
    bool edited = has_edit(model_object_state(obj));
    error_info e = {0};
    if (edited && store_edit_get(st, obj->kind, model_object_id(obj), &info, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    store_rotation rot;
    bool rotating = kind_get(obj->kind)->traits & KIND_ROTATES &&
                    store_rotation_get(st, model_object_id(obj), &rot, NULL) == ERROR_OK;
    long long now = (long long)time(NULL);
    long long quiet = config_number(&ctx->cfg, CONFIG_ROTATE_QUIET);
    int rc = CLI_EXIT_OK;
    if (!json) {
        put_detail(ctx, obj);
        if (edited)
            put_edit_detail(ctx, &info);
        if (rotating)
            cli_rotation_put(ctx, &rot, obj->cred.id, now, quiet);
    } else {
        buf_t extra = {0};
        if (edited)
            json_edit(&extra, &info);
        if (rotating) {
            buf_puts(&extra, extra.len ? ",\n  \"rotation\": " : "  \"rotation\": ");
            cli_rotation_json(&extra, &rot, now, quiet, "  ");
        }
        if (result) {
            buf_puts(&extra, extra.len ? ",\n  \"result\": " : "  \"result\": ");
            buf_json_string(&extra, result);
        }
        rc = put_json_with(ctx, codec_object_encode(obj, CODEC_WITH_STATE |
                                                                    CODEC_PRETTY),
                           &extra);
        buf_free(&extra);
    }
    store_edit_info_clear(&info);
    return rc;
}

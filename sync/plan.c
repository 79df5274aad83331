/*
 * sync_plan: what the next sync would do, from the cache alone (no network),
 * Terraform style: + create, - delete, ! needs attention, ~ changed (deleted
 * remotely, or edited here: the fields with their old and new values).
 */
#include "rampart/sync.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"
#include "rampart/utf8.h"

enum {
    PLAN_PAGE = 32,
    PLAN_WHY_MAX = 1024 /* an edit's reason: every field's two values, cut */
};

#define RESOLVE "resolve with --keep-local or --take-remote"
#define ELLIPSIS "\xE2\x80\xA6" /* … */

typedef struct plan_line {
    char sign;
    const char *why;  /* fixed reason; NULL: the row's error (with a fallback) */
    const char *fallback;
} plan_line;

/* Per state; sign 0: the row is settled and not shown. */
static const plan_line lines[MODEL_STATE_COUNT] = {
    [MODEL_STATE_NEW] = {'+', "create", NULL},
    [MODEL_STATE_CREATING] = {'+', "create (interrupted: the listing is checked first)",
                              NULL},
    [MODEL_STATE_DELETING] = {'-', "delete", NULL},
    [MODEL_STATE_FAILED] = {'!', NULL, "the server refused it"},
    [MODEL_STATE_UNKNOWN] = {'!', "create outcome unknown: the next sync checks the "
                                  "remote listing", NULL},
    [MODEL_STATE_ORPHANED] = {'!', NULL, "created remotely but its token was lost: the "
                                        "next sync deletes it there and creates it again"},
    [MODEL_STATE_REMOTE_DELETED] = {'~', "deleted remotely: review, then discard or retry",
                                    NULL},
    [MODEL_STATE_EDITED] = {'~', "edited: the next sync sends the change", NULL},
    [MODEL_STATE_CONFLICT] = {'!', NULL, "a conflict: " RESOLVE},
};

unsigned sync_plan_states(void)
{
    unsigned mask = 0;
    for (int s = 0; s < MODEL_STATE_COUNT; s++) {
        if (lines[s].sign)
            mask |= 1u << s;
    }
    return mask;
}

char sync_plan_line(model_state state, const char *error_text, const char **why)
{
    const plan_line *l = &lines[state];
    *why = l->why ? l->why : error_text && error_text[0] ? error_text : l->fallback;
    return l->sign;
}

/* ---- an edit's description ----------------------------------------------- */

/* A line being written: cut (its end marked) when it would overflow. */
typedef struct plan_text {
    char text[PLAN_WHY_MAX];
    size_t len;
    bool cut;
} plan_text;

static void add(plan_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(plan_text *t, const char *fmt, ...)
{
    if (t->cut)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->text + t->len, sizeof t->text - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof t->text - t->len) {
        t->cut = true;
        t->len = sizeof t->text - 1;
        return;
    }
    t->len += (size_t)n;
}

/* Copy `text` into `buf`, cut at a UTF-8 boundary with "…" when it does not fit
 * (or when `cut` says it was cut already). */
static const char *fit(const char *text, bool cut, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    size_t len = strlen(text);
    if (!cut && len < size) {
        memcpy(buf, text, len + 1);
        return buf;
    }
    size_t room = size > sizeof ELLIPSIS ? size - sizeof ELLIPSIS : 0;
    size_t keep = utf8_prefix(text, room < len ? room : len);
    memcpy(buf, text, keep);
    snprintf(buf + keep, size - keep, "%s", size - keep >= sizeof ELLIPSIS ? ELLIPSIS : "");
    return buf;
}

/* The shown form of one byte of a value: a list's line break is ", ", a text's
 * "\n", another control character '?'. */
static const char *shown_byte(const char *p, bool list, char one[2])
{
    if (*p == '\n')
        return list ? (p[1] ? ", " : "") : "\\n";
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
        return "?";
    one[0] = *p;
    one[1] = '\0';
    return one;
}

/* One value as the plan shows it (see sync_edit_describe): `out` holds at least
 * SYNC_EDIT_VALUE_MAX + sizeof ELLIPSIS bytes. */
static void show_value(const char *text, bool list, char *out, size_t size)
{
    if (!text || !text[0]) {
        snprintf(out, size, "\"\"");
        return;
    }
    char full[SYNC_EDIT_VALUE_MAX * 2 + 8];
    size_t n = 0;
    const char *p = text;
    for (; *p && n <= SYNC_EDIT_VALUE_MAX; p++) {
        char one[2];
        const char *piece = shown_byte(p, list, one);
        size_t len = strlen(piece);
        memcpy(full + n, piece, len);
        n += len;
    }
    full[n] = '\0';
    bool cut = *p != '\0' || n > SYNC_EDIT_VALUE_MAX;
    fit(full, cut, out, cut ? SYNC_EDIT_VALUE_MAX + sizeof ELLIPSIS : size);
}

typedef char shown_value[SYNC_EDIT_VALUE_MAX + sizeof ELLIPSIS + 4];

static const kind_field *edit_field(const store_edit_info *info, const store_edit_field *f)
{
    const kind_desc *d = kind_get(info->kind);
    return f->field < d->field_count ? &d->fields[f->field] : NULL;
}

/* Each line "name base -> value", joined by `sep`; the value is the local one,
 * or with `remote` the remote's (its local one when it has none). */
static void describe_lines(const store_edit_info *info, bool remote, const char *sep,
                           plan_text *t)
{
    const char *before = "";
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *f = &info->field[i];
        const kind_field *kf = edit_field(info, f);
        if (!kf)
            continue;
        bool list = kf->type == KIND_FIELD_ACL;
        shown_value base, value;
        show_value(f->base, list, base, sizeof base);
        show_value(remote && f->remote ? f->remote : f->local, list, value, sizeof value);
        add(t, "%s%s %s -> %s", before, kf->name, base, value);
        before = sep;
    }
}

/* "cidr 10.0.0.0/8 -> 10.0.0.0/16; description "" -> web" */
static void describe_edit(const store_edit_info *info, plan_text *t)
{
    describe_lines(info, false, "; ", t);
}

/* "cidr: local 10.0.0.0/16, remote 10.1.0.0/16 (changed on both sides): resolve …" */
static void describe_fields(const store_edit_info *info, plan_text *t)
{
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *f = &info->field[i];
        const kind_field *kf = edit_field(info, f);
        if (!kf || !f->remote)
            continue;
        bool list = kf->type == KIND_FIELD_ACL;
        shown_value local, remote;
        show_value(f->local, list, local, sizeof local);
        show_value(f->remote, list, remote, sizeof remote);
        add(t, "%s%s: local %s, remote %s", t->len ? "; " : "", kf->name, local, remote);
    }
    add(t, "%s: " RESOLVE, t->len ? " (changed on both sides)"
                                   : "changed remotely while edited here");
}

/* "deleted here, changed remotely: cidr 10.4.0.0/16 -> 203.0.113.0/24: delete it
 * anyway (--keep-local) or keep it (--take-remote)" */
static void describe_changed(const store_edit_info *info, plan_text *t)
{
    add(t, "deleted here, changed remotely: ");
    describe_lines(info, true, "; ", t);
    add(t, ": delete it anyway (--keep-local) or keep it (--take-remote)");
}

static void describe_key(const store_edit_info *info, plan_text *t)
{
    const char *noun = kind_get(info->kind)->noun;
    if (info->other_id[0])
        add(t, "the server has %s %s for this cidr", noun, info->other_id);
    else
        add(t, "the server has another %s for this cidr", noun);
    /* A create clashes by its action (the same one would have been adopted); an
     * edited cidr by the cidr alone. */
    add(t, "%s: " RESOLVE, info->fields == 0 ? " with the other action" : "");
}

/* What the plan says of each kind of conflict: a describer, or a text (which the
 * row's own error text replaces where `own_text` and it has one). */
typedef struct conflict_text {
    void (*describe)(const store_edit_info *info, plan_text *t);
    bool own_text;
    const char *text;
} conflict_text;

static const conflict_text conflict_texts[STORE_CONFLICT_COUNT] = {
    [STORE_CONFLICT_NONE] = {NULL, true, "a conflict: " RESOLVE},
    [STORE_CONFLICT_FIELDS] = {describe_fields, false, NULL},
    [STORE_CONFLICT_GONE] = {NULL, false, "deleted remotely while edited here: " RESOLVE},
    [STORE_CONFLICT_KEY] = {describe_key, false, NULL},
    [STORE_CONFLICT_REJECTED] = {NULL, true, "the server refused the edit: " RESOLVE},
    [STORE_CONFLICT_CHANGED] = {describe_changed, false, NULL},
    [STORE_CONFLICT_CROSSED] = {NULL, true,
                                "someone else wrote while this edit was sent: check it, then "
                                "resolve"},
};

static void describe_conflict(const store_edit_info *info, const char *error_text,
                              plan_text *t)
{
    unsigned reason = (unsigned)info->conflict;
    if (reason >= STORE_CONFLICT_COUNT)
        reason = STORE_CONFLICT_NONE;
    const conflict_text *c = &conflict_texts[reason];
    if (c->describe) {
        c->describe(info, t);
        return;
    }
    add(t, "%s", c->own_text && error_text && error_text[0] ? error_text : c->text);
}

const char *sync_edit_describe(const store_edit_info *info, const char *error_text, char *buf,
                               size_t size)
{
    plan_text t = {.len = 0};
    t.text[0] = '\0';
    if (info && info->state == MODEL_STATE_EDITED)
        describe_edit(info, &t);
    else if (info && info->state == MODEL_STATE_CONFLICT)
        describe_conflict(info, error_text, &t);
    return fit(t.text, t.cut, buf, size);
}

/* ---- the plan ------------------------------------------------------------- */

typedef struct plan_walk {
    store *st;
    error_code (*fn)(void *ctx, const sync_plan_item *item, error_info *err);
    void *ctx;
} plan_walk;

/* The reason of an edited or conflicting row: what the store keeps of its edit. */
static error_code edit_reason(plan_walk *w, const model_object *row, char *why, size_t size,
                              error_info *err)
{
    store_edit_info info;
    memset(&info, 0, sizeof info);
    error_code rc = store_edit_get(w->st, row->kind, model_object_id(row), &info, err);
    if (rc == ERROR_OK)
        sync_edit_describe(&info, model_object_error(row), why, size);
    store_edit_info_clear(&info);
    return rc;
}

/* The item outlives nothing but the callback; the reason is copied because the
 * rows it came from are reused by the next page. */
static error_code fill_item(plan_walk *w, sync_plan_item *item, char *why, size_t size,
                            error_info *err)
{
    const model_object *row = item->object;
    model_state state = model_object_state(row);
    const char *error_text = model_object_error(row);
    const char *reason;
    item->sign = sync_plan_line(state, error_text, &reason);
    item->why = reason;
    if (state == MODEL_STATE_EDITED || state == MODEL_STATE_CONFLICT) {
        error_code rc = edit_reason(w, row, why, size, err);
        if (rc != ERROR_OK)
            return rc;
        if (why[0])
            item->why = why;
    } else if (reason == error_text) {
        snprintf(why, size, "%s", error_text);
        item->why = why;
    }
    return ERROR_OK;
}

static error_code plan_page(void *wp, model_object *rows, size_t n, error_info *err)
{
    plan_walk *w = wp;
    char why[PLAN_WHY_MAX];
    error_code rc = ERROR_OK;
    for (size_t i = 0; i < n && rc == ERROR_OK; i++) {
        sync_plan_item item = {.object = &rows[i]};
        rc = fill_item(w, &item, why, sizeof why, err);
        if (rc == ERROR_OK)
            rc = w->fn(w->ctx, &item, err);
    }
    return rc;
}

error_code sync_plan(store *st,
                     error_code (*fn)(void *ctx, const sync_plan_item *item, error_info *err),
                     void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (!st || !fn)
        return error_set(err, ERROR_INVALID, "sync_plan needs a store and a callback");
    store_query q = {.states = sync_plan_states()};
    plan_walk w = {st, fn, ctx};
    error_code rc = ERROR_OK;
    for (int k = 0; k < MODEL_KIND_COUNT && rc == ERROR_OK; k++)
        rc = store_walk(st, (model_kind)k, &q, PLAN_PAGE, plan_page, &w, err);
    return rc;
}

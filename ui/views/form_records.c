/*
 * The create form of a kind (ui_form.h): one form field per create field of the
 * kind's table (kind.h), labelled and, for a few fields, given a reason when empty
 * or a tighter limit by the console's data (ui/views/record_kinds.c); each checked by
 * the field's own check. And the row a submitted form becomes. The edit form is
 * the same form pre-filled with a row, the fields that never change read-only;
 * what it changed is the set of editable fields whose value differs from the
 * row's. No curses, no store.
 */
#include <stdio.h>
#include <string.h>

#include "rampart/kind.h"
#include "rampart/ui_form.h"
#include "ui_record.h"

/* A zeroed row is a new one: the form leaves the state as model_object_init does. */
_Static_assert(MODEL_STATE_NEW == 0, "a zeroed row must be in state new");

/* The check of a text field without the console's extras (ctx: its kind_field). */
static error_code check_field(const void *ctx, const char *text, error_info *err)
{
    const kind_field *f = ctx;
    return f->check ? f->check(text, NULL, 0, err) : ERROR_OK;
}

/* The check of a text field (ctx: its ui_record_input): the console's reason
 * when it is empty, else the console's own check, else the field's. */
static error_code check_text(const void *ctx, const char *text, error_info *err)
{
    const ui_record_input *in = ctx;
    if (!text[0] && in->empty)
        return error_set(err, ERROR_INVALID, "%s", in->empty);
    if (in->check)
        return in->check(text, err);
    const kind_field *f = kind_field_by_name(in->kind, in->name);
    return f && f->check ? f->check(text, NULL, 0, err) : ERROR_OK;
}

/* Calls fn for each create field of `kind` with its index in the form and the
 * console's extras (NULL when it has none); stops at the first error. */
typedef error_code (*field_fn)(void *ctx, size_t at, const kind_field *kf,
                               const ui_record_input *in, error_info *err);

static error_code each_field(model_kind kind, field_fn fn, void *ctx, error_info *err)
{
    const kind_desc *d = kind_get(kind);
    size_t at = 0;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *kf = &d->fields[i];
        if (!(kf->flags & KIND_FIELD_CREATE))
            continue;
        const ui_record_input *in = ui_record_input_of(kind, kf->name);
        if (fn(ctx, at++, kf, in, err) != ERROR_OK)
            return err->code;
    }
    return ERROR_OK;
}

/* ---- building ------------------------------------------------------------------ */

typedef struct build {
    ui_form *form;
    const ui_form_offer *offer;
    const model_object *from; /* an edit's row: its values, read-only fields; or NULL */
} build;

/* One form field for the kind's field `kf`, starting on the edited row's value
 * (empty, the first option, the offer's policy for a create). */
static error_code add_input(build *b, const kind_field *kf, const ui_record_input *in,
                            error_info *err)
{
    const void *value = b->from ? kind_field_at(b->from, kf) : NULL;
    const char *label = in && in->label ? in->label : kf->label;
    if (kf->type == KIND_FIELD_ACTION) {
        const char *const options[] = {model_action_name(MODEL_ACTION_ALLOW),
                                       model_action_name(MODEL_ACTION_DENY)};
        size_t chosen = value ? (size_t)*(const model_action *)value : 0;
        return ui_form_add_choice(b->form, label, options, 2, chosen, err);
    }
    if (kf->type == KIND_FIELD_ACL) {
        const model_acl *acl = value;
        error_code rc = ui_acl_form_add(b->form, label, err);
        if (rc != ERROR_OK || !acl)
            return rc;
        return ui_form_set_lines(b->form, ui_form_count(b->form) - 1,
                                 (const char *const *)acl->rules, acl->count, err);
    }
    if (!in)
        return ui_form_add_text(b->form, label, value ? (const char *)value : "",
                                kf->size - 1, check_field, kf, err);
    if (in->offered && !b->from) {
        const ui_form_offer none = {0};
        const ui_form_offer *o = b->offer ? b->offer : &none;
        return ui_form_add_policy(b->form, label, o->initial,
                                  (const char(*)[MODEL_ID_MAX + 1])o->ids, o->count,
                                  check_text, in, err);
    }
    if (in->offered) /* an edit's policy: shown as it is, nothing offered */
        return ui_form_add_policy(b->form, label, value, NULL, 0, check_text, in, err);
    return ui_form_add_text(b->form, label, value ? (const char *)value : "",
                            in->max ? in->max : kf->size - 1, check_text, in, err);
}

static error_code add_field(void *ctx, size_t at, const kind_field *kf,
                            const ui_record_input *in, error_info *err)
{
    build *b = ctx;
    error_code rc = add_input(b, kf, in, err);
    if (rc != ERROR_OK)
        return rc;
    if (b->from && !(kf->flags & KIND_FIELD_EDIT))
        ui_form_set_readonly(b->form, at);
    return ERROR_OK;
}

/* The form titled `title` with one field per create field of `kind`, as `b`
 * says. */
static error_code build_form(build *b, model_kind kind, const char *title, ui_form **out,
                             error_info *err)
{
    *out = NULL;
    if (ui_form_new(title, &b->form, err) != ERROR_OK)
        return err->code;
    if (each_field(kind, add_field, b, err) != ERROR_OK) {
        ui_form_free(b->form);
        return err->code;
    }
    *out = b->form;
    return ERROR_OK;
}

error_code ui_form_record_new(model_kind kind, const ui_form_offer *offer, ui_form **out,
                              error_info *err)
{
    char title[64];
    snprintf(title, sizeof title, "Create %s", kind_get(kind)->noun);
    build b = {NULL, offer, NULL};
    return build_form(&b, kind, title, out, err);
}

error_code ui_form_record_edit(const model_object *obj, ui_form **out, error_info *err)
{
    char title[128];
    snprintf(title, sizeof title, "Edit %s %s", kind_get(obj->kind)->noun,
             model_object_id(obj));
    build b = {NULL, NULL, obj};
    return build_form(&b, obj->kind, title, out, err);
}

/* ---- reading a submitted form --------------------------------------------------- */

typedef struct reading {
    const ui_form *form;
    model_object *obj;
} reading;

static error_code get_field(void *ctx, size_t at, const kind_field *kf,
                            const ui_record_input *in, error_info *err)
{
    reading *r = ctx;
    void *dst = ui_record_field(r->obj, kf);
    if (at >= ui_form_count(r->form))
        return error_set(err, ERROR_INVALID, "not a %s form", kind_get(r->obj->kind)->noun);
    if (kf->type == KIND_FIELD_ACTION) {
        /* The options are in model_action order (add_field). */
        *(model_action *)dst = (model_action)ui_form_choice(r->form, at);
        return ERROR_OK;
    }
    if (kf->type == KIND_FIELD_ACL)
        return ui_acl_form_get(r->form, at, dst, err);
    const char *text = ui_form_text(r->form, at);
    if ((in ? check_text(in, text, err) : check_field(kf, text, err)) != ERROR_OK)
        return err->code;
    if (!model_copy_text(dst, kf->size, text))
        return error_set(err, ERROR_INVALID, "%s is too long", kf->name);
    return ERROR_OK;
}

error_code ui_form_record_get(const ui_form *f, model_kind kind, model_object *out,
                              error_info *err)
{
    model_object_init(out, kind);
    const kind_desc *d = kind_get(kind);
    size_t fields = 0;
    for (size_t i = 0; i < d->field_count; i++)
        fields += (d->fields[i].flags & KIND_FIELD_CREATE) != 0;
    if (ui_form_count(f) != fields)
        return error_set(err, ERROR_INVALID, "not a %s form", d->noun);
    reading r = {f, out};
    if (each_field(kind, get_field, &r, err) != ERROR_OK)
        return err->code;
    return d->validate(out, err);
}

/* ---- what an edit changed --------------------------------------------------------- */

/* Field `f` of `from` into `to` (an ACL is swapped: `from` keeps the old one). */
static void take_value(model_object *to, model_object *from, const kind_field *f)
{
    void *x = kind_field_at_mut(to, f), *y = kind_field_at_mut(from, f);
    if (f->type == KIND_FIELD_ACTION) {
        *(model_action *)x = *(model_action *)y;
    } else if (f->type == KIND_FIELD_TEXT) {
        memcpy(x, y, f->size);
    } else {
        model_acl keep = *(model_acl *)x;
        *(model_acl *)x = *(model_acl *)y;
        *(model_acl *)y = keep;
    }
}

error_code ui_form_record_changes(const ui_form *f, const model_object *orig,
                                  model_object *out, unsigned *fields, error_info *err)
{
    *fields = 0;
    model_object_init(out, orig->kind);
    model_object got;
    if (ui_form_record_get(f, orig->kind, &got, err) != ERROR_OK ||
        model_object_copy(out, orig, err) != ERROR_OK) {
        model_object_clear(&got);
        return err->code;
    }
    const kind_desc *d = kind_get(orig->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *kf = &d->fields[i];
        if (!(kf->flags & KIND_FIELD_EDIT) || kind_field_same(kf, &got, out))
            continue;
        take_value(out, &got, kf);
        *fields |= kind_field_bit(orig->kind, kf);
    }
    model_object_clear(&got);
    return ERROR_OK;
}

/* ---- the store's refusal -------------------------------------------------------- */

typedef struct refusal {
    ui_form *form;
    const kind_field *bad;
    const char *why;
    bool placed;
} refusal;

static error_code place_reason(void *ctx, size_t at, const kind_field *kf,
                               const ui_record_input *in, error_info *err)
{
    (void)in;
    (void)err;
    refusal *r = ctx;
    if (kf == r->bad) {
        ui_form_refuse(r->form, at, r->why);
        r->placed = true;
    }
    return ERROR_OK;
}

bool ui_form_record_refused(ui_form *f, model_kind kind, const kind_field *bad,
                            const char *why)
{
    refusal r = {f, bad, why, false};
    error_info e = {0};
    if (r.bad)
        each_field(kind, place_reason, &r, &e);
    return r.placed;
}

/*
 * ui_record: how the console shows and takes records of every kind, written once
 * over the kind's descriptor (kind.h). Private to ui/.
 *
 * - Per kind there is only data (ui/views/record_kinds.c): the record view's
 *   columns and sorts, the lines of its details, the labels and extras of its
 *   create form, the wording of a row in the plan, a confirmation and the status
 *   line. The code over that data (ui/views/record.c) is the same for every kind.
 * - Values are named the way the kind's field table names them (their wire names:
 *   "cidr", "ip_policy_id", "acl"), or as what every row has: "id", "state",
 *   "error", "created_at", "uri" (and a rule's "policy_uri"). "token" names a
 *   credential's token status in the details (never the token). An unknown name
 *   reads as "".
 * - Templates are text with `{name}` replaced by the value of that name; the
 *   result is cut at the buffer's size like snprintf.
 * - What is one kind's own is reached through hooks in its data, each written in
 *   one place: the rules view's policy (ui/views/policy.c), a credential's ACL list
 *   (ui/views/acl.c) and its token (ui/state/token.c).
 */
#ifndef RAMPART_UI_RECORD_H
#define RAMPART_UI_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/ui_form.h"
#include "../state/ui_state.h"

/* A line of the details: its label and the value it shows. */
typedef struct ui_record_line {
    const char *label;
    const char *value;
} ui_record_line;

/* What the create form adds to one field of the kind's table (a field without
 * one is the descriptor's: its label, its check). */
typedef struct ui_record_input {
    model_kind kind;
    const char *name;  /* the field's wire name */
    const char *label; /* NULL: the descriptor's label */
    const char *empty; /* the reason when left empty; NULL: the field's check says */
    size_t max;        /* bytes the user may type; 0: the field's size */
    /* The check instead of the field's own (NULL: the field's). */
    error_code (*check)(const char *text, error_info *err);
    bool offered;      /* Up/Down cycle through offered ids (a rule's policy) */
} ui_record_input;

typedef struct ui_record_kind {
    model_kind kind;
    ui_view_ops view;            /* the record view: names and hooks of its own */
    char tag;                    /* the pending view's key prefix: 'r', 'c' */
    const char *short_noun;      /* the pending view's KIND column: "rule", "cred" */
    const ui_table_col *cols;    /* the record view's columns, with their sorts */
    const char *const *values;   /* the value each column shows */
    int ncols;
    const ui_record_line *details;
    size_t ndetails;
    const ui_record_input *inputs; /* the create form's extras, by field name (or NULL) */
    size_t ninputs;
    const char *what;            /* template: the pending view's WHAT column */
    const char *what_empty;      /* WHAT when the template comes out empty */
    const char *confirm;         /* template: a row named in a confirmation */
    const char *queued;          /* template: the status line after a create */
    /* What the create form offers (the rules: the cached policy ids, the view's
     * policy first); NULL: nothing. out->ids is heap the caller frees. */
    error_code (*offer)(ui_app *app, ui_form_offer *out, error_info *err);
    /* The editable field of the natural key (a rule's "cidr"): a store refusal for
     * a clash with another row (ERROR_CONFLICT) goes under it; NULL: none. */
    const char *key_field;
    /* The empty view's last line: another way to fill it (a rule's import); NULL:
     * none. */
    const char *empty_more;
} ui_record_kind;

/* The console's data of `kind` (ui/views/record_kinds.c); never NULL. */
const ui_record_kind *ui_record_kind_get(model_kind kind);

/* The form extras of field `name` of `kind`, NULL when it has none. */
const ui_record_input *ui_record_input_of(model_kind kind, const char *name);

/* Where field `f` of the kind's table is inside `obj` (of that kind): a char
 * buffer of f->size bytes, a model_action or a model_acl, as f->type says. */
void *ui_record_field(model_object *obj, const kind_field *f);

/* The value `name` of `obj` as text: into the object, or into `scratch` (`size`
 * bytes) when it has to be made (an action's name, an ACL joined). A name may end
 * in a form: "created_at:date" is the date of that time ("2026-11-29"). */
const char *ui_record_value(const model_object *obj, const char *name, char *scratch,
                            size_t size);

/* `tmpl` with every {name} replaced by its value, into `out`. */
void ui_record_format(const model_object *obj, const char *tmpl, char *out, size_t size);

/* The record view's row of `obj`: key and id, kind, the columns' cells, the state's
 * colour on the STATE column, the note of a row that needs attention. */
void ui_record_row(const model_object *obj, ui_table_row *row);

/* The details of the row `id` of `kind`, fresh from `st`, one fn call per line
 * (ERROR_NOT_FOUND when it is gone). */
error_code ui_record_details(store *st, model_kind kind, const char *id, ui_table_detail_fn fn,
                             void *ctx, error_info *err);

/* The colour of a sync state (never the only sign: the state is written out). */
ui_style ui_state_style(model_state state);

/* What a row in `state` needs, with its error ("failed: why"); "" when settled.
 * Into the row's note. */
void ui_state_note(model_state state, const char *error, ui_table_row *row);

/* ---- a row's edit (ui/views/record_edit.c) --------------------------------------- */

/* Whether the edit form opens on a row in `state` (new, failed, synced, edited,
 * conflict); when not, *why says why in a status line's words ("its create is in
 * flight: sync first ('s')"). The store still decides (store_edit). */
bool ui_record_editable(model_state state, const char **why);

/* A value as store_edit_get gives it (an ACL one rule per line) on one line: the
 * lines joined by ", ", "(empty)" for none; cut at a character to fit `size`. */
void ui_edit_value_text(const char *text, char *out, size_t size);

/* Why a row is a conflict, in a sentence ("the remote changed a field edited
 * here"); `error` is the row's error text (a refused edit's reason). Points at a
 * constant or into `buf`; "" unless info->conflict names a reason. */
const char *ui_conflict_reason(const store_edit_info *info, const char *error, char *buf,
                               size_t size);

/* What choosing `side` does to a conflict of `reason`, in a few words. */
const char *ui_conflict_choice(store_conflict reason, store_side side);

/* The details' lines of an edited or conflicting row (nothing for others): the
 * conflict's reason, then per edited field "base -> local" and, when it conflicts,
 * the remote's value (store_edit_get on `st`). A read failure is one line. */
void ui_record_edit_details(store *st, const model_object *obj, ui_table_detail_fn fn,
                            void *ctx);

/* Copy text into a cell (cut at a character boundary). */
void ui_cell_set(char *cell, const char *text);

/* ---- a rule's policy (ui/views/policy.c) ------------------------------------------ */

/* The rules view's hooks: 'p' picks a policy from the cached ones; the header
 * names the policy shown; the scope shows one policy's rules ("" all), saying so
 * in the status line. */
bool ui_policy_request(ui_view *v, ui_app *app, ui_request req);
void ui_policy_describe(const ui_view *v, char *buf, size_t size);
void ui_policy_scope(ui_view *v, ui_app *app, const char *policy);

/* The rule form's offer: the cached policy ids (the first few hundred), starting
 * on the current view's policy. */
error_code ui_policy_offer(ui_app *app, ui_form_offer *out, error_info *err);

/* ---- a credential's ACL list (ui/views/acl.c) ------------------------------------- */

/* Detail lines: a rule a line, the first one labelled `label`; one line saying
 * so when there is none. */
void ui_acl_details(const model_acl *acl, const char *label, ui_table_detail_fn fn,
                    void *ctx);

/* The form's LIST field of ACL rules: each line checked alone as typed, then all
 * together (validate.h). */
error_code ui_acl_form_add(ui_form *f, const char *label, error_info *err);

/* The non-empty lines of LIST field `field` appended to `acl`. */
error_code ui_acl_form_get(const ui_form *f, size_t field, model_acl *acl, error_info *err);

#endif

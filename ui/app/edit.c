/*
 * The console's edits in place (ui_app.h): 'e' opens the edit form of the row
 * under the cursor (ui/app/form_edit.c stores it), 'R' asks how to resolve a
 * conflicting row and answers through store_resolve. Both check the read-only
 * flag first; both act on the cursor's row only (marks are for delete and the
 * like: an edit is one row's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../views/ui_record.h"
#include "app_internal.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/ui_dialog.h"

/* Buttons of the resolve dialog, in this order. */
enum { ANSWER_KEEP, ANSWER_TAKE, ANSWER_CANCEL };

static bool refused_readonly(ui_app *app, const char *what)
{
    if (!ui_app_readonly(app))
        return false;
    ui_app_status(app, true, "read-only console: %s is off (started with --readonly)", what);
    return true;
}

/* The record under the cursor, fresh from the store, into `row` (which holds no
 * heap before; cleared by the caller when this returns true), for a change
 * (`gerund` "editing", `verb` "edit"). False (said in the status line) when the
 * console is read-only or there is no such record. */
static bool row_to_change(ui_app *app, const char *gerund, const char *verb,
                          model_object *row)
{
    if (refused_readonly(app, gerund))
        return false;
    ui_row_ref ref;
    if (!ui_app_view(app)->ops->records && ui_app_view_id(app) != UI_VIEW_PENDING) {
        ui_app_status(app, false, "nothing to %s here: no records in this view", verb);
        return false;
    }
    if (!ui_app_current(app, &ref)) {
        ui_app_status(app, false, "nothing to %s here: no row selected", verb);
        return false;
    }
    model_object_init(row, ref.kind);
    error_info e = {0};
    if (store_get(ui_app_store(app), ref.kind, ref.id, row, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s: %s", verb, e.msg);
        return false;
    }
    return true;
}

/* ---- edit ------------------------------------------------------------------------ */

void ui_action_edit(ui_app *app)
{
    model_object row;
    if (!row_to_change(app, "editing", "edit", &row))
        return;
    const char *why;
    error_info e = {0};
    if (!ui_record_editable(model_object_state(&row), &why))
        ui_app_status(app, false, "cannot edit %s %s: %s", kind_get(row.kind)->noun,
                      model_object_id(&row), why);
    else if (ui_form_edit_open(app, &row, &e) != ERROR_OK)
        ui_app_status(app, true, "edit: %s", e.msg);
    model_object_clear(&row);
}

/* ---- resolve --------------------------------------------------------------------- */

/* What the dialog is about, kept until it closes. */
typedef struct resolving {
    ui_row_ref ref;
    char label[MODEL_DESCRIPTION_MAX + 1];
} resolving;

/* One edited field in the dialog: "cidr: local 10.2.0.0/16, remote 10.3.0.0/16",
 * or its base for a field the remote did not change. */
static error_code field_line(ui_choose *d, model_kind kind, const store_edit_field *ef,
                             error_info *err)
{
    const kind_desc *k = kind_get(kind);
    const char *name = ef->field < k->field_count ? k->fields[ef->field].name : "?";
    char local[160], other[160], line[400];
    ui_edit_value_text(ef->local, local, sizeof local);
    ui_edit_value_text(ef->remote ? ef->remote : ef->base, other, sizeof other);
    snprintf(line, sizeof line, "%s: local %s, %s %s", name, local,
             ef->remote ? "remote" : "base", other);
    return ui_choose_add_line(d, line, err);
}

/* The dialog's body: why, each side's values, what each answer does. */
static error_code dialog_lines(ui_choose *d, const model_object *row,
                               const store_edit_info *info, error_info *err)
{
    char buf[MODEL_ERROR_MAX + 64], line[MODEL_ERROR_MAX + 128];
    snprintf(line, sizeof line, "%s: %s", kind_label(row),
             ui_conflict_reason(info, model_object_error(row), buf, sizeof buf));
    if (ui_choose_add_line(d, line, err) || ui_choose_add_line(d, "", err))
        return err->code;
    for (size_t i = 0; i < info->count; i++) {
        if (field_line(d, row->kind, &info->field[i], err) != ERROR_OK)
            return err->code;
    }
    snprintf(line, sizeof line, "Keep local: %s",
             ui_conflict_choice(info->conflict, STORE_KEEP_LOCAL));
    if ((info->count && ui_choose_add_line(d, "", err)) || ui_choose_add_line(d, line, err))
        return err->code;
    snprintf(line, sizeof line, "Take remote: %s",
             ui_conflict_choice(info->conflict, STORE_TAKE_REMOTE));
    return ui_choose_add_line(d, line, err);
}

static void resolved(ui_app *app, void *ctx, int chosen)
{
    const resolving *r = ctx;
    if (chosen != ANSWER_KEEP && chosen != ANSWER_TAKE) {
        ui_app_status(app, false, "cancelled: nothing changed");
        return;
    }
    store_side side = chosen == ANSWER_KEEP ? STORE_KEEP_LOCAL : STORE_TAKE_REMOTE;
    char id[MODEL_ID_MAX + 1] = "";
    error_info e = {0};
    if (store_resolve(ui_app_store(app), r->ref.kind, r->ref.id, side, id, &e) != ERROR_OK) {
        ui_app_status(app, true, "not resolved: %s", e.msg);
        return;
    }
    const char *noun = kind_get(r->ref.kind)->noun;
    const char *what = side == STORE_KEEP_LOCAL ? "kept the local values"
                                                : "took the remote's values";
    if (!id[0])
        ui_app_status(app, false, "%s %s resolved: %s (removed here)", noun, r->label, what);
    else if (strcmp(id, r->ref.id) != 0)
        ui_app_status(app, false, "%s %s resolved: %s (now %s; 's' syncs it)", noun, r->label,
                      what, id);
    else
        ui_app_status(app, false, "%s %s resolved: %s ('s' syncs it)", noun, r->label, what);
    ui_app_reload(app);
}

/* The dialog of conflicting `row`, pushed; false (said) when it could not be. */
static void ask_resolve(ui_app *app, const model_object *row, const store_edit_info *info)
{
    resolving *r = calloc(1, sizeof *r);
    ui_choose *d = NULL;
    error_info e = {0};
    char title[128];
    snprintf(title, sizeof title, "Resolve the conflict of %s %s", kind_get(row->kind)->noun,
             model_object_id(row));
    if (!r || ui_choose_new(title, &d, &e) != ERROR_OK || dialog_lines(d, row, info, &e) ||
        ui_choose_add_button(d, "Keep local", &e) ||
        ui_choose_add_button(d, "Take remote", &e) || ui_choose_add_button(d, "Cancel", &e)) {
        ui_choose_free(d);
        free(r);
        ui_app_status(app, true, "resolve: %s", r ? e.msg : "out of memory");
        return;
    }
    r->ref.kind = row->kind;
    snprintf(r->ref.id, sizeof r->ref.id, "%s", model_object_id(row));
    snprintf(r->label, sizeof r->label, "%s", kind_label(row));
    if (ui_dialog_choose(app, d, resolved, r, free, &e) != ERROR_OK)
        ui_app_status(app, true, "resolve: %s", e.msg);
}

void ui_action_resolve(ui_app *app)
{
    model_object row;
    if (!row_to_change(app, "resolving", "resolve", &row))
        return;
    store_edit_info info;
    memset(&info, 0, sizeof info);
    error_info e = {0};
    if (model_object_state(&row) != MODEL_STATE_CONFLICT)
        ui_app_status(app, false, "'R' resolves a conflict: %s %s is %s",
                      kind_get(row.kind)->noun, model_object_id(&row),
                      model_state_name(model_object_state(&row)));
    else if (store_edit_get(ui_app_store(app), row.kind, model_object_id(&row), &info, &e))
        ui_app_status(app, true, "resolve: %s", e.msg);
    else
        ask_resolve(app, &row, &info);
    store_edit_info_clear(&info);
    model_object_clear(&row);
}

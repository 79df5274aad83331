/*
 * Shared by the record views (ui/view*.c): rows of rules and credentials as table
 * rows and detail lines, and the store-backed sources' scratch space. Private.
 */
#ifndef RAMPART_UI_VIEW_INTERNAL_H
#define RAMPART_UI_VIEW_INTERNAL_H

#include "ui_internal.h"

/* Scratch rows of a store source, grown to the largest page asked for. */
typedef struct ui_rows_buf {
    model_rule *rules;
    size_t nrules;
    model_cred *creds;
    size_t ncreds;
} ui_rows_buf;

error_code ui_rows_rules(ui_rows_buf *b, size_t n, error_info *err);
error_code ui_rows_creds(ui_rows_buf *b, size_t n, error_info *err);

/* A rules or credentials view: its columns, its sorts and the store order of
 * each; the rows are the store's keyset pages of that kind, one row a record. */
typedef struct ui_record_view {
    const ui_view_ops *ops;
    ui_kind kind;
    const ui_table_col *cols;
    int ncols;
    const char *const *sorts;
    const store_sort *sort_of; /* nsorts of them */
    int nsorts;
} ui_record_view;

/* What every view's row source reads from (its ctx, freed with the view). */
typedef struct ui_view_ctx {
    ui_app *app;
    ui_rows_buf buf;               /* scratch rows of store pages */
    const ui_record_view *records; /* NULL unless a record view */
} ui_view_ctx;

/* The colour of a sync state (never the only sign: the state is written out). */
ui_style ui_state_style(model_state state);

/* What a row in `state` needs, with its error ("failed: why"); "" when settled.
 * Into the row's note. */
void ui_state_note(model_state state, const char *error, ui_table_row *row);

/* Cells of a rule: id, cidr, action, state, policy, description. */
void ui_rule_row(const model_rule *r, ui_table_row *row);
/* Cells of a credential: id, description, state, acl, owner, created. */
void ui_cred_row(const model_cred *c, ui_table_row *row);

/* The ACL rules joined by ", " into buf. */
void ui_acl_text(const model_acl *acl, char *buf, size_t size);

/* Detail lines, fresh from the store. */
error_code ui_rule_details(store *st, const char *id, ui_table_detail_fn fn, void *ctx,
                           error_info *err);
error_code ui_cred_details(store *st, const char *id, ui_table_detail_fn fn, void *ctx,
                           error_info *err);

/* Copy text into a cell (cut at a character boundary). */
void ui_cell_set(char *cell, const char *text);

/* A view with its table over `src` (copied; its ctx is set to the view's own
 * ui_view_ctx for `app`). */
error_code ui_view_make(ui_app *app, const ui_view_ops *ops, const ui_table_source *src,
                        ui_view **out, error_info *err);

/* A rules or credentials view as `def` says (borrowed for the view's life). */
error_code ui_view_records_new(ui_app *app, const ui_record_view *def, ui_view **out,
                               error_info *err);

#endif

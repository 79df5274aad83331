/*
 * The part of the edit code that store_edit.c (the user's side) and
 * store_edit_sync.c (the sync's side) share: the `edits` and `conflicts`
 * tables, reading a row with its edit, and settling its state. Every call runs
 * inside the caller's op. Nothing outside those two files includes this.
 */
#ifndef RAMPART_STORE_EDIT_INTERNAL_H
#define RAMPART_STORE_EDIT_INTERNAL_H

#include "store_compare.h"
#include "store_internal.h"
#include "store_stmt.h"

/* The kind's name in the edits and conflicts tables (as in aliases). */
const char *store_edit_kind_key(model_kind kind);
/* Two column texts are equal (NULL reads as ""). */
bool store_edit_same(const char *a, const char *b);
/* ERROR_NOMEM with its message. */
error_code store_edit_nomem(error_info *err);

/* One line of `edits`: put (kept if the field already has one), set (base and
 * remote; remote NULL: no conflict), drop. */
error_code store_edit_line_put(store *st, model_kind kind, const char *id, const kind_field *f,
                               const char *base, error_info *err);
error_code store_edit_line_set(store *st, model_kind kind, const char *id, const kind_field *f,
                               const char *base, const char *remote, error_info *err);
error_code store_edit_line_drop(store *st, model_kind kind, const char *id, const kind_field *f,
                                error_info *err);
/* The conflict record of row `id`: written (replacing any), or read into info.
 */
error_code store_edit_conflict_put(store *st, model_kind kind, const char *id,
                                   store_conflict reason, const char *other_id, error_info *err);
error_code store_edit_read_conflict(store *st, model_kind kind, const char *id,
                                    store_edit_info *info, error_info *err);

/* A row and its edit, read together by store_edit_open and released together by
 * store_edit_close (whatever open returned). */
typedef struct store_edit_row {
    model_object row;
    store_edit_info info;
} store_edit_row;
error_code store_edit_open(store *st, model_kind kind, const char *id, store_edit_row *e,
                           error_info *err);
void store_edit_close(store_edit_row *e);
/* A line for each field in `fields` (a kind_field_bit set) where `from`
 * differs from `row`, its base from's value; with `skip_empty`, none where that
 * value is empty (a reply that leaves a field empty says nothing of it). */
error_code store_edit_put_bases(store *st, const model_object *from, const model_object *row,
                                const char *id, unsigned fields, bool skip_empty,
                                error_info *err);
/* The descriptor's field of info's line i. */
const kind_field *store_edit_field_of(const store_edit_info *info, size_t i);
/* Drop the lines back at their base (and not in conflict); count what is left
 * and how much of it conflicts. */
error_code store_edit_drop_settled(store *st, const store_edit_info *info, size_t *left,
                                   size_t *conflicting, error_info *err);
/* Move the row to `state` (with `why` as its error; NULL: none and no move when
 * it is there already). */
error_code store_edit_move(store *st, const store_edit_info *info, model_state state,
                           const char *why, error_info *err);
/* Settling a row whose settled lines are dropped: `left` lines are left,
 * `conflicting` of them with a remote value. */
typedef error_code (*store_settle_fn)(store *st, const store_edit_info *info, size_t left,
                                      size_t conflicting, void *ctx, error_info *err);
/* Re-read row `id`, drop its settled lines, and let `fn` settle its state. */
error_code store_edit_settle(store *st, model_kind kind, const char *id, store_settle_fn fn,
                             void *ctx, error_info *err);
/* Re-read the row, drop settled lines, and make it edited (lines left: *left)
 * or synced. */
error_code store_edit_resettle(store *st, model_kind kind, const char *id, size_t *left,
                               error_info *err);
/* The row's edited fields back at their bases (remote_side: the conflicting
 * ones at their remote values), written. */
error_code store_edit_apply_side(store *st, model_object *row, const store_edit_info *info,
                                 bool remote_side, error_info *err);

#endif

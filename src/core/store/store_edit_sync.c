/*
 * store: the sync's side of an edit (store.h, "edits in place"): a PATCH's
 * reply (store_edit_pushed), a PATCH that cannot go through
 * (store_edit_conflict), a create's reply that differs from the row
 * (store_edit_after_confirm), and the pull's comparison of edited rows with
 * their listed copies (store_edit_merge). The tables and the settling they
 * share with the user's side are store_edit.c's (store_edit_internal.h).
 */
#include "store_edit_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"

/* ---- a PATCH's outcome ------------------------------------------------------- */

/* Compare `remote` with the row field by field: lines of the fields in `sent`
 * take the remote value as base; with `pull`, other lines follow the merge
 * rules (see merge_line); fields not edited take the remote value. */
typedef struct compare {
    const model_object *remote;
    unsigned sent; /* fields a PATCH carried (pushed) */
    bool pull;     /* a listing: a line may become a conflict */
    bool dirty;    /* the row's values changed */
} compare;

/* One edit line against the remote value `rv`. */
static error_code merge_line(store *st, const store_edit_info *info, size_t i, const compare *c,
                             const char *rv, error_info *err)
{
    const store_edit_field *e = &info->field[i];
    const kind_field *f = store_edit_field_of(info, i);
    if (c->sent & (1u << e->field) || store_edit_same(rv, e->local)) {
        if (store_edit_same(rv, e->local))
            return store_edit_line_drop(st, info->kind, info->id, f, err);
        return store_edit_line_set(st, info->kind, info->id, f, rv, e->remote, err);
    }
    if (!c->pull)
        return ERROR_OK;
    /* Back at the base: no conflict (any more); else the remote changed it too.
     */
    return store_edit_line_set(st, info->kind, info->id, f, e->base,
                               store_edit_same(rv, e->base) ? NULL : rv, err);
}

/* The walk of compare_fields: `line` is the first edit line not behind the
 * field compared. */
typedef struct compare_walk {
    store *st;
    model_object *row;
    const store_edit_info *info;
    compare *c;
    size_t line;
} compare_walk;

/* store_compare_fn: field i's remote text `rv` against the row's `lv`. */
static error_code compare_one(size_t i, const char *rv, const char *lv, void *ctx,
                              error_info *err)
{
    compare_walk *w = ctx;
    const store_edit_info *info = w->info;
    while (w->line < info->count && info->field[w->line].field < i)
        w->line++;
    if (w->line < info->count && info->field[w->line].field == i)
        return merge_line(w->st, info, w->line, w->c, rv, err);
    if (store_edit_same(rv, lv))
        return ERROR_OK;
    w->c->dirty = true;
    return store_field_set_text(w->row, &kind_get(w->row->kind)->fields[i], rv, err);
}

/* Every editable field of the row against `c->remote`. */
static error_code compare_fields(store *st, model_object *row, const store_edit_info *info,
                                 compare *c, error_info *err)
{
    compare_walk w = {st, row, info, c, 0};
    return store_compare_fields(c->remote, row, kind_field_set(row->kind, KIND_FIELD_EDIT),
                                false, compare_one, &w, err);
}

/* Write the remote values taken into a row; a rule whose new remote cidr a live
 * rule here holds keeps its cached values (as the merge's update does). */
static error_code write_taken(store *st, const model_object *row, error_info *err)
{
    error_code rc = store_update_write(st, row, err);
    return rc == ERROR_CONFLICT ? ERROR_OK : rc;
}

/* The state `left` lines (`conflicting` of them with a remote value) say. A
 * conflict about a key or a refusal keeps its own reason while lines are left.
 */
static error_code settle_lines(store *st, const store_edit_info *info, size_t left,
                               size_t conflicting, void *ctx, error_info *err)
{
    size_t *conflicts = ctx; /* NULL: not counted */
    if (!left) {
        error_code rc = store_edit_move(st, info, MODEL_STATE_SYNCED, "", err);
        return rc == ERROR_CONFLICT ? ERROR_OK : rc; /* a rule whose key is still held */
    }
    if (info->conflict == STORE_CONFLICT_KEY || info->conflict == STORE_CONFLICT_REJECTED)
        return ERROR_OK;
    if (!conflicting)
        return store_edit_move(st, info, MODEL_STATE_EDITED, "", err);
    if (info->conflict != STORE_CONFLICT_FIELDS && conflicts)
        ++*conflicts;
    if (store_edit_conflict_put(st, info->kind, info->id, STORE_CONFLICT_FIELDS, "", err))
        return err->code;
    return store_edit_move(st, info, MODEL_STATE_CONFLICT,
                           "changed remotely and here: keep the local values or take the remote's",
                           err);
}

/* One edited row against a remote copy, inside an op. */
static error_code compare_row(store *st, model_kind kind, const char *id, compare *c,
                              size_t *conflicts, error_info *err)
{
    store_edit_row e;
    error_code rc = store_edit_open(st, kind, id, &e, err);
    if (rc == ERROR_OK)
        rc = compare_fields(st, &e.row, &e.info, c, err);
    if (rc == ERROR_OK && c->dirty)
        rc = write_taken(st, &e.row, err);
    /* After the comparison: the state the lines left say. */
    if (rc == ERROR_OK)
        rc = store_edit_settle(st, kind, e.info.id, settle_lines, conflicts, err);
    store_edit_close(&e);
    return rc;
}

typedef struct pushed_call {
    const model_object *sent;
    unsigned fields;
    model_object *remote; /* a copy that passed the gate */
} pushed_call;

static error_code pushed_in_op(store *st, const pushed_call *p, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, p->sent->kind, model_object_id(p->sent), canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_EDITED)
        return ERROR_OK; /* discarded, deleted or settled meanwhile */
    compare c = {.remote = p->remote, .sent = p->fields};
    return compare_row(st, p->sent->kind, canon, &c, NULL, err);
}

error_code store_edit_pushed(store *st, const model_object *sent, unsigned fields,
                             const model_object *remote, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if ((unsigned)sent->kind >= MODEL_KIND_COUNT || remote->kind != sent->kind)
        return error_set(err, ERROR_INVALID, "a PATCH reply of another kind");
    model_object copy;
    if (model_object_copy(&copy, remote, err))
        return err->code;
    error_code rc = kind_validate_row(&copy, err);
    if (rc == ERROR_OK) {
        pushed_call p = {sent, fields, &copy};
        store_op op;
        rc = store_op_begin(st, true, &op, err);
        if (rc == ERROR_OK)
            rc = store_op_end(st, op, pushed_in_op(st, &p, err), err);
    }
    model_object_clear(&copy);
    return rc;
}

static error_code conflict_in_op(store *st, model_kind kind, const char *id, store_conflict reason,
                                 const char *why, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, kind, id, canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_EDITED)
        return error_set(err, ERROR_STATE, "%s %s is %s, not edited", kind_get(kind)->noun, canon,
                         model_state_name(state));
    if (store_edit_conflict_put(st, kind, canon, reason, "", err))
        return err->code;
    const char *text = why && why[0] ? why
                       : reason == STORE_CONFLICT_GONE
                           ? "deleted remotely while edited here: create it again "
                             "(--keep-local) or let it go (--take-remote)"
                           : "the server refused the edit";
    return store_row_set_state_in_op(st, kind, canon, MODEL_STATE_CONFLICT, text, err);
}

error_code store_edit_conflict(store *st, model_kind kind, const char *id, store_conflict reason,
                               const char *why, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    if (reason != STORE_CONFLICT_GONE && reason != STORE_CONFLICT_REJECTED)
        return error_set(err, ERROR_INVALID, "a PATCH ends in a gone or rejected conflict");
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, conflict_in_op(st, kind, id ? id : "", reason, why, err), err);
}

/* ---- the look before a write ---------------------------------------------- */

/* Called for each user field whose remote value `rv` differs from the row's `lv`
 * (column texts; the descriptor's field i). */
typedef error_code (*differ_fn)(store *st, model_object *row, size_t i, const char *rv,
                                const char *lv, void *ctx, error_info *err);

/* The walk of take_differing. */
typedef struct differ_walk {
    store *st;
    model_object *row;
    differ_fn fn;
    void *ctx;
    size_t *count;
} differ_walk;

/* store_compare_fn: a differing field, counted, seen by the walk's `fn`, takes
 * the remote value `rv`. */
static error_code take_one(size_t i, const char *rv, const char *lv, void *ctx,
                           error_info *err)
{
    const differ_walk *w = ctx;
    ++*w->count;
    if (w->fn(w->st, w->row, i, rv, lv, w->ctx, err))
        return err->code;
    return store_field_set_text(w->row, &kind_get(w->row->kind)->fields[i], rv, err);
}

/* The row takes the remote's value of every differing user field, `fn` seeing
 * each first; *count says how many differed. */
static error_code take_differing(store *st, model_object *row, const model_object *remote,
                                 differ_fn fn, void *ctx, size_t *count, error_info *err)
{
    differ_walk w = {st, row, fn, ctx, count};
    *count = 0;
    return store_compare_fields(remote, row, kind_field_set(row->kind, KIND_FIELD_EDIT), true,
                                take_one, &w, err);
}

/* A changed field of a deleted row: its line keeps what this cache had. */
static error_code changed_line(store *st, model_object *row, size_t i, const char *rv,
                               const char *lv, void *ctx, error_info *err)
{
    (void)ctx;
    const kind_field *f = &kind_get(row->kind)->fields[i];
    const char *id = model_object_id(row);
    if (store_edit_line_put(st, row->kind, id, f, lv, err))
        return err->code;
    return store_edit_line_set(st, row->kind, id, f, lv, rv, err);
}

/* Only counts (the row is a scratch copy). */
static error_code no_line(store *st, model_object *row, size_t i, const char *rv,
                          const char *lv, void *ctx, error_info *err)
{
    (void)st, (void)row, (void)i, (void)rv, (void)lv, (void)ctx, (void)err;
    return ERROR_OK;
}

/* A deleting row against the remote's copy: the same user fields, or a conflict
 * changed whose row takes the remote's values. */
static error_code look_delete(store *st, model_object *row, const model_object *remote,
                              store_look_result *result, error_info *err)
{
    const char *id = model_object_id(row);
    model_object scratch;
    size_t changed = 0;
    *result = STORE_LOOK_WRITE;
    if (model_object_copy(&scratch, row, err))
        return err->code;
    error_code rc = take_differing(st, &scratch, remote, no_line, NULL, &changed, err);
    model_object_clear(&scratch);
    if (rc != ERROR_OK || !changed)
        return rc;
    *result = STORE_LOOK_CONFLICT;
    /* The state first: a conflicting rule holds no key to clash on. */
    rc = store_row_set_state_in_op(st, row->kind, id, MODEL_STATE_CONFLICT,
                                   "deleted here, changed remotely: delete it anyway "
                                   "(--keep-local) or keep it (--take-remote)",
                                   err);
    if (rc == ERROR_OK)
        rc = take_differing(st, row, remote, changed_line, NULL, &changed, err);
    if (rc == ERROR_OK)
        rc = store_edit_conflict_put(st, row->kind, id, STORE_CONFLICT_CHANGED, "", err);
    return rc == ERROR_OK ? write_taken(st, row, err) : rc;
}

/* An edited row against the remote's copy, as the pull compares it; the state
 * it is left in says what to do. */
static error_code look_edit(store *st, const char *canon, const model_object *remote,
                            store_look_result *result, error_info *err)
{
    compare c = {.remote = remote, .pull = true};
    size_t conflicts = 0;
    error_code rc = compare_row(st, remote->kind, canon, &c, &conflicts, err);
    model_state state = MODEL_STATE_SYNCED;
    char now[MODEL_ID_MAX + 1];
    if (rc == ERROR_OK)
        rc = store_row_resolve(st, remote->kind, canon, now, &state, err);
    if (rc == ERROR_OK)
        *result = state == MODEL_STATE_EDITED     ? STORE_LOOK_WRITE
                  : state == MODEL_STATE_CONFLICT ? STORE_LOOK_CONFLICT
                                                  : STORE_LOOK_SETTLED;
    return rc;
}

static error_code look_in_op(store *st, const model_object *remote, store_look_result *result,
                             error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    *result = STORE_LOOK_SKIP;
    if (store_row_resolve(st, remote->kind, model_object_id(remote), canon, &state, err))
        return err->code;
    if (state == MODEL_STATE_EDITED)
        return look_edit(st, canon, remote, result, err);
    /* An orphan's remote copy is useless to anyone: its token was lost. */
    if (state == MODEL_STATE_ORPHANED)
        *result = STORE_LOOK_WRITE;
    if (state != MODEL_STATE_DELETING)
        return ERROR_OK;
    model_object row;
    model_object_init(&row, remote->kind);
    error_code rc = store_get(st, remote->kind, canon, &row, err);
    if (rc == ERROR_OK)
        rc = look_delete(st, &row, remote, result, err);
    model_object_clear(&row);
    return rc;
}

error_code store_look(store *st, const model_object *remote, store_look_result *result,
                      error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *result = STORE_LOOK_SKIP;
    if ((unsigned)remote->kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)remote->kind);
    model_object copy;
    if (model_object_copy(&copy, remote, err))
        return err->code;
    error_code rc = kind_validate_row(&copy, err);
    if (rc == ERROR_OK) {
        store_op op;
        rc = store_op_begin(st, true, &op, err);
        if (rc == ERROR_OK)
            rc = store_op_end(st, op, look_in_op(st, &copy, result, err), err);
    }
    model_object_clear(&copy);
    return rc;
}

static error_code crossed_in_op(store *st, model_kind kind, const char *id, const char *why,
                                error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, kind, id, canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_SYNCED)
        return error_set(err, ERROR_STATE, "%s %s is %s, not synced", kind_get(kind)->noun,
                         canon, model_state_name(state));
    error_code rc = store_row_set_state_in_op(st, kind, canon, MODEL_STATE_CONFLICT, why, err);
    if (rc == ERROR_OK)
        rc = store_edit_conflict_put(st, kind, canon, STORE_CONFLICT_CROSSED, "", err);
    return rc;
}

error_code store_edit_crossed(store *st, model_kind kind, const char *id, const char *why,
                              error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, crossed_in_op(st, kind, id ? id : "", why, err), err);
}

error_code store_edit_after_confirm(store *st, const model_object *remote, const char *canon,
                                    error_info *err)
{
    model_object reply, row;
    model_object_init(&row, remote->kind);
    if (model_object_copy(&reply, remote, err))
        return err->code;
    error_info ignored;
    /* Compared in canonical form; a reply the gate refuses says nothing. A field
     * the reply left empty is taken as not said (a minimal reply is no edit). */
    error_code rc = ERROR_OK;
    if (kind_validate_row(&reply, &ignored) == ERROR_OK) {
        rc = store_get(st, remote->kind, canon, &row, err);
        if (rc == ERROR_OK)
            rc = store_edit_put_bases(st, &reply, &row, model_object_id(&row),
                                      kind_field_set(row.kind, KIND_FIELD_EDIT), true, err);
        size_t left = 0;
        if (rc == ERROR_OK)
            rc = store_edit_resettle(st, remote->kind, canon, &left, err);
    }
    model_object_clear(&reply);
    model_object_clear(&row);
    return rc;
}

/* ---- the pull's side -------------------------------------------------------- */

/* The staged copy of row `id`: *found false when absent, *kept when it is only
 * the cached copy standing in for a refused one. */
static error_code staged_row(store *st, model_kind kind, const char *id, model_object *out,
                             bool *found, bool *kept, error_info *err)
{
    sqlite3_stmt *s = store_kind_stmt(st, kind, KSTMT_PULL_ROW, err);
    if (store_stmt_first(st, s, &id, 1, found, err))
        return err->code;
    error_code rc = ERROR_OK;
    if (*found) {
        *kept = sqlite3_column_int(s, sqlite3_column_count(s) - 1) != 0;
        rc = store_row_read(s, kind, out, err);
    }
    store_reset(s);
    return rc;
}

/* The ids of `kind`'s edited and conflicting rows (heap array, caller frees).
 */
static error_code edited_ids(store *st, model_kind kind, char (**ids)[MODEL_ID_MAX + 1], size_t *n,
                             error_info *err)
{
    *ids = NULL;
    *n = 0;
    size_t cap = 0;
    sqlite3_stmt *s = store_kind_stmt(st, kind, KSTMT_EDITED_IDS, err);
    if (!s)
        return err->code;
    error_code rc = ERROR_OK;
    for (bool more = true; rc == ERROR_OK;) {
        rc = store_step(st, s, &more, err);
        if (rc != ERROR_OK || !more)
            break;
        if (!buf_grow_array((void **)ids, &cap, *n + 1, sizeof **ids)) {
            rc = store_edit_nomem(err);
            break;
        }
        store_col_copy(s, 0, (*ids)[(*n)++], MODEL_ID_MAX + 1);
    }
    store_reset(s);
    return rc;
}

/* A conflict whose row holds the remote's values (changed, crossed) follows the
 * listing: its fields take the listed values (a changed line keeps its base,
 * what this cache had when it deleted), and it stays a conflict. */
/* A field of a conflict holding the remote's values: its line (if any) keeps its
 * base and takes the new remote value. */
static error_code follow_line(store *st, model_object *row, size_t i, const char *rv,
                              const char *lv, void *ctx, error_info *err)
{
    (void)lv;
    const store_edit_info *info = ctx;
    const kind_field *f = &kind_get(row->kind)->fields[i];
    for (size_t l = 0; l < info->count; l++) {
        if (info->field[l].field == i)
            return store_edit_line_set(st, row->kind, info->id, f, info->field[l].base, rv,
                                       err);
    }
    return ERROR_OK;
}

static error_code follow_remote(store *st, model_kind kind, const char *id,
                                const model_object *remote, error_info *err)
{
    store_edit_row e;
    size_t changed = 0;
    error_code rc = store_edit_open(st, kind, id, &e, err);
    if (rc == ERROR_OK)
        rc = take_differing(st, &e.row, remote, follow_line, &e.info, &changed, err);
    if (rc == ERROR_OK && changed)
        rc = write_taken(st, &e.row, err);
    store_edit_close(&e);
    return rc;
}

/* An edited row absent from a complete listing: deleted remotely. A local
 * create in a key conflict was never listed: nothing to say. */
static error_code merge_absent(store *st, model_kind kind, const char *id, size_t *conflicts,
                               error_info *err)
{
    store_edit_info info = {0};
    if (store_edit_read_conflict(st, kind, id, &info, err))
        return err->code;
    if (store_is_local_id(id) || info.conflict == STORE_CONFLICT_GONE)
        return ERROR_OK;
    ++*conflicts;
    if (store_edit_conflict_put(st, kind, id, STORE_CONFLICT_GONE, "", err))
        return err->code;
    return store_row_set_state_in_op(st, kind, id, MODEL_STATE_CONFLICT,
                                     "deleted remotely while edited here: create it again "
                                     "(--keep-local) or let it go (--take-remote)",
                                     err);
}

static error_code merge_one(store *st, model_kind kind, const char *id, size_t *conflicts,
                            error_info *err)
{
    model_object remote;
    model_object_init(&remote, kind);
    bool found = false, kept = false;
    error_code rc = staged_row(st, kind, id, &remote, &found, &kept, err);
    bool holds = rc == ERROR_OK && store_conflict_holds_remote(st, kind, id);
    if (rc == ERROR_OK && holds && !kept)
        rc = found ? follow_remote(st, kind, id, &remote, err)
                   : store_row_remove_in_op(st, kind, id, err);
    else if (rc == ERROR_OK && !found)
        rc = merge_absent(st, kind, id, conflicts, err);
    else if (rc == ERROR_OK && found && !kept) {
        compare c = {.remote = &remote, .pull = true};
        rc = compare_row(st, kind, id, &c, conflicts, err);
    }
    model_object_clear(&remote);
    return rc;
}

error_code store_edit_merge(store *st, model_kind kind, size_t *conflicts, error_info *err)
{
    char(*ids)[MODEL_ID_MAX + 1] = NULL;
    size_t n = 0;
    error_code rc = edited_ids(st, kind, &ids, &n, err);
    for (size_t i = 0; rc == ERROR_OK && i < n; i++)
        rc = merge_one(st, kind, ids[i], conflicts, err);
    free(ids);
    return rc;
}

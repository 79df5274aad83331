/*
 * store: edits in place and conflicts (store.h, "edits in place"). One piece of
 * code for every kind: fields are the descriptor's, compared as their column text
 * (store_field_text), so an ACL is one string like any other field.
 *
 * Where things are kept: the row holds the local values; `edits` one line per
 * edited field (base: what the remote had; remote: its new value in a conflict);
 * `conflicts` why a row waits for the user. Triggers (store_sql.c, migration 4)
 * drop both when the row leaves edited/conflict or is removed, so every path that
 * settles a row (a delete, a merge, a remove) settles its edit too.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const conflict_names[STORE_CONFLICT_COUNT] = {
    [STORE_CONFLICT_NONE] = "none",   [STORE_CONFLICT_FIELDS] = "fields",
    [STORE_CONFLICT_GONE] = "gone",   [STORE_CONFLICT_KEY] = "key",
    [STORE_CONFLICT_REJECTED] = "rejected",
};

const char *store_conflict_name(store_conflict reason)
{
    return (unsigned)reason < STORE_CONFLICT_COUNT ? conflict_names[reason] : "none";
}

static store_conflict conflict_parse(const char *text)
{
    for (int i = 1; i < STORE_CONFLICT_COUNT; i++) {
        if (text && strcmp(text, conflict_names[i]) == 0)
            return (store_conflict)i;
    }
    return STORE_CONFLICT_NONE;
}

void store_edit_info_clear(store_edit_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->count; i++) {
        free(info->field[i].base);
        free(info->field[i].local);
        free(info->field[i].remote);
    }
    memset(info, 0, sizeof *info);
}

/* The kind's name in the edits and conflicts tables (as in aliases). */
static const char *kind_key(model_kind kind)
{
    return kind_get(kind)->noun;
}

static bool same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static char *dup_or_null(const unsigned char *text, bool *nomem)
{
    if (!text)
        return NULL;
    char *copy = strdup((const char *)text);
    *nomem |= copy == NULL;
    return copy;
}

static error_code nomem(error_info *err)
{
    return error_set(err, ERROR_NOMEM, "out of memory");
}

/* ---- the tables ----------------------------------------------------------- */

static error_code exec_args(store *st, store_stmt_id id, const char *const *args, int n,
                            error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, id, err);
    if (!s || store_bind_texts(st, s, args, n, err))
        return err->code;
    return store_exec(st, s, err);
}

static error_code edit_put(store *st, model_kind kind, const char *id, const kind_field *f,
                           const char *base, error_info *err)
{
    const char *args[] = {kind_key(kind), id, f->name, base};
    return exec_args(st, STMT_EDIT_PUT, args, 4, err);
}

static error_code edit_set(store *st, model_kind kind, const char *id, const kind_field *f,
                           const char *base, const char *remote, error_info *err)
{
    const char *args[] = {kind_key(kind), id, f->name, base, remote};
    return exec_args(st, STMT_EDIT_SET, args, 5, err);
}

static error_code edit_drop(store *st, model_kind kind, const char *id, const kind_field *f,
                            error_info *err)
{
    const char *args[] = {kind_key(kind), id, f->name};
    return exec_args(st, STMT_EDIT_DROP, args, 3, err);
}

static error_code conflict_put(store *st, model_kind kind, const char *id,
                               store_conflict reason, const char *other_id, error_info *err)
{
    const char *args[] = {kind_key(kind), id, conflict_names[reason], other_id ? other_id : ""};
    return exec_args(st, STMT_CONFLICT_PUT, args, 4, err);
}

/* The conflict record of row `id` into info (none: STORE_CONFLICT_NONE). */
static error_code read_conflict(store *st, model_kind kind, const char *id,
                                store_edit_info *info, error_info *err)
{
    const char *args[] = {kind_key(kind), id};
    sqlite3_stmt *s = store_stmt(st, STMT_CONFLICT_GET, err);
    bool row = false;
    if (!s || store_bind_texts(st, s, args, 2, err) || store_step(st, s, &row, err))
        return err->code;
    info->conflict = STORE_CONFLICT_NONE;
    info->other_id[0] = '\0';
    if (row) {
        info->conflict = conflict_parse((const char *)sqlite3_column_text(s, 0));
        store_col_copy(s, 1, info->other_id, sizeof info->other_id);
    }
    store_reset(s);
    return ERROR_OK;
}

/* One line of `edits` into its slot by field index (slots: one per field). */
static error_code read_edit_line(sqlite3_stmt *s, model_kind kind, store_edit_field *slots,
                                 bool *used, unsigned *fields, error_info *err)
{
    const kind_field *f = kind_field_by_name(kind, (const char *)sqlite3_column_text(s, 0));
    if (!f)
        return ERROR_OK; /* a field this version does not know: nothing to do with it */
    size_t i = (size_t)(f - kind_get(kind)->fields);
    bool oom = false;
    slots[i].field = i;
    slots[i].base = dup_or_null(sqlite3_column_text(s, 1), &oom);
    slots[i].remote = dup_or_null(sqlite3_column_text(s, 2), &oom);
    used[i] = true;
    *fields |= 1u << i;
    return oom ? nomem(err) : ERROR_OK;
}

/* The edit lines of row `row` into info, in descriptor order, with the row's own
 * values as `local`. */
static error_code read_edits(store *st, const model_object *row, store_edit_info *info,
                             error_info *err)
{
    const kind_desc *d = kind_get(row->kind);
    store_edit_field slots[sizeof info->field / sizeof info->field[0]] = {{0}};
    bool used[sizeof slots / sizeof slots[0]] = {false};
    const char *args[] = {kind_key(row->kind), model_object_id(row)};
    sqlite3_stmt *s = store_stmt(st, STMT_EDIT_LIST, err);
    if (!s || store_bind_texts(st, s, args, 2, err))
        return err->code;
    error_code rc = ERROR_OK;
    for (bool more = true; rc == ERROR_OK && more;) {
        rc = store_step(st, s, &more, err);
        if (rc == ERROR_OK && more)
            rc = read_edit_line(s, row->kind, slots, used, &info->fields, err);
    }
    store_reset(s);
    for (size_t i = 0; i < d->field_count && i < sizeof slots / sizeof slots[0]; i++) {
        if (!used[i])
            continue;
        info->field[info->count] = slots[i];
        if (rc == ERROR_OK) {
            char *heap = NULL;
            const char *local = store_field_text(row, &d->fields[i], &heap, err);
            info->field[info->count].local = local ? strdup(local) : NULL;
            free(heap);
            if (!local)
                rc = err->code;
            else if (!info->field[info->count].local)
                rc = nomem(err);
        }
        info->count++;
    }
    return rc;
}

/* Row `id` and its edit, inside an op: `row` initialised by the caller. */
static error_code load(store *st, model_kind kind, const char *id, model_object *row,
                       store_edit_info *info, error_info *err)
{
    if (store_get(st, kind, id, row, err))
        return err->code;
    info->kind = kind;
    model_copy_text(info->id, sizeof info->id, model_object_id(row));
    info->state = model_object_state(row);
    if (read_conflict(st, kind, info->id, info, err))
        return err->code;
    return read_edits(st, row, info, err);
}

error_code store_edit_get(store *st, model_kind kind, const char *id, store_edit_info *out,
                          error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    memset(out, 0, sizeof *out);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    model_object row;
    model_object_init(&row, kind);
    error_code rc = load(st, kind, id, &row, out, err);
    model_object_clear(&row);
    if (rc != ERROR_OK)
        store_edit_info_clear(out);
    return rc;
}

/* ---- settling ------------------------------------------------------------- */

static const kind_field *field_of(const store_edit_info *info, size_t i)
{
    return &kind_get(info->kind)->fields[info->field[i].field];
}

/* Drop the lines whose local value is back at its base (and not in conflict);
 * count what is left and how much of it conflicts. */
static error_code drop_settled(store *st, const store_edit_info *info, size_t *left,
                               size_t *conflicting, error_info *err)
{
    *left = *conflicting = 0;
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        if (!e->remote && same(e->local, e->base)) {
            if (edit_drop(st, info->kind, info->id, field_of(info, i), err))
                return err->code;
            continue;
        }
        ++*left;
        *conflicting += e->remote != NULL;
    }
    return ERROR_OK;
}

/* Move the row to `state` unless it is there already (a move out of
 * edited/conflict drops what the triggers drop). */
static error_code move(store *st, const store_edit_info *info, model_state state,
                       const char *why, error_info *err)
{
    if (info->state == state && !why)
        return ERROR_OK;
    return store_row_set_state_in_op(st, info->kind, info->id, state, why ? why : "", err);
}

/* After the values or lines changed: re-read, drop settled lines, and make the row
 * edited (lines left) or synced (none). */
static error_code resettle(store *st, model_kind kind, const char *id, size_t *left,
                           error_info *err)
{
    model_object row;
    store_edit_info info = {0};
    model_object_init(&row, kind);
    size_t conflicting = 0;
    error_code rc = load(st, kind, id, &row, &info, err);
    if (rc == ERROR_OK)
        rc = drop_settled(st, &info, left, &conflicting, err);
    if (rc == ERROR_OK)
        rc = move(st, &info, *left ? MODEL_STATE_EDITED : MODEL_STATE_SYNCED, NULL, err);
    store_edit_info_clear(&info);
    model_object_clear(&row);
    return rc;
}

/* Set the row's fields named by the lines of `info` to their bases (or, with
 * `remote_side`, to the remote values of the conflicting ones), and write it. */
static error_code apply_side(store *st, model_object *row, const store_edit_info *info,
                             bool remote_side, error_info *err)
{
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        const char *value = remote_side ? e->remote : e->base;
        if (!value)
            continue;
        if (store_field_set_text(row, field_of(info, i), value, err))
            return err->code;
    }
    return store_update_write(st, row, err);
}

/* ---- the user's edit ------------------------------------------------------ */

static error_code refuse_state(const store_edit_info *info, error_info *err)
{
    const char *noun = kind_get(info->kind)->noun;
    switch (info->state) {
    case MODEL_STATE_CREATING:
    case MODEL_STATE_UNKNOWN:
        return error_set(err, ERROR_STATE, "%s %s cannot be edited now: its create is in "
                         "flight or its outcome unknown; sync first", noun, info->id);
    case MODEL_STATE_DELETING:
        return error_set(err, ERROR_STATE, "%s %s is being deleted: nothing to edit",
                         noun, info->id);
    case MODEL_STATE_REMOTE_DELETED:
        return error_set(err, ERROR_STATE, "%s %s was deleted remotely: retry it (a new "
                         "create) or discard it, then edit", noun, info->id);
    default:
        break;
    }
    return error_set(err, ERROR_STATE, "%s %s is %s: it cannot be edited", noun, info->id,
                     model_state_name(info->state));
}

/* Whether the row waits for its create (the edit changes what will be sent). */
static bool is_queued_create(const store_edit_info *info)
{
    return info->state == MODEL_STATE_NEW || info->state == MODEL_STATE_FAILED ||
           (info->state == MODEL_STATE_CONFLICT && info->conflict == STORE_CONFLICT_KEY &&
            store_is_local_id(info->id));
}

/* Record the base of each field in `fields` not edited yet whose value changed. */
static error_code put_bases(store *st, const model_object *before, const model_object *after,
                            unsigned fields, const store_edit_info *info, error_info *err)
{
    const kind_desc *d = kind_get(before->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        if (!(fields & (1u << i)) || (info->fields & (1u << i)))
            continue;
        char *h1 = NULL, *h2 = NULL;
        const char *old = store_field_text(before, &d->fields[i], &h1, err);
        const char *now = old ? store_field_text(after, &d->fields[i], &h2, err) : NULL;
        error_code rc = !old || !now ? err->code : ERROR_OK;
        if (rc == ERROR_OK && !same(old, now))
            rc = edit_put(st, before->kind, info->id, &d->fields[i], old, err);
        free(h1);
        free(h2);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

/* store_update_fn: the edit inside its op; `ctx` the store_edit_result. */
static error_code edit_in_op(store *st, model_object *given, unsigned fields,
                             model_object *row, void *ctx, error_info *err)
{
    store_edit_result *result = ctx;
    model_kind kind = given->kind;
    model_object before;
    store_edit_info info = {0};
    model_object_init(&before, kind);
    error_code rc = load(st, kind, model_object_id(given), &before, &info, err);
    bool create = rc == ERROR_OK && is_queued_create(&info);
    bool editable = create || info.state == MODEL_STATE_SYNCED ||
                    info.state == MODEL_STATE_EDITED || info.state == MODEL_STATE_CONFLICT;
    if (rc == ERROR_OK && !editable)
        rc = refuse_state(&info, err);
    if (rc == ERROR_OK)
        rc = store_update_in_op(st, given, fields, row, err);
    if (rc == ERROR_OK && create) {
        *result = STORE_EDIT_CREATE;
        rc = move(st, &info, MODEL_STATE_NEW, info.state == MODEL_STATE_NEW ? NULL : "", err);
    } else if (rc == ERROR_OK) {
        rc = put_bases(st, &before, row, fields, &info, err);
    }
    /* A conflict about what the server holds waits for the user; one the edit
     * answers (a refused edit, a clashing cidr) is an edit again. */
    bool waits = info.state == MODEL_STATE_CONFLICT &&
                 (info.conflict == STORE_CONFLICT_FIELDS || info.conflict == STORE_CONFLICT_GONE);
    if (rc == ERROR_OK && !create && waits)
        *result = STORE_EDIT_CONFLICT;
    if (rc == ERROR_OK && !create && !waits) {
        size_t left = 0;
        rc = resettle(st, kind, info.id, &left, err);
        *result = left ? STORE_EDIT_EDITED : STORE_EDIT_UNCHANGED;
    }
    model_object_clear(row);
    if (rc == ERROR_OK)
        rc = store_get(st, kind, info.id, row, err);
    store_edit_info_clear(&info);
    model_object_clear(&before);
    return rc;
}

error_code store_edit(store *st, model_object *obj, unsigned fields,
                      store_edit_result *result, error_info *err)
{
    error_info scratch;
    store_edit_result ignored;
    return store_update_run(st, obj, fields, true, edit_in_op, result ? result : &ignored,
                            err ? err : &scratch);
}

/* ---- resolve ---------------------------------------------------------------- */

/* Fields: keep-local makes the remote values the bases; take-remote writes them. */
static error_code resolve_fields(store *st, model_object *row, const store_edit_info *info,
                                 store_side side, error_info *err)
{
    if (side == STORE_TAKE_REMOTE && apply_side(st, row, info, true, err))
        return err->code;
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        if (!e->remote)
            continue;
        error_code rc = side == STORE_TAKE_REMOTE
                            ? edit_drop(st, info->kind, info->id, field_of(info, i), err)
                            : edit_set(st, info->kind, info->id, field_of(info, i), e->remote,
                                       NULL, err);
        if (rc != ERROR_OK)
            return rc;
    }
    size_t left = 0;
    return resettle(st, info->kind, info->id, &left, err);
}

/* Gone: keep-local creates it again; take-remote lets it go. */
static error_code resolve_gone(store *st, const store_edit_info *info, store_side side,
                               char out_id[MODEL_ID_MAX + 1], error_info *err)
{
    out_id[0] = '\0';
    if (side == STORE_TAKE_REMOTE)
        return store_row_remove_in_op(st, info->kind, info->id, err);
    return store_row_recreate_in_op(st, info->kind, info->id, out_id, err);
}

/* Take the bases back and be synced: what a take-remote of an edit does. */
static error_code revert(store *st, model_object *row, const store_edit_info *info,
                         error_info *err)
{
    if (apply_side(st, row, info, false, err))
        return err->code;
    return move(st, info, MODEL_STATE_SYNCED, "", err);
}

/* Key: keep-local deletes the remote rule holding the key; take-remote adopts it
 * (a create) or drops the cidr edit (an edit). */
static error_code resolve_key(store *st, model_object *row, const store_edit_info *info,
                              store_side side, char out_id[MODEL_ID_MAX + 1], error_info *err)
{
    bool create = store_is_local_id(info->id);
    if (side == STORE_KEEP_LOCAL) {
        error_code rc = store_row_set_state_in_op(st, info->kind, info->other_id,
                                                  MODEL_STATE_DELETING, "", err);
        if (rc != ERROR_OK && rc != ERROR_NOT_FOUND)
            return rc;
        if (create)
            return move(st, info, MODEL_STATE_NEW, "", err);
        size_t left = 0;
        return resettle(st, info->kind, info->id, &left, err);
    }
    if (!create)
        return revert(st, row, info, err);
    model_copy_text(out_id, MODEL_ID_MAX + 1, info->other_id);
    if (store_row_remove_in_op(st, info->kind, info->id, err))
        return err->code;
    const char *args[] = {info->id, info->other_id, kind_key(info->kind)};
    return exec_args(st, STMT_ALIAS_INSERT, args, 3, err);
}

typedef struct resolve_call {
    model_kind kind;
    const char *id;
    store_side side;
    char *out_id;
} resolve_call;

static error_code resolve_in_op(store *st, const resolve_call *c, error_info *err)
{
    model_object row;
    store_edit_info info = {0};
    model_object_init(&row, c->kind);
    error_code rc = load(st, c->kind, c->id, &row, &info, err);
    if (rc == ERROR_OK && info.state != MODEL_STATE_CONFLICT)
        rc = error_set(err, ERROR_STATE, "%s %s is %s, not a conflict: nothing to resolve",
                       kind_get(c->kind)->noun, info.id, model_state_name(info.state));
    if (rc == ERROR_OK)
        model_copy_text(c->out_id, MODEL_ID_MAX + 1, info.id);
    if (rc == ERROR_OK) {
        switch (info.conflict) {
        case STORE_CONFLICT_GONE:
            rc = resolve_gone(st, &info, c->side, c->out_id, err);
            break;
        case STORE_CONFLICT_KEY:
            rc = resolve_key(st, &row, &info, c->side, c->out_id, err);
            break;
        case STORE_CONFLICT_REJECTED:
            rc = c->side == STORE_KEEP_LOCAL ? move(st, &info, MODEL_STATE_EDITED, "", err)
                                             : revert(st, &row, &info, err);
            break;
        case STORE_CONFLICT_FIELDS:
        default:
            rc = resolve_fields(st, &row, &info, c->side, err);
            break;
        }
    }
    store_edit_info_clear(&info);
    model_object_clear(&row);
    return rc;
}

error_code store_resolve(store *st, model_kind kind, const char *id, store_side side,
                         char out_id[MODEL_ID_MAX + 1], error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    char ignored[MODEL_ID_MAX + 1];
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    resolve_call c = {kind, id ? id : "", side, out_id ? out_id : ignored};
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, resolve_in_op(st, &c, err), err);
}

/* ---- delete and discard of an edited row ------------------------------------ */

/* Rows that have nothing remote to keep: a gone one, a local create in conflict. */
static bool nothing_remote(const store_edit_info *info)
{
    return info->conflict == STORE_CONFLICT_GONE ||
           (info->conflict == STORE_CONFLICT_KEY && store_is_local_id(info->id));
}

/* The row leaves edited/conflict for `state`, its fields back at their bases:
 * the state first (a deleting rule holds no key to clash on), which drops the
 * lines, then the values read before. */
static error_code leave_edit(store *st, model_kind kind, const char *canon, model_state state,
                             store_delete_result outcome, store_delete_result *result,
                             error_info *err)
{
    model_object row;
    store_edit_info info = {0};
    model_object_init(&row, kind);
    error_code rc = load(st, kind, canon, &row, &info, err);
    if (rc == ERROR_OK && nothing_remote(&info)) {
        *result = STORE_DELETE_REMOVED;
        rc = store_row_remove_in_op(st, kind, info.id, err);
    } else if (rc == ERROR_OK) {
        *result = outcome;
        rc = move(st, &info, state, "", err);
        if (rc == ERROR_OK)
            rc = apply_side(st, &row, &info, false, err);
    }
    store_edit_info_clear(&info);
    model_object_clear(&row);
    return rc;
}

error_code store_edit_delete_in_op(store *st, model_kind kind, const char *canon,
                                   store_delete_result *result, error_info *err)
{
    return leave_edit(st, kind, canon, MODEL_STATE_DELETING, STORE_DELETE_MARKED, result, err);
}

error_code store_edit_discard_in_op(store *st, model_kind kind, const char *canon,
                                    store_delete_result *result, error_info *err)
{
    return leave_edit(st, kind, canon, MODEL_STATE_SYNCED, STORE_DELETE_REVERTED, result,
                      err);
}

/* ---- the sync's side ---------------------------------------------------------- */

/* Compare `remote` with the row field by field: lines of the fields in `sent` take
 * the remote value as base; with `pull`, other lines follow the merge rules (see
 * merge_line); fields not edited take the remote value. */
typedef struct compare {
    const model_object *remote;
    unsigned sent;  /* fields a PATCH carried (pushed) */
    bool pull;      /* a listing: a line may become a conflict */
    bool dirty;     /* the row's values changed */
} compare;

/* One edit line against the remote value `rv`. */
static error_code merge_line(store *st, const store_edit_info *info, size_t i,
                             const compare *c, const char *rv, error_info *err)
{
    const store_edit_field *e = &info->field[i];
    const kind_field *f = field_of(info, i);
    if (c->sent & (1u << e->field) || same(rv, e->local)) {
        if (same(rv, e->local))
            return edit_drop(st, info->kind, info->id, f, err);
        return edit_set(st, info->kind, info->id, f, rv, e->remote, err);
    }
    if (!c->pull)
        return ERROR_OK;
    /* Back at the base: no conflict (any more); else the remote changed it too. */
    return edit_set(st, info->kind, info->id, f, e->base, same(rv, e->base) ? NULL : rv, err);
}

/* Every editable field of the row against `c->remote`. */
static error_code compare_fields(store *st, model_object *row, const store_edit_info *info,
                                 compare *c, error_info *err)
{
    const kind_desc *d = kind_get(row->kind);
    size_t line = 0;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_EDIT))
            continue;
        char *h1 = NULL, *h2 = NULL;
        const char *rv = store_field_text(c->remote, f, &h1, err);
        const char *lv = rv ? store_field_text(row, f, &h2, err) : NULL;
        error_code rc = !rv || !lv ? err->code : ERROR_OK;
        while (line < info->count && info->field[line].field < i)
            line++;
        bool edited = line < info->count && info->field[line].field == i;
        if (rc == ERROR_OK && edited)
            rc = merge_line(st, info, line, c, rv, err);
        else if (rc == ERROR_OK && !same(rv, lv)) {
            rc = store_field_set_text(row, f, rv, err);
            c->dirty = true;
        }
        free(h1);
        free(h2);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

/* Write the remote values taken into a row; a rule whose new remote cidr a live
 * rule here holds keeps its cached values (as the merge's update does). */
static error_code write_taken(store *st, const model_object *row, error_info *err)
{
    error_code rc = store_update_write(st, row, err);
    return rc == ERROR_CONFLICT ? ERROR_OK : rc;
}

/* After the comparison: the state the lines left say. */
static error_code settle_after_compare(store *st, model_kind kind, const char *id,
                                       size_t *conflicts, error_info *err)
{
    model_object row;
    store_edit_info info = {0};
    model_object_init(&row, kind);
    size_t left = 0, conflicting = 0;
    error_code rc = load(st, kind, id, &row, &info, err);
    if (rc == ERROR_OK)
        rc = drop_settled(st, &info, &left, &conflicting, err);
    bool held = info.conflict == STORE_CONFLICT_KEY || info.conflict == STORE_CONFLICT_REJECTED;
    if (rc != ERROR_OK) {
        /* nothing more */
    } else if (!left) {
        rc = move(st, &info, MODEL_STATE_SYNCED, "", err);
        if (rc == ERROR_CONFLICT) /* a rule whose key is still held: left as it is */
            rc = ERROR_OK;
    } else if (held) {
        /* the conflict's own reason stands */
    } else if (conflicting) {
        if (info.conflict != STORE_CONFLICT_FIELDS && conflicts)
            ++*conflicts;
        rc = conflict_put(st, kind, info.id, STORE_CONFLICT_FIELDS, "", err);
        if (rc == ERROR_OK)
            rc = move(st, &info, MODEL_STATE_CONFLICT,
                      "changed remotely and here: keep the local values or take the "
                      "remote's", err);
    } else {
        rc = move(st, &info, MODEL_STATE_EDITED, "", err);
    }
    store_edit_info_clear(&info);
    model_object_clear(&row);
    return rc;
}

/* One edited row against a remote copy, inside an op. */
static error_code compare_row(store *st, model_kind kind, const char *id, compare *c,
                              size_t *conflicts, error_info *err)
{
    model_object row;
    store_edit_info info = {0};
    model_object_init(&row, kind);
    error_code rc = load(st, kind, id, &row, &info, err);
    if (rc == ERROR_OK)
        rc = compare_fields(st, &row, &info, c, err);
    if (rc == ERROR_OK && c->dirty)
        rc = write_taken(st, &row, err);
    if (rc == ERROR_OK)
        rc = settle_after_compare(st, kind, info.id, conflicts, err);
    store_edit_info_clear(&info);
    model_object_clear(&row);
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
    error_info scratch;
    err = err ? err : &scratch;
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

static error_code conflict_in_op(store *st, model_kind kind, const char *id,
                                 store_conflict reason, const char *why, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, kind, id, canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_EDITED)
        return error_set(err, ERROR_STATE, "%s %s is %s, not edited", kind_get(kind)->noun,
                         canon, model_state_name(state));
    if (conflict_put(st, kind, canon, reason, "", err))
        return err->code;
    const char *text = why && why[0] ? why
                       : reason == STORE_CONFLICT_GONE
                           ? "deleted remotely while edited here: create it again "
                             "(--keep-local) or let it go (--take-remote)"
                           : "the server refused the edit";
    return store_row_set_state_in_op(st, kind, canon, MODEL_STATE_CONFLICT, text, err);
}

error_code store_edit_conflict(store *st, model_kind kind, const char *id,
                               store_conflict reason, const char *why, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    if (reason != STORE_CONFLICT_GONE && reason != STORE_CONFLICT_REJECTED)
        return error_set(err, ERROR_INVALID, "a PATCH ends in a gone or rejected conflict");
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, conflict_in_op(st, kind, id ? id : "", reason, why, err), err);
}

/* Bases for the fields where the reply differs from the row. A field the reply
 * left empty is taken as not said (a minimal reply is no edit). */
static error_code put_reply_bases(store *st, const model_object *reply, const model_object *row,
                                  error_info *err)
{
    const kind_desc *d = kind_get(row->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_EDIT))
            continue;
        char *h1 = NULL, *h2 = NULL;
        const char *rv = store_field_text(reply, f, &h1, err);
        const char *lv = rv ? store_field_text(row, f, &h2, err) : NULL;
        error_code rc = !rv || !lv ? err->code : ERROR_OK;
        if (rc == ERROR_OK && rv[0] && !same(rv, lv))
            rc = edit_put(st, row->kind, model_object_id(row), f, rv, err);
        free(h1);
        free(h2);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

error_code store_edit_after_confirm(store *st, const model_object *remote, const char *canon,
                                    error_info *err)
{
    model_object reply, row;
    model_object_init(&row, remote->kind);
    if (model_object_copy(&reply, remote, err))
        return err->code;
    error_info ignored;
    /* Compared in canonical form; a reply the gate refuses says nothing. */
    error_code rc = ERROR_OK;
    if (kind_validate_row(&reply, &ignored) == ERROR_OK) {
        rc = store_get(st, remote->kind, canon, &row, err);
        if (rc == ERROR_OK)
            rc = put_reply_bases(st, &reply, &row, err);
        size_t left = 0;
        if (rc == ERROR_OK)
            rc = resettle(st, remote->kind, canon, &left, err);
    }
    model_object_clear(&reply);
    model_object_clear(&row);
    return rc;
}

/* ---- the pull's side ------------------------------------------------------ */

/* The staged copy of row `id`: *found false when absent, *kept when it is only the
 * cached copy standing in for a refused one. */
static error_code staged_row(store *st, model_kind kind, const char *id, model_object *out,
                             bool *found, bool *kept, error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, store_kind_get(kind)->pull_row, err);
    if (!s || store_bind_texts(st, s, &id, 1, err) || store_step(st, s, found, err))
        return err->code;
    error_code rc = ERROR_OK;
    if (*found) {
        *kept = sqlite3_column_int(s, sqlite3_column_count(s) - 1) != 0;
        if (kind == MODEL_KIND_RULE)
            store_rule_read(s, &out->rule);
        else
            rc = store_cred_read(s, &out->cred, err);
    }
    store_reset(s);
    return rc;
}

/* The ids of `kind`'s edited and conflicting rows (heap array, caller frees). */
static error_code edited_ids(store *st, model_kind kind, char (**ids)[MODEL_ID_MAX + 1],
                             size_t *n, error_info *err)
{
    *ids = NULL;
    *n = 0;
    size_t cap = 0;
    sqlite3_stmt *s = store_stmt(st, store_kind_get(kind)->edited_ids, err);
    if (!s)
        return err->code;
    error_code rc = ERROR_OK;
    for (bool more = true; rc == ERROR_OK;) {
        rc = store_step(st, s, &more, err);
        if (rc != ERROR_OK || !more)
            break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char(*grown)[MODEL_ID_MAX + 1] = realloc(*ids, cap * sizeof **ids);
            if (!grown) {
                rc = nomem(err);
                break;
            }
            *ids = grown;
        }
        store_col_copy(s, 0, (*ids)[(*n)++], MODEL_ID_MAX + 1);
    }
    store_reset(s);
    return rc;
}

/* An edited row absent from a complete listing: deleted remotely. A local
 * create in a key conflict was never listed: nothing to say. */
static error_code merge_absent(store *st, model_kind kind, const char *id, size_t *conflicts,
                               error_info *err)
{
    store_edit_info info = {0};
    if (read_conflict(st, kind, id, &info, err))
        return err->code;
    if (store_is_local_id(id) || info.conflict == STORE_CONFLICT_GONE)
        return ERROR_OK;
    ++*conflicts;
    if (conflict_put(st, kind, id, STORE_CONFLICT_GONE, "", err))
        return err->code;
    return store_row_set_state_in_op(st, kind, id, MODEL_STATE_CONFLICT,
                                     "deleted remotely while edited here: create it again "
                                     "(--keep-local) or let it go (--take-remote)", err);
}

static error_code merge_one(store *st, model_kind kind, const char *id, size_t *conflicts,
                            error_info *err)
{
    model_object remote;
    model_object_init(&remote, kind);
    bool found = false, kept = false;
    error_code rc = staged_row(st, kind, id, &remote, &found, &kept, err);
    if (rc == ERROR_OK && !found)
        rc = merge_absent(st, kind, id, conflicts, err);
    if (rc == ERROR_OK && found && !kept) {
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

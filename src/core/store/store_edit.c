/*
 * store: edits in place and conflicts (store.h, "edits in place"). One piece of
 * code for every kind: fields are the descriptor's, compared as their column
 * text (store_field_text), so an ACL is one string like any other field.
 *
 * Where things are kept: the row holds the local values; `edits` one line per
 * edited field (base: what the remote had; remote: its new value in a
 * conflict); `conflicts` why a row waits for the user. Triggers (store_sql.c,
 * migration 4) drop both when the row leaves edited/conflict or is removed, so
 * every path that settles a row (a delete, a merge, a remove) settles its edit
 * too.
 */
#include "store_edit_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rampart/validate.h"

static const char *const conflict_names[STORE_CONFLICT_COUNT] = {
    [STORE_CONFLICT_NONE] = "none",         [STORE_CONFLICT_FIELDS] = "fields",
    [STORE_CONFLICT_GONE] = "gone",         [STORE_CONFLICT_KEY] = "key",
    [STORE_CONFLICT_REJECTED] = "rejected", [STORE_CONFLICT_CHANGED] = "changed",
    [STORE_CONFLICT_CROSSED] = "crossed",
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
const char *store_edit_kind_key(model_kind kind)
{
    return kind_get(kind)->noun;
}

bool store_edit_same(const char *a, const char *b)
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

error_code store_edit_nomem(error_info *err)
{
    return error_set(err, ERROR_NOMEM, "out of memory");
}

/* ---- the tables ------------------------------------------------------------- */

static error_code exec_args(store *st, store_stmt_id id, const char *const *args, int n,
                            error_info *err)
{
    return store_stmt_run(st, store_stmt(st, id, err), args, n, NULL, err);
}

error_code store_edit_line_put(store *st, model_kind kind, const char *id, const kind_field *f,
                               const char *base, error_info *err)
{
    const char *args[] = {store_edit_kind_key(kind), id, f->name, base};
    return exec_args(st, STMT_EDIT_PUT, args, 4, err);
}

error_code store_edit_line_set(store *st, model_kind kind, const char *id, const kind_field *f,
                               const char *base, const char *remote, error_info *err)
{
    const char *args[] = {store_edit_kind_key(kind), id, f->name, base, remote};
    return exec_args(st, STMT_EDIT_SET, args, 5, err);
}

error_code store_edit_line_drop(store *st, model_kind kind, const char *id, const kind_field *f,
                                error_info *err)
{
    const char *args[] = {store_edit_kind_key(kind), id, f->name};
    return exec_args(st, STMT_EDIT_DROP, args, 3, err);
}

error_code store_edit_conflict_put(store *st, model_kind kind, const char *id,
                                   store_conflict reason, const char *other_id, error_info *err)
{
    const char *args[] = {store_edit_kind_key(kind), id, conflict_names[reason],
                          other_id ? other_id : ""};
    return exec_args(st, STMT_CONFLICT_PUT, args, 4, err);
}

/* The conflict record of row `id` into info (none: STORE_CONFLICT_NONE). */
error_code store_edit_read_conflict(store *st, model_kind kind, const char *id,
                                    store_edit_info *info, error_info *err)
{
    const char *args[] = {store_edit_kind_key(kind), id};
    sqlite3_stmt *s = store_stmt(st, STMT_CONFLICT_GET, err);
    bool row;
    if (store_stmt_first(st, s, args, 2, &row, err))
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

enum { EDIT_SLOTS = sizeof(((store_edit_info *)0)->field) / sizeof(store_edit_field) };

/* One line of `edits` into its slot by field index (slots: one per field). */
static error_code read_edit_line(sqlite3_stmt *s, model_kind kind, store_edit_field *slots,
                                 bool *used, unsigned *fields, error_info *err)
{
    const kind_desc *d = kind_get(kind);
    const kind_field *f = kind_field_by_name(kind, (const char *)sqlite3_column_text(s, 0));
    size_t i = f ? (size_t)(f - d->fields) : EDIT_SLOTS;
    if (i >= EDIT_SLOTS || i >= d->field_count || used[i])
        return ERROR_OK; /* a field this version does not know (the key: never twice) */
    bool oom = false;
    slots[i].field = i;
    slots[i].base = dup_or_null(sqlite3_column_text(s, 1), &oom);
    slots[i].remote = dup_or_null(sqlite3_column_text(s, 2), &oom);
    used[i] = true;
    *fields |= 1u << i;
    return oom ? store_edit_nomem(err) : ERROR_OK;
}

/* The local value of line `e` (the row's own field) into e->local. */
static error_code read_local(const model_object *row, store_edit_field *e, error_info *err)
{
    char *heap = NULL;
    const char *local = store_field_text(row, &kind_get(row->kind)->fields[e->field], &heap,
                                         err);
    e->local = local ? strdup(local) : NULL;
    free(heap);
    if (!local)
        return err->code;
    return e->local ? ERROR_OK : store_edit_nomem(err);
}

/* The edit lines of row `row` into info, in descriptor order, with the row's
 * own values as `local`. Every line read is info's (freed by its clear). */
static error_code read_edits(store *st, const model_object *row, store_edit_info *info,
                             error_info *err)
{
    store_edit_field slots[EDIT_SLOTS] = {{0}};
    bool used[EDIT_SLOTS] = {false};
    const char *args[] = {store_edit_kind_key(row->kind), model_object_id(row)};
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
    for (size_t i = 0; i < EDIT_SLOTS; i++) {
        if (!used[i])
            continue;
        info->field[info->count] = slots[i];
        if (rc == ERROR_OK)
            rc = read_local(row, &info->field[info->count], err);
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
    if (store_edit_read_conflict(st, kind, info->id, info, err))
        return err->code;
    return read_edits(st, row, info, err);
}

error_code store_edit_get(store *st, model_kind kind, const char *id, store_edit_info *out,
                          error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
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

error_code store_edit_open(store *st, model_kind kind, const char *id, store_edit_row *e,
                           error_info *err)
{
    memset(&e->info, 0, sizeof e->info);
    model_object_init(&e->row, kind);
    return load(st, kind, id, &e->row, &e->info, err);
}

void store_edit_close(store_edit_row *e)
{
    store_edit_info_clear(&e->info);
    model_object_clear(&e->row);
}

/* ---- settling --------------------------------------------------------------- */

const kind_field *store_edit_field_of(const store_edit_info *info, size_t i)
{
    return &kind_get(info->kind)->fields[info->field[i].field];
}

/* Drop the lines whose local value is back at its base (and not in conflict);
 * count what is left and how much of it conflicts. */
error_code store_edit_drop_settled(store *st, const store_edit_info *info, size_t *left,
                                   size_t *conflicting, error_info *err)
{
    *left = *conflicting = 0;
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        if (!e->remote && store_edit_same(e->local, e->base)) {
            if (store_edit_line_drop(st, info->kind, info->id, store_edit_field_of(info, i), err))
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
error_code store_edit_move(store *st, const store_edit_info *info, model_state state,
                           const char *why, error_info *err)
{
    if (info->state == state && !why)
        return ERROR_OK;
    return store_row_set_state_in_op(st, info->kind, info->id, state, why ? why : "", err);
}

error_code store_edit_settle(store *st, model_kind kind, const char *id, store_settle_fn fn,
                             void *ctx, error_info *err)
{
    store_edit_row e;
    size_t left = 0, conflicting = 0;
    error_code rc = store_edit_open(st, kind, id, &e, err);
    if (rc == ERROR_OK)
        rc = store_edit_drop_settled(st, &e.info, &left, &conflicting, err);
    if (rc == ERROR_OK)
        rc = fn(st, &e.info, left, conflicting, ctx, err);
    store_edit_close(&e);
    return rc;
}

/* store_settle_fn of store_edit_resettle: ctx is its `left`. */
static error_code edited_or_synced(store *st, const store_edit_info *info, size_t left,
                                   size_t conflicting, void *ctx, error_info *err)
{
    (void)conflicting;
    *(size_t *)ctx = left;
    return store_edit_move(st, info, left ? MODEL_STATE_EDITED : MODEL_STATE_SYNCED, NULL, err);
}

/* After the values or lines changed: re-read, drop settled lines, and make the
 * row edited (lines left) or synced (none). */
error_code store_edit_resettle(store *st, model_kind kind, const char *id, size_t *left,
                               error_info *err)
{
    return store_edit_settle(st, kind, id, edited_or_synced, left, err);
}

/* Set the row's fields named by the lines of `info` to their bases (or, with
 * `remote_side`, to the remote values of the conflicting ones), and write it.
 */
error_code store_edit_apply_side(store *st, model_object *row, const store_edit_info *info,
                                 bool remote_side, error_info *err)
{
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        const char *value = remote_side ? e->remote : e->base;
        if (!value)
            continue;
        if (store_field_set_text(row, store_edit_field_of(info, i), value, err))
            return err->code;
    }
    return store_update_write(st, row, err);
}

/* ---- the user's edit -------------------------------------------------------- */

/* Why a row in each state cannot be edited (NULL: the general words). */
#define IN_FLIGHT "cannot be edited now: its create is in flight or its outcome unknown; sync first"
static const char *const refusals[MODEL_STATE_COUNT] = {
    [MODEL_STATE_CREATING] = IN_FLIGHT,
    [MODEL_STATE_UNKNOWN] = IN_FLIGHT,
    [MODEL_STATE_DELETING] = "is being deleted: nothing to edit",
    [MODEL_STATE_CONFLICT] = ("was deleted here and changed remotely: resolve it first "
                              "(--keep-local deletes it, --take-remote keeps it)"),
    [MODEL_STATE_REMOTE_DELETED] = ("was deleted remotely: retry it (a new create) or "
                                    "discard it, then edit"),
};
#undef IN_FLIGHT

static error_code refuse_state(const store_edit_info *info, error_info *err)
{
    const char *noun = kind_get(info->kind)->noun;
    const char *why = (unsigned)info->state < MODEL_STATE_COUNT ? refusals[info->state] : NULL;
    if (why)
        return error_set(err, ERROR_STATE, "%s %s %s", noun, info->id, why);
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

/* Where put_changed records a base. */
typedef struct base_put {
    store *st;
    model_kind kind;
    const char *id;
    bool skip_empty;
} base_put;

/* store_compare_fn: a line whose base is `old` for a field whose value changed. */
static error_code put_changed(size_t i, const char *old, const char *now, void *ctx,
                              error_info *err)
{
    const base_put *p = ctx;
    (void)now;
    if (p->skip_empty && !old[0])
        return ERROR_OK;
    return store_edit_line_put(p->st, p->kind, p->id, &kind_get(p->kind)->fields[i], old, err);
}

error_code store_edit_put_bases(store *st, const model_object *from, const model_object *row,
                                const char *id, unsigned fields, bool skip_empty,
                                error_info *err)
{
    base_put p = {st, from->kind, id, skip_empty};
    return store_compare_fields(from, row, fields, true, put_changed, &p, err);
}

/* store_update_fn: the edit inside its op; `ctx` the store_edit_result. */
static error_code edit_in_op(store *st, model_object *given, unsigned fields, model_object *row,
                             void *ctx, error_info *err)
{
    /* A person's new cidr (the remote's rows are kept as they are). */
    const kind_field *cidr = kind_field_by_name(given->kind, "cidr");
    if (cidr && (fields & kind_field_bit(given->kind, cidr)) &&
        validate_cidr_given(given->rule.cidr, err) != ERROR_OK)
        return error_prefix(err, "cidr");
    store_edit_result *result = ctx;
    model_kind kind = given->kind;
    store_edit_row before;
    error_code rc = store_edit_open(st, kind, model_object_id(given), &before, err);
    const store_edit_info *info = &before.info;
    bool create = rc == ERROR_OK && is_queued_create(info);
    bool editable = create || info->state == MODEL_STATE_SYNCED ||
                    info->state == MODEL_STATE_EDITED ||
                    (info->state == MODEL_STATE_CONFLICT &&
                     info->conflict != STORE_CONFLICT_CHANGED);
    if (rc == ERROR_OK && !editable)
        rc = refuse_state(info, err);
    if (rc == ERROR_OK)
        rc = store_update_in_op(st, given, fields, row, err);
    if (rc == ERROR_OK && create) {
        *result = STORE_EDIT_CREATE;
        rc = store_edit_move(st, info, MODEL_STATE_NEW, info->state == MODEL_STATE_NEW ? NULL : "",
                             err);
    } else if (rc == ERROR_OK) {
        rc = store_edit_put_bases(st, &before.row, row, info->id, fields & ~info->fields,
                                  false, err);
    }
    /* A conflict about what the server holds waits for the user; one the edit
     * answers (a refused edit, a clashing cidr) is an edit again. */
    bool waits = info->state == MODEL_STATE_CONFLICT &&
                 (info->conflict == STORE_CONFLICT_FIELDS || info->conflict == STORE_CONFLICT_GONE);
    if (rc == ERROR_OK && !create && waits)
        *result = STORE_EDIT_CONFLICT;
    if (rc == ERROR_OK && !create && !waits) {
        size_t left = 0;
        rc = store_edit_resettle(st, kind, info->id, &left, err);
        *result = left ? STORE_EDIT_EDITED : STORE_EDIT_UNCHANGED;
    }
    model_object_clear(row);
    if (rc == ERROR_OK)
        rc = store_get(st, kind, info->id, row, err);
    store_edit_close(&before);
    return rc;
}

error_code store_edit(store *st, model_object *obj, unsigned fields, store_edit_result *result,
                      error_info *err)
{
    store_edit_result ignored;
    return store_update_run(st, obj, fields, true, edit_in_op, result ? result : &ignored,
                            ERROR_OR_SCRATCH(err));
}

/* ---- resolve ---------------------------------------------------------------- */

/* Fields: keep-local makes the remote values the bases; take-remote writes
 * them. */
static error_code resolve_fields(store *st, model_object *row, const store_edit_info *info,
                                 store_side side, error_info *err)
{
    if (side == STORE_TAKE_REMOTE && store_edit_apply_side(st, row, info, true, err))
        return err->code;
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *e = &info->field[i];
        if (!e->remote)
            continue;
        error_code rc =
            side == STORE_TAKE_REMOTE
                ? store_edit_line_drop(st, info->kind, info->id, store_edit_field_of(info, i), err)
                : store_edit_line_set(st, info->kind, info->id, store_edit_field_of(info, i),
                                      e->remote, NULL, err);
        if (rc != ERROR_OK)
            return rc;
    }
    size_t left = 0;
    return store_edit_resettle(st, info->kind, info->id, &left, err);
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
static error_code revert(store *st, model_object *row, const store_edit_info *info, error_info *err)
{
    if (store_edit_apply_side(st, row, info, false, err))
        return err->code;
    return store_edit_move(st, info, MODEL_STATE_SYNCED, "", err);
}

/* Key: keep-local deletes the remote rule holding the key; take-remote adopts
 * it (a create) or drops the cidr edit (an edit). */
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
            return store_edit_move(st, info, MODEL_STATE_NEW, "", err);
        size_t left = 0;
        return store_edit_resettle(st, info->kind, info->id, &left, err);
    }
    if (!create)
        return revert(st, row, info, err);
    model_copy_text(out_id, MODEL_ID_MAX + 1, info->other_id);
    if (store_row_remove_in_op(st, info->kind, info->id, err))
        return err->code;
    const char *args[] = {info->id, info->other_id, store_edit_kind_key(info->kind)};
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
    store_edit_row e;
    error_code rc = store_edit_open(st, c->kind, c->id, &e, err);
    const store_edit_info *info = &e.info;
    if (rc == ERROR_OK && info->state != MODEL_STATE_CONFLICT)
        rc = error_set(err, ERROR_STATE, "%s %s is %s, not a conflict: nothing to resolve",
                       kind_get(c->kind)->noun, info->id, model_state_name(info->state));
    if (rc == ERROR_OK)
        model_copy_text(c->out_id, MODEL_ID_MAX + 1, info->id);
    if (rc == ERROR_OK) {
        switch (info->conflict) {
        case STORE_CONFLICT_GONE:
            rc = resolve_gone(st, info, c->side, c->out_id, err);
            break;
        case STORE_CONFLICT_KEY:
            rc = resolve_key(st, &e.row, info, c->side, c->out_id, err);
            break;
        case STORE_CONFLICT_REJECTED:
            rc = c->side == STORE_KEEP_LOCAL
                     ? store_edit_move(st, info, MODEL_STATE_EDITED, "", err)
                     : revert(st, &e.row, info, err);
            break;
        case STORE_CONFLICT_CHANGED:
            rc = store_edit_move(st, info, c->side == STORE_KEEP_LOCAL ? MODEL_STATE_DELETING
                                                                       : MODEL_STATE_SYNCED,
                                 "", err);
            break;
        case STORE_CONFLICT_CROSSED:
            rc = store_edit_move(st, info, MODEL_STATE_SYNCED, "", err);
            break;
        case STORE_CONFLICT_FIELDS:
        default:
            rc = resolve_fields(st, &e.row, info, c->side, err);
            break;
        }
    }
    store_edit_close(&e);
    return rc;
}

error_code store_resolve(store *st, model_kind kind, const char *id, store_side side,
                         char out_id[MODEL_ID_MAX + 1], error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
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

/* A conflict whose row holds the remote's values, not an edit of them. */
static bool holds_remote(const store_edit_info *info)
{
    return info->state == MODEL_STATE_CONFLICT && (info->conflict == STORE_CONFLICT_CHANGED ||
                                                   info->conflict == STORE_CONFLICT_CROSSED);
}

bool store_conflict_holds_remote(store *st, model_kind kind, const char *id)
{
    store_edit_info info = {0};
    error_info err;
    if ((unsigned)kind >= MODEL_KIND_COUNT || !id ||
        store_edit_read_conflict(st, kind, id, &info, &err) != ERROR_OK)
        return false;
    info.state = MODEL_STATE_CONFLICT;
    return holds_remote(&info);
}

/* Rows that have nothing remote to keep: a gone one, a local create in
 * conflict. */
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
    store_edit_row e;
    error_code rc = store_edit_open(st, kind, canon, &e, err);
    const store_edit_info *info = &e.info;
    if (rc == ERROR_OK && nothing_remote(info)) {
        *result = STORE_DELETE_REMOVED;
        rc = store_row_remove_in_op(st, kind, info->id, err);
    } else if (rc == ERROR_OK) {
        *result = outcome;
        rc = store_edit_move(st, info, state, "", err);
        /* A conflict that holds the remote's values has no edit to take back. */
        if (rc == ERROR_OK && !holds_remote(info))
            rc = store_edit_apply_side(st, &e.row, info, false, err);
    }
    store_edit_close(&e);
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
    return leave_edit(st, kind, canon, MODEL_STATE_SYNCED, STORE_DELETE_REVERTED, result, err);
}

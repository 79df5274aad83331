/*
 * engine: edits in place. Every edited row is sent as ONE PATCH holding only its
 * edited fields (the store keeps which, each with the base it was edited from)
 * with the row's current values, right after a GET of the object (its fresh
 * look, back to back in one slot of the schedule): a field edited here that the
 * remote changed meanwhile is a conflict, not overwritten; fields not edited take
 * the remote's values; a look that already shows the values sent settles the
 * edit (a PATCH whose reply was lost). After the PATCH, a reply whose unsent
 * fields differ from the look's says someone wrote in between: the row is
 * marked (conflict crossed). A 404 never creates the object again: the row
 * becomes a conflict for the user to resolve (store_resolve).
 */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>


/* One edited row on its way. */
typedef struct edit_job {
    engine_target t;          /* the row's kind and current id (`id`) */
    char id[MODEL_ID_MAX + 1];
    const char *label;        /* what names it in log lines ("" when only its id) */
    model_object sent;        /* the row as read just before sending: the values sent */
    unsigned fields;          /* the edited fields (kind_field_bit set) */
    model_object looked;      /* the object as the look (GET) showed it */
    model_object reply;       /* the object the server answered the PATCH with */
} edit_job;

static const char *noun(const edit_job *j)
{
    return kind_get(j->t.kind)->noun;
}

/* ---- reading the edit ----------------------------------------------------- */

/* The row's edit and values, read afresh (the walk's page may be minutes old when
 * the budget makes the pass wait). false: nothing to send (no longer edited,
 * removed meanwhile) or the run stops. */
static bool edit_load(engine *e, model_kind kind, const char *id, edit_job *j)
{
    store_edit_info info;
    memset(&info, 0, sizeof info);
    error_info err;
    error_code rc = store_edit_get(e->st, kind, id, &info, &err);
    bool edited = rc == ERROR_OK && info.state == MODEL_STATE_EDITED && info.fields != 0;
    if (edited) {
        j->fields = info.fields;
        snprintf(j->id, sizeof j->id, "%s", info.id);
        model_object_clear(&j->sent);
        rc = store_get(e->st, kind, j->id, &j->sent, &err);
    }
    store_edit_info_clear(&info);
    if (rc == ERROR_NOT_FOUND)
        return false;
    if (rc != ERROR_OK) {
        engine_db_fail(e, &err);
        return false;
    }
    j->t = (engine_target){kind, j->id};
    j->label = engine_row_label(&j->sent);
    return edited;
}

/* ---- the requests --------------------------------------------------------- */

static sync_outcome send_patch(engine *e, void *arg, sync_result *res)
{
    edit_job *j = arg;
    model_object_clear(&j->reply);
    return e->ops->update(e->api, &j->sent, j->fields, &j->reply, res);
}

static sync_outcome send_get(engine *e, void *arg, sync_result *res)
{
    edit_job *j = arg;
    model_object_clear(&j->looked);
    sync_outcome out = e->ops->get(e->api, j->t.kind, j->t.id, &j->looked, res);
    error_info ignored; /* compared in canonical form; a refused one as it came */
    if (out == SYNC_OK)
        (void)kind_validate_row(&j->looked, &ignored);
    return out;
}

/* The editable fields the PATCH did not carry whose value in its reply differs
 * from the look's: someone wrote between the two requests. Their names go to
 * `names`; 0 when none. */
static unsigned crossed_fields(edit_job *j, char *names, size_t size)
{
    error_info ignored;
    (void)kind_validate_row(&j->reply, &ignored);
    const kind_desc *d = kind_get(j->t.kind);
    unsigned crossed = 0;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        unsigned bit = kind_field_bit(j->t.kind, f);
        if ((f->flags & KIND_FIELD_EDIT) && !(j->fields & bit) &&
            !kind_field_same(f, &j->looked, &j->reply))
            crossed |= bit;
    }
    kind_field_names(j->t.kind, crossed, names, size);
    return crossed;
}

/* ---- settling ------------------------------------------------------------- */

/* A failure of the reply itself, for the report: the server's status kept. */
static void note_bad_reply(engine *e, edit_job *j, const sync_result *res, const char *why)
{
    sync_result bad = *res;
    bad.outcome = SYNC_AMBIGUOUS;
    bad.failure = SYNC_FAILURE_BAD_REPLY;
    snprintf(bad.message, sizeof bad.message, "%s", why);
    engine_note_row_failure(e, &j->t, &bad);
}

/* The PATCH's reply shows another writer between the look and the PATCH: said
 * on the row (attention), never silently. */
static void edit_crossed(engine *e, edit_job *j, const sync_result *res)
{
    char names[128], why[MODEL_ERROR_MAX];
    if (!crossed_fields(j, names, sizeof names))
        return;
    snprintf(why, sizeof why, "someone else changed %s while this edit was sent: check the "
             "object (it may have changed what was sent too), then resolve", names);
    error_info err;
    error_code rc = store_edit_crossed(e->st, j->t.kind, j->t.id, why, &err);
    if (rc != ERROR_OK && rc != ERROR_STATE && rc != ERROR_NOT_FOUND) {
        engine_db_fail(e, &err);
        return;
    }
    if (rc == ERROR_OK)
        e->report->conflicts++;
    engine_note_row_failure(e, &j->t, res);
    engine_log(e, SYNC_LOG_WARN, "%s %s: %s", noun(j), j->t.id, why);
}

/* 200: the sent fields take the reply's values as their new bases, so an edit
 * made here meanwhile stays an edit. */
static void edit_done(engine *e, edit_job *j, const sync_result *res)
{
    error_info err;
    error_code rc = store_edit_pushed(e->st, &j->sent, j->fields, &j->reply, &err);
    char names[128];
    kind_field_names(j->t.kind, j->fields, names, sizeof names);
    if (rc == ERROR_OK && engine_marker_only(&j->looked, &j->sent, j->fields)) {
        engine_log(e, SYNC_LOG_INFO, "%s %s: its creation marker taken away", noun(j),
                   j->t.id);
        edit_crossed(e, j, res);
    } else if (rc == ERROR_OK) {
        e->report->updated++;
        engine_log(e, SYNC_LOG_INFO, "updated %s %s%s%s%s: %s", noun(j), j->t.id,
                   j->label[0] ? " (" : "", j->label, j->label[0] ? ")" : "", names);
        edit_crossed(e, j, res);
    } else if (rc == ERROR_NOT_FOUND) {
        engine_log(e, SYNC_LOG_INFO, "updated %s %s, which is no longer here", noun(j),
                   j->t.id);
    } else if (rc == ERROR_INVALID) {
        engine_log(e, SYNC_LOG_WARN, "%s %s: the server's copy after the edit could not be "
                   "recorded (%s): the next sync sends it again", noun(j), j->t.id, err.msg);
        note_bad_reply(e, j, res, err.msg);
    } else {
        engine_db_fail(e, &err);
    }
}

/* The edit cannot go through as it is: the user decides (store_resolve). */
static void edit_conflict(engine *e, edit_job *j, store_conflict reason, const sync_result *res)
{
    bool gone = reason == STORE_CONFLICT_GONE;
    error_info err;
    error_code rc = store_edit_conflict(e->st, j->t.kind, j->t.id, reason,
                                        gone ? NULL : res->message, &err);
    if (rc == ERROR_STATE || rc == ERROR_NOT_FOUND) {
        engine_log(e, SYNC_LOG_INFO, "skipped %s: %s", j->t.id, err.msg);
        return;
    }
    if (rc != ERROR_OK) {
        engine_db_fail(e, &err);
        return;
    }
    e->report->conflicts++;
    engine_note_row_failure(e, &j->t, res);
    if (gone)
        engine_log(e, SYNC_LOG_WARN, "%s %s was deleted remotely while edited here: a "
                   "conflict to resolve (--keep-local creates it again, --take-remote "
                   "drops it)", noun(j), j->t.id);
    else
        engine_log(e, SYNC_LOG_ERROR, "server refused the edit of %s %s: %s", noun(j),
                   j->t.id, res->message);
}

/* A refusal that sending again would not change: a 4xx, or refused by the client
 * before sending. A 3xx (a redirect not followed) is the server's setup. */
static bool refused_for_good(const sync_result *res)
{
    return res->http_status < 300 || res->http_status >= 400;
}

static void edit_settle(engine *e, edit_job *j, sync_outcome out, const sync_result *res)
{
    if (out == SYNC_OK) {
        edit_done(e, j, res);
        return;
    }
    if (out == SYNC_NOT_FOUND) {
        edit_conflict(e, j, STORE_CONFLICT_GONE, res);
        return;
    }
    if (out == SYNC_REJECTED && refused_for_good(res)) {
        edit_conflict(e, j, STORE_CONFLICT_REJECTED, res);
        return;
    }
    if (e->stop != ENGINE_GO) {
        if (out == SYNC_RATE_LIMITED) /* the run gave up on 429s here */
            engine_note_row_failure(e, &j->t, res);
        return;
    }
    engine_log(e, SYNC_LOG_WARN, "%s %s not updated yet (%s): the next sync sends the edit "
               "again", noun(j), j->t.id, res->message);
    engine_note_row_failure(e, &j->t, res);
}

/* ---- the pass ------------------------------------------------------------- */

/* What the look found, recorded by the store: true to PATCH now (with the
 * fields still to send, read afresh). */
static bool judge_edit(engine *e, void *arg)
{
    edit_job *j = arg;
    switch (engine_judge_look(e, &j->t, &j->looked)) {
    case STORE_LOOK_WRITE:
        return edit_load(e, j->t.kind, j->t.id, j);
    case STORE_LOOK_SETTLED:
        e->report->updated++;
        engine_log(e, SYNC_LOG_INFO, "%s %s already holds the edit", noun(j), j->t.id);
        return false;
    case STORE_LOOK_CONFLICT:
        engine_log(e, SYNC_LOG_WARN, "%s %s was changed remotely in a field edited here: "
                   "not sent; a conflict to resolve (--keep-local sends it, --take-remote "
                   "takes theirs)", noun(j), j->t.id);
        return false;
    case STORE_LOOK_SKIP:
        break;
    }
    return false;
}

static void push_edit(engine *e, const model_object *row)
{
    edit_job j;
    memset(&j, 0, sizeof j);
    model_object_init(&j.sent, row->kind);
    model_object_init(&j.looked, row->kind);
    model_object_init(&j.reply, row->kind);
    if (edit_load(e, row->kind, model_object_id(row), &j)) {
        sync_result res;
        engine_stage stage;
        engine_looked l = {send_get, send_patch, judge_edit, &j};
        sync_outcome out = engine_send_looked(e, &j.t, &l, &res, &stage);
        if (stage != ENGINE_STAGE_JUDGED)
            edit_settle(e, &j, out, &res);
    }
    model_object_clear(&j.reply);
    model_object_clear(&j.looked);
    model_object_clear(&j.sent);
    engine_step(e, 1);
}

void engine_edit(engine *e, model_kind kind)
{
    engine_each_row(e, kind, 1u << MODEL_STATE_EDITED, push_edit);
}

/*
 * The console's mutating actions (ui_app.h): create, delete, retry, discard,
 * reveal, sync. Each checks the read-only flag first: a refused action says so in
 * the status line and changes nothing. Delete and discard ask first, naming the
 * rows, and default to No; a delete also names the credentials whose token a
 * local agent fetched in the last 7 days (the agent's record in the cache).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../views/ui_record.h"
#include "app_internal.h"
#include "rampart/duration.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/ui_dialog.h"
#include "rampart/ui_sync_text.h"

/* Rows named one by one in a confirmation; beyond that, the first few and a count.
 * A delete names the credentials local agents fetched a token of lately (the
 * agent records it in the cache), the first few of them. */
enum { NAME_ALL_MAX = 5, NAME_FIRST = 3, FETCHED_NAMED = 3, FETCHED_RECENT_S = 7 * 86400 };

static bool refused_readonly(ui_app *app, const char *what)
{
    if (!ui_app_readonly(app))
        return false;
    ui_app_status(app, true, "read-only console: %s is off (%s)", what,
                  ui_app_readonly_why(app));
    return true;
}

/* ---- the rows an action is about ----------------------------------------------- */

struct row_action;

typedef struct targets {
    bool marked;   /* the marked rows, not the cursor's */
    size_t count;
    ui_row_ref *refs;
    const struct row_action *action; /* what runs on them (NULL: reveal) */
} targets;

static void targets_free(void *p)
{
    targets *t = p;
    if (!t)
        return;
    free(t->refs);
    free(t);
}

/* Room for `n` rows; NULL (said in the status line) when out of memory. */
static targets *targets_new(ui_app *app, size_t n, const char *verb)
{
    targets *t = calloc(1, sizeof *t);
    if (t)
        t->refs = calloc(n ? n : 1, sizeof *t->refs);
    if (!t || !t->refs) {
        targets_free(t);
        ui_app_status(app, true, "%s: out of memory", verb);
        return NULL;
    }
    return t;
}

/* The marked rows of the view, or the row under the cursor; NULL (said in the
 * status line) when there is none. */
static targets *collect(ui_app *app, const char *verb)
{
    size_t marked = ui_app_marked(app, NULL, 0);
    targets *t = targets_new(app, marked ? marked : 1, verb);
    if (!t)
        return NULL;
    if (marked) {
        t->marked = true;
        t->count = ui_app_marked(app, t->refs, marked);
        if (t->count > marked)
            t->count = marked;
    } else if (ui_app_current(app, &t->refs[0])) {
        t->count = 1;
    }
    if (t->count == 0) {
        ui_app_status(app, false, "nothing to %s here: no row selected", verb);
        targets_free(t);
        return NULL;
    }
    return t;
}

/* A row as a confirmation names it, in its kind's words ("ipr_…  allow 10.0.0.0/8
 * synced  ipp_…", "cr_…  "web agent"  new"). */
static void describe(ui_app *app, const ui_row_ref *ref, char *out, size_t size)
{
    model_object obj;
    model_object_init(&obj, ref->kind); /* store_get clears it first */
    if (store_get(ui_app_store(app), ref->kind, ref->id, &obj, NULL) != ERROR_OK) {
        snprintf(out, size, "%s  (no longer in the cache)", ref->id);
        return;
    }
    ui_record_format(&obj, ui_record_kind_get(ref->kind)->confirm, out, size);
    model_object_clear(&obj);
}

/* The body of a confirmation: every row, or the first few and how many more. */
static error_code name_rows(ui_app *app, ui_confirm *d, const targets *t, error_info *err)
{
    size_t shown = t->count <= NAME_ALL_MAX ? t->count : NAME_FIRST;
    for (size_t i = 0; i < shown; i++) {
        char line[512];
        describe(app, &t->refs[i], line, sizeof line);
        if (ui_confirm_add_line(d, line, err) != ERROR_OK)
            return ERROR_NOMEM;
    }
    if (shown < t->count) {
        char more[64];
        snprintf(more, sizeof more, "... and %zu more", t->count - shown);
        return ui_confirm_add_line(d, more, err);
    }
    return ERROR_OK;
}

static bool names_fetched(const targets *t);

/* "2h ago" for a time `secs` seconds back ("just now" within a minute). */
static void say_ago(long long secs, char *out, size_t size)
{
    char age[DURATION_TEXT_MAX];
    if (secs < 60)
        snprintf(out, size, "just now");
    else
        snprintf(out, size, "%s ago", duration_age((double)secs, age, sizeof age));
}

/* "  cr_… (web) 2h ago" for credential `ref`, under the heading of name_fetched
 * (short: the box is 80 columns at most). */
static void say_fetched(ui_app *app, const ui_row_ref *ref, long long ago, char *out,
                        size_t size)
{
    model_object obj;
    model_object_init(&obj, ref->kind);
    bool named = store_get(ui_app_store(app), ref->kind, ref->id, &obj, NULL) == ERROR_OK &&
                 obj.cred.description[0];
    char when[32];
    say_ago(ago, when, sizeof when);
    snprintf(out, size, "  %s%s%.24s%s %s", ref->id,
             named ? " (" : "", named ? obj.cred.description : "", named ? ")" : "", when);
    model_object_clear(&obj);
}

/* A row of a kind whose rows carry a token (a credential). */
static bool holds_token(const ui_row_ref *ref)
{
    return kind_get(ref->kind)->has_token;
}

/* When a local agent last fetched the token of each credential among `t`, if in the
 * last 7 days (the agent's record in the cache): at[j] for the j-th credential
 * (0: not lately), *found of them. A record that cannot be read counts as none:
 * the question still stands. */
static error_code fetch_times(ui_app *app, const targets *t, long long now, long long *at,
                              size_t *found, error_info *err)
{
    *found = 0;
    const char **ids = calloc(t->count, sizeof *ids);
    if (!ids)
        return error_set(err, ERROR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (holds_token(&t->refs[i]))
            ids[n++] = t->refs[i].id;
    }
    if (n && store_fetch_recent(ui_app_store(app), ids, n, now - FETCHED_RECENT_S, at, found,
                                NULL) != ERROR_OK)
        *found = 0;
    free(ids);
    return ERROR_OK;
}

/* The credentials among `t` a local agent fetched a token of lately, the first few
 * named, then how many more: a delete would cut those agents off. */
static error_code name_fetched(ui_app *app, ui_confirm *d, const targets *t, error_info *err)
{
    long long now = (long long)time(NULL);
    long long *at = calloc(t->count, sizeof *at);
    size_t found = 0;
    error_code rc = at ? fetch_times(app, t, now, at, &found, err)
                       : error_set(err, ERROR_NOMEM, "out of memory");
    if (rc == ERROR_OK && found &&
        (ui_confirm_add_line(d, "", err) ||
         ui_confirm_add_line(d, "Fetched by a local agent in the last 7 days:", err)))
        rc = err->code;
    size_t j = 0, named = 0; /* at[j]: the j-th credential among the targets */
    for (size_t i = 0; rc == ERROR_OK && found && i < t->count; i++) {
        if (!holds_token(&t->refs[i]))
            continue;
        long long when = at[j++];
        if (!when || named == FETCHED_NAMED)
            continue;
        named++;
        char line[256];
        say_fetched(app, &t->refs[i], now - when, line, sizeof line);
        rc = ui_confirm_add_line(d, line, err);
    }
    if (rc == ERROR_OK && found > FETCHED_NAMED) {
        char more[64];
        snprintf(more, sizeof more, "  ... and %zu more", found - FETCHED_NAMED);
        rc = ui_confirm_add_line(d, more, err);
    }
    free(at);
    return rc;
}

/* Ask `title` about `t`, owned from here on, naming its rows (and for a delete
 * the credentials in use) then `note`; on yes `fn` runs. */
static void ask(ui_app *app, targets *t, const char *title, const char *yes_label,
                const char *note, ui_confirm_fn fn)
{
    ui_confirm *d = NULL;
    error_info e = {0};
    if (ui_confirm_new(title, yes_label, &d, &e) != ERROR_OK ||
        name_rows(app, d, t, &e) != ERROR_OK ||
        (names_fetched(t) && name_fetched(app, d, t, &e) != ERROR_OK) ||
        ui_confirm_add_line(d, "", &e) || ui_confirm_add_line(d, note, &e)) {
        ui_confirm_free(d);
        targets_free(t);
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    if (ui_dialog_confirm(app, d, fn, t, targets_free, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
}

/* ---- applying an action to every target ------------------------------------------ */

/* store_delete's shape: delete and discard are such; retry is wrapped. */
typedef error_code (*row_op)(store *st, model_kind kind, const char *id,
                             store_delete_result *res, error_info *err);

static error_code retry(store *st, model_kind kind, const char *id, store_delete_result *res,
                        error_info *err)
{
    *res = STORE_DELETE_MARKED;
    return store_retry(st, kind, id, err);
}

typedef struct tally {
    size_t removed, marked, already, failed;
    error_info first;  /* the first refusal */
} tally;

/* Apply `op` to every target in one transaction (so a thousand marks cost one
 * commit); each refused row undoes only itself. */
static void apply(ui_app *app, const targets *t, row_op op, tally *out)
{
    store *st = ui_app_store(app);
    memset(out, 0, sizeof *out);
    error_info e = {0};
    bool batch = store_begin(st, &e) == ERROR_OK;
    for (size_t i = 0; i < t->count; i++) {
        store_delete_result res = STORE_DELETE_REMOVED;
        error_code rc = op(st, t->refs[i].kind, t->refs[i].id, &res, &e);
        if (rc != ERROR_OK) {
            if (out->failed++ == 0)
                out->first = e;
            continue;
        }
        res == STORE_DELETE_REMOVED ? out->removed++
        : res == STORE_DELETE_MARKED ? out->marked++
                                     : out->already++;
    }
    if (batch && store_commit(st, &e) != ERROR_OK) {
        store_rollback(st);
        out->failed = t->count;
        out->removed = out->marked = out->already = 0;
        out->first = e;
    }
    if (t->marked)
        ui_app_unmark_all(app);
    ui_app_reload(app);
}

static void report(ui_app *app, const char *done, const tally *r, const char *what)
{
    char refused[ERROR_MSG_MAX + 64] = "";
    if (r->failed)
        snprintf(refused, sizeof refused, "; %zu refused: %s", r->failed, r->first.msg);
    ui_app_status(app, r->failed > 0, "%s%s%s", done, what, refused);
}

static void say_delete(const tally *r, char *what, size_t size)
{
    snprintf(what, size, "%zu removed now, %zu marked for the next sync%s", r->removed,
             r->marked + r->already, r->already ? " (some already were)" : "");
}

static void say_discard(const tally *r, char *what, size_t size)
{
    snprintf(what, size, "%zu removed%s", r->removed,
             r->marked ? ", orphaned credentials deleted remotely by the next sync" : "");
}

static void say_retry(const tally *r, char *what, size_t size)
{
    snprintf(what, size, "%zu queued for the next sync ('s' syncs)", r->marked);
}

/* What 'd', 'x' and 'r' do to the marked rows (or the cursor's). */
typedef struct row_action {
    const char *gerund;   /* "deleting": the read-only refusal names it */
    const char *verb;     /* "delete": "nothing to delete here" */
    const char *question; /* "Delete": the question's verb and yes button; NULL: none */
    const char *note;     /* the question's last line */
    const char *done;     /* "deleted: ": the status line's start */
    row_op op;
    void (*say)(const tally *r, char *what, size_t size);
    bool name_fetched;    /* the question names credentials local agents use */
} row_action;

static const row_action delete_action = {
    "deleting", "delete", "Delete", "Never-synced rows go now; synced ones with the next sync.",
    "deleted: ", store_delete, say_delete, true,
};
static const row_action discard_action = {
    "discarding", "discard", "Discard",
    "Failed or remotely deleted rows are dropped here and not sent again.", "discarded: ",
    store_discard, say_discard, false,
};
static const row_action retry_action = {
    "retrying", "retry", NULL, NULL, "retry: ", retry, say_retry, false,
};

/* Whether the question about `t` names the credentials local agents use. */
static bool names_fetched(const targets *t)
{
    return t->action && t->action->name_fetched;
}

static void run_action(ui_app *app, void *ctx)
{
    const targets *t = ctx;
    tally r;
    apply(app, t, t->action->op, &r);
    char what[160];
    t->action->say(&r, what, sizeof what);
    report(app, t->action->done, &r, what);
}

/* Whether marked row `ref` is one the view's filter (and scope) shows: the row
 * just before a cursor a hair past its id, in id order, is the row itself when it
 * matches. The store's filter decides, as for the rows on screen. */
static bool shown_by_filter(ui_app *app, const ui_table *t, const ui_row_ref *ref)
{
    store_query q = {.policy_id = t->scope_policy, .filter = t->filter,
                     .sort = STORE_SORT_ID};
    char after[MODEL_ID_MAX + 2];
    snprintf(after, sizeof after, "%s~", ref->id); /* '~' sorts after every id byte */
    model_object row;
    size_t n = 0;
    error_info e = {0};
    if (store_page(ui_app_store(app), ref->kind, &q, after, STORE_BACKWARD, 1, &row, &n,
                   &e) != ERROR_OK)
        return true; /* not known to be hidden: nothing said */
    bool same = n == 1 && strcmp(model_object_id(&row), ref->id) == 0;
    if (n)
        model_object_clear(&row);
    return same;
}

/* How many of the marked targets the filter hides (0 without a filter). */
static size_t hidden_marks(ui_app *app, const targets *t)
{
    const ui_table *table = &ui_app_view(app)->table;
    size_t hidden = 0;
    if (!t->marked || !table->filter[0])
        return 0;
    for (size_t i = 0; i < t->count; i++)
        hidden += !shown_by_filter(app, table, &t->refs[i]);
    return hidden;
}

/* Refused when read-only; asks first when the action has a question. */
static void start_action(ui_app *app, const row_action *a)
{
    if (refused_readonly(app, a->gerund))
        return;
    targets *t = collect(app, a->verb);
    if (!t)
        return;
    t->action = a;
    if (a->question) {
        const kind_desc *k = kind_get(t->refs[0].kind); /* the first mark's kind */
        char title[128];
        size_t hidden = hidden_marks(app, t);
        char because[64] = "";
        if (hidden) /* a mark made before the filter is easy to forget */
            snprintf(because, sizeof because, " (%zu hidden by the filter)", hidden);
        snprintf(title, sizeof title, "%s %zu %s%s%s?", a->question, t->count,
                 t->marked ? "marked " : "", t->count == 1 ? k->noun : k->plural, because);
        ask(app, t, title, a->question, a->note, run_action);
        return;
    }
    run_action(app, t);
    targets_free(t);
}

/* ---- the actions ------------------------------------------------------------------ */

void ui_action_create(ui_app *app, model_kind kind)
{
    if (refused_readonly(app, "creating"))
        return;
    error_info e = {0};
    if (ui_form_create_open(app, kind, &e) != ERROR_OK)
        ui_app_status(app, true, "create: %s", e.msg);
}

void ui_action_delete(ui_app *app) { start_action(app, &delete_action); }

void ui_action_discard(ui_app *app) { start_action(app, &discard_action); }

void ui_action_retry(ui_app *app) { start_action(app, &retry_action); }

/* What 'u' takes back from a row in `state`, or NULL when nothing is queued. */
static const char *queued_change(model_state state)
{
    switch (state) {
    case MODEL_STATE_NEW:
    case MODEL_STATE_FAILED: return "create";
    case MODEL_STATE_EDITED: return "edit";
    case MODEL_STATE_DELETING: return "delete";
    default: return NULL;
    }
}

/* Why 'u' does nothing to a row in `state` (no queued change, or one in flight). */
static void say_nothing_to_undo(ui_app *app, const model_object *obj)
{
    const char *id = model_object_id(obj);
    model_state state = model_object_state(obj);
    if (state == MODEL_STATE_CREATING || state == MODEL_STATE_UNKNOWN)
        ui_app_status(app, true, "not undone: %s is being sent now (%s): after the sync, "
                      "delete it instead", id, model_state_name(state));
    else
        ui_app_status(app, true, "nothing to undo on %s: no change queued (%s)%s", id,
                      model_state_name(state),
                      state == MODEL_STATE_CONFLICT ? ": 'R' resolves it" : "");
}

void ui_action_undo(ui_app *app)
{
    if (refused_readonly(app, "undoing"))
        return;
    ui_row_ref ref;
    model_object obj;
    error_info e = {0};
    if (!ui_app_current(app, &ref)) {
        ui_app_status(app, false, "nothing to undo here: no row selected");
        return;
    }
    model_object_init(&obj, ref.kind);
    if (store_get(ui_app_store(app), ref.kind, ref.id, &obj, &e) != ERROR_OK) {
        ui_app_status(app, true, "not undone: %s", e.msg);
        return;
    }
    const char *change = queued_change(model_object_state(&obj));
    /* A delete goes out as the row is: while a sync runs it may be on its way. */
    bool in_flight = model_object_state(&obj) == MODEL_STATE_DELETING && ui_sync_running(app);
    if (!change || in_flight) {
        if (in_flight)
            ui_app_status(app, true, "not undone: a sync is running and may be deleting %s "
                          "now: 'u' again once it ends", ref.id);
        else
            say_nothing_to_undo(app, &obj);
        model_object_clear(&obj);
        return;
    }
    store_delete_result res = STORE_DELETE_REMOVED;
    if (store_discard(ui_app_store(app), ref.kind, ref.id, &res, &e) != ERROR_OK)
        ui_app_status(app, true, "not undone: %s", e.msg);
    else
        ui_app_status(app, false, "undone: the queued %s of %s (%s)", change, ref.id,
                      res == STORE_DELETE_REMOVED ? "never sent: removed"
                                                  : "back to the remote's values");
    model_object_clear(&obj);
    ui_app_reload(app);
}

static void do_reveal(ui_app *app, void *ctx)
{
    const targets *t = ctx;
    ui_token_show(app, t->refs[0].id);
}

void ui_action_reveal(ui_app *app)
{
    if (refused_readonly(app, "revealing tokens"))
        return;
    targets *t = targets_new(app, 1, "reveal");
    if (!t)
        return;
    if (!ui_app_current(app, &t->refs[0]) || !holds_token(&t->refs[0])) {
        ui_app_status(app, false, "'t' shows a credential's token: select one first");
        targets_free(t);
        return;
    }
    t->count = 1;
    char title[128];
    snprintf(title, sizeof title, "Show the token of %s?", t->refs[0].id);
    ask(app, t, title, "Show", "The token stays on screen until you close it (Enter).",
        do_reveal);
}

/* The cidr of rule `ref` into `out`; false (said in the status line) when it
 * has none to give. */
static bool rule_cidr(ui_app *app, const ui_row_ref *ref, char *out, size_t size)
{
    if (!kind_field_by_name(ref->kind, "cidr")) {
        ui_app_status(app, false, "'Y' sends a rule's cidr: %s is a %s ('y' sends its id)",
                      ref->id, kind_get(ref->kind)->noun);
        return false;
    }
    model_object obj;
    model_object_init(&obj, ref->kind);
    error_info e = {0};
    bool ok = store_get(ui_app_store(app), ref->kind, ref->id, &obj, &e) == ERROR_OK;
    if (ok)
        snprintf(out, size, "%s", kind_value(&obj, "cidr", NULL, 0));
    else
        ui_app_status(app, true, "nothing sent: %s", e.msg);
    model_object_clear(&obj);
    return ok;
}

void ui_action_copy(ui_app *app, bool cidr)
{
    ui_row_ref ref;
    if (!ui_app_current(app, &ref)) {
        ui_app_status(app, false, "nothing to copy here: no row selected");
        return;
    }
    char value[MODEL_CIDR_MAX + MODEL_ID_MAX + 2];
    snprintf(value, sizeof value, "%s", ref.id);
    if (cidr && !rule_cidr(app, &ref, value, sizeof value))
        return;
    if (!ui_clipboard_send(app, value))
        ui_app_status(app, true, "copy failed: out of memory");
    else
        ui_app_status(app, false, "%s %s %s", cidr ? "cidr" : "id", value, UI_CLIPBOARD_SENT);
}

void ui_action_sync(ui_app *app)
{
    if (refused_readonly(app, "syncing"))
        return;
    ui_sync_start(app);
}

/* ---- rotate ------------------------------------------------------------------- */

void ui_action_rotate(ui_app *app)
{
    if (refused_readonly(app, "rotating"))
        return;
    ui_row_ref ref;
    if (!ui_app_current(app, &ref) || !(kind_get(ref.kind)->traits & KIND_ROTATES)) {
        ui_app_status(app, false, "nothing to rotate here: pick a credential");
        return;
    }
    const ui_options *o = ui_app_options(app);
    long long grace = o->rotate_grace_s > 0 ? o->rotate_grace_s : 0;
    char new_id[MODEL_ID_MAX + 1], left[32];
    error_info e = {0};
    if (store_rotation_start(ui_app_store(app), ref.id, grace, STORE_ROTATE_GRACE,
                             o->rotate_exec, (long long)time(NULL), new_id, &e) != ERROR_OK) {
        ui_app_status(app, true, "not rotated: %s", e.msg);
        return;
    }
    ui_app_status(app, false, "rotating %s to %s: 's' creates it; the old one retires %s "
                  "after, once no local agent fetches it", ref.id, new_id,
                  duration_age((double)grace, left, sizeof left));
    ui_app_reload(app);
}

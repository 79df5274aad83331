/* store: pull staging, the merge of a remote snapshot, and the outbox moves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/store.h"
#include "rampart/validate.h"
#include "../../src/core/store/store_internal.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";

static int setup(void **state)
{
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

/* What the remote assigns a row of `kind`: an id "<prefix>_<n>" padded so that ids
 * sort by n, its uri, a creation time. */
static void remote_head(model_kind kind, int n, char *id, char *uri, char *created_at)
{
    const kind_desc *d = kind_get(kind);
    snprintf(id, MODEL_ID_MAX + 1, "%s_%027d", d->id_prefix, n);
    snprintf(uri, MODEL_URI_MAX + 1, "http://127.0.0.1%s/%s", d->api_path, id);
    strcpy(created_at, "2025-09-04T10:11:15Z");
}

/* A remote-looking rule, synced. */
static model_object remote_rule(int n, const char *cidr, model_action action)
{
    model_object o = ts_rule(POLICY, cidr, action, MODEL_STATE_SYNCED);
    remote_head(MODEL_KIND_RULE, n, o.rule.id, o.rule.uri, o.rule.created_at);
    return o;
}

static void local_rule(store *st, const char *cidr, model_action action, model_state state,
                       char *id_out)
{
    ts_insert_rule(st, POLICY, cidr, action, state, id_out);
}

/* Insert a copy of `o` (of either kind) in `state`; the caller keeps `o`. */
static void insert_as(store *st, const model_object *o, model_state state)
{
    model_object copy;
    error_info err;
    assert_int_equal(model_object_copy(&copy, o, &err), ERROR_OK);
    if (copy.kind == MODEL_KIND_CRED)
        copy.cred.state = state;
    else
        copy.rule.state = state;
    assert_int_equal(store_insert(st, &copy, &err), ERROR_OK);
    model_object_clear(&copy);
}

/* A stored row of `kind` (release it with model_object_clear). */
static model_object get_row(store *st, model_kind kind, const char *id)
{
    model_object o;
    model_object_init(&o, kind);
    error_info err;
    assert_int_equal(store_get(st, kind, id, &o, &err), ERROR_OK);
    return o;
}

static error_code find_row(store *st, model_kind kind, const char *id)
{
    model_object o;
    model_object_init(&o, kind);
    error_code rc = store_get(st, kind, id, &o, NULL);
    model_object_clear(&o);
    return rc;
}

static model_state rule_state(store *st, const char *id)
{
    return get_row(st, MODEL_KIND_RULE, id).rule.state;
}

/* Stage a page every row of which the store takes. */
static void stage(store *st, model_kind kind, model_object *rows, const char *const *markers,
                  size_t n)
{
    error_info err;
    size_t refused = 99;
    assert_int_equal(store_pull_stage(st, kind, rows, markers, NULL, n, NULL, NULL, &refused, &err),
                     ERROR_OK);
    assert_int_equal(refused, 0);
}

static void merge(store *st, model_object *rules, size_t nr, model_object *creds,
                  const char *const *markers, size_t nc, store_pull_stats *rs,
                  store_pull_stats *cs)
{
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    stage(st, MODEL_KIND_RULE, rules, NULL, nr);
    stage(st, MODEL_KIND_CRED, creds, markers, nc);
    assert_int_equal(store_pull_merge(st, rs, cs, &err), ERROR_OK);
}

static void merge_rules(store *st, model_object *rules, size_t n, store_pull_stats *rs)
{
    merge(st, rules, n, NULL, NULL, 0, rs, NULL);
}

/* ---- rules ---------------------------------------------------------------- */

static void test_additions_and_pulled_count(void **state)
{
    store *st = *state;
    model_object remote[3] = {remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW),
                              remote_rule(2, "10.1.0.0/16", MODEL_ACTION_DENY),
                              remote_rule(3, "2001:db8::/32", MODEL_ACTION_ALLOW)};
    store_pull_stats rs;
    merge_rules(st, remote, 3, &rs);
    assert_int_equal(rs.pulled, 3);
    assert_int_equal(rs.added, 3);
    model_rule got = get_row(st, MODEL_KIND_RULE, remote[1].rule.id).rule;
    assert_int_equal(got.state, MODEL_STATE_SYNCED);
    assert_int_equal(got.action, MODEL_ACTION_DENY);
    assert_string_equal(got.uri, remote[1].rule.uri);
    /* The same listing again changes nothing. */
    merge_rules(st, remote, 3, &rs);
    assert_int_equal(rs.added, 0);
    assert_int_equal(rs.updated, 0);
    assert_int_equal(rs.remote_deleted, 0);
}

static void test_absence_and_updates(void **state)
{
    store *st = *state;
    model_object a = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    model_object b = remote_rule(2, "10.1.0.0/16", MODEL_ACTION_ALLOW);
    model_object c = remote_rule(3, "10.2.0.0/16", MODEL_ACTION_ALLOW);
    model_object d = remote_rule(4, "10.3.0.0/16", MODEL_ACTION_ALLOW);
    model_object e = remote_rule(5, "10.4.0.0/16", MODEL_ACTION_ALLOW);
    insert_as(st, &a, MODEL_STATE_SYNCED);         /* absent: remote_deleted */
    insert_as(st, &b, MODEL_STATE_DELETING);       /* absent: gone */
    insert_as(st, &c, MODEL_STATE_DELETING);       /* listed: still deleting */
    insert_as(st, &d, MODEL_STATE_REMOTE_DELETED); /* listed again: synced */
    insert_as(st, &e, MODEL_STATE_SYNCED);         /* listed, changed */
    char failed_id[MODEL_ID_MAX + 1];
    local_rule(st, "192.168.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_FAILED, failed_id);
    strcpy(e.rule.description, "changed remotely");
    model_object listing[] = {c, d, e};
    store_pull_stats rs;
    merge_rules(st, listing, 3, &rs);
    assert_int_equal(rs.remote_deleted, 1);
    assert_int_equal(rs.gone, 1);
    assert_int_equal(rs.updated, 2); /* d back, e changed */
    assert_int_equal(rule_state(st, a.rule.id), MODEL_STATE_REMOTE_DELETED);
    assert_int_equal(find_row(st, MODEL_KIND_RULE, b.rule.id), ERROR_NOT_FOUND);
    assert_int_equal(rule_state(st, c.rule.id), MODEL_STATE_DELETING);
    assert_int_equal(rule_state(st, d.rule.id), MODEL_STATE_SYNCED);
    model_rule got = get_row(st, MODEL_KIND_RULE, e.rule.id).rule;
    assert_string_equal(got.description, "changed remotely");
    /* Local rows the remote never had are left alone. */
    assert_int_equal(rule_state(st, failed_id), MODEL_STATE_FAILED);
}

static void test_adopt_by_natural_key(void **state)
{
    store *st = *state;
    char unknown_id[MODEL_ID_MAX + 1], creating_id[MODEL_ID_MAX + 1],
        new_id[MODEL_ID_MAX + 1], lost_id[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_UNKNOWN, unknown_id);
    local_rule(st, "10.1.0.0/16", MODEL_ACTION_DENY, MODEL_STATE_CREATING, creating_id);
    local_rule(st, "10.2.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, new_id);
    local_rule(st, "10.3.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_UNKNOWN, lost_id);
    model_object listing[] = {remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW),
                              remote_rule(2, "10.1.0.0/16", MODEL_ACTION_DENY),
                              remote_rule(3, "10.2.0.0/16", MODEL_ACTION_ALLOW)};
    store_pull_stats rs;
    merge_rules(st, listing, 3, &rs);
    assert_int_equal(rs.adopted, 3);
    assert_int_equal(rs.added, 0); /* no duplicate row */
    assert_int_equal(rs.requeued, 1);
    model_rule got = get_row(st, MODEL_KIND_RULE, unknown_id).rule;
    assert_string_equal(got.id, listing[0].rule.id); /* the local id is an alias now */
    assert_int_equal(got.state, MODEL_STATE_SYNCED);
    assert_string_equal(got.uri, listing[0].rule.uri);
    got = get_row(st, MODEL_KIND_RULE, creating_id).rule;
    assert_string_equal(got.id, listing[1].rule.id);
    assert_int_equal(rule_state(st, new_id), MODEL_STATE_SYNCED);
    assert_int_equal(rule_state(st, lost_id), MODEL_STATE_NEW);
    size_t count = 0;
    error_info err;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, NULL, &count, &err), ERROR_OK);
    assert_int_equal(count, 4);
}

/* A local create of the other action: a conflict, and the remote rule is cached
 * beside it all the same (the policy check must see it). */
static void test_other_action_conflicts_local_row(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    model_object listing[] = {remote_rule(7, "10.0.0.0/8", MODEL_ACTION_DENY)};
    store_pull_stats rs;
    merge_rules(st, listing, 1, &rs);
    assert_int_equal(rs.conflicts, 1);
    assert_int_equal(rs.added, 1);
    assert_int_equal(rule_state(st, listing[0].rule.id), MODEL_STATE_SYNCED);
    model_rule got = get_row(st, MODEL_KIND_RULE, id).rule;
    assert_int_equal(got.state, MODEL_STATE_CONFLICT);
    assert_non_null(strstr(got.error, listing[0].rule.id));
    assert_non_null(strstr(got.error, "deny"));
    /* Discarding the local row leaves the remote one. */
    store_delete_result res;
    error_info err;
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, id, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_REMOVED);
    merge_rules(st, listing, 1, &rs);
    assert_int_equal(rs.added, 0);
    assert_int_equal(rule_state(st, listing[0].rule.id), MODEL_STATE_SYNCED);
}

static void test_unmerged_staging_leaves_cache(void **state)
{
    store *st = *state;
    model_object a = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    insert_as(st, &a, MODEL_STATE_SYNCED);
    char unknown_id[MODEL_ID_MAX + 1];
    local_rule(st, "10.9.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_UNKNOWN, unknown_id);
    error_info err;
    /* An interrupted pull: pages staged, never merged. */
    model_object partial[] = {remote_rule(2, "10.1.0.0/16", MODEL_ACTION_ALLOW)};
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    stage(st, MODEL_KIND_RULE, partial, NULL, 1);
    assert_int_equal(rule_state(st, a.rule.id), MODEL_STATE_SYNCED);
    assert_int_equal(rule_state(st, unknown_id), MODEL_STATE_UNKNOWN);
    size_t count = 0;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, NULL, &count, &err), ERROR_OK);
    assert_int_equal(count, 2);
    /* The next pull starts from empty staging: the stale page does not count. */
    store_pull_stats rs;
    merge_rules(st, &a, 1, &rs);
    assert_int_equal(rs.pulled, 1);
    assert_int_equal(rs.added, 0);
    assert_int_equal(rule_state(st, a.rule.id), MODEL_STATE_SYNCED);
}

/* ---- credentials ---------------------------------------------------------- */

/* A remote-looking credential, synced. */
static model_object remote_cred(int n, const char *description)
{
    model_object o;
    ts_cred_init(&o, description, "", NULL);
    remote_head(MODEL_KIND_CRED, n, o.cred.id, o.cred.uri, o.cred.created_at);
    o.cred.state = MODEL_STATE_SYNCED;
    return o;
}

static void local_cred(store *st, const char *description, model_state state, char *id_out)
{
    model_object o;
    ts_cred_init(&o, description, "user metadata", NULL);
    o.cred.state = state;
    ts_insert(st, &o, id_out);
}

/* A credential created here whose reply was lost (its id into `lost`), then a merge
 * of a listing holding its remote copy under its marker: an orphan. Returns that
 * remote copy; the merge's credential counts into cs (may be NULL). */
static model_object lost_reply_orphan(store *st, char *lost, store_pull_stats *cs)
{
    local_cred(st, "x", MODEL_STATE_UNKNOWN, lost);
    model_object listing[] = {remote_cred(1, "x")};
    const char *markers[] = {lost};
    merge(st, NULL, 0, listing, markers, 1, NULL, cs);
    return listing[0];
}

static void test_cred_marker_orphans(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1], never[MODEL_ID_MAX + 1];
    local_cred(st, "lost reply", MODEL_STATE_UNKNOWN, lost);
    local_cred(st, "never arrived", MODEL_STATE_CREATING, never);
    model_object listing[] = {remote_cred(1, "lost reply"), remote_cred(2, "someone else")};
    strcpy(listing[0].cred.metadata, "user metadata"); /* marker already stripped */
    const char *markers[] = {lost, ""};
    store_pull_stats cs;
    merge(st, NULL, 0, listing, markers, 2, NULL, &cs);
    assert_int_equal(cs.orphaned, 1);
    assert_int_equal(cs.added, 1);
    assert_int_equal(cs.requeued, 1);
    model_object c = get_row(st, MODEL_KIND_CRED, lost);
    assert_string_equal(c.cred.id, listing[0].cred.id);
    assert_int_equal(c.cred.state, MODEL_STATE_ORPHANED);
    assert_non_null(strstr(c.cred.error, "token was lost"));
    model_object_clear(&c);
    c = get_row(st, MODEL_KIND_CRED, never);
    assert_int_equal(c.cred.state, MODEL_STATE_NEW);
    model_object_clear(&c);
    /* Deleted remotely: back to new under the local id it was created with. */
    error_info err;
    assert_int_equal(store_cred_requeue(st, listing[0].cred.id, &err), ERROR_OK);
    c = get_row(st, MODEL_KIND_CRED, lost);
    assert_string_equal(c.cred.id, lost);
    assert_int_equal(c.cred.state, MODEL_STATE_NEW);
    assert_string_equal(c.cred.uri, "");
    model_object_clear(&c);
    assert_int_equal(find_row(st, MODEL_KIND_CRED, listing[0].cred.id), ERROR_NOT_FOUND);
    assert_int_equal(store_cred_requeue(st, lost, &err), ERROR_STATE);
}

/* A listed copy of our own lost create that the gate refuses (a bad ACL rule) and
 * that is not cached says nothing: the local create stays unknown, for the next
 * listing to settle, rather than being queued again (a second remote copy). */
static void test_refused_listing_settles_no_create(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1];
    local_cred(st, "lost reply", MODEL_STATE_UNKNOWN, lost);
    model_object listing[] = {remote_cred(1, "lost reply")};
    error_info err;
    assert_int_equal(model_acl_add(&listing[0].cred.acl, "bind:foo..com", &err), ERROR_OK);
    const char *markers[] = {lost};
    size_t refused = 0;
    store_pull_stats cs;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    assert_int_equal(store_pull_stage(st, MODEL_KIND_CRED, listing, markers, NULL, 1, NULL, NULL,
                                      &refused, &err), ERROR_OK);
    assert_int_equal(refused, 1);
    assert_int_equal(store_pull_merge(st, NULL, &cs, &err), ERROR_OK);
    assert_int_equal(cs.requeued, 0);
    assert_int_equal(cs.orphaned, 0);
    model_object c = get_row(st, MODEL_KIND_CRED, lost);
    assert_int_equal(c.cred.state, MODEL_STATE_UNKNOWN);
    model_object_clear(&c);
    model_object_clear(&listing[0]);
    /* The next complete listing without it settles it: never created, new again. */
    merge(st, NULL, 0, NULL, NULL, 0, NULL, &cs);
    assert_int_equal(cs.requeued, 1);
    c = get_row(st, MODEL_KIND_CRED, lost);
    assert_int_equal(c.cred.state, MODEL_STATE_NEW);
    model_object_clear(&c);
}

static void test_orphan_absent_is_requeued(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1];
    store_pull_stats cs;
    lost_reply_orphan(st, lost, &cs);
    assert_int_equal(cs.orphaned, 1);
    /* Someone deleted the remote copy: the orphan is new again, no alias left. */
    merge(st, NULL, 0, NULL, NULL, 0, NULL, &cs);
    assert_int_equal(cs.requeued, 1);
    model_object c = get_row(st, MODEL_KIND_CRED, lost);
    assert_string_equal(c.cred.id, lost);
    assert_int_equal(c.cred.state, MODEL_STATE_NEW);
    model_object_clear(&c);
}

/* A listing that holds one id twice (a page shifted while it was read) caches it
 * once, as last listed, and says so; two ids for one policy and cidr cache one
 * and count the other. */
static void test_listing_duplicates_are_counted(void **state)
{
    store *st = *state;
    model_object a = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    model_object a2 = a;
    strcpy(a2.rule.description, "listed again");
    model_object b = remote_rule(2, "10.1.0.0/16", MODEL_ACTION_DENY);
    model_object b_other = remote_rule(3, "10.1.0.0/16", MODEL_ACTION_ALLOW);
    model_object c = remote_rule(4, "10.2.0.0/16", MODEL_ACTION_DENY);
    model_object listing[] = {a, b, c, a2, b_other};
    store_pull_stats rs;
    merge_rules(st, listing, 5, &rs);
    assert_int_equal(rs.pulled, 4);
    assert_int_equal(rs.twice, 1);
    assert_int_equal(rs.same_key, 1);
    assert_int_equal(rs.added, 3);
    assert_string_equal(get_row(st, MODEL_KIND_RULE, a.rule.id).rule.description,
                        "listed again");
    /* A clean listing after it says nothing (the counters start again). */
    model_object clean[] = {a, b, c};
    merge_rules(st, clean, 3, &rs);
    assert_int_equal(rs.twice, 0);
    assert_int_equal(rs.same_key, 0);
    /* Credentials: an id twice. */
    model_object k = remote_cred(1, "one");
    model_object creds[] = {k, k};
    store_pull_stats cs;
    merge(st, clean, 3, creds, NULL, 2, &rs, &cs);
    assert_int_equal(cs.pulled, 1);
    assert_int_equal(cs.twice, 1);
    assert_int_equal(rs.twice, 0);
}

static void test_cred_strays_and_tokens(void **state)
{
    store *st = *state;
    char local[MODEL_ID_MAX + 1];
    local_cred(st, "mine", MODEL_STATE_CREATING, local);
    model_object reply = remote_cred(1, "mine");
    error_info err;
    assert_int_equal(model_cred_set_token(&reply.cred, TOKEN, &err), ERROR_OK);
    assert_int_equal(store_confirm_create(st, local, &reply, &err), ERROR_OK);
    /* The listing shows our copy and a second one carrying the same marker. */
    model_object listing[] = {remote_cred(1, "mine"), remote_cred(2, "mine")};
    const char *markers[] = {local, local};
    store_pull_stats cs;
    merge(st, NULL, 0, listing, markers, 2, NULL, &cs);
    assert_int_equal(cs.strays, 1);
    assert_int_equal(cs.added, 0);
    model_object c = get_row(st, MODEL_KIND_CRED, listing[1].cred.id);
    assert_int_equal(c.cred.state, MODEL_STATE_DELETING);
    model_object_clear(&c);
    char *token = NULL;
    assert_int_equal(store_token_get(st, local, &token, &err), ERROR_OK);
    assert_string_equal(token, TOKEN);
    free(token);
    /* Gone remotely after being deleted: the row and its token go. */
    assert_int_equal(store_delete(st, MODEL_KIND_CRED, reply.cred.id, NULL, &err), ERROR_OK);
    merge(st, NULL, 0, NULL, NULL, 0, NULL, &cs);
    assert_int_equal(cs.gone, 2);
    assert_int_equal(store_token_get(st, local, &token, &err), ERROR_NOT_FOUND);
    model_object_clear(&reply);
}

static void test_cred_update_and_remote_delete(void **state)
{
    store *st = *state;
    model_object a = remote_cred(1, "a"), b = remote_cred(2, "b");
    error_info err;
    assert_int_equal(store_insert(st, &a, &err), ERROR_OK);
    assert_int_equal(store_insert(st, &b, &err), ERROR_OK);
    model_object listing[] = {remote_cred(2, "b renamed")};
    assert_int_equal(model_acl_add(&listing[0].cred.acl, "bind:*.example.com", &err),
                     ERROR_OK);
    store_pull_stats cs;
    merge(st, NULL, 0, listing, NULL, 1, NULL, &cs);
    assert_int_equal(cs.remote_deleted, 1);
    assert_int_equal(cs.updated, 1);
    model_object c = get_row(st, MODEL_KIND_CRED, a.cred.id);
    assert_int_equal(c.cred.state, MODEL_STATE_REMOTE_DELETED);
    model_object_clear(&c);
    c = get_row(st, MODEL_KIND_CRED, b.cred.id);
    assert_string_equal(c.cred.description, "b renamed");
    assert_int_equal(c.cred.acl.count, 1);
    assert_string_equal(c.cred.acl.rules[0], "bind:*.example.com");
    model_object_clear(&c);
    model_object_clear(&listing[0]);
}

/* Field `f` of `o` set to another value its check takes. */
static void change_field(model_object *o, const kind_field *f)
{
    static const struct {
        const char *name, *value;
    } valid[] = {
        {"uri", "http://127.0.0.1/changed"},
        {"policy_uri", "http://127.0.0.1/ip_policies/changed"},
        {"created_at", "2025-10-01T00:00:00Z"},
        {"cidr", "10.99.0.0/16"},
        {"ip_policy_id", "ipp_3Zz1lqOxDdQyVpYcAAAAAAAAAAA"},
        {"owner_id", "usr_2Zz1lqOxDdQyVpYcAAAAAAAAAAA"},
    };
    void *at = kind_field_at_mut(o, f);
    error_info err;
    if (f->type == KIND_FIELD_ACTION) {
        model_action *a = at;
        *a = *a == MODEL_ACTION_ALLOW ? MODEL_ACTION_DENY : MODEL_ACTION_ALLOW;
        return;
    }
    if (f->type == KIND_FIELD_ACL) {
        assert_int_equal(model_acl_add(at, "bind:changed.example.com", &err), ERROR_OK);
        return;
    }
    const char *value = "changed remotely";
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        if (strcmp(f->name, valid[i].name) == 0)
            value = valid[i].value;
    }
    snprintf(at, f->size, "%s", value);
}

/* A cached synced row whose remote copy changed in column i alone: the merge
 * takes the remote's value, but a rule's policy and action (fixed at creation,
 * never rewritten). Over every column the descriptor gives a listed row, so a
 * new field is checked too. */
static void check_merge_takes_column(model_kind kind, int i)
{
    const kind_field *f = store_row_field(kind, i);
    bool kept = strcmp(f->name, "ip_policy_id") == 0 || f->type == KIND_FIELD_ACTION;
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    model_object cached = kind == MODEL_KIND_RULE ? remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW)
                                                  : remote_cred(1, "a");
    insert_as(st, &cached, MODEL_STATE_SYNCED);
    model_object listed;
    assert_int_equal(model_object_copy(&listed, &cached, &err), ERROR_OK);
    change_field(&listed, f);
    assert_false(kind_field_same(f, &listed, &cached));
    store_pull_stats stats;
    if (kind == MODEL_KIND_RULE)
        merge(st, &listed, 1, NULL, NULL, 0, &stats, NULL);
    else
        merge(st, NULL, 0, &listed, NULL, 1, NULL, &stats);
    assert_int_equal(stats.updated, kept ? 0 : 1);
    model_object got = get_row(st, kind, model_object_id(&cached));
    if (!kind_field_same(f, &got, kept ? &cached : &listed))
        fail_msg("%s %s: the merge %s it", kind_get(kind)->noun, f->name,
                 kept ? "rewrote" : "did not take");
    model_object_clear(&got);
    model_object_clear(&listed);
    model_object_clear(&cached);
    store_close(st);
}

/* A listed row not cached arrives with every column a listing carries. */
static void check_merge_adds_columns(model_kind kind)
{
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    model_object listed = kind == MODEL_KIND_RULE ? remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW)
                                                  : remote_cred(1, "a");
    for (int i = 1; i < store_row_width(kind); i++) {
        if (store_row_staged(kind, i))
            change_field(&listed, store_row_field(kind, i));
    }
    store_pull_stats stats;
    if (kind == MODEL_KIND_RULE)
        merge(st, &listed, 1, NULL, NULL, 0, &stats, NULL);
    else
        merge(st, NULL, 0, &listed, NULL, 1, NULL, &stats);
    assert_int_equal(stats.added, 1);
    model_object got = get_row(st, kind, model_object_id(&listed));
    assert_int_equal(model_object_state(&got), MODEL_STATE_SYNCED);
    for (int i = 0; i < store_row_width(kind); i++) {
        const kind_field *f = store_row_field(kind, i);
        if (store_row_staged(kind, i) && !kind_field_same(f, &got, &listed))
            fail_msg("%s %s: not added", kind_get(kind)->noun, f->name);
    }
    model_object_clear(&got);
    model_object_clear(&listed);
    store_close(st);
}

static void test_merge_takes_every_column(void **state)
{
    (void)state;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        for (int i = 1; i < store_row_width((model_kind)k); i++) {
            if (store_row_staged((model_kind)k, i))
                check_merge_takes_column((model_kind)k, i);
        }
        check_merge_adds_columns((model_kind)k);
    }
}

/* ---- refused rows --------------------------------------------------------- */

/* What store_pull_stage told its refusal callback, in order. */
typedef struct refusal {
    model_kind kind;
    char id[MODEL_ID_MAX + 1];
    char why[ERROR_MSG_MAX];
} refusal;

typedef struct refusals {
    size_t n;
    refusal seen[8];
} refusals;

static void record_refusal(void *ctx, model_kind kind, const char *id, const error_info *why)
{
    refusals *r = ctx;
    assert_true(r->n < sizeof r->seen / sizeof r->seen[0]);
    assert_int_equal(why->code, ERROR_INVALID);
    refusal *one = &r->seen[r->n++];
    one->kind = kind;
    snprintf(one->id, sizeof one->id, "%s", id);
    snprintf(one->why, sizeof one->why, "%s", why->msg);
}

/* Stage one page, recording refusals in `rec`; the page itself never fails, and
 * the count it returns is what the callback heard. */
static size_t stage_recording(store *st, model_kind kind, model_object *rows, size_t n,
                              refusals *rec)
{
    size_t before = rec->n, refused = 99;
    error_info err;
    assert_int_equal(store_pull_stage(st, kind, rows, NULL, NULL, n, record_refusal, rec, &refused,
                                      &err), ERROR_OK);
    assert_int_equal(refused, rec->n - before);
    return refused;
}

/* A row without an id is refused with validate_id's reason; the rest of its page
 * is staged and merged. */
static void test_staging_refuses_bad_rows(void **state)
{
    store *st = *state;
    model_object rows[MODEL_KIND_COUNT][2] = {
        [MODEL_KIND_RULE] = {remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW),
                             remote_rule(2, "10.1.0.0/16", MODEL_ACTION_ALLOW)},
        [MODEL_KIND_CRED] = {remote_cred(1, "no id"), remote_cred(2, "kept")},
    };
    refusals rec = {0};
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        model_object_id_buf(&rows[k][0])[0] = '\0';
        assert_int_equal(stage_recording(st, (model_kind)k, rows[k], 2, &rec), 1);
        error_info want;
        assert_int_equal(validate_id("", kind_get((model_kind)k)->id_prefix, "id", &want),
                         ERROR_INVALID);
        assert_int_equal(rec.seen[k].kind, k);
        assert_string_equal(rec.seen[k].id, "");
        assert_string_equal(rec.seen[k].why, want.msg);
    }
    store_pull_stats stats[MODEL_KIND_COUNT];
    assert_int_equal(store_pull_merge(st, &stats[MODEL_KIND_RULE], &stats[MODEL_KIND_CRED],
                                      &err), ERROR_OK);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        assert_int_equal(stats[k].pulled, 1);
        assert_int_equal(stats[k].added, 1);
        assert_int_equal(find_row(st, (model_kind)k, model_object_id(&rows[k][1])), ERROR_OK);
    }
}

/*
 * What differs between the kinds in the tests below: the one value that makes a
 * pulled row good or bad (a rule's cidr, a credential's only ACL rule).
 */
typedef struct pull_kind {
    model_kind kind;
    model_object (*make)(int n, const char *value); /* a remote row with `value` */
    /* The gate's verdict on `value`, in its words, from the validator itself. */
    error_code (*judge)(const char *value, error_info *why);
    const char *(*value_of)(const model_object *row);
} pull_kind;

static model_object rule_with(int n, const char *cidr)
{
    return remote_rule(n, cidr, MODEL_ACTION_ALLOW);
}

static error_code judge_cidr(const char *cidr, error_info *why)
{
    char canon[MODEL_CIDR_MAX + 1];
    if (validate_cidr(cidr, NULL, canon, sizeof canon, why))
        return error_prefix(why, "cidr");
    return ERROR_OK;
}

static const char *cidr_of(const model_object *row)
{
    return row->rule.cidr;
}

static model_object cred_with(int n, const char *acl_rule)
{
    model_object o = remote_cred(n, "pulled");
    assert_int_equal(model_acl_add(&o.cred.acl, acl_rule, NULL), ERROR_OK);
    return o;
}

static error_code judge_acl(const char *acl_rule, error_info *why)
{
    model_object o = cred_with(0, acl_rule);
    error_code rc = validate_acl(&o.cred.acl, why);
    model_object_clear(&o);
    return rc;
}

static const char *acl_of(const model_object *row)
{
    return row->cred.acl.count ? row->cred.acl.rules[0] : "";
}

static const pull_kind pull_rules = {MODEL_KIND_RULE, rule_with, judge_cidr, cidr_of};
static const pull_kind pull_creds = {MODEL_KIND_CRED, cred_with, judge_acl, acl_of};

/* One row of a pulled page: its value, and the value staged (NULL: refused). */
typedef struct pulled {
    const char *value;
    const char *staged;
} pulled;

enum { PAGE_MAX = 8 };

/*
 * Stage one page of `kind` (ids 1..n): the callback hears of exactly the refused
 * rows, in order, with their ids and the validator's reason; the others are
 * canonicalised in place, staged, and cached by the merge as staged.
 */
static void check_refused_page(store *st, const pull_kind *pk, const pulled *page, size_t n)
{
    model_object rows[PAGE_MAX];
    assert_true(n <= PAGE_MAX);
    for (size_t i = 0; i < n; i++)
        rows[i] = pk->make((int)i + 1, page[i].value);
    refusals rec = {0};
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    size_t refused = stage_recording(st, pk->kind, rows, n, &rec);
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        error_info why = {ERROR_OK, ""};
        error_code verdict = pk->judge(page[i].value, &why);
        assert_int_equal(verdict, page[i].staged ? ERROR_OK : ERROR_INVALID);
        if (page[i].staged) {
            assert_string_equal(pk->value_of(&rows[i]), page[i].staged);
            continue;
        }
        assert_true(r < rec.n);
        assert_int_equal(rec.seen[r].kind, pk->kind);
        assert_string_equal(rec.seen[r].id, model_object_id(&rows[i]));
        assert_string_equal(rec.seen[r].why, why.msg);
        assert_string_equal(pk->value_of(&rows[i]), page[i].value); /* left as sent */
        r++;
    }
    assert_int_equal(refused, r);
    store_pull_stats stats[MODEL_KIND_COUNT];
    assert_int_equal(store_pull_merge(st, &stats[MODEL_KIND_RULE], &stats[MODEL_KIND_CRED],
                                      &err), ERROR_OK);
    assert_int_equal(stats[pk->kind].pulled, n - r);
    assert_int_equal(stats[pk->kind].added, n - r);
    for (size_t i = 0; i < n; i++) {
        const char *id = model_object_id(&rows[i]);
        if (!page[i].staged) {
            assert_int_equal(find_row(st, pk->kind, id), ERROR_NOT_FOUND);
            continue;
        }
        model_object got = get_row(st, pk->kind, id);
        assert_string_equal(pk->value_of(&got), page[i].staged);
        assert_int_equal(model_object_state(&got), MODEL_STATE_SYNCED);
        model_object_clear(&got);
    }
    for (size_t i = 0; i < n; i++)
        model_object_clear(&rows[i]);
}

/* The description field of either kind, found through the kind's descriptor. */
static char *description_of(model_object *row)
{
    const kind_field *f = kind_field_by_name(row->kind, "description");
    assert_non_null(f);
    return (char *)&row->rule + f->offset; /* the union's members share an address */
}

/*
 * A synced row whose pulled copy is refused keeps its cached values and state: it
 * is neither updated nor taken for deleted remotely.
 */
static void check_refused_keeps_cached(store *st, const pull_kind *pk, const char *good,
                                       const char *bad)
{
    model_object cached = pk->make(1, good), copy = pk->make(1, bad);
    strcpy(description_of(&cached), "before");
    strcpy(description_of(&copy), "after");
    insert_as(st, &cached, MODEL_STATE_SYNCED);
    refusals rec = {0};
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    assert_int_equal(stage_recording(st, pk->kind, &copy, 1, &rec), 1);
    assert_string_equal(rec.seen[0].id, model_object_id(&cached));
    store_pull_stats stats[MODEL_KIND_COUNT];
    assert_int_equal(store_pull_merge(st, &stats[MODEL_KIND_RULE], &stats[MODEL_KIND_CRED],
                                      &err), ERROR_OK);
    assert_int_equal(stats[pk->kind].remote_deleted, 0);
    assert_int_equal(stats[pk->kind].updated, 0);
    assert_int_equal(stats[pk->kind].added, 0);
    model_object got = get_row(st, pk->kind, model_object_id(&cached));
    assert_int_equal(model_object_state(&got), MODEL_STATE_SYNCED);
    assert_string_equal(pk->value_of(&got), good);
    assert_string_equal(description_of(&got), "before");
    model_object_clear(&got);
    model_object_clear(&cached);
    model_object_clear(&copy);
}

static void test_pull_refuses_bad_rules(void **state)
{
    static const pulled page[] = {
        {"10.0.0.0/8", "10.0.0.0/8"},
        {"not a cidr", NULL},
        {"10.0.0.1/8", NULL},
        {"2001:DB8:FFFF::/48", "2001:db8:ffff::/48"},
        {"192.168.0.0/16", "192.168.0.0/16"},
    };
    check_refused_page(*state, &pull_rules, page, sizeof page / sizeof page[0]);
}

static void test_pull_refuses_bad_creds(void **state)
{
    static const pulled page[] = {
        {"bind:*.example.com", "bind:*.example.com"},
        {"nope", NULL},
        {"bind:FOO.Example.COM", "bind:FOO.Example.COM"},
        {"bind:example.com:0", NULL},
        {"*", "*"},
    };
    check_refused_page(*state, &pull_creds, page, sizeof page / sizeof page[0]);
}

static void test_pull_keeps_cached_rule(void **state)
{
    check_refused_keeps_cached(*state, &pull_rules, "10.6.0.0/16", "10.6.0.1/16");
}

static void test_pull_keeps_cached_cred(void **state)
{
    check_refused_keeps_cached(*state, &pull_creds, "bind:*.example.com", "bind:foo..com");
}

/* ---- outbox --------------------------------------------------------------- */

static void test_claim_is_compare_and_set(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    error_info err;
    assert_int_equal(store_claim(st, MODEL_KIND_RULE, id, &err), ERROR_OK);
    assert_int_equal(rule_state(st, id), MODEL_STATE_CREATING);
    assert_int_equal(store_claim(st, MODEL_KIND_RULE, id, &err), ERROR_STATE);
    assert_non_null(strstr(err.msg, "creating"));
    assert_int_equal(store_claim(st, MODEL_KIND_RULE, "local_nope", &err), ERROR_NOT_FOUND);
    char cid[MODEL_ID_MAX + 1];
    local_cred(st, "c", MODEL_STATE_NEW, cid);
    assert_int_equal(store_claim(st, MODEL_KIND_CRED, cid, &err), ERROR_OK);
    assert_int_equal(store_claim(st, MODEL_KIND_CRED, cid, &err), ERROR_STATE);
}

static void test_retry_and_discard(void **state)
{
    store *st = *state;
    char failed[MODEL_ID_MAX + 1], fresh[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_FAILED, failed);
    assert_int_equal(store_set_state(st, MODEL_KIND_RULE, failed, MODEL_STATE_FAILED,
                                     "host bits", NULL), ERROR_OK);
    local_rule(st, "10.1.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, fresh);
    model_object gone = remote_rule(1, "10.2.0.0/16", MODEL_ACTION_ALLOW);
    insert_as(st, &gone, MODEL_STATE_REMOTE_DELETED);
    model_object synced = remote_rule(2, "10.3.0.0/16", MODEL_ACTION_ALLOW);
    insert_as(st, &synced, MODEL_STATE_SYNCED);
    error_info err;
    assert_int_equal(store_retry(st, MODEL_KIND_RULE, failed, &err), ERROR_OK);
    model_rule got = get_row(st, MODEL_KIND_RULE, failed).rule;
    assert_int_equal(got.state, MODEL_STATE_NEW);
    assert_string_equal(got.error, "");
    assert_int_equal(store_retry(st, MODEL_KIND_RULE, synced.rule.id, &err), ERROR_STATE);
    /* remote_deleted: recreated under a fresh local id. */
    assert_int_equal(store_retry(st, MODEL_KIND_RULE, gone.rule.id, &err), ERROR_OK);
    assert_int_equal(find_row(st, MODEL_KIND_RULE, gone.rule.id), ERROR_NOT_FOUND);
    assert_int_equal(store_rule_find(st, POLICY, "10.2.0.0/16", &got, &err), ERROR_OK);
    assert_int_equal(got.state, MODEL_STATE_NEW);
    assert_true(strncmp(got.id, "local_", 6) == 0);
    store_delete_result res;
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, fresh, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_REMOVED);
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, synced.rule.id, &res, &err),
                     ERROR_STATE);
}

static void test_cred_retry_and_discard_orphan(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1];
    model_object remote = lost_reply_orphan(st, lost, NULL);
    error_info err;
    /* already queued */
    assert_int_equal(store_retry(st, MODEL_KIND_CRED, lost, &err), ERROR_OK);
    model_object c = get_row(st, MODEL_KIND_CRED, lost);
    assert_int_equal(c.cred.state, MODEL_STATE_ORPHANED);
    model_object_clear(&c);
    store_delete_result res;
    assert_int_equal(store_discard(st, MODEL_KIND_CRED, lost, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    c = get_row(st, MODEL_KIND_CRED, remote.cred.id);
    assert_int_equal(c.cred.state, MODEL_STATE_DELETING);
    model_object_clear(&c);
    char unknown[MODEL_ID_MAX + 1];
    local_cred(st, "y", MODEL_STATE_UNKNOWN, unknown);
    assert_int_equal(store_discard(st, MODEL_KIND_CRED, unknown, &res, &err), ERROR_STATE);
}

static void test_sync_lock(void **state)
{
    (void)state;
    ts_store_dir d;
    ts_store_dir_open(&d, "/tmp/rampart-pull-XXXXXX", "rampart.db");
    store *a = d.st, *b = ts_store_open(d.path);
    error_info err;
    store_sync_lock *la = NULL, *lb = NULL;
    assert_int_equal(store_sync_lock_take(a, &la, &err), ERROR_OK);
    assert_int_equal(store_sync_lock_take(b, &lb, &err), ERROR_STATE);
    assert_null(lb);
    store_sync_unlock(la);
    assert_int_equal(store_sync_lock_take(b, &lb, &err), ERROR_OK);
    store_sync_unlock(lb);
    struct stat sb;
    char lock_path[160];
    snprintf(lock_path, sizeof lock_path, "%s-sync.lock", d.path);
    assert_int_equal(stat(lock_path, &sb), 0);
    assert_int_equal(sb.st_mode & 0077, 0);
    store_close(b);
    ts_store_dir_close(&d);
}

/* ---- scale and plans ------------------------------------------------------ */

static void test_merge_plans_use_indexes(void **state)
{
    store *st = *state;
    char plan[1024];
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK); /* makes the staging tables */
    assert_int_equal(store_plan(st, store_sql_text(STMT_MERGE_RULE_ADOPT_ALIASES), plan,
                                sizeof plan, &err), ERROR_OK);
    /* Either side of the join may drive, but the other is probed by index. */
    assert_true(strstr(plan, "rules_live_key") || strstr(plan, "PRIMARY KEY"));
    assert_null(strstr(plan, "SCAN r"));
    assert_int_equal(store_plan(st, store_sql_text(STMT_MERGE_CRED_ORPHAN), plan,
                                sizeof plan, &err), ERROR_OK);
    assert_non_null(strstr(plan, "pull_creds_marker"));
}

static void test_large_listing(void **state)
{
    store *st = *state;
    enum { N = 5000, PAGE = 100 };
    model_object *page = calloc(PAGE, sizeof *page);
    assert_non_null(page);
    error_info err;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
        for (int p = 0; p < N / PAGE; p++) {
            for (int i = 0; i < PAGE; i++) {
                int n = p * PAGE + i;
                char cidr[32];
                snprintf(cidr, sizeof cidr, "10.%d.%d.0/24", n / 256, n % 256);
                page[i] = remote_rule(n + 1, cidr, MODEL_ACTION_ALLOW);
            }
            stage(st, MODEL_KIND_RULE, page, NULL, PAGE);
        }
        store_pull_stats rs;
        assert_int_equal(store_pull_merge(st, &rs, NULL, &err), ERROR_OK);
        assert_int_equal(rs.pulled, N);
        assert_int_equal(rs.added, round == 0 ? N : 0);
        assert_int_equal(rs.updated, 0);
    }
    free(page);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_additions_and_pulled_count),
        T(test_listing_duplicates_are_counted),
    T(test_absence_and_updates),
        T(test_adopt_by_natural_key),
        T(test_other_action_conflicts_local_row),
        T(test_unmerged_staging_leaves_cache),
        T(test_cred_marker_orphans),
        T(test_orphan_absent_is_requeued),
        T(test_cred_strays_and_tokens),
        T(test_cred_update_and_remote_delete),
        T(test_merge_takes_every_column),
        T(test_staging_refuses_bad_rows),
        T(test_pull_refuses_bad_rules),
        T(test_pull_refuses_bad_creds),
        T(test_pull_keeps_cached_rule),
        T(test_pull_keeps_cached_cred),
        T(test_refused_listing_settles_no_create),
        T(test_claim_is_compare_and_set),
        T(test_retry_and_discard),
        T(test_cred_retry_and_discard_orphan),
        T(test_sync_lock),
        T(test_merge_plans_use_indexes),
        T(test_large_listing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* store: edits in place, their bases, conflicts and their resolution, the pull's
 * and the push's side of an edit, and the schema step that brought them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/store.h"
#include "../../src/core/store/store_internal.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";
static const char TOKEN[] = "2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12";

static int setup(void **state)
{
    store *st = NULL;
    assert_int_equal(store_open(":memory:", 0, &st, NULL), ERROR_OK);
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

static unsigned bit(model_kind kind, const char *name)
{
    return kind_field_bit(kind, kind_field_by_name(kind, name));
}

/* A synced rule as a pull leaves it: remote id n, the given cidr. */
static void synced_rule(store *st, int n, const char *cidr, model_action action, char *id)
{
    model_object o = ts_rule(POLICY, cidr, action, MODEL_STATE_SYNCED);
    snprintf(o.rule.id, sizeof o.rule.id, "ipr_%027d", n);
    strcpy(o.rule.description, "office");
    ts_insert(st, &o, id);
}

static void synced_cred(store *st, int n, const char *acl_rule, char *id)
{
    model_object o;
    ts_cred_init(&o, "edge", "", acl_rule);
    snprintf(o.cred.id, sizeof o.cred.id, "cr_%027d", n);
    o.cred.state = MODEL_STATE_SYNCED;
    assert_int_equal(model_cred_set_token(&o.cred, TOKEN, NULL), ERROR_OK);
    ts_insert(st, &o, id);
}

static model_object row_of(store *st, model_kind kind, const char *id)
{
    model_object o;
    model_object_init(&o, kind);
    error_info err;
    if (store_get(st, kind, id, &o, &err) != ERROR_OK)
        fail_msg("store_get %s: %s", id, err.msg);
    return o;
}

static model_state state_of(store *st, model_kind kind, const char *id)
{
    model_object o = row_of(st, kind, id);
    model_state s = model_object_state(&o);
    model_object_clear(&o);
    return s;
}

/* Edit one text field of row `id`; returns the call's code, *result its result. */
static error_code edit_text(store *st, model_kind kind, const char *id, const char *field,
                            const char *value, store_edit_result *result, error_info *err)
{
    model_object o;
    model_object_init(&o, kind);
    strcpy(model_object_id_buf(&o), id);
    const kind_field *f = kind_field_by_name(kind, field);
    strcpy(kind_field_at_mut(&o, f), value);
    error_code rc = store_edit(st, &o, kind_field_bit(kind, f), result, err);
    model_object_clear(&o);
    return rc;
}

static void must_edit(store *st, model_kind kind, const char *id, const char *field,
                      const char *value, store_edit_result want)
{
    store_edit_result got = (store_edit_result)-1;
    error_info err;
    if (edit_text(st, kind, id, field, value, &got, &err) != ERROR_OK)
        fail_msg("store_edit %s %s=%s: %s", id, field, value, err.msg);
    assert_int_equal(got, want);
}

static char *token_of(store *st, const char *id)
{
    char *tok = NULL;
    assert_int_equal(store_token_get(st, id, &tok, NULL), ERROR_OK);
    return tok;
}

/* ---- the user's edit -------------------------------------------------------- */

static void test_edit_keeps_base_and_back_to_base_is_synced(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, id);
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.0.0.0/16", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.1.0.0/16", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, id, "description", "lab", STORE_EDIT_EDITED);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, id), MODEL_STATE_EDITED);

    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, id, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_EDITED);
    assert_int_equal(info.count, 2);
    assert_int_equal(info.fields, bit(MODEL_KIND_RULE, "cidr") | bit(MODEL_KIND_RULE,
                                                                     "description"));
    /* Descriptor order; the base is the first edit's, the local the last. */
    assert_string_equal(info.field[0].base, "10.0.0.0/8");
    assert_string_equal(info.field[0].local, "10.1.0.0/16");
    assert_null(info.field[0].remote);
    assert_string_equal(info.field[1].base, "office");
    assert_string_equal(info.field[1].local, "lab");
    store_edit_info_clear(&info);

    /* Back at the base, field by field: the last one makes it synced. */
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.0.0.0/8", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, id, "description", "office", STORE_EDIT_UNCHANGED);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, id), MODEL_STATE_SYNCED);
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, id, &info, NULL), ERROR_OK);
    assert_int_equal(info.count, 0);
    store_edit_info_clear(&info);
}

static void test_edit_of_queued_create_changes_the_create(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1], failed[MODEL_ID_MAX + 1];
    ts_insert_rule(st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.2.0.0/16", STORE_EDIT_CREATE);
    model_object o = row_of(st, MODEL_KIND_RULE, id);
    assert_string_equal(o.rule.cidr, "10.2.0.0/16");
    assert_int_equal(o.rule.state, MODEL_STATE_NEW);
    model_object_clear(&o);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, id, &info, NULL), ERROR_OK);
    assert_int_equal(info.count, 0);
    store_edit_info_clear(&info);

    /* A failed create that is edited is sent again. */
    ts_insert_rule(st, POLICY, "10.3.0.0/16", MODEL_ACTION_DENY, MODEL_STATE_FAILED, failed);
    must_edit(st, MODEL_KIND_RULE, failed, "description", "fixed", STORE_EDIT_CREATE);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, failed), MODEL_STATE_NEW);
}

static void test_edit_refused_states_and_values(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1], creating[MODEL_ID_MAX + 1], other[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, id);
    synced_rule(st, 2, "192.168.0.0/16", MODEL_ACTION_ALLOW, other);
    ts_insert_rule(st, POLICY, "172.16.0.0/12", MODEL_ACTION_ALLOW, MODEL_STATE_CREATING,
                   creating);
    error_info err;
    assert_int_equal(edit_text(st, MODEL_KIND_RULE, creating, "cidr", "172.16.0.0/16", NULL,
                               &err), ERROR_STATE);
    assert_non_null(strstr(err.msg, "sync first"));
    /* The create's messages; nothing changes. */
    assert_int_equal(edit_text(st, MODEL_KIND_RULE, id, "cidr", "10.0.0.1/8", NULL, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "did you mean 10.0.0.0/8"));
    assert_int_equal(edit_text(st, MODEL_KIND_RULE, id, "cidr", "192.168.0.0/16", NULL, &err),
                     ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, other));
    assert_int_equal(state_of(st, MODEL_KIND_RULE, id), MODEL_STATE_SYNCED);
    /* A field that never changes. */
    model_object o = ts_rule(POLICY, "10.0.0.0/8", MODEL_ACTION_DENY, MODEL_STATE_SYNCED);
    strcpy(o.rule.id, id);
    assert_int_equal(store_edit(st, &o, bit(MODEL_KIND_RULE, "action"), NULL, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "action"));
    model_object_clear(&o);
    /* Being deleted. */
    assert_int_equal(store_delete(st, MODEL_KIND_RULE, other, NULL, NULL), ERROR_OK);
    assert_int_equal(edit_text(st, MODEL_KIND_RULE, other, "description", "x", NULL, &err),
                     ERROR_STATE);
}

static void test_discard_and_delete_of_an_edit(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    synced_rule(st, 2, "10.9.0.0/16", MODEL_ACTION_ALLOW, b);
    must_edit(st, MODEL_KIND_RULE, a, "cidr", "10.0.0.0/16", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, b, "cidr", "10.8.0.0/16", STORE_EDIT_EDITED);

    store_delete_result r = STORE_DELETE_ALREADY;
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, a, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_DELETE_REVERTED);
    model_object o = row_of(st, MODEL_KIND_RULE, a);
    assert_string_equal(o.rule.cidr, "10.0.0.0/8");
    assert_int_equal(o.rule.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);

    assert_int_equal(store_delete(st, MODEL_KIND_RULE, b, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_DELETE_MARKED);
    o = row_of(st, MODEL_KIND_RULE, b);
    assert_string_equal(o.rule.cidr, "10.9.0.0/16"); /* what the remote has */
    assert_int_equal(o.rule.state, MODEL_STATE_DELETING);
    model_object_clear(&o);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, b, &info, NULL), ERROR_OK);
    assert_int_equal(info.count, 0);
    store_edit_info_clear(&info);

    /* The queued delete taken back ('u', `discard`): synced again, as the remote has it. */
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, b, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_DELETE_REVERTED);
    o = row_of(st, MODEL_KIND_RULE, b);
    assert_int_equal(o.rule.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);
    error_info err;
    assert_int_equal(store_discard(st, MODEL_KIND_RULE, b, &r, &err), ERROR_STATE);
    assert_non_null(strstr(err.msg, "synced"));
}

static void test_cred_acl_edit_keeps_token(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    synced_cred(st, 1, "bind:*.example.com", id);
    model_object o;
    ts_cred_init(&o, "", "", "bind:*.example.org");
    assert_int_equal(model_acl_add(&o.cred.acl, "bind:x.example.net", NULL), ERROR_OK);
    strcpy(o.cred.id, id);
    store_edit_result r;
    assert_int_equal(store_edit(st, &o, bit(MODEL_KIND_CRED, "acl"), &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_EDIT_EDITED);
    assert_int_equal(o.cred.acl.count, 2);
    model_object_clear(&o);
    char *tok = token_of(st, id);
    assert_string_equal(tok, TOKEN);
    free(tok);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_CRED, id, &info, NULL), ERROR_OK);
    assert_int_equal(info.count, 1);
    assert_string_equal(info.field[0].base, "bind:*.example.com");
    assert_string_equal(info.field[0].local, "bind:*.example.org\nbind:x.example.net");
    store_edit_info_clear(&info);
}

/* ---- the push ----------------------------------------------------------------- */

static void test_pushed_settles_and_keeps_later_edit(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, id);
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.0.0.0/16", STORE_EDIT_EDITED);
    model_object sent = row_of(st, MODEL_KIND_RULE, id);
    /* Meanwhile, another edit of the same field. */
    must_edit(st, MODEL_KIND_RULE, id, "cidr", "10.0.0.0/24", STORE_EDIT_EDITED);
    model_object remote;
    assert_int_equal(model_object_copy(&remote, &sent, NULL), ERROR_OK);
    strcpy(remote.rule.description, "changed there"); /* not edited here: taken */
    unsigned cidr = bit(MODEL_KIND_RULE, "cidr");
    assert_int_equal(store_edit_pushed(st, &sent, cidr, &remote, NULL), ERROR_OK);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, id, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_EDITED);
    assert_int_equal(info.count, 1);
    assert_string_equal(info.field[0].base, "10.0.0.0/16");
    assert_string_equal(info.field[0].local, "10.0.0.0/24");
    store_edit_info_clear(&info);
    model_object o = row_of(st, MODEL_KIND_RULE, id);
    assert_string_equal(o.rule.description, "changed there");
    model_object_clear(&o);

    /* The second PATCH goes through: synced. */
    model_object_clear(&sent);
    sent = row_of(st, MODEL_KIND_RULE, id);
    strcpy(remote.rule.cidr, "10.0.0.0/24");
    assert_int_equal(store_edit_pushed(st, &sent, cidr, &remote, NULL), ERROR_OK);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, id), MODEL_STATE_SYNCED);
    model_object_clear(&sent);
    model_object_clear(&remote);
}

static void test_gone_conflict_and_its_resolutions(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], fresh[MODEL_ID_MAX + 1];
    synced_cred(st, 1, NULL, a);
    synced_cred(st, 2, NULL, b);
    must_edit(st, MODEL_KIND_CRED, a, "description", "edge-2", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_CRED, b, "description", "edge-3", STORE_EDIT_EDITED);
    error_info err;
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_CRED, a, STORE_CONFLICT_GONE, NULL,
                                         &err), ERROR_OK);
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_CRED, b, STORE_CONFLICT_GONE, NULL,
                                         &err), ERROR_OK);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_CRED, a, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_CONFLICT);
    assert_int_equal(info.conflict, STORE_CONFLICT_GONE);
    assert_string_equal(info.field[0].local, "edge-2"); /* the edit stays visible */
    store_edit_info_clear(&info);
    /* Nothing is recreated by itself: the row waits. */
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_CRED, a, STORE_CONFLICT_GONE, NULL,
                                         &err), ERROR_STATE);

    assert_int_equal(store_resolve(st, MODEL_KIND_CRED, a, STORE_KEEP_LOCAL, fresh, &err),
                     ERROR_OK);
    assert_true(strncmp(fresh, "local_", 6) == 0);
    model_object o = row_of(st, MODEL_KIND_CRED, fresh);
    assert_int_equal(o.cred.state, MODEL_STATE_NEW);
    assert_string_equal(o.cred.description, "edge-2");
    model_object_clear(&o);
    char *tok = NULL;
    assert_int_equal(store_token_get(st, fresh, &tok, NULL), ERROR_UNAVAILABLE);

    assert_int_equal(store_resolve(st, MODEL_KIND_CRED, b, STORE_TAKE_REMOTE, fresh, &err),
                     ERROR_OK);
    assert_string_equal(fresh, "");
    model_object_init(&o, MODEL_KIND_CRED);
    assert_int_equal(store_get(st, MODEL_KIND_CRED, b, &o, NULL), ERROR_NOT_FOUND);
    model_object_clear(&o);
    assert_int_equal(store_resolve(st, MODEL_KIND_CRED, fresh[0] ? fresh : a,
                                   STORE_KEEP_LOCAL, NULL, &err), ERROR_NOT_FOUND);
}

static void test_rejected_conflict(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    synced_rule(st, 2, "10.9.0.0/16", MODEL_ACTION_ALLOW, b);
    must_edit(st, MODEL_KIND_RULE, a, "description", "x", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, b, "description", "y", STORE_EDIT_EDITED);
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_RULE, a, STORE_CONFLICT_REJECTED,
                                         "description: too long", NULL), ERROR_OK);
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_RULE, b, STORE_CONFLICT_REJECTED,
                                         "no", NULL), ERROR_OK);
    model_object o = row_of(st, MODEL_KIND_RULE, a);
    assert_string_equal(o.rule.error, "description: too long");
    model_object_clear(&o);
    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, a, STORE_KEEP_LOCAL, NULL, NULL),
                     ERROR_OK);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, a), MODEL_STATE_EDITED);
    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, a, STORE_KEEP_LOCAL, NULL, NULL),
                     ERROR_STATE);
    /* A new edit answers a refusal too. */
    must_edit(st, MODEL_KIND_RULE, b, "description", "z", STORE_EDIT_EDITED);
    assert_int_equal(store_edit_conflict(st, MODEL_KIND_RULE, b, STORE_CONFLICT_REJECTED,
                                         "no", NULL), ERROR_OK);
    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, b, STORE_TAKE_REMOTE, NULL, NULL),
                     ERROR_OK);
    o = row_of(st, MODEL_KIND_RULE, b);
    assert_string_equal(o.rule.description, "office");
    assert_int_equal(o.rule.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);
}

/* ---- the pull ----------------------------------------------------------------- */

/* Stage a listing of rules (and credentials with their markers and raw metadata)
 * and merge it. */
static void pull(store *st, model_object *rules, size_t nr, model_object *creds, size_t nc,
                 const char *const *markers, const char *const *raws, store_pull_stats *rs,
                 store_pull_stats *cs)
{
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    if (nr)
        assert_int_equal(store_pull_stage(st, MODEL_KIND_RULE, rules, NULL, NULL, nr, NULL,
                                          NULL, NULL, &err), ERROR_OK);
    if (nc)
        assert_int_equal(store_pull_stage(st, MODEL_KIND_CRED, creds, markers, raws, nc, NULL,
                                          NULL, NULL, &err), ERROR_OK);
    if (store_pull_merge(st, rs, cs, &err) != ERROR_OK)
        fail_msg("merge: %s", err.msg);
}

static void test_pull_conflict_converge_and_take(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    synced_rule(st, 2, "10.9.0.0/16", MODEL_ACTION_ALLOW, b);
    synced_rule(st, 3, "10.7.0.0/16", MODEL_ACTION_ALLOW, c);
    must_edit(st, MODEL_KIND_RULE, a, "cidr", "10.0.0.0/16", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, b, "cidr", "10.8.0.0/16", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, c, "description", "mine", STORE_EDIT_EDITED);

    /* a: changed there too; b: changed there to the same value; c: only another
     * field changed there. */
    model_object listing[3];
    for (int i = 0; i < 3; i++) {
        const char *ids[] = {a, b, c};
        listing[i] = row_of(st, MODEL_KIND_RULE, ids[i]);
        listing[i].rule.state = MODEL_STATE_SYNCED;
    }
    strcpy(listing[0].rule.cidr, "10.1.0.0/16");
    strcpy(listing[1].rule.cidr, "10.8.0.0/16");
    strcpy(listing[2].rule.cidr, "10.7.0.0/16");
    strcpy(listing[2].rule.description, "office");
    strcpy(listing[2].rule.metadata, "theirs");
    store_pull_stats rs;
    pull(st, listing, 3, NULL, 0, NULL, NULL, &rs, NULL);
    assert_int_equal(rs.edit_conflicts, 1);

    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, a, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_CONFLICT);
    assert_int_equal(info.conflict, STORE_CONFLICT_FIELDS);
    assert_string_equal(info.field[0].base, "10.0.0.0/8");
    assert_string_equal(info.field[0].local, "10.0.0.0/16");
    assert_string_equal(info.field[0].remote, "10.1.0.0/16");
    store_edit_info_clear(&info);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, b), MODEL_STATE_SYNCED);
    model_object o = row_of(st, MODEL_KIND_RULE, c);
    assert_int_equal(o.rule.state, MODEL_STATE_EDITED);
    assert_string_equal(o.rule.description, "mine");
    assert_string_equal(o.rule.metadata, "theirs");
    model_object_clear(&o);

    /* The same listing again: still one conflict, not counted twice. */
    pull(st, listing, 3, NULL, 0, NULL, NULL, &rs, NULL);
    assert_int_equal(rs.edit_conflicts, 0);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, a), MODEL_STATE_CONFLICT);

    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, a, STORE_TAKE_REMOTE, NULL, NULL),
                     ERROR_OK);
    o = row_of(st, MODEL_KIND_RULE, a);
    assert_string_equal(o.rule.cidr, "10.1.0.0/16");
    assert_int_equal(o.rule.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);
    for (int i = 0; i < 3; i++)
        model_object_clear(&listing[i]);
}

static void test_pull_conflict_keep_local_and_gone(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    synced_rule(st, 2, "10.9.0.0/16", MODEL_ACTION_ALLOW, b);
    must_edit(st, MODEL_KIND_RULE, a, "description", "here", STORE_EDIT_EDITED);
    must_edit(st, MODEL_KIND_RULE, b, "description", "here", STORE_EDIT_EDITED);
    model_object listing = row_of(st, MODEL_KIND_RULE, a);
    strcpy(listing.rule.description, "there");
    store_pull_stats rs;
    pull(st, &listing, 1, NULL, 0, NULL, NULL, &rs, NULL); /* b is absent: deleted there */
    assert_int_equal(rs.edit_conflicts, 2);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, b, &info, NULL), ERROR_OK);
    assert_int_equal(info.conflict, STORE_CONFLICT_GONE);
    store_edit_info_clear(&info);

    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, a, STORE_KEEP_LOCAL, NULL, NULL),
                     ERROR_OK);
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, a, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_EDITED);
    assert_string_equal(info.field[0].base, "there");
    assert_string_equal(info.field[0].local, "here");
    store_edit_info_clear(&info);
    model_object_clear(&listing);
}

/* The defect: a local create of the other action holding a remote rule's key kept
 * the remote rule out of the cache. Now the remote rule is cached and the create
 * is a conflict; taking the remote adopts it. */
static void test_key_clash_keeps_remote_rule(void **state)
{
    store *st = *state;
    char mine[MODEL_ID_MAX + 1], other[MODEL_ID_MAX + 1];
    ts_insert_rule(st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, mine);
    ts_insert_rule(st, POLICY, "10.5.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, other);
    model_object listing[2] = {
        ts_rule(POLICY, "10.0.0.0/8", MODEL_ACTION_DENY, MODEL_STATE_SYNCED),
        ts_rule(POLICY, "10.5.0.0/16", MODEL_ACTION_DENY, MODEL_STATE_SYNCED),
    };
    strcpy(listing[0].rule.id, "ipr_000000000000000000000000009");
    strcpy(listing[1].rule.id, "ipr_000000000000000000000000008");
    store_pull_stats rs;
    pull(st, listing, 2, NULL, 0, NULL, NULL, &rs, NULL);
    assert_int_equal(rs.conflicts, 2);
    assert_int_equal(rs.added, 2);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, listing[0].rule.id), MODEL_STATE_SYNCED);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, mine, &info, NULL), ERROR_OK);
    assert_int_equal(info.conflict, STORE_CONFLICT_KEY);
    assert_string_equal(info.other_id, listing[0].rule.id);
    store_edit_info_clear(&info);
    model_rule found;
    assert_int_equal(store_rule_find(st, POLICY, "10.0.0.0/8", &found, NULL), ERROR_OK);
    assert_string_equal(found.id, listing[0].rule.id);

    char now_id[MODEL_ID_MAX + 1];
    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, mine, STORE_TAKE_REMOTE, now_id, NULL),
                     ERROR_OK);
    assert_string_equal(now_id, listing[0].rule.id);
    model_object o = row_of(st, MODEL_KIND_RULE, mine); /* the local id is an alias now */
    assert_string_equal(o.rule.id, listing[0].rule.id);
    assert_int_equal(o.rule.action, MODEL_ACTION_DENY);
    model_object_clear(&o);

    /* Keep local: the remote rule is deleted, the create goes out after it. */
    assert_int_equal(store_resolve(st, MODEL_KIND_RULE, other, STORE_KEEP_LOCAL, NULL, NULL),
                     ERROR_OK);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, other), MODEL_STATE_NEW);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, listing[1].rule.id), MODEL_STATE_DELETING);
    model_object_clear(&listing[0]);
    model_object_clear(&listing[1]);
}

/* A confirmed create whose reply carries the creation marker is an edit of the
 * metadata (so the next push removes the marker); so is our own credential
 * listed with its marker. */
static void test_marker_in_reply_and_listing_is_an_edit(void **state)
{
    store *st = *state;
    model_object o;
    char local[MODEL_ID_MAX + 1];
    ts_cred_init(&o, "edge", "team=a", NULL);
    o.cred.state = MODEL_STATE_CREATING;
    ts_insert(st, &o, local);
    model_object reply;
    ts_cred_init(&reply, "edge", "", NULL);
    strcpy(reply.cred.id, "cr_000000000000000000000000001");
    snprintf(reply.cred.metadata, sizeof reply.cred.metadata, "team=a\nrampart-create=%s",
             local);
    assert_int_equal(model_cred_set_token(&reply.cred, TOKEN, NULL), ERROR_OK);
    error_info err;
    assert_int_equal(store_confirm_create(st, local, &reply, &err), ERROR_OK);
    store_edit_info info;
    assert_int_equal(store_edit_get(st, MODEL_KIND_CRED, local, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_EDITED);
    assert_int_equal(info.count, 1);
    assert_string_equal(info.field[0].base, reply.cred.metadata);
    assert_string_equal(info.field[0].local, "team=a");
    store_edit_info_clear(&info);
    /* The PATCH went through: synced, the token untouched. */
    model_object sent = row_of(st, MODEL_KIND_CRED, local);
    strcpy(reply.cred.metadata, "team=a");
    assert_int_equal(store_edit_pushed(st, &sent, bit(MODEL_KIND_CRED, "metadata"), &reply,
                                       NULL), ERROR_OK);
    assert_int_equal(state_of(st, MODEL_KIND_CRED, local), MODEL_STATE_SYNCED);
    char *tok = token_of(st, local);
    assert_string_equal(tok, TOKEN);
    free(tok);
    model_object_clear(&sent);

    /* Listed again with the marker (an older rampart's create): an edit again. */
    model_object listing;
    ts_cred_init(&listing, "edge", "team=a", NULL);
    strcpy(listing.cred.id, reply.cred.id);
    char raw[128];
    snprintf(raw, sizeof raw, "team=a\nrampart-create=%s", local);
    const char *markers[] = {local}, *raws[] = {raw};
    pull(st, NULL, 0, &listing, 1, markers, raws, NULL, NULL);
    assert_int_equal(store_edit_get(st, MODEL_KIND_CRED, local, &info, NULL), ERROR_OK);
    assert_int_equal(info.state, MODEL_STATE_EDITED);
    assert_string_equal(info.field[0].base, raw);
    store_edit_info_clear(&info);
    /* Listed the same way again while edited: remote == base, no conflict. */
    pull(st, NULL, 0, &listing, 1, markers, raws, NULL, NULL);
    assert_int_equal(state_of(st, MODEL_KIND_CRED, local), MODEL_STATE_EDITED);
    model_object_clear(&listing);
    model_object_clear(&reply);
}

/* ---- the schema step ---------------------------------------------------------- */

static void identity(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3_result_value(ctx, argv[0]);
}

/* A version 3 database (as the last release left it) keeps every row and token. */
static void test_migration_keeps_rows_and_tokens(void **state)
{
    (void)state;
    ts_store_dir d;
    ts_temp_dir_path(d.dir, sizeof d.dir, "/tmp/rampart-edit-XXXXXX", d.path, sizeof d.path,
                     "old.db");
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(d.path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_create_function(db, "canon_cidr", 1, SQLITE_UTF8, NULL, identity,
                                             NULL, NULL), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal(sqlite3_exec(db, store_sql_migration(i), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "PRAGMA user_version = 3;"
                                  "INSERT INTO rules (id, cidr, policy_id, action, state)"
                                  " VALUES ('ipr_000000000000000000000000001', '10.0.0.0/8',"
                                  " 'ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA', 'allow', 'synced');"
                                  "INSERT INTO credentials (id, description, state) VALUES"
                                  " ('cr_000000000000000000000000001', 'edge', 'synced');"
                                  "INSERT INTO tokens VALUES ('cr_000000000000000000000000001',"
                                  " '2Zz1lqOxDdQyVpYcAAAAAAAAAAA_s3cr3tT0k3nV4lu3xyz12');",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    chmod(d.path, 0600); /* as rampart makes a cache: it refuses one others can read */
    d.st = ts_store_open(d.path);
    char *tok = token_of(d.st, "cr_000000000000000000000000001");
    assert_string_equal(tok, TOKEN);
    free(tok);
    must_edit(d.st, MODEL_KIND_RULE, "ipr_000000000000000000000000001", "cidr", "10.0.0.0/9",
              STORE_EDIT_EDITED);
    must_edit(d.st, MODEL_KIND_CRED, "cr_000000000000000000000000001", "description", "e2",
              STORE_EDIT_EDITED);
    /* Deleting the credential takes its token by the foreign key that followed. */
    assert_int_equal(store_remove(d.st, MODEL_KIND_CRED, "cr_000000000000000000000000001",
                                  NULL), ERROR_OK);
    assert_int_equal(store_token_get(d.st, "cr_000000000000000000000000001", &tok, NULL),
                     ERROR_NOT_FOUND);
    assert_int_equal(ts_store_dir_close(&d), 0);
}

/* The look before a delete: the same values go; a change is a conflict
 * "changed" that holds the remote's values and stays in force (a page asking for
 * STORE_STATES_HELD lists it); the delete of a credential keeps its token. */
static void test_look_before_delete(void **state)
{
    store *st = *state;
    char a[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1];
    synced_rule(st, 1, "10.4.0.0/16", MODEL_ACTION_DENY, a);
    synced_cred(st, 2, "bind:a.example.com", c);
    assert_int_equal(store_delete(st, MODEL_KIND_RULE, a, NULL, NULL), ERROR_OK);
    assert_int_equal(store_delete(st, MODEL_KIND_CRED, c, NULL, NULL), ERROR_OK);
    store_look_result r = STORE_LOOK_SKIP;
    model_object same = row_of(st, MODEL_KIND_RULE, a);
    assert_int_equal(store_look(st, &same, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_LOOK_WRITE);
    assert_int_equal(state_of(st, MODEL_KIND_RULE, a), MODEL_STATE_DELETING);
    strcpy(same.rule.cidr, "203.0.113.0/24");
    assert_int_equal(store_look(st, &same, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_LOOK_CONFLICT);
    model_object_clear(&same);
    model_object now = row_of(st, MODEL_KIND_RULE, a);
    assert_string_equal(now.rule.cidr, "203.0.113.0/24");
    assert_int_equal(now.rule.state, MODEL_STATE_CONFLICT);
    model_object_clear(&now);
    assert_true(store_conflict_holds_remote(st, MODEL_KIND_RULE, a));
    store_edit_info info = {0};
    assert_int_equal(store_edit_get(st, MODEL_KIND_RULE, a, &info, NULL), ERROR_OK);
    assert_int_equal(info.conflict, STORE_CONFLICT_CHANGED);
    assert_int_equal(info.count, 1);
    assert_string_equal(info.field[0].base, "10.4.0.0/16");
    assert_string_equal(info.field[0].remote, "203.0.113.0/24");
    store_edit_info_clear(&info);
    model_object rows[4];
    size_t n = 0;
    store_query q = {.states = (1u << MODEL_STATE_SYNCED) | STORE_STATES_HELD};
    assert_int_equal(store_page(st, MODEL_KIND_RULE, &q, NULL, STORE_FORWARD, 4, rows, &n, NULL),
                     ERROR_OK);
    assert_int_equal(n, 1);
    model_object_clear(&rows[0]);
    q.states = 1u << MODEL_STATE_SYNCED;
    assert_int_equal(store_page(st, MODEL_KIND_RULE, &q, NULL, STORE_FORWARD, 4, rows, &n, NULL),
                     ERROR_OK);
    assert_int_equal(n, 0);
    /* A user's delete of it again is "delete anyway": deleting, the remote's values. */
    assert_int_equal(store_delete(st, MODEL_KIND_RULE, a, NULL, NULL), ERROR_OK);
    now = row_of(st, MODEL_KIND_RULE, a);
    assert_int_equal(now.rule.state, MODEL_STATE_DELETING);
    assert_string_equal(now.rule.cidr, "203.0.113.0/24");
    model_object_clear(&now);
    /* A credential changed remotely: conflict; its token is kept. */
    model_object cred = row_of(st, MODEL_KIND_CRED, c);
    strcpy(cred.cred.description, "prod-web");
    assert_int_equal(store_look(st, &cred, &r, NULL), ERROR_OK);
    assert_int_equal(r, STORE_LOOK_CONFLICT);
    model_object_clear(&cred);
    char *tok = NULL;
    assert_int_equal(store_token_get(st, c, &tok, NULL), ERROR_OK);
    assert_string_equal(tok, TOKEN);
    free(tok);
    assert_int_equal(store_resolve(st, MODEL_KIND_CRED, c, STORE_TAKE_REMOTE, NULL, NULL),
                     ERROR_OK);
    assert_int_equal(state_of(st, MODEL_KIND_CRED, c), MODEL_STATE_SYNCED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_edit_keeps_base_and_back_to_base_is_synced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_edit_of_queued_create_changes_the_create, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_edit_refused_states_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discard_and_delete_of_an_edit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cred_acl_edit_keeps_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pushed_settles_and_keeps_later_edit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gone_conflict_and_its_resolutions, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rejected_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pull_conflict_converge_and_take, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pull_conflict_keep_local_and_gone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_clash_keeps_remote_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marker_in_reply_and_listing_is_an_edit, setup,
                                        teardown),
        cmocka_unit_test(test_migration_keeps_rows_and_tokens),
        cmocka_unit_test_setup_teardown(test_look_before_delete, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

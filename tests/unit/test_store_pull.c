/* store: pull staging, the merge of a remote snapshot, and the outbox moves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/store.h"
#include "../../src/core/store_internal.h"

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

/* A remote-looking rule: ids "ipr_<n>" padded so they sort by n. */
static model_rule remote_rule(int n, const char *cidr, model_action action)
{
    model_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "ipr_%027d", n);
    snprintf(r.uri, sizeof r.uri, "http://127.0.0.1/ip_policy_rules/%s", r.id);
    strcpy(r.created_at, "2025-09-04T10:11:15Z");
    strcpy(r.cidr, cidr);
    strcpy(r.policy_id, POLICY);
    r.action = action;
    r.state = MODEL_STATE_SYNCED;
    return r;
}

static void local_rule(store *st, const char *cidr, model_action action, model_state state,
                       char *id_out)
{
    model_rule r;
    memset(&r, 0, sizeof r);
    strcpy(r.cidr, cidr);
    strcpy(r.policy_id, POLICY);
    r.action = action;
    r.state = state;
    error_info err;
    assert_int_equal(store_rule_insert(st, &r, &err), ERROR_OK);
    if (id_out)
        strcpy(id_out, r.id);
}

static void insert_remote_rule(store *st, model_rule r, model_state state)
{
    r.state = state;
    error_info err;
    assert_int_equal(store_rule_insert(st, &r, &err), ERROR_OK);
}

static model_state rule_state(store *st, const char *id)
{
    model_rule r;
    error_info err;
    assert_int_equal(store_rule_get(st, id, &r, &err), ERROR_OK);
    return r.state;
}

static void merge(store *st, const model_rule *rules, size_t nr, const model_cred *creds,
                  const char *const *markers, size_t nc, store_pull_stats *rs,
                  store_pull_stats *cs)
{
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    assert_int_equal(store_pull_stage_rules(st, rules, nr, &err), ERROR_OK);
    assert_int_equal(store_pull_stage_creds(st, creds, markers, nc, &err), ERROR_OK);
    assert_int_equal(store_pull_merge(st, rs, cs, &err), ERROR_OK);
}

static void merge_rules(store *st, const model_rule *rules, size_t n, store_pull_stats *rs)
{
    merge(st, rules, n, NULL, NULL, 0, rs, NULL);
}

/* ---- rules ---------------------------------------------------------------- */

static void test_additions_and_pulled_count(void **state)
{
    store *st = *state;
    model_rule remote[3] = {remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW),
                            remote_rule(2, "10.1.0.0/16", MODEL_ACTION_DENY),
                            remote_rule(3, "2001:db8::/32", MODEL_ACTION_ALLOW)};
    store_pull_stats rs;
    merge_rules(st, remote, 3, &rs);
    assert_int_equal(rs.pulled, 3);
    assert_int_equal(rs.added, 3);
    model_rule got;
    error_info err;
    assert_int_equal(store_rule_get(st, remote[1].id, &got, &err), ERROR_OK);
    assert_int_equal(got.state, MODEL_STATE_SYNCED);
    assert_int_equal(got.action, MODEL_ACTION_DENY);
    assert_string_equal(got.uri, remote[1].uri);
    /* The same listing again changes nothing. */
    merge_rules(st, remote, 3, &rs);
    assert_int_equal(rs.added, 0);
    assert_int_equal(rs.updated, 0);
    assert_int_equal(rs.remote_deleted, 0);
}

static void test_absence_and_updates(void **state)
{
    store *st = *state;
    model_rule a = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    model_rule b = remote_rule(2, "10.1.0.0/16", MODEL_ACTION_ALLOW);
    model_rule c = remote_rule(3, "10.2.0.0/16", MODEL_ACTION_ALLOW);
    model_rule d = remote_rule(4, "10.3.0.0/16", MODEL_ACTION_ALLOW);
    model_rule e = remote_rule(5, "10.4.0.0/16", MODEL_ACTION_ALLOW);
    insert_remote_rule(st, a, MODEL_STATE_SYNCED);         /* absent: remote_deleted */
    insert_remote_rule(st, b, MODEL_STATE_DELETING);       /* absent: gone */
    insert_remote_rule(st, c, MODEL_STATE_DELETING);       /* listed: still deleting */
    insert_remote_rule(st, d, MODEL_STATE_REMOTE_DELETED); /* listed again: synced */
    insert_remote_rule(st, e, MODEL_STATE_SYNCED);         /* listed, changed */
    char failed_id[MODEL_ID_MAX + 1];
    local_rule(st, "192.168.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_FAILED, failed_id);
    strcpy(e.description, "changed remotely");
    model_rule listing[] = {c, d, e};
    store_pull_stats rs;
    merge_rules(st, listing, 3, &rs);
    assert_int_equal(rs.remote_deleted, 1);
    assert_int_equal(rs.gone, 1);
    assert_int_equal(rs.updated, 2); /* d back, e changed */
    assert_int_equal(rule_state(st, a.id), MODEL_STATE_REMOTE_DELETED);
    model_rule got;
    error_info err;
    assert_int_equal(store_rule_get(st, b.id, &got, &err), ERROR_NOT_FOUND);
    assert_int_equal(rule_state(st, c.id), MODEL_STATE_DELETING);
    assert_int_equal(rule_state(st, d.id), MODEL_STATE_SYNCED);
    assert_int_equal(store_rule_get(st, e.id, &got, &err), ERROR_OK);
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
    model_rule listing[] = {remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW),
                            remote_rule(2, "10.1.0.0/16", MODEL_ACTION_DENY),
                            remote_rule(3, "10.2.0.0/16", MODEL_ACTION_ALLOW)};
    store_pull_stats rs;
    merge_rules(st, listing, 3, &rs);
    assert_int_equal(rs.adopted, 3);
    assert_int_equal(rs.added, 0); /* no duplicate row */
    assert_int_equal(rs.requeued, 1);
    model_rule got;
    error_info err;
    assert_int_equal(store_rule_get(st, unknown_id, &got, &err), ERROR_OK);
    assert_string_equal(got.id, listing[0].id); /* the local id is an alias now */
    assert_int_equal(got.state, MODEL_STATE_SYNCED);
    assert_string_equal(got.uri, listing[0].uri);
    assert_int_equal(store_rule_get(st, creating_id, &got, &err), ERROR_OK);
    assert_string_equal(got.id, listing[1].id);
    assert_int_equal(rule_state(st, new_id), MODEL_STATE_SYNCED);
    assert_int_equal(rule_state(st, lost_id), MODEL_STATE_NEW);
    size_t count = 0;
    assert_int_equal(store_rule_count(st, NULL, &count, &err), ERROR_OK);
    assert_int_equal(count, 4);
}

static void test_other_action_fails_local_row(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    model_rule listing[] = {remote_rule(7, "10.0.0.0/8", MODEL_ACTION_DENY)};
    store_pull_stats rs;
    merge_rules(st, listing, 1, &rs);
    assert_int_equal(rs.conflicts, 1);
    assert_int_equal(rs.added, 0); /* the local live row keeps the key */
    model_rule got;
    error_info err;
    assert_int_equal(store_rule_get(st, id, &got, &err), ERROR_OK);
    assert_int_equal(got.state, MODEL_STATE_FAILED);
    assert_non_null(strstr(got.error, listing[0].id));
    assert_non_null(strstr(got.error, "deny"));
    /* Discarding the local row lets the next pull bring the remote one in. */
    store_delete_result res;
    assert_int_equal(store_rule_discard(st, id, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_REMOVED);
    merge_rules(st, listing, 1, &rs);
    assert_int_equal(rs.added, 1);
    assert_int_equal(rule_state(st, listing[0].id), MODEL_STATE_SYNCED);
}

static void test_unmerged_staging_leaves_cache(void **state)
{
    store *st = *state;
    model_rule a = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    insert_remote_rule(st, a, MODEL_STATE_SYNCED);
    char unknown_id[MODEL_ID_MAX + 1];
    local_rule(st, "10.9.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_UNKNOWN, unknown_id);
    error_info err;
    /* An interrupted pull: pages staged, never merged. */
    model_rule partial[] = {remote_rule(2, "10.1.0.0/16", MODEL_ACTION_ALLOW)};
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    assert_int_equal(store_pull_stage_rules(st, partial, 1, &err), ERROR_OK);
    assert_int_equal(rule_state(st, a.id), MODEL_STATE_SYNCED);
    assert_int_equal(rule_state(st, unknown_id), MODEL_STATE_UNKNOWN);
    size_t count = 0;
    assert_int_equal(store_rule_count(st, NULL, &count, &err), ERROR_OK);
    assert_int_equal(count, 2);
    /* The next pull starts from empty staging: the stale page does not count. */
    store_pull_stats rs;
    merge_rules(st, &a, 1, &rs);
    assert_int_equal(rs.pulled, 1);
    assert_int_equal(rs.added, 0);
    assert_int_equal(rule_state(st, a.id), MODEL_STATE_SYNCED);
}

static void test_staging_refuses_bad_rows(void **state)
{
    store *st = *state;
    model_rule r = remote_rule(1, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    r.id[0] = '\0';
    error_info err;
    assert_int_equal(store_pull_begin(st, &err), ERROR_OK);
    assert_int_equal(store_pull_stage_rules(st, &r, 1, &err), ERROR_INVALID);
    model_cred c = {0};
    assert_int_equal(store_pull_stage_creds(st, &c, NULL, 1, &err), ERROR_INVALID);
}

/* ---- credentials ---------------------------------------------------------- */

static model_cred remote_cred(int n, const char *description)
{
    model_cred c = {0};
    snprintf(c.id, sizeof c.id, "cr_%027d", n);
    snprintf(c.uri, sizeof c.uri, "http://127.0.0.1/credentials/%s", c.id);
    strcpy(c.created_at, "2025-09-04T10:11:15Z");
    strcpy(c.description, description);
    c.state = MODEL_STATE_SYNCED;
    return c;
}

static void local_cred(store *st, const char *description, model_state state, char *id_out)
{
    model_cred c = {0};
    strcpy(c.description, description);
    strcpy(c.metadata, "user metadata");
    c.state = state;
    error_info err;
    assert_int_equal(store_cred_insert(st, &c, &err), ERROR_OK);
    strcpy(id_out, c.id);
    model_cred_clear(&c);
}

static model_cred get_cred(store *st, const char *id)
{
    model_cred c = {0};
    error_info err;
    assert_int_equal(store_cred_get(st, id, &c, &err), ERROR_OK);
    return c;
}

static void test_cred_marker_orphans(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1], never[MODEL_ID_MAX + 1];
    local_cred(st, "lost reply", MODEL_STATE_UNKNOWN, lost);
    local_cred(st, "never arrived", MODEL_STATE_CREATING, never);
    model_cred listing[] = {remote_cred(1, "lost reply"), remote_cred(2, "someone else")};
    strcpy(listing[0].metadata, "user metadata"); /* marker already stripped */
    const char *markers[] = {lost, ""};
    store_pull_stats cs;
    merge(st, NULL, 0, listing, markers, 2, NULL, &cs);
    assert_int_equal(cs.orphaned, 1);
    assert_int_equal(cs.added, 1);
    assert_int_equal(cs.requeued, 1);
    model_cred c = get_cred(st, lost);
    assert_string_equal(c.id, listing[0].id);
    assert_int_equal(c.state, MODEL_STATE_ORPHANED);
    assert_non_null(strstr(c.error, "token was lost"));
    model_cred_clear(&c);
    c = get_cred(st, never);
    assert_int_equal(c.state, MODEL_STATE_NEW);
    model_cred_clear(&c);
    /* Deleted remotely: back to new under the local id it was created with. */
    error_info err;
    assert_int_equal(store_cred_requeue(st, listing[0].id, &err), ERROR_OK);
    c = get_cred(st, lost);
    assert_string_equal(c.id, lost);
    assert_int_equal(c.state, MODEL_STATE_NEW);
    assert_string_equal(c.uri, "");
    model_cred_clear(&c);
    assert_int_equal(store_cred_get(st, listing[0].id, &c, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_cred_requeue(st, lost, &err), ERROR_STATE);
}

static void test_orphan_absent_is_requeued(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1];
    local_cred(st, "x", MODEL_STATE_UNKNOWN, lost);
    model_cred listing[] = {remote_cred(1, "x")};
    const char *markers[] = {lost};
    store_pull_stats cs;
    merge(st, NULL, 0, listing, markers, 1, NULL, &cs);
    assert_int_equal(cs.orphaned, 1);
    /* Someone deleted the remote copy: the orphan is new again, no alias left. */
    merge(st, NULL, 0, NULL, NULL, 0, NULL, &cs);
    assert_int_equal(cs.requeued, 1);
    model_cred c = get_cred(st, lost);
    assert_string_equal(c.id, lost);
    assert_int_equal(c.state, MODEL_STATE_NEW);
    model_cred_clear(&c);
}

static void test_cred_strays_and_tokens(void **state)
{
    store *st = *state;
    char local[MODEL_ID_MAX + 1];
    local_cred(st, "mine", MODEL_STATE_CREATING, local);
    model_cred reply = remote_cred(1, "mine");
    error_info err;
    assert_int_equal(model_cred_set_token(&reply, TOKEN, &err), ERROR_OK);
    assert_int_equal(store_cred_confirm_create(st, local, &reply, &err), ERROR_OK);
    /* The listing shows our copy and a second one carrying the same marker. */
    model_cred listing[] = {remote_cred(1, "mine"), remote_cred(2, "mine")};
    const char *markers[] = {local, local};
    store_pull_stats cs;
    merge(st, NULL, 0, listing, markers, 2, NULL, &cs);
    assert_int_equal(cs.strays, 1);
    assert_int_equal(cs.added, 0);
    model_cred c = get_cred(st, listing[1].id);
    assert_int_equal(c.state, MODEL_STATE_DELETING);
    model_cred_clear(&c);
    char *token = NULL;
    assert_int_equal(store_token_get(st, local, &token, &err), ERROR_OK);
    assert_string_equal(token, TOKEN);
    free(token);
    /* Gone remotely after being deleted: the row and its token go. */
    assert_int_equal(store_cred_delete(st, reply.id, NULL, &err), ERROR_OK);
    merge(st, NULL, 0, NULL, NULL, 0, NULL, &cs);
    assert_int_equal(cs.gone, 2);
    assert_int_equal(store_token_get(st, local, &token, &err), ERROR_NOT_FOUND);
    model_cred_clear(&reply);
}

static void test_cred_update_and_remote_delete(void **state)
{
    store *st = *state;
    model_cred a = remote_cred(1, "a"), b = remote_cred(2, "b");
    error_info err;
    assert_int_equal(store_cred_insert(st, &a, &err), ERROR_OK);
    assert_int_equal(store_cred_insert(st, &b, &err), ERROR_OK);
    model_cred listing[] = {remote_cred(2, "b renamed")};
    assert_int_equal(model_acl_add(&listing[0].acl, "bind:*.example.com", &err), ERROR_OK);
    store_pull_stats cs;
    merge(st, NULL, 0, listing, NULL, 1, NULL, &cs);
    assert_int_equal(cs.remote_deleted, 1);
    assert_int_equal(cs.updated, 1);
    model_cred c = get_cred(st, a.id);
    assert_int_equal(c.state, MODEL_STATE_REMOTE_DELETED);
    model_cred_clear(&c);
    c = get_cred(st, b.id);
    assert_string_equal(c.description, "b renamed");
    assert_int_equal(c.acl.count, 1);
    assert_string_equal(c.acl.rules[0], "bind:*.example.com");
    model_cred_clear(&c);
    model_cred_clear(&listing[0]);
}

/* ---- outbox --------------------------------------------------------------- */

static void test_claim_is_compare_and_set(void **state)
{
    store *st = *state;
    char id[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    error_info err;
    assert_int_equal(store_rule_claim(st, id, &err), ERROR_OK);
    assert_int_equal(rule_state(st, id), MODEL_STATE_CREATING);
    assert_int_equal(store_rule_claim(st, id, &err), ERROR_STATE);
    assert_non_null(strstr(err.msg, "creating"));
    assert_int_equal(store_rule_claim(st, "local_nope", &err), ERROR_NOT_FOUND);
    char cid[MODEL_ID_MAX + 1];
    local_cred(st, "c", MODEL_STATE_NEW, cid);
    assert_int_equal(store_cred_claim(st, cid, &err), ERROR_OK);
    assert_int_equal(store_cred_claim(st, cid, &err), ERROR_STATE);
}

static void test_retry_and_discard(void **state)
{
    store *st = *state;
    char failed[MODEL_ID_MAX + 1], fresh[MODEL_ID_MAX + 1];
    local_rule(st, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_FAILED, failed);
    assert_int_equal(store_rule_set_state(st, failed, MODEL_STATE_FAILED, "host bits", NULL),
                     ERROR_OK);
    local_rule(st, "10.1.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, fresh);
    model_rule gone = remote_rule(1, "10.2.0.0/16", MODEL_ACTION_ALLOW);
    insert_remote_rule(st, gone, MODEL_STATE_REMOTE_DELETED);
    model_rule synced = remote_rule(2, "10.3.0.0/16", MODEL_ACTION_ALLOW);
    insert_remote_rule(st, synced, MODEL_STATE_SYNCED);
    error_info err;
    assert_int_equal(store_rule_retry(st, failed, &err), ERROR_OK);
    model_rule got;
    assert_int_equal(store_rule_get(st, failed, &got, &err), ERROR_OK);
    assert_int_equal(got.state, MODEL_STATE_NEW);
    assert_string_equal(got.error, "");
    assert_int_equal(store_rule_retry(st, synced.id, &err), ERROR_STATE);
    /* remote_deleted: recreated under a fresh local id. */
    assert_int_equal(store_rule_retry(st, gone.id, &err), ERROR_OK);
    assert_int_equal(store_rule_get(st, gone.id, &got, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_rule_find(st, POLICY, "10.2.0.0/16", &got, &err), ERROR_OK);
    assert_int_equal(got.state, MODEL_STATE_NEW);
    assert_true(strncmp(got.id, "local_", 6) == 0);
    store_delete_result res;
    assert_int_equal(store_rule_discard(st, fresh, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_REMOVED);
    assert_int_equal(store_rule_discard(st, synced.id, &res, &err), ERROR_STATE);
}

static void test_cred_retry_and_discard_orphan(void **state)
{
    store *st = *state;
    char lost[MODEL_ID_MAX + 1];
    local_cred(st, "x", MODEL_STATE_UNKNOWN, lost);
    model_cred listing[] = {remote_cred(1, "x")};
    const char *markers[] = {lost};
    merge(st, NULL, 0, listing, markers, 1, NULL, NULL);
    error_info err;
    assert_int_equal(store_cred_retry(st, lost, &err), ERROR_OK); /* already queued */
    model_cred c = get_cred(st, lost);
    assert_int_equal(c.state, MODEL_STATE_ORPHANED);
    model_cred_clear(&c);
    store_delete_result res;
    assert_int_equal(store_cred_discard(st, lost, &res, &err), ERROR_OK);
    assert_int_equal(res, STORE_DELETE_MARKED);
    c = get_cred(st, listing[0].id);
    assert_int_equal(c.state, MODEL_STATE_DELETING);
    model_cred_clear(&c);
    char unknown[MODEL_ID_MAX + 1];
    local_cred(st, "y", MODEL_STATE_UNKNOWN, unknown);
    assert_int_equal(store_cred_discard(st, unknown, &res, &err), ERROR_STATE);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void test_sync_lock(void **state)
{
    (void)state;
    char dir[] = "/tmp/rampart-pull-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rampart.db", dir);
    store *a = NULL, *b = NULL;
    error_info err;
    assert_int_equal(store_open(path, 0, &a, &err), ERROR_OK);
    assert_int_equal(store_open(path, 0, &b, &err), ERROR_OK);
    store_sync_lock *la = NULL, *lb = NULL;
    assert_int_equal(store_sync_lock_take(a, &la, &err), ERROR_OK);
    assert_int_equal(store_sync_lock_take(b, &lb, &err), ERROR_STATE);
    assert_null(lb);
    store_sync_unlock(la);
    assert_int_equal(store_sync_lock_take(b, &lb, &err), ERROR_OK);
    store_sync_unlock(lb);
    struct stat sb;
    char lock_path[80];
    snprintf(lock_path, sizeof lock_path, "%s-sync.lock", path);
    assert_int_equal(stat(lock_path, &sb), 0);
    assert_int_equal(sb.st_mode & 0077, 0);
    store_close(a);
    store_close(b);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
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
    model_rule *page = calloc(PAGE, sizeof *page);
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
            assert_int_equal(store_pull_stage_rules(st, page, PAGE, &err), ERROR_OK);
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
        T(test_absence_and_updates),
        T(test_adopt_by_natural_key),
        T(test_other_action_fails_local_row),
        T(test_unmerged_staging_leaves_cache),
        T(test_staging_refuses_bad_rows),
        T(test_cred_marker_orphans),
        T(test_orphan_absent_is_requeued),
        T(test_cred_strays_and_tokens),
        T(test_cred_update_and_remote_delete),
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

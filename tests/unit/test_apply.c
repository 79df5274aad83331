/* apply: the smallest change between a list and the rules an apply NAME owns
 * (creates, deletes, edits that save requests, adopts, retries), ownership, the
 * store's natural key as conflicts, and queueing it into a real cache. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/apply.h"
#include "test_support.h"

#define P "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a"
#define A MODEL_ACTION_ALLOW
#define D MODEL_ACTION_DENY

typedef struct fixture {
    store *st;
    cidrset list;
    apply_request req;
    apply_plan plan;
} fixture;

static int setup(void **state)
{
    fixture *f = ts_zalloc(sizeof *f);
    f->st = ts_store_open(":memory:");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    apply_plan_free(&f->plan);
    cidrset_free(&f->list);
    store_close(f->st);
    free(f);
    return 0;
}

/* A rule straight into the cache, in any state (a remote id for those that
 * reached the remote), marked as `owner`'s when not NULL. */
static void put_rule(fixture *f, const char *id, const char *cidr, model_action action,
                     model_state state, const char *owner, const char *description)
{
    model_object o = ts_rule(P, cidr, action, state);
    if (id)
        strcpy(o.rule.id, id);
    if (owner)
        apply_metadata(owner, o.rule.metadata);
    strcpy(o.rule.description, description ? description : "");
    ts_insert(f->st, &o, NULL);
}

/* Plan `text` (a list file) as NAME's rules of `action`. */
static void plan(fixture *f, const char *text, model_action action, const char *name,
                 bool adopt)
{
    apply_plan_free(&f->plan);
    cidrset_free(&f->list);
    cidrset_problems problems = {0};
    bool json;
    error_info e;
    assert_int_equal(cidrset_parse(text, strlen(text), NULL, &f->list, &problems, &json, &e),
                     ERROR_OK);
    assert_int_equal(problems.total, 0);
    cidrset_problems_free(&problems);
    cidrset_sort(&f->list);
    cidrset_dedupe(&f->list);
    f->req = (apply_request){P, action, name, NULL, adopt, &f->list};
    if (apply_plan_build(f->st, &f->req, &f->plan, &e) != ERROR_OK)
        fail_msg("plan: %s", e.msg);
}

static void queue(fixture *f)
{
    error_info e;
    if (apply_plan_queue(f->st, &f->req, &f->plan, NULL, NULL, &e) != ERROR_OK)
        fail_msg("queue: %s", e.msg);
}

static const apply_op *only_op(const fixture *f, apply_op_kind kind)
{
    assert_int_equal(f->plan.nops, 1);
    assert_int_equal(f->plan.ops[0].kind, kind);
    return &f->plan.ops[0];
}

static model_rule get(fixture *f, const char *cidr)
{
    model_rule r;
    error_info e;
    if (store_rule_find(f->st, P, cidr, &r, &e) != ERROR_OK)
        fail_msg("%s: %s", cidr, e.msg);
    return r;
}

/* ---- names and marks ---- */

static void metadata_marks_exactly(void **state)
{
    (void)state;
    char meta[APPLY_META_MAX], name[APPLY_NAME_MAX + 1];
    apply_metadata("cdn-edges_v2.1", meta);
    assert_string_equal(meta, "{\"rampart_apply\":\"cdn-edges_v2.1\"}");
    assert_true(apply_metadata_name(meta, name));
    assert_string_equal(name, "cdn-edges_v2.1");
    assert_false(apply_metadata_name("{\"rampart_apply\": \"x\"}", name));
    assert_false(apply_metadata_name("{\"rampart_apply\":\"\"}", name));
    assert_false(apply_metadata_name("{\"rampart_apply\":\"a b\"}", name));
    assert_false(apply_metadata_name("owner=ops", name));
    assert_string_equal(name, "");
    error_info e;
    assert_int_equal(apply_name_check("ok-name.1", &e), ERROR_OK);
    assert_int_equal(apply_name_check("", &e), ERROR_INVALID);
    assert_int_equal(apply_name_check("a\"b", &e), ERROR_INVALID);
}

/* ---- the diff ---- */

static void creates_then_nothing(void **state)
{
    fixture *f = *state;
    plan(f, "10.0.0.0/8 # office\n192.168.1.5\n2001:db8::/32\n", A, "office", false);
    assert_int_equal(f->plan.count[APPLY_CREATE], 3);
    assert_int_equal(apply_plan_requests(&f->plan), 3);
    assert_int_equal(f->plan.posts, 3);
    queue(f);
    model_rule r = get(f, "10.0.0.0/8");
    assert_string_equal(r.metadata, "{\"rampart_apply\":\"office\"}");
    assert_string_equal(r.description, "office");
    assert_int_equal(r.state, MODEL_STATE_NEW);
    assert_string_equal(get(f, "192.168.1.5/32").description, "office"); /* the default */
    plan(f, "2001:DB8::/32\n192.168.1.5/32\n10.0.0.0/8\n", A, "office", false);
    assert_int_equal(f->plan.nops, 0);
    assert_int_equal(f->plan.count[APPLY_KEEP], 3);
    assert_int_equal(apply_plan_requests(&f->plan), 0);
}

static void one_line_changed_on_synced_rules_is_one_patch(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_a1", "10.0.0.0/8", A, MODEL_STATE_SYNCED, "office", "hq");
    put_rule(f, "ipr_a2", "10.1.0.0/16", A, MODEL_STATE_SYNCED, "office", "lab");
    put_rule(f, "ipr_a3", "10.2.0.0/16", A, MODEL_STATE_SYNCED, "office", "dc");
    plan(f, "10.0.0.0/8\n10.1.0.0/16\n10.3.0.0/16\n", A, "office", false);
    const apply_op *op = only_op(f, APPLY_EDIT);
    assert_string_equal(f->plan.rules[op->rule].id, "ipr_a3");
    assert_int_equal(f->plan.patches, 1);
    assert_int_equal(f->plan.gets, 1); /* its look */
    assert_int_equal(apply_plan_requests(&f->plan), 2);
    queue(f);
    model_rule r = get(f, "10.3.0.0/16");
    assert_string_equal(r.id, "ipr_a3");
    assert_string_equal(r.description, "dc"); /* kept */
    assert_int_equal(r.state, MODEL_STATE_EDITED);
}

static void removal_alone_is_a_delete_and_addition_alone_a_create(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_a1", "10.0.0.0/8", A, MODEL_STATE_SYNCED, "office", NULL);
    put_rule(f, "ipr_a2", "10.1.0.0/16", A, MODEL_STATE_SYNCED, "office", NULL);
    plan(f, "10.0.0.0/8\n", A, "office", false);
    assert_int_equal(only_op(f, APPLY_DELETE)->requests, 1);
    assert_int_equal(f->plan.deletes, 1);
    queue(f);
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    error_info e;
    assert_int_equal(store_get(f->st, MODEL_KIND_RULE, "ipr_a2", &o, &e), ERROR_OK);
    assert_int_equal(o.rule.state, MODEL_STATE_DELETING);
    plan(f, "10.0.0.0/8\n10.9.0.0/16\n", A, "office", false);
    assert_int_equal(only_op(f, APPLY_CREATE)->requests, 1);
}

static void queued_creates_cost_nothing_to_remove(void **state)
{
    fixture *f = *state;
    plan(f, "10.0.0.0/8\n10.1.0.0/16\n", A, "office", false);
    queue(f);
    plan(f, "10.0.0.0/8\n10.2.0.0/16\n", A, "office", false);
    assert_int_equal(f->plan.count[APPLY_DELETE], 1);
    assert_int_equal(f->plan.count[APPLY_CREATE], 1);
    assert_int_equal(apply_plan_requests(&f->plan), 1); /* the delete is never sent */
    queue(f);
    model_rule r;
    error_info e;
    assert_int_equal(store_rule_find(f->st, P, "10.1.0.0/16", &r, &e), ERROR_NOT_FOUND);
}

static void edits_pair_equal_descriptions_first(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_a1", "10.1.0.0/16", A, MODEL_STATE_SYNCED, "office", "berlin");
    put_rule(f, "ipr_a2", "10.2.0.0/16", A, MODEL_STATE_SYNCED, "office", "paris");
    plan(f, "10.8.0.0/16 # paris\n10.9.0.0/16 # berlin\n", A, "office", false);
    assert_int_equal(f->plan.count[APPLY_EDIT], 2);
    assert_int_equal(apply_plan_requests(&f->plan), 4); /* two PATCHes, two looks */
    queue(f);
    assert_string_equal(get(f, "10.9.0.0/16").id, "ipr_a1");
    assert_string_equal(get(f, "10.8.0.0/16").id, "ipr_a2");
}

/* A reused rule takes the entry's comment (else --description) with its cidr, in
 * one edit: one PATCH. */
static void reused_rules_take_the_entry_description(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_a1", "100.105.250.0/24", A, MODEL_STATE_SYNCED, "office", "partners");
    plan(f, "198.51.100.77 ; jump host\n", A, "office", false);
    const apply_op *op = only_op(f, APPLY_EDIT);
    assert_string_equal(apply_edit_description(&f->req, &f->plan, op), "jump host");
    assert_int_equal(f->plan.patches, 1);
    assert_int_equal(apply_plan_requests(&f->plan), 2); /* the PATCH and its look */
    queue(f);
    model_rule r = get(f, "198.51.100.77/32");
    assert_string_equal(r.id, "ipr_a1");
    assert_string_equal(r.description, "jump host");
    assert_int_equal(r.state, MODEL_STATE_EDITED);
    store_edit_info info;
    error_info e;
    assert_int_equal(store_edit_get(f->st, MODEL_KIND_RULE, "ipr_a1", &info, &e), ERROR_OK);
    assert_int_equal(info.count, 2); /* cidr and description: one PATCH */
    store_edit_info_clear(&info);

    /* --description, for an entry without a comment. */
    put_rule(f, "ipr_a2", "10.2.0.0/16", A, MODEL_STATE_SYNCED, "office", "dc");
    plan(f, "198.51.100.77 ; jump host\n10.3.0.0/16\n", A, "office", false);
    f->req.description = "from the feed";
    op = only_op(f, APPLY_EDIT);
    assert_string_equal(apply_edit_description(&f->req, &f->plan, op), "from the feed");
    queue(f);
    assert_string_equal(get(f, "10.3.0.0/16").description, "from the feed");

    /* The same text: nothing to change. */
    put_rule(f, "ipr_a3", "10.4.0.0/16", A, MODEL_STATE_SYNCED, "office", "lab");
    plan(f, "198.51.100.77\n10.3.0.0/16\n10.5.0.0/16 # lab\n", A, "office", false);
    assert_null(apply_edit_description(&f->req, &f->plan, only_op(f, APPLY_EDIT)));
}

/* ---- ownership and the natural key ---- */

static void other_names_and_actions_are_left_alone(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_o1", "10.5.0.0/16", A, MODEL_STATE_SYNCED, "partners", NULL);
    put_rule(f, "ipr_o2", "10.6.0.0/16", D, MODEL_STATE_SYNCED, "office", NULL);
    put_rule(f, "ipr_o3", "10.7.0.0/16", A, MODEL_STATE_SYNCED, NULL, "by hand");
    plan(f, "10.0.0.0/8\n", A, "office", false);
    assert_int_equal(only_op(f, APPLY_CREATE)->requests, 1);
}

static void entries_held_by_others_are_conflicts(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_o1", "10.5.0.0/16", A, MODEL_STATE_SYNCED, "partners", NULL);
    put_rule(f, "ipr_o2", "10.6.0.0/16", D, MODEL_STATE_SYNCED, NULL, NULL);
    put_rule(f, "ipr_o3", "10.7.0.0/16", A, MODEL_STATE_SYNCED, NULL, NULL);
    put_rule(f, "ipr_o4", "10.8.0.0/16", A, MODEL_STATE_DELETING, NULL, NULL);
    plan(f, "10.5.0.0/16\n10.6.0.0/16\n10.7.0.0/16\n10.8.0.0/16\n", A, "office", false);
    assert_int_equal(f->plan.count[APPLY_CONFLICT], 3);
    assert_int_equal(f->plan.count[APPLY_CREATE], 1); /* a rule being deleted holds none */
    assert_string_equal(f->plan.rules[f->plan.ops[0].rule].id, "ipr_o1");
    queue(f); /* conflicts are skipped: the create goes in beside the deleting rule */
    assert_string_equal(get(f, "10.8.0.0/16").metadata, "{\"rampart_apply\":\"office\"}");
}

static void adopt_takes_over_unmarked_rules_of_the_action(void **state)
{
    fixture *f = *state;
    put_rule(f, "ipr_o1", "10.5.0.0/16", A, MODEL_STATE_SYNCED, NULL, "by hand");
    put_rule(f, "ipr_o2", "10.6.0.0/16", D, MODEL_STATE_SYNCED, NULL, NULL);
    put_rule(f, NULL, "10.7.0.0/16", A, MODEL_STATE_NEW, NULL, NULL);
    plan(f, "10.5.0.0/16\n10.6.0.0/16\n10.7.0.0/16\n", A, "office", true);
    assert_int_equal(f->plan.count[APPLY_ADOPT], 2);
    assert_int_equal(f->plan.count[APPLY_CONFLICT], 1); /* the other action */
    assert_int_equal(f->plan.patches, 1);               /* the queued create: free */
    queue(f);
    model_rule r = get(f, "10.5.0.0/16");
    assert_string_equal(r.metadata, "{\"rampart_apply\":\"office\"}");
    assert_string_equal(r.description, "by hand");
    assert_int_equal(r.state, MODEL_STATE_EDITED);
    plan(f, "10.5.0.0/16\n10.7.0.0/16\n", A, "office", false);
    assert_int_equal(f->plan.nops, 0);
}

/* ---- rows that wait for something ---- */

static void failed_and_remotely_deleted_rules(void **state)
{
    fixture *f = *state;
    put_rule(f, NULL, "10.1.0.0/16", A, MODEL_STATE_FAILED, "office", NULL);
    put_rule(f, "ipr_r1", "10.2.0.0/16", A, MODEL_STATE_REMOTE_DELETED, "office", NULL);
    put_rule(f, "ipr_r2", "10.3.0.0/16", A, MODEL_STATE_REMOTE_DELETED, "office", NULL);
    put_rule(f, NULL, "10.4.0.0/16", A, MODEL_STATE_FAILED, "office", NULL);
    plan(f, "10.1.0.0/16\n10.2.0.0/16\n", A, "office", false);
    assert_int_equal(f->plan.count[APPLY_RETRY], 2);
    assert_int_equal(f->plan.count[APPLY_DROP], 1);
    assert_int_equal(f->plan.count[APPLY_DELETE], 1); /* the failed one: never sent */
    assert_int_equal(apply_plan_requests(&f->plan), 2);
    queue(f);
    assert_int_equal(get(f, "10.1.0.0/16").state, MODEL_STATE_NEW);
    assert_int_equal(get(f, "10.2.0.0/16").state, MODEL_STATE_NEW);
    plan(f, "10.1.0.0/16\n10.2.0.0/16\n", A, "office", false);
    assert_int_equal(f->plan.nops, 0);
}

static void creates_in_flight_are_left_for_the_sync(void **state)
{
    fixture *f = *state;
    put_rule(f, NULL, "10.1.0.0/16", A, MODEL_STATE_CREATING, "office", NULL);
    put_rule(f, NULL, "10.2.0.0/16", A, MODEL_STATE_UNKNOWN, "office", NULL);
    plan(f, "10.2.0.0/16\n", A, "office", false);
    assert_int_equal(only_op(f, APPLY_BLOCKED)->requests, 0);
    assert_int_equal(f->plan.count[APPLY_KEEP], 1);
    queue(f);
    assert_int_equal(get(f, "10.1.0.0/16").state, MODEL_STATE_CREATING);
}

/* ---- scale ---- */

static void large_list_against_many_rules(void **state)
{
    fixture *f = *state;
    error_info e;
    assert_int_equal(store_begin(f->st, &e), ERROR_OK);
    char cidr[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(cidr, sizeof cidr, "10.%d.%d.0/24", i / 256, i % 256);
        put_rule(f, NULL, cidr, i % 2 ? A : D, MODEL_STATE_NEW, NULL, NULL);
    }
    assert_int_equal(store_commit(f->st, &e), ERROR_OK);
    char *text = malloc(2000 * 24);
    assert_non_null(text);
    size_t len = 0;
    for (int i = 0; i < 2000; i++)
        len += (size_t)sprintf(text + len, "172.%d.%d.0/24\n", 16 + i / 256, i % 256);
    plan(f, text, A, "big", false);
    assert_int_equal(f->plan.count[APPLY_CREATE], 2000);
    queue(f);
    assert_string_equal(text + len - 16, "172.23.207.0/24\n");
    strcpy(text + len - 16, "172.31.0.0/24\n"); /* one line changed */
    plan(f, text, A, "big", false);
    assert_int_equal(apply_plan_requests(&f->plan), 1);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metadata_marks_exactly),
        cmocka_unit_test_setup_teardown(creates_then_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(one_line_changed_on_synced_rules_is_one_patch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(removal_alone_is_a_delete_and_addition_alone_a_create,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(queued_creates_cost_nothing_to_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(reused_rules_take_the_entry_description, setup, teardown),
        cmocka_unit_test_setup_teardown(edits_pair_equal_descriptions_first, setup, teardown),
        cmocka_unit_test_setup_teardown(other_names_and_actions_are_left_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(entries_held_by_others_are_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(adopt_takes_over_unmarked_rules_of_the_action, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failed_and_remotely_deleted_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(creates_in_flight_are_left_for_the_sync, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(large_list_against_many_rules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

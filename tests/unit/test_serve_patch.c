/*
 * The reference server's edit routes (PATCH /ip_policy_rules/{id}, PATCH
 * /credentials/{id}) over real HTTP: the emulator in this process on a loopback
 * port, driven with libcurl (a fresh connection per request, so a lost reply is
 * never retried behind the test's back), its database opened beside it to see
 * what was stored (a credential's token).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/emulator.h"
#include "test_support.h"

#define KEY "k2PatchSecretSecretSecret"
#define POLICY_A "ipp_2Cs8Vd0ZqL4eTf1gKx9RmB3nHwA"
#define POLICY_B "ipp_2Cs8Vd0ZqL4eTf1gKx9RmB3nHwB"
#define NO_RULE "ipr_0000000000000000000000000zz"

enum { BODY_MAX = 16384 };

typedef struct fixture {
    char dir[64];
    char db[128];
    char base[128];
    emulator *em;
} fixture;

typedef struct reply {
    CURLcode rc;
    long status;
    char body[BODY_MAX];
    size_t len;
} reply;

static bool start(fixture *f, const char *faults)
{
    ts_temp_dir_path(f->dir, sizeof f->dir, "/tmp/rampart-patch-XXXXXX", f->db, sizeof f->db,
                     "server.db");
    emulator_config cfg = {.listen = "tcp:127.0.0.1:0", .db_path = f->db, .api_key = KEY,
                           .faults = faults};
    error_info err = {0};
    if (emulator_start(&cfg, &f->em, &err) != ERROR_OK) {
        print_error("emulator_start: %s\n", err.msg);
        return false;
    }
    snprintf(f->base, sizeof f->base, "%s", emulator_base_url(f->em));
    return true;
}

static void stop(fixture *f)
{
    emulator_stop(f->em);
    f->em = NULL;
    if (ts_remove_tree(f->dir) != 0)
        print_error("could not remove %s\n", f->dir);
}

static int setup(void **state)
{
    fixture *f = ts_zalloc(sizeof *f);
    *state = f;
    return start(f, NULL) ? 0 : -1;
}

static int teardown(void **state)
{
    stop(*state);
    free(*state);
    return 0;
}

static size_t collect(char *data, size_t size, size_t n, void *ctx)
{
    reply *r = ctx;
    size_t len = size * n;
    size_t room = sizeof r->body - 1 - r->len;
    memcpy(r->body + r->len, data, len < room ? len : room);
    r->len += len < room ? len : room;
    r->body[r->len] = '\0';
    return len;
}

/* One request; `headers` NULL: the key, the version header and the JSON type. */
static void call_with(const fixture *f, const char *method, const char *path,
                      const char *body, const char *const *headers, reply *r)
{
    static const char *const normal[] = {"Authorization: Bearer " KEY, "Service-Version: 2",
                                         "Content-Type: application/json", NULL};
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    struct curl_slist *list = NULL;
    for (const char *const *h = headers ? headers : normal; *h; h++)
        list = curl_slist_append(list, *h);
    char url[256];
    snprintf(url, sizeof url, "%s%s", f->base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    r->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(list);
    curl_easy_cleanup(c);
}

static void call(const fixture *f, const char *method, const char *path, const char *body,
                 reply *r)
{
    call_with(f, method, path, body, NULL, r);
}

/* The reply must be `status` with a message holding `part` in the API's error shape. */
static void expect_error(const reply *r, long status, const char *code, const char *part)
{
    codec_api_error e;
    error_info err;
    if (r->status != status || codec_api_error_decode(r->body, r->len, &e, &err) != ERROR_OK ||
        strcmp(e.error_code, code) != 0 || !strstr(e.msg, part) ||
        strncmp(e.operation_id, "op_", 3) != 0)
        fail_msg("want %ld %s '%s', got %ld: %s", status, code, part, r->status, r->body);
}

/* A 200/201 reply's object of `kind` into `out` (cleared by the caller). */
static void object_of(const reply *r, long status, model_kind kind, model_object *out)
{
    error_info err;
    if (r->status != status)
        fail_msg("want %ld, got %ld: %s", status, r->status, r->body);
    if (codec_object_decode(kind, r->body, r->len, out, &err) != ERROR_OK)
        fail_msg("reply: %s: %s", err.msg, r->body);
}

/* POST a rule; its id into `id`. */
static void create_rule(const fixture *f, const char *policy, const char *cidr, char *id)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"cidr\":\"%s\",\"ip_policy_id\":\"%s\",\"action\":\"allow\"}", cidr, policy);
    reply r;
    call(f, "POST", "/ip_policy_rules", body, &r);
    model_object o;
    object_of(&r, 201, MODEL_KIND_RULE, &o);
    strcpy(id, o.rule.id);
}

static void rule_path(char *out, size_t size, const char *id)
{
    snprintf(out, size, "/ip_policy_rules/%s", id);
}

/* The ids of the first page of rules, as listed (newest first). */
static size_t list_rule_ids(const fixture *f, char (*ids)[MODEL_ID_MAX + 1], size_t max)
{
    reply r;
    call(f, "GET", "/ip_policy_rules", NULL, &r);
    codec_page page;
    error_info err;
    assert_int_equal(r.status, 200);
    assert_int_equal(codec_page_decode(MODEL_KIND_RULE, r.body, r.len, &page, &err), ERROR_OK);
    size_t n = 0;
    for (; n < page.count && n < max; n++)
        strcpy(ids[n], page.items[n].rule.id);
    codec_page_free(&page);
    return n;
}

static void test_patch_rule_fields(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1], path[96];
    create_rule(f, POLICY_A, "10.0.0.0/8", a);
    create_rule(f, POLICY_A, "10.1.0.0/16", b);
    create_rule(f, POLICY_A, "10.2.0.0/16", c);
    char before[3][MODEL_ID_MAX + 1], after[3][MODEL_ID_MAX + 1];
    assert_int_equal(list_rule_ids(f, before, 3), 3);
    rule_path(path, sizeof path, a);

    static const struct {
        const char *body, *field, *want;
    } edits[] = {
        {"{\"description\":\"office\"}", "description", "office"},
        {"{\"metadata\":\"{\\\"k\\\":1}\"}", "metadata", "{\"k\":1}"},
        {"{\"cidr\":\"2001:DB8::/32\"}", "cidr", "2001:db8::/32"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        reply r;
        call(f, "PATCH", path, edits[i].body, &r);
        model_object o;
        object_of(&r, 200, MODEL_KIND_RULE, &o);
        assert_string_equal(kind_value(&o, edits[i].field, NULL, 0), edits[i].want);
        /* The whole object: what never changes is there as it was. */
        assert_string_equal(o.rule.id, a);
        assert_string_equal(o.rule.policy_id, POLICY_A);
        assert_int_equal(o.rule.action, MODEL_ACTION_ALLOW);
        assert_non_null(strstr(o.rule.uri, path));
        call(f, "GET", path, NULL, &r);
        object_of(&r, 200, MODEL_KIND_RULE, &o);
        assert_string_equal(kind_value(&o, edits[i].field, NULL, 0), edits[i].want);
    }
    /* Every edit kept the others: description and metadata are still there. */
    reply r;
    call(f, "GET", path, NULL, &r);
    model_object o;
    object_of(&r, 200, MODEL_KIND_RULE, &o);
    assert_string_equal(o.rule.description, "office");
    assert_string_equal(o.rule.metadata, "{\"k\":1}");
    /* The list order is by id, which an edit keeps. */
    assert_int_equal(list_rule_ids(f, after, 3), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(before[i], after[i]);
}

static void test_patch_rule_refusals(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], path[96];
    create_rule(f, POLICY_A, "10.0.0.0/8", a);
    create_rule(f, POLICY_A, "10.1.0.0/16", b);
    rule_path(path, sizeof path, b);
    static const char *const fixed[] = {"action", "ip_policy_id", "ip_policy", "uri",
                                        "created_at"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char body[128], want[64];
        snprintf(body, sizeof body, "{\"description\":\"x\",\"%s\":\"deny\"}", fixed[i]);
        snprintf(want, sizeof want, "%s: cannot be changed", fixed[i]);
        reply r;
        call(f, "PATCH", path, body, &r);
        expect_error(&r, 400, "ERR_VALIDATION", want);
    }
    /* The id in the body (the official clients send it): its own is fine, another
     * object's is refused, a wrong type is the body's fault. */
    char body[160];
    reply r;
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"description\":\"\"}", b);
    call(f, "PATCH", path, body, &r);
    model_object got;
    object_of(&r, 200, MODEL_KIND_RULE, &got);
    assert_string_equal(got.rule.id, b);
    model_object_clear(&got);
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"description\":\"moved\"}", a);
    call(f, "PATCH", path, body, &r);
    expect_error(&r, 400, "ERR_VALIDATION", "id: the body names");
    call(f, "PATCH", path, "{\"id\":7,\"description\":\"x\"}", &r);
    expect_error(&r, 400, "ERR_INVALID_BODY", "id: expected a string");
    call(f, "PATCH", path, "{}", &r);
    expect_error(&r, 400, "ERR_VALIDATION", "nothing to change");
    call(f, "PATCH", path, NULL, &r);
    expect_error(&r, 400, "ERR_VALIDATION", "nothing to change");
    call(f, "PATCH", path, "{\"cidr\":\"10.1.0.1/16\"}", &r);
    expect_error(&r, 400, "ERR_VALIDATION", "cidr: host bits set: did you mean 10.1.0.0/16?");
    call(f, "PATCH", path, "{\"cidr\":\"10.1.2.3\"}", &r);
    expect_error(&r, 400, "ERR_VALIDATION", "mask");
    call(f, "PATCH", path, "{\"cidr\":\"10.0.0.0/8\"}", &r);
    char want[256];
    snprintf(want, sizeof want, "policy %s already has a rule for 10.0.0.0/8 (%s)", POLICY_A,
             a);
    expect_error(&r, 400, "ERR_VALIDATION", want);
    call(f, "PATCH", path, "{\"cidr\":7}", &r);
    expect_error(&r, 400, "ERR_INVALID_BODY", "cidr: expected a string, got a number");
    call(f, "PATCH", path, "{\"description\":", &r);
    expect_error(&r, 400, "ERR_INVALID_BODY", "invalid JSON");
    call(f, "PATCH", "/ip_policy_rules/" NO_RULE, "{\"description\":\"x\"}", &r);
    expect_error(&r, 404, "ERR_NOT_FOUND", NO_RULE);
    /* None of it changed the rule. */
    call(f, "GET", path, NULL, &r);
    model_object o;
    object_of(&r, 200, MODEL_KIND_RULE, &o);
    assert_string_equal(o.rule.cidr, "10.1.0.0/16");
    assert_string_equal(o.rule.description, "");
    /* The same CIDR in another policy is no conflict. */
    char other[MODEL_ID_MAX + 1], other_path[96];
    create_rule(f, POLICY_B, "10.5.0.0/16", other);
    rule_path(other_path, sizeof other_path, other);
    call(f, "PATCH", other_path, "{\"cidr\":\"10.0.0.0/8\"}", &r);
    assert_int_equal(r.status, 200);
}

static void test_patch_cred(void **state)
{
    fixture *f = *state;
    reply r;
    call(f, "POST", "/credentials", "{\"description\":\"ci\",\"acl\":[\"bind:a.example.com\"]}",
         &r);
    model_object created;
    object_of(&r, 201, MODEL_KIND_CRED, &created);
    assert_non_null(created.cred.token);
    char path[96];
    snprintf(path, sizeof path, "/credentials/%s", created.cred.id);

    call(f, "PATCH", path, "{\"description\":\"ci 2\",\"metadata\":\"m\","
         "\"acl\":[\"bind:*.example.com\",\"bind:env=prod\"]}", &r);
    model_object o;
    object_of(&r, 200, MODEL_KIND_CRED, &o);
    assert_null(o.cred.token); /* the token only in the create reply */
    assert_non_null(strstr(r.body, "\"token\":null"));
    assert_string_equal(o.cred.description, "ci 2");
    assert_string_equal(o.cred.metadata, "m");
    assert_int_equal(o.cred.acl.count, 2);
    assert_string_equal(o.cred.owner_id, created.cred.owner_id);
    assert_string_equal(o.cred.created_at, created.cred.created_at);
    model_object_clear(&o);
    call(f, "PATCH", path, "{\"acl\":[]}", &r);
    object_of(&r, 200, MODEL_KIND_CRED, &o);
    assert_int_equal(o.cred.acl.count, 0);
    model_object_clear(&o);

    static const char *const fixed[] = {"owner_id", "token", "uri", "created_at"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char body[128], want[64];
        snprintf(body, sizeof body, "{\"%s\":\"usr_2Cs7Tq9WnR4mK8pL2xV6bH1cJzD\"}", fixed[i]);
        snprintf(want, sizeof want, "%s: cannot be changed", fixed[i]);
        call(f, "PATCH", path, body, &r);
        expect_error(&r, 400, "ERR_VALIDATION", want);
    }
    call(f, "PATCH", path, "{\"acl\":[\"connect:x\"]}", &r);
    expect_error(&r, 400, "ERR_VALIDATION", "acl rule 1: ");
    call(f, "PATCH", path, "{\"cidr\":\"10.0.0.0/8\"}", &r);
    expect_error(&r, 400, "ERR_VALIDATION", "cidr: unknown field");
    call(f, "PATCH", "/credentials/cr_0000000000000000000000000zz", "{\"metadata\":\"x\"}", &r);
    expect_error(&r, 404, "ERR_NOT_FOUND", "cr_0000000000000000000000000zz");

    /* The server still holds the token it made, unchanged. */
    store *st = ts_store_open(f->db);
    char *token = NULL;
    error_info err;
    assert_int_equal(store_token_get(st, created.cred.id, &token, &err), ERROR_OK);
    assert_string_equal(token, created.cred.token);
    model_wipe(token, strlen(token));
    free(token);
    store_close(st);
    model_object_clear(&created);
}

static void test_patch_gate(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1], path[96];
    create_rule(f, POLICY_A, "10.0.0.0/8", id);
    rule_path(path, sizeof path, id);
    static const char *const no_key[] = {"Service-Version: 2", NULL};
    static const char *const no_version[] = {"Authorization: Bearer " KEY, NULL};
    static const char *const version_3[] = {"Authorization: Bearer " KEY, "Service-Version: 3",
                                            NULL};
    reply r;
    call_with(f, "PATCH", path, "{\"description\":\"x\"}", no_key, &r);
    expect_error(&r, 401, "ERR_UNAUTHORIZED", "API key");
    call_with(f, "PATCH", path, "{\"description\":\"x\"}", no_version, &r);
    expect_error(&r, 400, "ERR_VERSION", "Service-Version");
    call_with(f, "PATCH", path, "{\"description\":\"x\"}", version_3, &r);
    expect_error(&r, 400, "ERR_VERSION", "Service-Version");
    call(f, "GET", path, NULL, &r);
    assert_null(strstr(r.body, "\"description\""));
    call(f, "PUT", path, "{}", &r);
    expect_error(&r, 405, "ERR_METHOD_NOT_ALLOWED", "GET, PATCH, DELETE");
}

/* patch_rule/patch_cred faults: a lost reply after the edit was committed, a 500
 * before anything was done. */
static void test_patch_faults(void **state)
{
    (void)state;
    fixture f = {0};
    assert_true(start(&f, "patch_rule:drop@1,patch_rule:500@2,patch_cred:reset@1,"
                          "patch_cred:truncate@2"));
    char id[MODEL_ID_MAX + 1], path[96];
    create_rule(&f, POLICY_A, "10.0.0.0/8", id);
    rule_path(path, sizeof path, id);
    reply r;
    call(&f, "PATCH", path, "{\"description\":\"dropped\"}", &r);
    assert_int_equal(r.rc, CURLE_GOT_NOTHING);
    call(&f, "PATCH", path, "{\"description\":\"refused\"}", &r);
    expect_error(&r, 500, "ERR_INTERNAL", "injected by --faults");
    call(&f, "GET", path, NULL, &r);
    model_object o;
    object_of(&r, 200, MODEL_KIND_RULE, &o);
    assert_string_equal(o.rule.description, "dropped");

    call(&f, "POST", "/credentials", "{\"description\":\"c\"}", &r);
    object_of(&r, 201, MODEL_KIND_CRED, &o);
    char cpath[96];
    snprintf(cpath, sizeof cpath, "/credentials/%s", o.cred.id);
    model_object_clear(&o);
    call(&f, "PATCH", cpath, "{\"description\":\"reset\"}", &r);
    assert_true(r.rc == CURLE_RECV_ERROR || r.rc == CURLE_GOT_NOTHING);
    call(&f, "PATCH", cpath, "{\"metadata\":\"cut\"}", &r);
    assert_int_equal(r.rc, CURLE_PARTIAL_FILE);
    call(&f, "GET", cpath, NULL, &r);
    object_of(&r, 200, MODEL_KIND_CRED, &o);
    assert_string_equal(o.cred.description, "reset");
    assert_string_equal(o.cred.metadata, "cut");
    model_object_clear(&o);
    stop(&f);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_patch_rule_fields),
        T(test_patch_rule_refusals),
        T(test_patch_cred),
        T(test_patch_gate),
        cmocka_unit_test(test_patch_faults),
    };
#undef T
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return failed;
}

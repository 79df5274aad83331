#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rampart/codec.h"
#include "rampart/kind.h"
#include "../../src/core/codec/codec_internal.h" /* the fast page path against jansson's */

#define RULE_ID "ipr_2Cs8WqYF3xV8eO7cLbM1sQ9pZkT"
#define POLICY_ID "ipp_2Cs8Vd0ZqL4eTf1gKx9RmB3nHwA"
#define CRED_ID "cr_2Cs8Xa7bC1dE2fG3hI4jK5lM6nO"
#define OWNER_ID "usr_2Cs7Tq9WnR4mK8pL2xV6bH1cJzD"
#define OP_ID "op_2Cs8Yb1cD2eF3gH4iJ5kL6mN7oP"
#define TOKEN "2Cs8Xa7bC1dE2fG3hI4jK5lM6nO_4kQ8vN2xR7tY1wZ9pL3mB6c"
#define BASE "https://api.example.com"

/* An IP policy rule as the production service writes it (no metadata). */
static const char api_rule[] =
    "{\"id\":\"" RULE_ID "\",\"uri\":\"" BASE "/ip_policy_rules/" RULE_ID "\","
    "\"created_at\":\"2025-09-04T10:11:15Z\",\"description\":\"office\","
    "\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"" POLICY_ID "\",\"uri\":\"" BASE
    "/ip_policies/" POLICY_ID "\"},\"action\":\"allow\"}";

static const char api_cred[] =
    "{\"id\":\"" CRED_ID "\",\"uri\":\"" BASE "/credentials/" CRED_ID "\","
    "\"created_at\":\"2025-09-04T10:11:15Z\",\"description\":\"ci runner\","
    "\"token\":null,\"acl\":[],\"owner_id\":\"" OWNER_ID "\"}";

static error_code rule_dec(const char *json, model_rule *rule, error_info *err)
{
    return codec_rule_decode(json, strlen(json), rule, err);
}

static error_code cred_dec(const char *json, model_cred *cred, error_info *err)
{
    return codec_cred_decode(json, strlen(json), cred, err);
}

static void sample_rule(model_rule *r)
{
    memset(r, 0, sizeof *r);
    strcpy(r->id, RULE_ID);
    strcpy(r->uri, BASE "/ip_policy_rules/" RULE_ID);
    strcpy(r->created_at, "2025-09-04T10:11:15Z");
    strcpy(r->description, "office \"west\" \xc3\xa9");
    strcpy(r->metadata, "{\"team\":\"net\"}");
    strcpy(r->cidr, "2001:db8::/32");
    strcpy(r->policy_id, POLICY_ID);
    strcpy(r->policy_uri, BASE "/ip_policies/" POLICY_ID);
    r->action = MODEL_ACTION_DENY;
    r->state = MODEL_STATE_FAILED;
    strcpy(r->error, "host bits set");
}

static void assert_rule_equal(const model_rule *a, const model_rule *b)
{
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->uri, b->uri);
    assert_string_equal(a->created_at, b->created_at);
    assert_string_equal(a->description, b->description);
    assert_string_equal(a->metadata, b->metadata);
    assert_string_equal(a->cidr, b->cidr);
    assert_string_equal(a->policy_id, b->policy_id);
    assert_string_equal(a->policy_uri, b->policy_uri);
    assert_int_equal(a->action, b->action);
    assert_int_equal(a->state, b->state);
    assert_string_equal(a->error, b->error);
}

static void expect_rule_error(const char *json, const char *msg)
{
    model_rule rule;
    error_info err = {0};
    assert_int_equal(rule_dec(json, &rule, &err), ERROR_FORMAT);
    assert_int_equal(err.code, ERROR_FORMAT);
    if (msg && !strstr(err.msg, msg))
        fail_msg("message \"%s\" lacks \"%s\" for %.200s", err.msg, msg, json);
    assert_string_equal(rule.cidr, "");
}

/* A valid rule object with `key` replaced by (or added as) `value`. */
static void rule_with(char *buf, size_t size, const char *key, const char *value)
{
    static const char *const base[][2] = {
        {"id", "\"" RULE_ID "\""},
        {"cidr", "\"10.0.0.0/8\""},
        {"ip_policy", "{\"id\":\"" POLICY_ID "\"}"},
        {"action", "\"allow\""},
    };
    size_t n = (size_t)snprintf(buf, size, "{");
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (strcmp(base[i][0], key) != 0)
            n += (size_t)snprintf(buf + n, size - n, "\"%s\":%s,", base[i][0], base[i][1]);
    snprintf(buf + n, size - n, "\"%s\":%s}", key, value);
}

static void test_rule_api_example(void **state)
{
    (void)state;
    model_rule rule;
    error_info err = {0};
    assert_int_equal(rule_dec(api_rule, &rule, &err), ERROR_OK);
    assert_string_equal(rule.id, RULE_ID);
    assert_string_equal(rule.uri, BASE "/ip_policy_rules/" RULE_ID);
    assert_string_equal(rule.created_at, "2025-09-04T10:11:15Z");
    assert_string_equal(rule.description, "office");
    assert_string_equal(rule.metadata, "");
    assert_string_equal(rule.cidr, "10.0.0.0/8");
    assert_string_equal(rule.policy_id, POLICY_ID);
    assert_string_equal(rule.policy_uri, BASE "/ip_policies/" POLICY_ID);
    assert_int_equal(rule.action, MODEL_ACTION_ALLOW);
    assert_int_equal(rule.state, MODEL_STATE_SYNCED);
    assert_string_equal(rule.error, "");
}

static void test_rule_nulls_read_as_absent(void **state)
{
    (void)state;
    model_rule rule;
    const char *json = "{\"id\":\"" RULE_ID "\",\"uri\":null,\"created_at\":null,"
                       "\"description\":null,\"metadata\":null,\"cidr\":\"10.0.0.0/8\","
                       "\"ip_policy\":{\"id\":\"" POLICY_ID "\",\"uri\":null},"
                       "\"action\":\"deny\",\"extra\":[1,{\"x\":null}]}";
    assert_int_equal(rule_dec(json, &rule, NULL), ERROR_OK);
    assert_string_equal(rule.uri, "");
    assert_string_equal(rule.description, "");
    assert_string_equal(rule.policy_uri, "");
    assert_int_equal(rule.action, MODEL_ACTION_DENY);
}

static void test_rule_round_trip(void **state)
{
    (void)state;
    model_rule in, out;
    sample_rule(&in);
    char *json = codec_rule_encode(&in, CODEC_WITH_STATE);
    assert_non_null(json);
    assert_int_equal(rule_dec(json, &out, NULL), ERROR_OK);
    assert_rule_equal(&in, &out);
    free(json);

    json = codec_rule_encode(&in, CODEC_WITH_STATE | CODEC_PRETTY);
    assert_non_null(json);
    assert_non_null(strstr(json, "\n  \"id\": "));
    assert_int_equal(rule_dec(json, &out, NULL), ERROR_OK);
    assert_rule_equal(&in, &out);
    free(json);
}

static void test_rule_encode_api_order(void **state)
{
    (void)state;
    model_rule rule;
    assert_int_equal(rule_dec(api_rule, &rule, NULL), ERROR_OK);
    char *json = codec_rule_encode(&rule, 0);
    assert_non_null(json);
    assert_string_equal(json, api_rule);
    free(json);

    rule.state = MODEL_STATE_DELETING;
    json = codec_rule_encode(&rule, CODEC_WITH_STATE);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"action\":\"allow\",\"state\":\"deleting\"}"));
    assert_null(strstr(json, "\"error\""));
    free(json);
}

static void test_rule_encode_local_row(void **state)
{
    (void)state;
    model_rule rule, back;
    memset(&rule, 0, sizeof rule);
    strcpy(rule.cidr, "192.168.0.0/16");
    strcpy(rule.policy_id, POLICY_ID);
    rule.state = MODEL_STATE_NEW;
    char *json = codec_rule_encode(&rule, 0);
    assert_non_null(json);
    assert_string_equal(json,
                        "{\"cidr\":\"192.168.0.0/16\",\"ip_policy\":{\"id\":\"" POLICY_ID
                        "\"},\"action\":\"allow\"}");
    assert_int_equal(rule_dec(json, &back, NULL), ERROR_OK);
    assert_int_equal(back.state, MODEL_STATE_NEW);
    free(json);
}

static void test_rule_create_form(void **state)
{
    (void)state;
    model_rule rule;
    const char *json = "{\"description\":\"vpn\",\"cidr\":\"10.1.0.0/16\","
                       "\"ip_policy_id\":\"" POLICY_ID "\",\"action\":\"deny\"}";
    assert_int_equal(rule_dec(json, &rule, NULL), ERROR_OK);
    assert_string_equal(rule.policy_id, POLICY_ID);
    assert_string_equal(rule.policy_uri, "");
    assert_string_equal(rule.id, "");
    assert_int_equal(rule.state, MODEL_STATE_NEW);
    assert_int_equal(rule.action, MODEL_ACTION_DENY);

    char *body = codec_rule_create_body(&rule);
    assert_non_null(body);
    assert_string_equal(body, json);
    free(body);

    strcpy(rule.metadata, "m");
    strcpy(rule.id, RULE_ID);
    strcpy(rule.uri, BASE "/x");
    body = codec_rule_create_body(&rule);
    assert_string_equal(body, "{\"description\":\"vpn\",\"metadata\":\"m\",\"cidr\":"
                              "\"10.1.0.0/16\",\"ip_policy_id\":\"" POLICY_ID
                              "\",\"action\":\"deny\"}");
    free(body);
}

static void test_rule_policy_both_forms(void **state)
{
    (void)state;
    model_rule rule;
    assert_int_equal(rule_dec("{\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"ipp_a\"},"
                              "\"ip_policy_id\":\"ipp_a\",\"action\":\"allow\"}",
                              &rule, NULL),
                     ERROR_OK);
    assert_string_equal(rule.policy_id, "ipp_a");
    expect_rule_error("{\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"ipp_a\"},"
                      "\"ip_policy_id\":\"ipp_b\",\"action\":\"allow\"}",
                      "ip_policy_id: differs from ip_policy.id");
    expect_rule_error("{\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"ipp_a\"},"
                      "\"ip_policy_id\":7,\"action\":\"allow\"}",
                      "ip_policy_id: expected a string, got a number");
}

static void test_rule_state_field(void **state)
{
    (void)state;
    model_rule rule;
    char buf[512];
    rule_with(buf, sizeof buf, "state", "\"failed\",\"error\":\"bad cidr\"");
    assert_int_equal(rule_dec(buf, &rule, NULL), ERROR_OK);
    assert_int_equal(rule.state, MODEL_STATE_FAILED);
    assert_string_equal(rule.error, "bad cidr");

    rule_with(buf, sizeof buf, "state", "null");
    assert_int_equal(rule_dec(buf, &rule, NULL), ERROR_OK);
    assert_int_equal(rule.state, MODEL_STATE_SYNCED);

    rule_with(buf, sizeof buf, "state", "\"remote_deleted\"");
    assert_int_equal(rule_dec(buf, &rule, NULL), ERROR_OK);
    assert_int_equal(rule.state, MODEL_STATE_REMOTE_DELETED);

    rule_with(buf, sizeof buf, "state", "\"Synced\"");
    expect_rule_error(buf, "state: unknown state");
    rule_with(buf, sizeof buf, "state", "3");
    expect_rule_error(buf, "state: expected a string, got a number");
}

static void test_rule_wrong_types(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"cidr", "1", "cidr: expected a string, got a number"},
        {"cidr", "null", "cidr: expected a string, got null"},
        {"cidr", "[\"10.0.0.0/8\"]", "cidr: expected a string, got an array"},
        {"id", "true", "id: expected a string, got a boolean"},
        {"uri", "[]", "uri: expected a string, got an array"},
        {"created_at", "{}", "created_at: expected a string, got an object"},
        {"description", "1.5", "description: expected a string, got a number"},
        {"metadata", "false", "metadata: expected a string, got a boolean"},
        {"error", "{}", "error: expected a string, got an object"},
        {"ip_policy", "\"" POLICY_ID "\"", "ip_policy: expected an object, got a string"},
        {"ip_policy", "[]", "ip_policy: expected an object, got an array"},
        {"ip_policy", "{\"id\":5}", "ip_policy.id: expected a string, got a number"},
        {"ip_policy", "{}", "ip_policy.id: missing"},
        {"ip_policy", "{\"id\":\"ipp_1\",\"uri\":7}",
         "ip_policy.uri: expected a string, got a number"},
        {"action", "1", "action: expected a string, got a number"},
        {"action", "\"Allow\"", "action: expected allow or deny"},
        {"action", "\"\"", "action: expected allow or deny"},
        {"action", "\"allowdeny\"", "action: expected allow or deny"},
    };
    char buf[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rule_with(buf, sizeof buf, cases[i][0], cases[i][1]);
        expect_rule_error(buf, cases[i][2]);
    }
}

static void test_rule_missing_required(void **state)
{
    (void)state;
    expect_rule_error("{\"ip_policy\":{\"id\":\"ipp_1\"},\"action\":\"allow\"}",
                      "cidr: missing");
    expect_rule_error("{\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"ipp_1\"}}",
                      "action: missing");
    expect_rule_error("{\"cidr\":\"10.0.0.0/8\",\"action\":\"allow\"}",
                      "ip_policy: missing");
    expect_rule_error("{\"cidr\":\"10.0.0.0/8\",\"ip_policy\":null,\"ip_policy_id\":null,"
                      "\"action\":\"allow\"}",
                      "ip_policy: missing");
    expect_rule_error("{}", "cidr: missing");
}

static void test_rule_long_strings(void **state)
{
    (void)state;
    char desc[300];
    char buf[1024];
    memset(desc, 'a', sizeof desc);
    snprintf(buf, sizeof buf, "\"%.255s\"", desc);
    rule_with(buf + 400, sizeof buf - 400, "description", buf);
    model_rule rule;
    assert_int_equal(rule_dec(buf + 400, &rule, NULL), ERROR_OK);
    assert_int_equal(strlen(rule.description), 255);

    snprintf(buf, sizeof buf, "\"%.256s\"", desc);
    rule_with(buf + 400, sizeof buf - 400, "description", buf);
    expect_rule_error(buf + 400, "description: 256 bytes, longer than 255");

    /* 1 MB: refused with a message, not truncated and not a crash. */
    size_t big = 1u << 20;
    char *value = malloc(big + 3);
    char *json = malloc(big + 256);
    assert_non_null(value);
    assert_non_null(json);
    value[0] = '"';
    memset(value + 1, 'x', big);
    strcpy(value + 1 + big, "\"");
    rule_with(json, big + 256, "description", value);
    expect_rule_error(json, "description: 1048576 bytes, longer than 255");
    rule_with(json, big + 256, "cidr", value);
    expect_rule_error(json, "cidr: 1048576 bytes, longer than 64");
    free(value);
    free(json);
}

static void test_invalid_documents(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"", "empty document"},
        {" \n\t ", "empty document"},
        {"{", "invalid JSON"},
        {"{\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"ipp_1\",\"action\":\"al",
         "invalid JSON"},
        {"nul", "invalid JSON"},
        {"[]", "expected an object, got an array"},
        {"\"rule\"", "expected an object, got a string"},
        {"42", "expected an object, got a number"},
        {"null", "expected an object, got null"},
        {"{\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"} x",
         "invalid JSON"},
        {"{\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}{}",
         "invalid JSON"},
        {"{\"cidr\":\"10.0.0.0/8\",\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"ipp_1\","
         "\"action\":\"allow\"}",
         "invalid JSON"},
        {"{\"cidr\":\"10.0.0.0/8\\u0000x\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}",
         "column 27: NUL character in a string"},
        {"{\"cidr\":\"10.0.0.0/8\xff\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}",
         "invalid JSON"},
        {"{\"cidr\":\"\xc0\xaf\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}",
         "invalid JSON"},
        {"{\"n\":1e999999,\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"i\",\"action\":\"deny\"}",
         "invalid JSON"},
        {"{\"n\":123456789012345678901234567890,\"cidr\":\"1\",\"ip_policy_id\":\"i\","
         "\"action\":\"deny\"}",
         "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_rule_error(cases[i][0], cases[i][1]);

    model_rule rule;
    error_info err = {0};
    assert_int_equal(codec_rule_decode(NULL, 0, &rule, &err), ERROR_FORMAT);
    /* The length bounds the document: what follows is not read. */
    const char *doc =
        "{\"cidr\":\"10.0.0.0/8\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}"
        "garbage";
    assert_int_equal(codec_rule_decode(doc, strlen(doc) - 7, &rule, &err), ERROR_OK);
    assert_int_equal(codec_rule_decode(doc, strlen(doc) - 8, &rule, &err), ERROR_FORMAT);
}

static void test_error_message_hides_input(void **state)
{
    (void)state;
    model_cred cred = {0};
    error_info err = {0};
    static const char *const docs[] = {"{\"token\":\"s3cret", "{\"token\":s3cret}",
                                       "{\"token\":\"s3cret\" x}"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        assert_int_equal(cred_dec(docs[i], &cred, &err), ERROR_FORMAT);
        assert_null(strstr(err.msg, "s3cret"));
        assert_non_null(strstr(err.msg, "line 1"));
    }
}

static char *repeat(const char *unit, size_t times, const char *tail)
{
    size_t ulen = strlen(unit);
    char *out = malloc(ulen * times + strlen(tail) + 1);
    assert_non_null(out);
    for (size_t i = 0; i < times; i++)
        memcpy(out + i * ulen, unit, ulen);
    strcpy(out + ulen * times, tail);
    return out;
}

static error_code count_rule(void *ctx, const model_rule *rule, size_t index,
                             error_info *err)
{
    (void)rule;
    (void)index;
    (void)err;
    (*(size_t *)ctx)++;
    return ERROR_OK;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    char *arrays = repeat("[", 200000, "");
    char *objects = repeat("{\"a\":", 100000, "1");
    char *in_field = repeat("[", 100000, "");
    char *doc = malloc(strlen(in_field) + 64);
    assert_non_null(doc);
    sprintf(doc, "{\"cidr\":%s", in_field);
    const char *docs[] = {arrays, objects, doc};
    for (size_t i = 0; i < 3; i++) {
        model_rule rule;
        model_cred cred = {0};
        codec_page page;
        size_t n = 0;
        assert_int_equal(rule_dec(docs[i], &rule, NULL), ERROR_FORMAT);
        assert_int_equal(cred_dec(docs[i], &cred, NULL), ERROR_FORMAT);
        assert_int_equal(
            codec_page_decode(MODEL_KIND_RULE, docs[i], strlen(docs[i]), &page, NULL),
            ERROR_FORMAT);
        assert_int_equal(codec_rule_stream(docs[i], strlen(docs[i]), count_rule, &n, NULL),
                         ERROR_FORMAT);
        assert_int_equal(n, 0);
    }
    free(arrays);
    free(objects);
    free(in_field);
    free(doc);
}

/* Every cut of a valid document is refused; no cut or byte flip crashes. */
static void test_truncations_and_mutations(void **state)
{
    (void)state;
    char list[2048];
    snprintf(list, sizeof list,
             "{\"ip_policy_rules\":[%s,%s],\"uri\":\"u\","
             "\"next_page_uri\":null}",
             api_rule, api_rule);
    const char *docs[] = {api_rule, api_cred, list};
    static const char flips[] = {'\0', '"', '\\', '{', '}',   '[',
                                 ']',  ',', ':',  '1', '\x80'};
    for (size_t d = 0; d < 3; d++) {
        size_t len = strlen(docs[d]);
        char *copy = malloc(len);
        assert_non_null(copy);
        for (size_t cut = 0; cut < len; cut++) {
            model_rule rule;
            model_cred cred = {0};
            codec_page page;
            size_t n = 0;
            assert_int_equal(codec_rule_decode(docs[d], cut, &rule, NULL), ERROR_FORMAT);
            assert_int_equal(codec_cred_decode(docs[d], cut, &cred, NULL), ERROR_FORMAT);
            assert_int_equal(codec_page_decode(MODEL_KIND_RULE, docs[d], cut, &page, NULL),
                             ERROR_FORMAT);
            assert_int_not_equal(codec_rule_stream(docs[d], cut, count_rule, &n, NULL),
                                 ERROR_OK);
        }
        for (size_t at = 0; at < len; at++) {
            for (size_t f = 0; f < sizeof flips; f++) {
                model_rule rule;
                model_cred cred = {0};
                codec_page page = {0};
                size_t n = 0;
                memcpy(copy, docs[d], len);
                copy[at] = flips[f];
                codec_rule_decode(copy, len, &rule, NULL);
                codec_cred_decode(copy, len, &cred, NULL);
                model_cred_clear(&cred);
                codec_page_decode(MODEL_KIND_RULE, copy, len, &page, NULL);
                codec_page_free(&page);
                codec_rule_stream(copy, len, count_rule, &n, NULL);
            }
        }
        free(copy);
    }
}

static void test_cred_api_example(void **state)
{
    (void)state;
    model_cred cred = {0};
    assert_int_equal(cred_dec(api_cred, &cred, NULL), ERROR_OK);
    assert_string_equal(cred.id, CRED_ID);
    assert_string_equal(cred.created_at, "2025-09-04T10:11:15Z");
    assert_string_equal(cred.description, "ci runner");
    assert_string_equal(cred.metadata, "");
    assert_string_equal(cred.owner_id, OWNER_ID);
    assert_null(cred.token);
    assert_int_equal(cred.acl.count, 0);
    assert_int_equal(cred.state, MODEL_STATE_SYNCED);

    char *json = codec_cred_encode(&cred, 0);
    assert_non_null(json);
    assert_string_equal(json, api_cred);
    free(json);
    model_cred_clear(&cred);
}

static void test_cred_create_reply(void **state)
{
    (void)state;
    model_cred cred = {0};
    const char *reply =
        "{\"id\":\"" CRED_ID "\",\"uri\":\"" BASE "/credentials/" CRED_ID "\","
        "\"created_at\":\"2025-09-04T10:11:15Z\",\"token\":\"" TOKEN "\","
        "\"acl\":[\"bind:*.example.com\",\"bind:env=prod\"],"
        "\"owner_id\":\"" OWNER_ID "\"}";
    assert_int_equal(cred_dec(reply, &cred, NULL), ERROR_OK);
    assert_non_null(cred.token);
    assert_string_equal(cred.token, TOKEN);
    assert_int_equal(cred.acl.count, 2);
    assert_string_equal(cred.acl.rules[0], "bind:*.example.com");
    assert_string_equal(cred.acl.rules[1], "bind:env=prod");

    /* Decoding into a used value replaces it without leaking. */
    assert_int_equal(cred_dec("{\"acl\":null}", &cred, NULL), ERROR_OK);
    assert_null(cred.token);
    assert_int_equal(cred.acl.count, 0);
    assert_int_equal(cred.state, MODEL_STATE_NEW);
    model_cred_clear(&cred);
}

static void test_cred_round_trip(void **state)
{
    (void)state;
    model_cred in = {0}, out = {0};
    strcpy(in.id, CRED_ID);
    strcpy(in.description, "d");
    strcpy(in.metadata, "m");
    strcpy(in.owner_id, OWNER_ID);
    assert_int_equal(model_acl_add(&in.acl, "bind:foo.example.com", NULL), ERROR_OK);
    assert_int_equal(model_acl_add(&in.acl, "bind:1.tcp.example.net:20002", NULL),
                     ERROR_OK);
    assert_int_equal(model_cred_set_token(&in, TOKEN, NULL), ERROR_OK);
    in.state = MODEL_STATE_ORPHANED;
    strcpy(in.error, "token lost");

    char *json = codec_cred_encode(&in, CODEC_WITH_STATE);
    assert_non_null(json);
    assert_int_equal(cred_dec(json, &out, NULL), ERROR_OK);
    free(json);
    assert_string_equal(out.id, in.id);
    assert_string_equal(out.description, in.description);
    assert_string_equal(out.metadata, in.metadata);
    assert_string_equal(out.owner_id, in.owner_id);
    assert_string_equal(out.token, TOKEN);
    assert_int_equal(out.acl.count, 2);
    assert_string_equal(out.acl.rules[1], "bind:1.tcp.example.net:20002");
    assert_int_equal(out.state, MODEL_STATE_ORPHANED);
    assert_string_equal(out.error, "token lost");

    json = codec_cred_encode(&in, 0);
    assert_string_equal(json,
                        "{\"id\":\"" CRED_ID "\",\"description\":\"d\",\"metadata\":"
                        "\"m\",\"token\":\"" TOKEN "\",\"acl\":[\"bind:foo.example.com\","
                        "\"bind:1.tcp.example.net:20002\"],\"owner_id\":\"" OWNER_ID "\"}");
    free(json);
    model_cred_clear(&in);
    model_cred_clear(&out);

    json = codec_cred_encode(&in, 0);
    assert_string_equal(json, "{\"token\":null,\"acl\":[]}");
    free(json);
}

static void test_cred_create_body(void **state)
{
    (void)state;
    model_cred cred = {0};
    strcpy(cred.id, CRED_ID);
    assert_int_equal(model_cred_set_token(&cred, TOKEN, NULL), ERROR_OK);
    char *body = codec_cred_create_body(&cred);
    assert_string_equal(body, "{}");
    free(body);

    strcpy(cred.description, "laptop");
    strcpy(cred.owner_id, OWNER_ID);
    assert_int_equal(model_acl_add(&cred.acl, "*", NULL), ERROR_OK);
    body = codec_cred_create_body(&cred);
    assert_string_equal(
        body, "{\"description\":\"laptop\",\"acl\":[\"*\"],\"owner_id\":\"" OWNER_ID "\"}");
    free(body);
    model_cred_clear(&cred);
}

static void test_cred_wrong_types(void **state)
{
    (void)state;
    char long_rule[MODEL_ACL_RULE_MAX + 32];
    snprintf(long_rule, sizeof long_rule, "{\"acl\":[\"%0*d\"]}", MODEL_ACL_RULE_MAX + 1,
             0);
    const char *const cases[][2] = {
        {"{\"acl\":{}}", "acl: expected an array, got an object"},
        {"{\"acl\":\"bind:x\"}", "acl: expected an array, got a string"},
        {"{\"acl\":[\"bind:x\",3]}", "acl[1]: expected a string, got a number"},
        {"{\"acl\":[null]}", "acl[0]: expected a string, got null"},
        {long_rule, "acl[0]: 1025 bytes, longer than 1024"},
        {"{\"token\":5,\"acl\":[\"bind:x\"]}", "token: expected a string, got a number"},
        {"{\"token\":\"t\",\"owner_id\":[]}", "owner_id: expected a string, got an array"},
        {"{\"token\":\"t\",\"acl\":[\"a\"],\"state\":\"nope\"}", "state: unknown state"},
        {"{\"id\":1}", "id: expected a string, got a number"},
        {"[]", "expected an object, got an array"},
        {"", "empty document"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_cred cred = {0};
        error_info err = {0};
        assert_int_equal(model_cred_set_token(&cred, "old", NULL), ERROR_OK);
        assert_int_equal(cred_dec(cases[i][0], &cred, &err), ERROR_FORMAT);
        if (!strstr(err.msg, cases[i][1]))
            fail_msg("message \"%s\" lacks \"%s\"", err.msg, cases[i][1]);
        assert_null(cred.token);
        assert_int_equal(cred.acl.count, 0);
        assert_null(cred.acl.rules);
    }
}

static void test_rule_pages(void **state)
{
    (void)state;
    char json[4096];
    codec_page page;
    snprintf(json, sizeof json,
             "{\"ip_policy_rules\":[%s,%s],\"uri\":\"" BASE "/ip_policy_rules\","
             "\"next_page_uri\":\"" BASE "/ip_policy_rules?before_id=" RULE_ID
             "&limit=2\"}",
             api_rule,
             "{\"id\":\"ipr_2\",\"cidr\":\"::/0\",\"ip_policy\":{\"id\":\"ipp_9\"},"
             "\"action\":\"deny\"}");
    assert_int_equal(codec_page_decode(MODEL_KIND_RULE, json, strlen(json), &page, NULL),
                     ERROR_OK);
    assert_int_equal(page.count, 2);
    assert_int_equal(page.kind, MODEL_KIND_RULE);
    assert_int_equal(page.items[0].kind, MODEL_KIND_RULE);
    assert_string_equal(page.items[0].rule.id, RULE_ID);
    assert_string_equal(page.items[1].rule.cidr, "::/0");
    assert_int_equal(page.items[1].rule.action, MODEL_ACTION_DENY);
    assert_string_equal(page.uri, BASE "/ip_policy_rules");
    assert_string_equal(page.next_page_uri,
                        BASE "/ip_policy_rules?before_id=" RULE_ID "&limit=2");
    codec_page_free(&page);
    assert_null(page.items);

    const char *last = "{\"ip_policy_rules\":[],\"uri\":\"" BASE "/ip_policy_rules\","
                       "\"next_page_uri\":null}";
    assert_int_equal(codec_page_decode(MODEL_KIND_RULE, last, strlen(last), &page, NULL),
                     ERROR_OK);
    assert_int_equal(page.count, 0);
    assert_string_equal(page.next_page_uri, "");
    codec_page_free(&page);

    static const char *const bad[][2] = {
        {"{\"uri\":\"u\"}", "ip_policy_rules: missing"},
        {"{\"ip_policy_rules\":{}}", "ip_policy_rules: expected an array, got an object"},
        {"{\"ip_policy_rules\":null}", "ip_policy_rules: expected an array, got null"},
        {"{\"ip_policy_rules\":[],\"next_page_uri\":1}",
         "next_page_uri: expected a string, got a number"},
        {"{\"ip_policy_rules\":[{\"cidr\":\"1\",\"ip_policy_id\":\"p\",\"action\":\"allow\"},"
         "{\"cidr\":2}]}",
         "rule 2: cidr: expected a string, got a number"},
        {"{\"ip_policy_rules\":[1]}", "rule 1: expected an object, got a number"},
        {"{\"ip_policy_rules\":[]}", "next_page_uri: missing (null on the last page)"},
        {"{\"ip_policy_rules\":[],\"next_page_uri\":\"\"}",
         "next_page_uri: empty (null on the last page)"},
        {"[]", "expected an object, got an array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error_info err = {0};
        assert_int_equal(
            codec_page_decode(MODEL_KIND_RULE, bad[i][0], strlen(bad[i][0]), &page, &err),
            ERROR_FORMAT);
        if (strcmp(err.msg, bad[i][1]) != 0)
            fail_msg("message \"%s\" is not \"%s\"", err.msg, bad[i][1]);
        assert_null(page.items);
        assert_int_equal(page.count, 0);
    }

    /* An item that cannot be read but has an id is left out, named, and the rest
     * of the page kept: the store keeps its cached copy. */
    const char *mixed =
        "{\"ip_policy_rules\":[{\"id\":\"ipr_1\",\"cidr\":\"10.0.0.0/8\","
        "\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"},"
        "{\"id\":\"ipr_2\",\"cidr\":\"10.1.0.0/16\",\"ip_policy_id\":\"ipp_1\","
        "\"action\":\"maybe\"},{\"id\":\"ipr_3\",\"cidr\":7},"
        "{\"id\":\"ipr_4\",\"cidr\":\"10.4.0.0/16\",\"ip_policy_id\":\"ipp_1\","
        "\"action\":\"deny\"}],\"next_page_uri\":null}";
    assert_int_equal(codec_page_decode(MODEL_KIND_RULE, mixed, strlen(mixed), &page, NULL),
                     ERROR_OK);
    assert_int_equal(page.count, 2);
    assert_string_equal(page.items[0].rule.id, "ipr_1");
    assert_string_equal(page.items[1].rule.id, "ipr_4");
    assert_int_equal(page.refused_count, 2);
    assert_string_equal(page.refused[0].id, "ipr_2");
    assert_non_null(strstr(page.refused[0].msg, "rule 2: action"));
    assert_string_equal(page.refused[1].id, "ipr_3");
    assert_non_null(strstr(page.refused[1].msg, "rule 3: cidr: expected a string"));
    codec_page_free(&page);
    assert_null(page.refused);
}

static void test_cred_pages(void **state)
{
    (void)state;
    char json[4096];
    codec_page page;
    snprintf(json, sizeof json,
             "{\"credentials\":[%s,{\"id\":\"cr_2\",\"token\":null,"
             "\"acl\":[\"bind:a.example.com\"]}],\"uri\":\"" BASE "/credentials\","
             "\"next_page_uri\":null}",
             api_cred);
    assert_int_equal(codec_page_decode(MODEL_KIND_CRED, json, strlen(json), &page, NULL),
                     ERROR_OK);
    assert_int_equal(page.count, 2);
    assert_int_equal(page.kind, MODEL_KIND_CRED);
    assert_int_equal(page.items[1].kind, MODEL_KIND_CRED);
    assert_string_equal(page.items[0].cred.owner_id, OWNER_ID);
    assert_int_equal(page.items[1].cred.acl.count, 1);
    assert_string_equal(page.uri, BASE "/credentials");
    assert_string_equal(page.next_page_uri, "");
    codec_page_free(&page);

    const char *empty =
        "{\"credentials\":[],\"uri\":\"" BASE "/credentials\",\"next_page_uri\":null}";
    assert_int_equal(codec_page_decode(MODEL_KIND_CRED, empty, strlen(empty), &page, NULL),
                     ERROR_OK);
    assert_int_equal(page.count, 0);
    assert_null(page.items);
    assert_string_equal(page.next_page_uri, "");
    codec_page_free(&page);

    error_info err = {0};
    const char *bad = "{\"credentials\":[{\"acl\":[\"a\"],\"token\":\"t\"},{\"acl\":[1]}]}";
    assert_int_equal(codec_page_decode(MODEL_KIND_CRED, bad, strlen(bad), &page, &err),
                     ERROR_FORMAT);
    assert_string_equal(err.msg, "credential 2: acl[0]: expected a string, got a number");
    assert_null(page.items);
    bad = "{\"ip_policy_rules\":[]}";
    assert_int_equal(codec_page_decode(MODEL_KIND_CRED, bad, strlen(bad), &page, &err),
                     ERROR_FORMAT);
    assert_string_equal(err.msg, "credentials: missing");
    /* A kind that does not exist is the caller's mistake, not the server's. */
    assert_int_equal(codec_page_decode(MODEL_KIND_COUNT, empty, strlen(empty), &page, &err),
                     ERROR_INVALID);
    assert_int_equal(page.count, 0);
}

static void test_api_error(void **state)
{
    (void)state;
    codec_api_error e;
    const char *full =
        "{\"error_code\":\"ERR_4100\",\"status_code\":400,\"msg\":\"host bits "
        "set\",\"details\":{\"operation_id\":\"" OP_ID "\"}}";
    assert_int_equal(codec_api_error_decode(full, strlen(full), &e, NULL), ERROR_OK);
    assert_string_equal(e.error_code, "ERR_4100");
    assert_int_equal(e.status_code, 400);
    assert_string_equal(e.msg, "host bits set");
    assert_string_equal(e.operation_id, OP_ID);
    char *json = codec_api_error_encode(&e);
    assert_string_equal(json, full);
    free(json);

    const char *bare = "{\"status_code\":404,\"msg\":\"not found\",\"details\":"
                       "{\"operation_id\":\"" OP_ID "\"}}";
    assert_int_equal(codec_api_error_decode(bare, strlen(bare), &e, NULL), ERROR_OK);
    assert_string_equal(e.error_code, "");
    assert_int_equal(e.status_code, 404);
    json = codec_api_error_encode(&e);
    assert_string_equal(json, bare);
    free(json);

    assert_int_equal(codec_api_error_decode("{}", 2, &e, NULL), ERROR_OK);
    assert_int_equal(e.status_code, 0);
    assert_string_equal(e.msg, "");
    assert_string_equal(e.operation_id, "");
}

static void test_api_error_bad(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"<html>502 Bad Gateway</html>", "invalid JSON"},
        {"", "empty document"},
        {"[\"error\"]", "expected an object, got an array"},
        {"{\"status_code\":\"400\"}", "status_code: expected an integer, got a string"},
        {"{\"status_code\":400.5}", "status_code: expected an integer, got a number"},
        {"{\"status_code\":99999999999}", "status_code: out of range"},
        {"{\"msg\":{}}", "msg: expected a string, got an object"},
        {"{\"details\":[]}", "details: expected an object, got an array"},
        {"{\"details\":{\"operation_id\":1}}",
         "details.operation_id: expected a string, got a number"},
        {"{\"error_code\":false}", "error_code: expected a string, got a boolean"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        codec_api_error e;
        error_info err = {0};
        assert_int_equal(codec_api_error_decode(bad[i][0], strlen(bad[i][0]), &e, &err),
                         ERROR_FORMAT);
        if (!strstr(err.msg, bad[i][1]))
            fail_msg("message \"%s\" lacks \"%s\"", err.msg, bad[i][1]);
        assert_int_equal(e.status_code, 0);
    }

    /* A long message is kept in part rather than lost. */
    char *json = repeat("\xc3\xa9", 600, "\"}");
    char *doc = malloc(strlen(json) + 16);
    assert_non_null(doc);
    sprintf(doc, "{\"msg\":\"%s", json);
    codec_api_error e;
    assert_int_equal(codec_api_error_decode(doc, strlen(doc), &e, NULL), ERROR_OK);
    assert_int_equal(strlen(e.msg), 510);
    free(json);
    free(doc);
}

static void test_encode_repairs_bad_utf8(void **state)
{
    (void)state;
    model_rule rule, back;
    sample_rule(&rule);
    strcpy(rule.description, "a\xff" /* stray byte */
                             "b\xc0\xaf" /* overlong */
                             "c\xed\xa0\x80" /* surrogate */);
    char *json = codec_rule_encode(&rule, 0);
    assert_non_null(json);
    assert_int_equal(rule_dec(json, &back, NULL), ERROR_OK);
    assert_string_equal(back.description, "a\xef\xbf\xbd"
                                          "b\xef\xbf\xbd\xef\xbf\xbd"
                                          "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(json);
}

typedef struct collect {
    size_t count;
    size_t stop_at; /* SIZE_MAX: never */
    char cidr[8][MODEL_CIDR_MAX + 1];
    model_state state[8];
} collect;

static error_code collect_rule(void *ctx, const model_rule *rule, size_t index,
                               error_info *err)
{
    collect *c = ctx;
    assert_int_equal(index, c->count);
    if (index == c->stop_at)
        return error_set(err, ERROR_CONFLICT, "stop here");
    if (index < 8) {
        strcpy(c->cidr[index], rule->cidr);
        c->state[index] = rule->state;
    }
    c->count++;
    return ERROR_OK;
}

static error_code stream_str(const char *json, collect *c, error_info *err)
{
    memset(c, 0, sizeof *c);
    c->stop_at = SIZE_MAX;
    return codec_rule_stream(json, strlen(json), collect_rule, c, err);
}

#define SR(cidr) "{\"cidr\":\"" cidr "\",\"ip_policy_id\":\"ipp_1\",\"action\":\"allow\"}"

static void test_stream_array(void **state)
{
    (void)state;
    collect c;
    error_info err = {0};
    assert_int_equal(
        stream_str("[" SR("10.0.0.0/8") "," SR("10.1.0.0/16") "," SR("::/0") "]", &c, &err),
        ERROR_OK);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.cidr[0], "10.0.0.0/8");
    assert_string_equal(c.cidr[1], "10.1.0.0/16");
    assert_string_equal(c.cidr[2], "::/0");
    assert_int_equal(c.state[0], MODEL_STATE_NEW);

    const char *spaced =
        "\r\n [\n\t" SR("1.0.0.0/8") " \n,\n {\"id\" : \"ipr_1\" , "
        "\"cidr\":\"2.0.0.0/8\",\"ip_policy\":{ \"id\":\"ipp_1\" , "
        "\"uri\" : \"u\" },\"action\":\"deny\",\"extra\":[[{}],[]]}\t]\n \n";
    assert_int_equal(stream_str(spaced, &c, &err), ERROR_OK);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.cidr[1], "2.0.0.0/8");
    assert_int_equal(c.state[1], MODEL_STATE_SYNCED);

    assert_int_equal(stream_str("[]", &c, &err), ERROR_OK);
    assert_int_equal(c.count, 0);
    assert_int_equal(stream_str(" [ \n ] \n", &c, &err), ERROR_OK);
    assert_int_equal(c.count, 0);
}

static void test_stream_array_errors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"[" SR("1.0.0.0/8") "," SR("2.0.0.0/8") ","
         "{\"cidr\":12,\"ip_policy_id\":\"p\",\"action\":\"allow\"}]",
         "rule 3 (line 1): cidr: expected a string, got a number"},
        {"[" SR("1.0.0.0/8") "] x", "unexpected data after the array at line 1"},
        {"[" SR("1.0.0.0/8") "]]", "unexpected data after the array"},
        {"[] []", "unexpected data after the array"},
        {"[" SR("1.0.0.0/8") ",", "rule 2 (line 1): unexpected end of input"},
        {"[" SR("1.0.0.0/8"), "unexpected end of input after rule 1: expected ',' or ']'"},
        {"[" SR("1.0.0.0/8") " " SR("2.0.0.0/8") "]",
         "expected ',' or ']' after rule 1 at line 1"},
        {"[" SR("1.0.0.0/8") ",]", "rule 2 (line 1): invalid JSON"},
        {"[" SR("1.0.0.0/8") ",,]", "rule 2 (line 1): invalid JSON"},
        {"[,]", "rule 1 (line 1): invalid JSON"},
        {"[", "rule 1 (line 1): unexpected end of input"},
        {"[" SR("1.0.0.0/8") ",42]", "rule 2 (line 1): expected an object, got a number"},
        {"[" SR("1.0.0.0/8") ",[]]", "rule 2 (line 1): expected an object, got an array"},
        {"[{\"cidr\":\"1.0.0.0/8\",\"cidr\":\"2.0.0.0/8\"}]", "rule 1 (line 1): invalid JSON"},
        {"[{\"cidr\":\"1.0.0.0/8\"", "rule 1 (line 1): unexpected end of input"},
        {"", "empty document"},
        {"  ", "empty document"},
        {"\"rules\"", "expected a JSON array or object of rules"},
        {"42", "expected a JSON array or object of rules"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        collect c;
        error_info err = {0};
        assert_int_equal(stream_str(cases[i][0], &c, &err), ERROR_FORMAT);
        if (!strstr(err.msg, cases[i][1]))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.msg, cases[i][1]);
    }
    collect c;
    error_info err = {0};
    stream_str("[" SR("1.0.0.0/8") "," SR("2.0.0.0/8") ",{\"action\":\"x\"}]", &c, &err);
    assert_int_equal(c.count, 2);
}

static void test_stream_callback_stops(void **state)
{
    (void)state;
    collect c;
    memset(&c, 0, sizeof c);
    c.stop_at = 1;
    error_info err = {0};
    const char *json = "[" SR("1.0.0.0/8") "," SR("2.0.0.0/8") "," SR("3.0.0.0/8") "]";
    assert_int_equal(codec_rule_stream(json, strlen(json), collect_rule, &c, &err),
                     ERROR_CONFLICT);
    assert_string_equal(err.msg, "rule 2 (line 1): stop here");
    assert_int_equal(c.count, 1);

    const char *obj = "{\"ip_policy_rules\":[" SR("1.0.0.0/8") "," SR("2.0.0.0/8") "]}";
    memset(&c, 0, sizeof c);
    c.stop_at = 1;
    assert_int_equal(codec_rule_stream(obj, strlen(obj), collect_rule, &c, &err),
                     ERROR_CONFLICT);
    assert_int_equal(c.count, 1);
}

static void test_stream_list_object(void **state)
{
    (void)state;
    char json[4096];
    collect c;
    error_info err = {0};
    snprintf(json, sizeof json,
             " {\"ip_policy_rules\":[%s," SR("10.9.0.0/16") "],"
             "\"uri\":\"u\",\"next_page_uri\":null}\n",
             api_rule);
    assert_int_equal(stream_str(json, &c, &err), ERROR_OK);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.cidr[0], "10.0.0.0/8");
    assert_int_equal(c.state[0], MODEL_STATE_SYNCED);
    assert_string_equal(c.cidr[1], "10.9.0.0/16");

    static const char *const bad[][2] = {
        {"{\"uri\":\"u\"}", "ip_policy_rules: missing"},
        {"{\"ip_policy_rules\":{}}", "ip_policy_rules: expected an array, got an object"},
        {"{\"ip_policy_rules\":[" SR("1.0.0.0/8") ",{\"cidr\":\"2.0.0.0/8\"}]}",
         "rule 2 (line 1): ip_policy: missing"},
        {"{\"ip_policy_rules\":[]} x", "unexpected data after the list object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(stream_str(bad[i][0], &c, &err), ERROR_FORMAT);
        if (!strstr(err.msg, bad[i][1]))
            fail_msg("message \"%s\" lacks \"%s\"", err.msg, bad[i][1]);
    }
    assert_int_equal(stream_str("{\"ip_policy_rules\":[]}", &c, &err), ERROR_OK);
    assert_int_equal(c.count, 0);
}

/* Pretty-printed rules, as `export` writes them, stream back in order. */
static void test_stream_many_pretty(void **state)
{
    (void)state;
    enum { N = 5000 };
    size_t cap = (size_t)N * 512, len = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    json[len++] = '[';
    for (unsigned i = 0; i < N; i++) {
        model_rule rule;
        memset(&rule, 0, sizeof rule);
        snprintf(rule.cidr, sizeof rule.cidr, "10.%u.%u.0/24", i / 256, i % 256);
        strcpy(rule.policy_id, POLICY_ID);
        rule.action = i % 2 ? MODEL_ACTION_DENY : MODEL_ACTION_ALLOW;
        char *one = codec_rule_encode(&rule, CODEC_PRETTY | CODEC_WITH_STATE);
        assert_non_null(one);
        len += (size_t)snprintf(json + len, cap - len, "%s%s", i ? ",\n" : "\n", one);
        free(one);
    }
    memcpy(json + len, "\n]\n", 4);
    collect c;
    error_info err = {0};
    assert_int_equal(stream_str(json, &c, &err), ERROR_OK);
    assert_int_equal(c.count, N);
    assert_string_equal(c.cidr[7], "10.0.7.0/24");
    free(json);
}

static error_code keep_rule(void *ctx, const model_rule *rule, size_t index,
                            error_info *err)
{
    (void)index;
    (void)err;
    *(model_rule *)ctx = *rule;
    return ERROR_OK;
}

/*
 * Import reads common rule shapes without jansson; whatever the element, it must
 * accept exactly what the single-object decoder accepts and produce the same rule.
 */
static void expect_same_as_decode(const char *elem, size_t len)
{
    model_rule direct, streamed;
    memset(&streamed, 0, sizeof streamed);
    char *doc = malloc(len + 2);
    assert_non_null(doc);
    doc[0] = '[';
    memcpy(doc + 1, elem, len);
    doc[len + 1] = ']';
    error_code rc_direct = codec_rule_decode(elem, len, &direct, NULL);
    error_code rc_stream = codec_rule_stream(doc, len + 2, keep_rule, &streamed, NULL);
    free(doc);
    if ((rc_direct == ERROR_OK) != (rc_stream == ERROR_OK))
        fail_msg("decode %d, stream %d for %.*s", rc_direct, rc_stream, (int)len, elem);
    if (rc_direct == ERROR_OK)
        assert_rule_equal(&direct, &streamed);
}

#define P "\"ip_policy\":{\"id\":\"ipp_1\"}"

static void test_stream_matches_decode(void **state)
{
    (void)state;
    char long_desc[600], long_cidr[200];
    snprintf(long_desc, sizeof long_desc,
             "{\"description\":\"%0255d\",\"cidr\":\"c\"," P ",\"action\":\"deny\"}", 0);
    snprintf(long_cidr, sizeof long_cidr, "{\"cidr\":\"%065d\"," P ",\"action\":\"deny\"}",
             0);
    const char *const elems[] = {
        api_rule,
        SR("10.0.0.0/8"),
        long_desc,
        long_cidr,
        "{\"cidr\":\"c\"," P ",\"action\":\"allow\",\"state\":\"failed\",\"error\":\"e\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"allow\",\"state\":\"bogus\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"allow\",\"state\":null,\"id\":\"\"}",
        "{\"cidr\":\"c\",\"ip_policy\":null,\"ip_policy_id\":\"ipp_1\",\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":null,\"ip_policy_id\":null,\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":{},\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":{\"id\":null},\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":\"ipp_1\",\"action\":\"deny\"}",
        "{\"cidr\":\"c\"," P ",\"ip_policy_id\":\"ipp_1\",\"action\":\"deny\"}",
        "{\"cidr\":\"c\"," P ",\"ip_policy_id\":\"ipp_2\",\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":{\"id\":\"a\",\"id\":\"a\"},\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"ip_policy\":{\"uri\":null,\"id\":\"a\"},\"action\":\"deny\"}",
        "{\"cidr\":\"c\",\"cidr\":\"c\"," P ",\"action\":\"deny\"}",
        "{\"cidr\":\"10.0.0.0\\/8\"," P ",\"action\":\"deny\"}",
        "{\"cidr\":\"c\"," P
        ",\"action\":\"deny\",\"description\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"caf\\u00e9\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"\xed\xa0\x80\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"\xf4\x90\x80\x80\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"\xe0\x80\xaf\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"\xc3\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"\xe2\x82",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"a\x01\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":\"a\x7f\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"description\":null,\"metadata\":null}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"unknown\":\"x\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",\"n\":1}",
        "{\"cidr\":\"c\"," P ",\"action\":\"Allow\"}",
        "{\"cidr\":\"c\"," P ",\"action\":\"allowx\"}",
        "{\"cidr\":\"c\"," P ",\"action\":null}",
        "{\"cidr\":\"c\"," P "}",
        "{\"cidr\":null," P ",\"action\":\"deny\"}",
        "{\"cidr\":nullx," P ",\"action\":\"deny\"}",
        "{\"cidr\":nul}",
        " { \"cidr\" : \"c\" ,\n\t\"ip_policy\" : { \"id\" : \"a\" , \"uri\" : \"u\" } ,\r\n"
        "\"action\" : \"deny\" } ",
        "{}",
        "{",
        "{\"cidr\"",
        "{\"cidr\":\"c\"," P ",\"action\":\"deny\",}",
    };
    for (size_t i = 0; i < sizeof elems / sizeof elems[0]; i++)
        expect_same_as_decode(elems[i], strlen(elems[i]));

    static const char flips[] = {'"', '\\', '{', '}',    ',',   ':',
                                 ' ', 'n',  'x', '\x80', '\x01'};
    const char *bases[] = {api_rule, elems[4]};
    for (size_t b = 0; b < 2; b++) {
        size_t len = strlen(bases[b]);
        char *copy = malloc(len);
        assert_non_null(copy);
        for (size_t pos = 0; pos < len; pos++) {
            for (size_t f = 0; f < sizeof flips; f++) {
                memcpy(copy, bases[b], len);
                copy[pos] = flips[f];
                expect_same_as_decode(copy, len);
            }
            if (pos > 0)
                expect_same_as_decode(bases[b], pos);
        }
        free(copy);
    }
}

/* ---- PATCH bodies (codec_patch_decode) ------------------------------------ */

static error_code patch_dec(model_kind kind, const char *json, model_object *out,
                            unsigned *present, error_info *err)
{
    return codec_patch_decode(kind, json, json ? strlen(json) : 0, out, present, err);
}

static unsigned bit_of(model_kind kind, const char *name)
{
    return kind_field_bit(kind, kind_field_by_name(kind, name));
}

static void test_patch_decode_fields(void **state)
{
    (void)state;
    model_object o;
    unsigned present;
    error_info err;
    assert_int_equal(patch_dec(MODEL_KIND_RULE,
                               "{\"cidr\":\"10.0.0.1/8\",\"metadata\":\"m\",\"description\":null}",
                               &o, &present, &err), ERROR_OK);
    /* Not validated here (the store's gate is); null is absent. */
    assert_int_equal(present,
                     bit_of(MODEL_KIND_RULE, "cidr") | bit_of(MODEL_KIND_RULE, "metadata"));
    assert_string_equal(o.rule.cidr, "10.0.0.1/8");
    assert_string_equal(o.rule.metadata, "m");
    model_object_clear(&o);

    assert_int_equal(patch_dec(MODEL_KIND_CRED, "{\"acl\":[\"bind:a.example.com\",\"bind:x=*\"],"
                               "\"description\":\"\"}", &o, &present, &err), ERROR_OK);
    assert_int_equal(present,
                     bit_of(MODEL_KIND_CRED, "acl") | bit_of(MODEL_KIND_CRED, "description"));
    assert_int_equal(o.kind, MODEL_KIND_CRED);
    assert_int_equal(o.cred.acl.count, 2);
    assert_string_equal(o.cred.acl.rules[1], "bind:x=*");
    model_object_clear(&o);
    assert_int_equal(patch_dec(MODEL_KIND_CRED, "{\"acl\":[]}", &o, &present, &err), ERROR_OK);
    assert_int_equal(present, bit_of(MODEL_KIND_CRED, "acl")); /* clearing it is an edit */
    model_object_clear(&o);
}

static void test_patch_decode_refusals(void **state)
{
    (void)state;
    static const struct {
        model_kind kind;
        const char *json;
        error_code rc;
        const char *msg;
    } cases[] = {
        {MODEL_KIND_RULE, "{\"action\":\"deny\"}", ERROR_INVALID,
         "action: cannot be changed; a rule may change cidr, description, metadata"},
        {MODEL_KIND_RULE, "{\"description\":\"x\",\"ip_policy_id\":\"" POLICY_ID "\"}",
         ERROR_INVALID, "ip_policy_id: cannot be changed; a rule may change cidr, "
                        "description, metadata"},
        {MODEL_KIND_RULE, "{\"ip_policy\":null}", ERROR_INVALID, "ip_policy: cannot be changed"},
        {MODEL_KIND_RULE, "{\"id\":\"" RULE_ID "\"}", ERROR_INVALID, "nothing to change"},
        {MODEL_KIND_RULE, "{\"uri\":\"x\"}", ERROR_INVALID, "uri: cannot be changed"},
        {MODEL_KIND_RULE, "{\"created_at\":\"x\"}", ERROR_INVALID, "created_at: cannot be"},
        {MODEL_KIND_RULE, "{\"acl\":[]}", ERROR_INVALID,
         "acl: unknown field; a rule may change cidr, description, metadata"},
        {MODEL_KIND_RULE, "{\"colour\\u0007\":1}", ERROR_INVALID, "colour?: unknown field"},
        {MODEL_KIND_CRED, "{\"owner_id\":\"" OWNER_ID "\"}", ERROR_INVALID,
         "owner_id: cannot be changed; a credential may change description, acl, metadata"},
        {MODEL_KIND_CRED, "{\"token\":\"" TOKEN "\"}", ERROR_INVALID, "token: cannot be changed"},
        {MODEL_KIND_CRED, "{\"cidr\":\"10.0.0.0/8\"}", ERROR_INVALID, "cidr: unknown field"},
        {MODEL_KIND_RULE, "{}", ERROR_INVALID,
         "nothing to change: a rule may change cidr, description, metadata"},
        {MODEL_KIND_CRED, "  ", ERROR_INVALID,
         "nothing to change: a credential may change description, acl, metadata"},
        {MODEL_KIND_CRED, NULL, ERROR_INVALID, "nothing to change"},
        {MODEL_KIND_CRED, "{\"metadata\":null}", ERROR_INVALID, "nothing to change"},
        {MODEL_KIND_RULE, "{\"cidr\":5}", ERROR_FORMAT, "cidr: expected a string, got a number"},
        {MODEL_KIND_CRED, "{\"acl\":\"bind:x\"}", ERROR_FORMAT, "acl: expected an array"},
        {MODEL_KIND_RULE, "[]", ERROR_FORMAT, "expected an object, got an array"},
        {MODEL_KIND_RULE, "{\"cidr\":\"a\",\"cidr\":\"b\"}", ERROR_FORMAT, "invalid JSON"},
        {MODEL_KIND_RULE, "{\"description\":", ERROR_FORMAT, "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_object o;
        unsigned present = 99;
        error_info err = {0};
        error_code rc = patch_dec(cases[i].kind, cases[i].json, &o, &present, &err);
        if (rc != cases[i].rc || strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu %s: %d '%s'", i, cases[i].json ? cases[i].json : "(null)",
                     rc, err.msg);
        assert_int_equal(present, 0);
        assert_null(strstr(err.msg, TOKEN));
        model_object_clear(&o);
    }
}

/* ---- PATCH bodies written (codec_patch_body) ------------------------------ */

static void assert_patch_body(const model_object *o, unsigned fields, const char *want)
{
    char *body = codec_patch_body(o, fields);
    assert_non_null(body);
    assert_string_equal(body, want);
    /* It reads back as the same edit. */
    model_object back;
    unsigned present = 0;
    error_info err;
    if (fields) {
        assert_int_equal(codec_patch_decode(o->kind, body, strlen(body), &back, &present, &err),
                         ERROR_OK);
        assert_int_equal(present, fields & kind_field_set(o->kind, KIND_FIELD_EDIT));
        model_object_clear(&back);
    }
    free(body);
}

static void test_patch_body(void **state)
{
    (void)state;
    model_object r;
    model_object_init(&r, MODEL_KIND_RULE);
    strcpy(r.rule.id, RULE_ID);
    strcpy(r.rule.cidr, "10.0.0.0/16");
    strcpy(r.rule.policy_id, POLICY_ID);
    strcpy(r.rule.description, "web");
    strcpy(r.rule.metadata, "a=1");
    /* Only the fields asked for, in the descriptor's order. */
    assert_patch_body(&r, bit_of(MODEL_KIND_RULE, "cidr"), "{\"cidr\":\"10.0.0.0/16\"}");
    assert_patch_body(&r, bit_of(MODEL_KIND_RULE, "metadata") | bit_of(MODEL_KIND_RULE, "cidr"),
                      "{\"cidr\":\"10.0.0.0/16\",\"metadata\":\"a=1\"}");
    /* An empty value is written: it clears the field. */
    r.rule.description[0] = '\0';
    assert_patch_body(&r, bit_of(MODEL_KIND_RULE, "description"), "{\"description\":\"\"}");
    /* Fields no edit may change are left out. */
    assert_patch_body(&r, bit_of(MODEL_KIND_RULE, "action") |
                              bit_of(MODEL_KIND_RULE, "ip_policy_id") |
                              bit_of(MODEL_KIND_RULE, "cidr"),
                      "{\"cidr\":\"10.0.0.0/16\"}");
    assert_patch_body(&r, 0, "{}");

    model_object c;
    model_object_init(&c, MODEL_KIND_CRED);
    strcpy(c.cred.id, CRED_ID);
    strcpy(c.cred.owner_id, OWNER_ID);
    assert_int_equal(model_cred_set_token(&c.cred, TOKEN, NULL), ERROR_OK);
    /* An empty ACL is [] (no restriction), never left out. */
    assert_patch_body(&c, bit_of(MODEL_KIND_CRED, "acl"), "{\"acl\":[]}");
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:*.example.com", NULL), ERROR_OK);
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:x=*", NULL), ERROR_OK);
    strcpy(c.cred.metadata, "line one\n\"quoted\"");
    char *body = codec_patch_body(&c, kind_field_set(MODEL_KIND_CRED, KIND_FIELD_EDIT));
    assert_non_null(body);
    assert_string_equal(body, "{\"description\":\"\",\"acl\":[\"bind:*.example.com\","
                              "\"bind:x=*\"],\"metadata\":\"line one\\n\\\"quoted\\\"\"}");
    assert_null(strstr(body, TOKEN)); /* never the token, nor the owner */
    assert_null(strstr(body, OWNER_ID));
    free(body);
    model_object_clear(&c);
}

/* Two readings of one rule agree field by field. */
static void same_rule(const model_rule *a, const model_rule *b)
{
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->uri, b->uri);
    assert_string_equal(a->created_at, b->created_at);
    assert_string_equal(a->description, b->description);
    assert_string_equal(a->metadata, b->metadata);
    assert_string_equal(a->cidr, b->cidr);
    assert_string_equal(a->policy_id, b->policy_id);
    assert_string_equal(a->policy_uri, b->policy_uri);
    assert_string_equal(a->error, b->error);
    assert_int_equal(a->action, b->action);
    assert_int_equal(a->state, b->state);
}

/* A rules page read without jansson is exactly what jansson reads, wherever the
 * fast path takes it; where it declines, codec_page_decode still gives jansson's
 * answer. `fast` says whether the fast path must take it. */
static void page_both_ways(const char *json, bool fast)
{
    codec_page quick, full;
    error_info err = {0}, full_err = {0};
    bool took = codec_page_fast(MODEL_KIND_RULE, json, strlen(json), &quick);
    if (took != fast)
        fail_msg("the fast path %s %s", took ? "took" : "declined", json);
    error_code full_rc = codec_page_decode_json(MODEL_KIND_RULE, json, strlen(json), &full,
                                                &full_err);
    if (took) {
        assert_int_equal(full_rc, ERROR_OK);
        assert_int_equal(quick.count, full.count);
        assert_int_equal(full.refused_count, 0);
        for (size_t i = 0; i < quick.count; i++) {
            assert_int_equal(quick.items[i].kind, MODEL_KIND_RULE);
            same_rule(&quick.items[i].rule, &full.items[i].rule);
        }
        assert_string_equal(quick.uri, full.uri);
        assert_string_equal(quick.next_page_uri, full.next_page_uri);
        codec_page_free(&quick);
    } else {
        assert_null(quick.items);
        assert_int_equal(quick.count, 0);
    }
    codec_page both;
    assert_int_equal(codec_page_decode(MODEL_KIND_RULE, json, strlen(json), &both, &err),
                     full_rc);
    if (full_rc != ERROR_OK)
        assert_string_equal(err.msg, full_err.msg);
    codec_page_free(&both);
    codec_page_free(&full);
}

#define ITEM(id, extra) \
    "{\"id\":\"" id "\",\"uri\":\"" BASE "/ip_policy_rules/" id "\",\"created_at\":" \
    "\"2025-09-04T10:11:15Z\",\"cidr\":\"10.0.0.0/8\",\"ip_policy\":{\"id\":\"" \
    POLICY_ID "\",\"uri\":\"" BASE "/ip_policies/" POLICY_ID "\"},\"action\":\"allow\"" \
    extra "}"
#define PAGE(items, tail) "{\"ip_policy_rules\":[" items "]" tail "}"
#define NEXT ",\"next_page_uri\":\"" BASE "/ip_policy_rules?before_id=ipr_1&limit=2\""

static void test_rule_pages_fast(void **state)
{
    (void)state;
    static const char *const taken[] = {
        PAGE(ITEM("ipr_2", "") "," ITEM("ipr_1", ""), ",\"uri\":\"" BASE "/ip_policy_rules\"" NEXT),
        PAGE("", ",\"uri\":\"" BASE "/ip_policy_rules\",\"next_page_uri\":null"),
        "{\"next_page_uri\":null,\"uri\":null,\"ip_policy_rules\":[" ITEM("ipr_1", "") "]}",
        " \n{ \"ip_policy_rules\" : [ " ITEM("ipr_1", ",\"description\":\"d\"") " ] ,"
        " \"next_page_uri\" : null }\r\n",
        PAGE(ITEM("ipr_1", ",\"description\":\"caf\xc3\xa9\",\"metadata\":null"), NEXT),
        PAGE(ITEM("ipr_1", ",\"state\":\"synced\""), ",\"next_page_uri\":null"),
        PAGE("{\"id\":\"ipr_1\",\"cidr\":\"::/0\",\"ip_policy_id\":\"ipp_1\","
             "\"action\":\"deny\"}", ",\"next_page_uri\":null"),
    };
    static const char *const declined[] = {
        PAGE(ITEM("ipr_1", ",\"description\":\"a\\\"b\""), NEXT),  /* an escape */
        PAGE(ITEM("ipr_1", ""), NEXT ",\"total\":1"),                  /* unknown member */
        PAGE(ITEM("ipr_1", ""), NEXT NEXT),                              /* twice */
        PAGE(ITEM("ipr_1", ",\"action\":\"deny\""), NEXT),             /* twice in a rule */
        PAGE(ITEM("ipr_1", ""), ",\"next_page_uri\":\"\""),              /* empty */
        PAGE(ITEM("ipr_1", ""), NEXT) " x",                               /* trailing data */
        PAGE(ITEM("ipr_1", ""), ""),                                      /* no end said */
        PAGE(ITEM("ipr_1", ",\"ip_policy_id\":\"ipp_other\""), NEXT),  /* two policies */
        PAGE(ITEM("ipr_1", ",\"description\":\"\xff\""), NEXT),        /* not UTF-8 */
        PAGE(ITEM("ipr_1", ",\"action\":\"maybe\""), NEXT),            /* refused item */
        PAGE("null", NEXT),
        PAGE(ITEM("ipr_1", ",\"cidr\":7"), NEXT),
        "{\"ip_policy_rules\":{}" NEXT "}",
        "",
        "[]",
    };
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        page_both_ways(taken[i], true);
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++)
        page_both_ways(declined[i], false);
    /* A uri of exactly MODEL_URI_MAX bytes is taken; one more is jansson's to refuse. */
    static char doc[2 * MODEL_URI_MAX];
    for (size_t len = MODEL_URI_MAX; len <= MODEL_URI_MAX + 1; len++) {
        int n = snprintf(doc, sizeof doc, "{\"ip_policy_rules\":[],\"uri\":\"");
        memset(doc + n, 'u', len);
        snprintf(doc + n + len, sizeof doc - (size_t)n - len, "\",\"next_page_uri\":null}");
        page_both_ways(doc, len == MODEL_URI_MAX);
    }
    /* Credentials always go through jansson. */
    codec_page page;
    const char *creds = "{\"credentials\":[],\"next_page_uri\":null}";
    assert_false(codec_page_fast(MODEL_KIND_CRED, creds, strlen(creds), &page));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_api_example),
        cmocka_unit_test(test_rule_nulls_read_as_absent),
        cmocka_unit_test(test_rule_round_trip),
        cmocka_unit_test(test_rule_encode_api_order),
        cmocka_unit_test(test_rule_encode_local_row),
        cmocka_unit_test(test_rule_create_form),
        cmocka_unit_test(test_rule_policy_both_forms),
        cmocka_unit_test(test_rule_state_field),
        cmocka_unit_test(test_rule_wrong_types),
        cmocka_unit_test(test_rule_missing_required),
        cmocka_unit_test(test_rule_long_strings),
        cmocka_unit_test(test_invalid_documents),
        cmocka_unit_test(test_error_message_hides_input),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_truncations_and_mutations),
        cmocka_unit_test(test_cred_api_example),
        cmocka_unit_test(test_cred_create_reply),
        cmocka_unit_test(test_cred_round_trip),
        cmocka_unit_test(test_cred_create_body),
        cmocka_unit_test(test_cred_wrong_types),
        cmocka_unit_test(test_rule_pages),
        cmocka_unit_test(test_rule_pages_fast),
        cmocka_unit_test(test_cred_pages),
        cmocka_unit_test(test_api_error),
        cmocka_unit_test(test_api_error_bad),
        cmocka_unit_test(test_encode_repairs_bad_utf8),
        cmocka_unit_test(test_stream_array),
        cmocka_unit_test(test_stream_array_errors),
        cmocka_unit_test(test_stream_callback_stops),
        cmocka_unit_test(test_stream_list_object),
        cmocka_unit_test(test_stream_many_pretty),
        cmocka_unit_test(test_stream_matches_decode),
        cmocka_unit_test(test_patch_decode_fields),
        cmocka_unit_test(test_patch_decode_refusals),
        cmocka_unit_test(test_patch_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

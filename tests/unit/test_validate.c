#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"
#include "rampart/validate.h"
#include "validate_cases.h"

static const char *const kind_names[] = {
    [K_CIDR] = "cidr", [K_IP] = "ip", [K_ACTION] = "action", [K_ID] = "id",
    [K_OWNER] = "owner", [K_LOCAL] = "local-id", [K_DESC] = "description",
    [K_META] = "metadata", [K_ACL_RULE] = "acl-rule",
};

static error_code run_case(const struct vcase *c, const char *in, char *canon,
                           size_t canon_size, error_info *err)
{
    model_action action;
    switch (c->kind) {
    case K_CIDR:
        return validate_cidr(in, NULL, canon, canon_size, err);
    case K_IP:
        return validate_ip(in, NULL, err);
    case K_ACTION:
        return validate_action(in, &action, err);
    case K_ID:
        return validate_id(in, c->id_prefix, "policy id", err);
    case K_OWNER:
        return validate_id_among(in, (const char *const[]){"usr", "bot"}, 2, "owner id", err);
    case K_LOCAL:
        return validate_is_local_id(in) ? ERROR_OK : ERROR_INVALID;
    case K_DESC:
        return validate_description(in, err);
    case K_META:
        return validate_metadata(in, err);
    case K_ACL_RULE:
        return validate_acl_rule(in, err);
    }
    fail_msg("unknown kind %d", (int)c->kind);
    return ERROR_INVALID;
}

static void test_case(void **state)
{
    const struct vcase *c = *state;
    static char in[INPUT_MAX];
    char canon[MODEL_CIDR_MAX + 1] = "";
    error_info err = {ERROR_OK, ""};
    build_input(c, in, sizeof in);

    error_code rc = run_case(c, in, canon, sizeof canon, &err);
    if (rc != c->code)
        fail_msg("got %s (%s), want %s", error_code_name(rc), err.msg,
                 error_code_name(c->code));
    if (c->code == ERROR_OK) {
        if (c->want)
            assert_string_equal(canon, c->want);
        return;
    }
    if (c->kind == K_LOCAL)
        return;
    assert_int_equal(err.code, c->code);
    if (!strstr(err.msg, c->want))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, c->want);
}

static void test_cidr_out(void **state)
{
    (void)state;
    validate_prefix p;
    char canon[MODEL_CIDR_MAX + 1];
    const unsigned char v4[16] = {10, 1, 0, 0};
    const unsigned char v6[16] = {0x20, 0x01, 0x0d, 0xb8};
    assert_int_equal(validate_cidr("10.1.0.0/16", &p, canon, sizeof canon, NULL), ERROR_OK);
    assert_int_equal(p.family, 4);
    assert_int_equal(p.bits, 16);
    assert_memory_equal(p.addr, v4, sizeof v4);
    assert_int_equal(validate_cidr("2001:DB8::/32", &p, NULL, 0, NULL), ERROR_OK);
    assert_int_equal(p.family, 6);
    assert_int_equal(p.bits, 32);
    assert_memory_equal(p.addr, v6, sizeof v6);
}

static void test_cidr_canon_buffer_too_small(void **state)
{
    (void)state;
    char canon[8];
    error_info err = {ERROR_OK, ""};
    assert_int_equal(validate_cidr("2001:db8::/32", NULL, canon, sizeof canon, &err),
                     ERROR_INVALID);
    assert_non_null(strstr(err.msg, "canonical form needs 14 bytes"));
}

static void test_cidr_null_text(void **state)
{
    (void)state;
    error_info err = {ERROR_OK, ""};
    assert_int_equal(validate_cidr(NULL, NULL, NULL, 0, &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "empty"));
    assert_int_equal(validate_cidr("10.0.0.1/8", NULL, NULL, 0, NULL), ERROR_INVALID);
}

static void test_ip_out(void **state)
{
    (void)state;
    validate_prefix p;
    assert_int_equal(validate_ip("::1", &p, NULL), ERROR_OK);
    assert_int_equal(p.family, 6);
    assert_int_equal(p.bits, 128);
    assert_int_equal(p.addr[15], 1);
    assert_int_equal(validate_ip("192.0.2.7", &p, NULL), ERROR_OK);
    assert_int_equal(p.family, 4);
    assert_int_equal(p.bits, 32);
    assert_int_equal(p.addr[3], 7);
}

static void test_action_out(void **state)
{
    (void)state;
    model_action a = MODEL_ACTION_ALLOW;
    assert_int_equal(validate_action("deny", &a, NULL), ERROR_OK);
    assert_int_equal(a, MODEL_ACTION_DENY);
    assert_int_equal(validate_action("allow", NULL, NULL), ERROR_OK);
    assert_int_equal(validate_action(NULL, &a, NULL), ERROR_INVALID);
}

static void test_local_id_null(void **state)
{
    (void)state;
    assert_false(validate_is_local_id(NULL));
}

static void test_describe_char(void **state)
{
    (void)state;
    char buf[32];
    validate_describe_char("-x", buf, sizeof buf);
    assert_string_equal(buf, "'-'");
    validate_describe_char("\t", buf, sizeof buf);
    assert_string_equal(buf, "control character 0x09");
    validate_describe_char("\xC2\xA0", buf, sizeof buf);
    assert_string_equal(buf, "a non-breaking space");
    validate_describe_char("\xE2\x82", buf, sizeof buf);
    assert_string_equal(buf, "byte 0xE2");
}

/* Owns the heap rules of an ACL built from a NULL-terminated list. */
static void acl_from(model_cred *cred, const char *const *rules)
{
    memset(cred, 0, sizeof *cred);
    for (size_t i = 0; rules[i]; i++)
        assert_int_equal(model_acl_add(&cred->acl, rules[i], NULL), ERROR_OK);
}

static void expect_acl(const char *const *rules, error_code code, const char *want)
{
    model_cred cred;
    error_info err = {ERROR_OK, ""};
    acl_from(&cred, rules);
    error_code rc = validate_acl(&cred.acl, &err);
    model_cred_clear(&cred);
    if (rc != code)
        fail_msg("got %s (%s)", error_code_name(rc), err.msg);
    if (want && !strstr(err.msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
}

static void test_acl_lists(void **state)
{
    (void)state;
    const char *const none[] = {NULL};
    const char *const star[] = {"*", NULL};
    const char *const mixed[] = {"bind:a.example.com", "bind:env=prod", "bind:*", NULL};
    const char *const star_and_more[] = {"bind:a.example.com", "*", NULL};
    const char *const third_bad[] = {"bind:a.com", "bind:b.com", "nope", NULL};
    const char *const second_bad[] = {"bind:a.com", "bind:x.com:0", NULL};
    expect_acl(none, ERROR_OK, NULL);
    expect_acl(star, ERROR_OK, NULL);
    expect_acl(mixed, ERROR_OK, NULL);
    expect_acl(star_and_more, ERROR_INVALID, "acl rule 2: '*' must be the only rule");
    expect_acl(third_bad, ERROR_INVALID, "acl rule 3: must start with 'bind:'");
    expect_acl(second_bad, ERROR_INVALID, "acl rule 2: port 0 out of range");
    assert_int_equal(validate_acl(NULL, NULL), ERROR_OK);
}

static void test_acl_error_without_err(void **state)
{
    (void)state;
    const char *const bad[] = {"nope", NULL};
    model_cred cred;
    acl_from(&cred, bad);
    assert_int_equal(validate_acl(&cred.acl, NULL), ERROR_INVALID);
    model_cred_clear(&cred);
    assert_int_equal(validate_acl_rule("nope", NULL), ERROR_INVALID);
}

static void good_rule(model_rule *r)
{
    memset(r, 0, sizeof *r);
    strcpy(r->cidr, "2001:DB8::/32");
    strcpy(r->policy_id, "ipp_2Zx9Q0rT8yLmN4vB7cK1pW3sE5d");
    strcpy(r->description, "branch office");
    r->action = MODEL_ACTION_DENY;
}

static void test_rule_canonicalises_cidr(void **state)
{
    (void)state;
    model_rule r;
    error_info err = {ERROR_OK, ""};
    good_rule(&r);
    assert_int_equal(validate_rule(&r, &err), ERROR_OK);
    assert_string_equal(r.cidr, "2001:db8::/32");
}

static void expect_rule(const model_rule *r, const char *want)
{
    model_rule copy = *r;
    error_info err = {ERROR_OK, ""};
    assert_int_equal(validate_rule(&copy, &err), ERROR_INVALID);
    assert_int_equal(err.code, ERROR_INVALID);
    if (!strstr(err.msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
    /* A refused rule keeps the text the user typed. */
    assert_string_equal(copy.cidr, r->cidr);
}

static void test_rule_messages(void **state)
{
    (void)state;
    model_rule r;
    good_rule(&r);
    strcpy(r.cidr, "10.0.0.1/8");
    expect_rule(&r, "cidr: host bits set: did you mean 10.0.0.0/8?");

    good_rule(&r);
    strcpy(r.policy_id, "ipr_abc");
    expect_rule(&r, "policy: id must start with ipp_");

    good_rule(&r);
    r.policy_id[0] = '\0';
    expect_rule(&r, "policy: id is empty");

    good_rule(&r);
    strcpy(r.description, "caf\xC3");
    expect_rule(&r, "description is not valid UTF-8 at byte offset 3: truncated");

    good_rule(&r);
    strcpy(r.metadata, "\xED\xA0\x80");
    expect_rule(&r, "metadata is not valid UTF-8 at byte offset 0: surrogate");

    good_rule(&r);
    r.action = (model_action)7;
    expect_rule(&r, "action: must be allow or deny");
}

static void test_cred(void **state)
{
    (void)state;
    const char *const rules[] = {"bind:*.example.com", "bind:env=*", NULL};
    const char *const bad_rules[] = {"bind:*.example.com", "bind:", NULL};
    model_cred cred;
    error_info err = {ERROR_OK, ""};

    acl_from(&cred, rules);
    strcpy(cred.description, "ci runner");
    assert_int_equal(validate_cred(&cred, &err), ERROR_OK);
    model_cred_clear(&cred);

    /* The owner is its field's check, which the kind's validate runs last. */
    model_object obj;
    model_object_init(&obj, MODEL_KIND_CRED);
    acl_from(&obj.cred, rules);
    strcpy(obj.cred.owner_id, "bot_1a2b");
    assert_int_equal(kind_get(MODEL_KIND_CRED)->validate(&obj, &err), ERROR_OK);
    strcpy(obj.cred.owner_id, "org_1a2b");
    assert_int_equal(kind_get(MODEL_KIND_CRED)->validate(&obj, &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "owner id must start with usr_ or bot_"));
    model_object_clear(&obj);

    acl_from(&cred, bad_rules);
    assert_int_equal(validate_cred(&cred, &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "acl rule 2: empty bind target"));
    model_cred_clear(&cred);

    acl_from(&cred, rules);
    strcpy(cred.description, "\xC0\x80");
    assert_int_equal(validate_cred(&cred, &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "description is not valid UTF-8 at byte offset 0"));
    model_cred_clear(&cred);
}

static void test_timestamps(void **state)
{
    (void)state;
    static const char *const good[] = {"2025-09-04T10:11:15Z", "2025-09-04T10:11:15.123Z",
                                       "2025-09-04T10:11:15+02:00", "2025-12-31T23:59:60Z",
                                       "2025-09-04t10:11:15z"};
    static const char *const bad[] = {"", "2025-09-04", "2025-09-04 10:11:15Z",
                                      "2025-13-04T10:11:15Z", "2025-09-04T24:11:15Z",
                                      "2025-09-04T10:11:15", "2025-09-04T10:11:15.Z",
                                      "2025-09-04T10:11:15Z junk", "\x1b[31m2025-09-04T10:11:15Z"};
    error_info e;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(validate_timestamp(good[i], "created_at", &e), ERROR_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(validate_timestamp(bad[i], "created_at", &e), ERROR_INVALID);
        assert_non_null(strstr(e.msg, "created_at is not an RFC 3339 timestamp"));
    }
}

/* Well-formed is not enough: the day must exist in that month of that year. */
static void test_timestamp_calendar(void **state)
{
    (void)state;
    static const char *const good[] = {
        "2024-02-29T00:00:00Z", /* leap year */
        "2000-02-29T00:00:00Z", /* divisible by 400: leap */
        "2025-02-28T23:59:59Z", "2025-04-30T00:00:00Z", "2025-01-31T00:00:00Z",
        "2025-12-31T00:00:00+01:00",
    };
    static const char *const bad[] = {
        "2025-02-29T00:00:00Z", /* not a leap year */
        "1900-02-29T00:00:00Z", /* a century not divisible by 400 */
        "2025-02-31T00:00:00Z", "2024-02-30T00:00:00Z", "2025-04-31T00:00:00Z",
        "2025-06-31T00:00:00Z", "2025-09-31T00:00:00Z", "2025-11-31T00:00:00Z",
        "2025-01-32T00:00:00Z", "2025-01-00T00:00:00Z",
    };
    error_info e;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (validate_timestamp(good[i], "created_at", &e) != ERROR_OK)
            fail_msg("refused %s: %s", good[i], e.msg);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (validate_timestamp(bad[i], "created_at", &e) != ERROR_INVALID)
            fail_msg("accepted %s", bad[i]);
        assert_non_null(strstr(e.msg, "created_at is not an RFC 3339 timestamp"));
    }
}

static void test_uris(void **state)
{
    (void)state;
    error_info e;
    assert_int_equal(validate_uri("", "uri", &e), ERROR_OK);
    assert_int_equal(validate_uri("https://api.example.com/ip_policy_rules/ipr_1", "uri", &e),
                     ERROR_OK);
    assert_int_equal(validate_uri("ftp://x", "uri", &e), ERROR_INVALID);
    assert_int_equal(validate_uri("https://x/\x1b]52;c;AAAA\x07", "uri", &e), ERROR_INVALID);
    assert_non_null(strstr(e.msg, "control character"));
    assert_int_equal(validate_uri("https://x/a b", "uri", &e), ERROR_INVALID);
}

/* Durations as a person types them; anything else refused with the forms. */
static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_timestamps),
    cmocka_unit_test(test_timestamp_calendar),
    cmocka_unit_test(test_uris),
    cmocka_unit_test(test_cidr_out),
    cmocka_unit_test(test_cidr_canon_buffer_too_small),
    cmocka_unit_test(test_cidr_null_text),
    cmocka_unit_test(test_ip_out),
    cmocka_unit_test(test_action_out),
    cmocka_unit_test(test_local_id_null),
    cmocka_unit_test(test_describe_char),
    cmocka_unit_test(test_acl_lists),
    cmocka_unit_test(test_acl_error_without_err),
    cmocka_unit_test(test_rule_canonicalises_cidr),
    cmocka_unit_test(test_rule_messages),
    cmocka_unit_test(test_cred),
};

#define FIXED_COUNT (sizeof fixed_tests / sizeof fixed_tests[0])
#define NAME_MAX_LEN 80

/* Test names show the input with anything unprintable as '?'. */
static void case_name(const struct vcase *c, char *out, size_t size)
{
    int n = snprintf(out, size, "%s \"", kind_names[c->kind]);
    size_t len = n > 0 ? (size_t)n : 0;
    for (const char *p = c->head; *p && len + 3 < size; p++)
        out[len++] = (*p >= 0x20 && *p < 0x7F) ? *p : '?';
    if (c->times && len + 4 < size)
        len += (size_t)snprintf(out + len, size - len, "…");
    snprintf(out + len, size - len, "\"");
}

int main(void)
{
    static struct CMUnitTest tests[CASE_COUNT + FIXED_COUNT];
    static char names[CASE_COUNT][NAME_MAX_LEN];
    for (size_t i = 0; i < CASE_COUNT; i++) {
        case_name(&cases[i], names[i], sizeof names[i]);
        tests[i] = (struct CMUnitTest){names[i], test_case, NULL, NULL, (void *)&cases[i]};
    }
    for (size_t i = 0; i < FIXED_COUNT; i++)
        tests[CASE_COUNT + i] = fixed_tests[i];
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/ui_app.h"
#include "rampart/ui_form.h"
#include "../../ui/views/ui_record.h"

/* The form model, driven key by key as the console drives it. */

enum { CTRL_A = 1, CTRL_D = 4, CTRL_E = 5, CTRL_K = 11, CTRL_U = 21, CTRL_W = 23 };

static const char policies[][MODEL_ID_MAX + 1] = {"ipp_a1", "ipp_a2", "ipp_b1"};

/* Feed a UTF-8 string as keys (code points); returns the last result. */
static ui_form_result type(ui_form *f, const char *s)
{
    ui_form_result r = UI_FORM_CONTINUE;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned cp = *p;
        size_t n = 1;
        if (cp >= 0xF0)
            cp &= 0x07, n = 4;
        else if (cp >= 0xE0)
            cp &= 0x0F, n = 3;
        else if (cp >= 0xC0)
            cp &= 0x1F, n = 2;
        for (size_t i = 1; i < n; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        p += n;
        r = ui_form_key(f, (int)cp);
    }
    return r;
}

static void keys(ui_form *f, int key, int times)
{
    for (int i = 0; i < times; i++)
        ui_form_key(f, key);
}

static ui_form *rule_form(const char *policy)
{
    ui_form *f = NULL;
    char ids[3][MODEL_ID_MAX + 1];
    memcpy(ids, policies, sizeof ids);
    ui_form_offer offer = {policy, ids, 3};
    assert_int_equal(ui_form_record_new(MODEL_KIND_RULE, &offer, &f, NULL), ERROR_OK);
    return f;
}

static ui_form *cred_form(void)
{
    ui_form *f = NULL;
    assert_int_equal(ui_form_record_new(MODEL_KIND_CRED, NULL, &f, NULL), ERROR_OK);
    return f;
}

/* A submitted form as a rule / a credential (the caller clears the credential). */
static error_code ui_form_rule_get(const ui_form *f, model_rule *out, error_info *err)
{
    model_object o;
    error_code rc = ui_form_record_get(f, MODEL_KIND_RULE, &o, err);
    *out = o.rule;
    return rc;
}

static error_code ui_form_cred_get(const ui_form *f, model_cred *out, error_info *err)
{
    model_object o;
    error_code rc = ui_form_record_get(f, MODEL_KIND_CRED, &o, err);
    *out = o.cred; /* its heap goes with it */
    return rc;
}

static void test_bad_cidr_reason_then_fixed(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    type(f, "10.0.0.1/8");
    assert_true(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR),
                        "host bits set: did you mean 10.0.0.0/8?");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_REFUSED);
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    assert_non_null(strstr(ui_form_message(f), "not saved"));
    /* Fixing it: the reason goes, the message too, submit is accepted. */
    keys(f, UI_KEY_BACKSPACE, 3);
    type(f, "0/8");
    assert_string_equal(ui_form_text(f, UI_RULE_CIDR), "10.0.0.0/8");
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR), "");
    assert_false(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_string_equal(ui_form_message(f), "");
    assert_true(ui_form_valid(f));
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_rule r;
    assert_int_equal(ui_form_rule_get(f, &r, NULL), ERROR_OK);
    assert_string_equal(r.cidr, "10.0.0.0/8");
    assert_string_equal(r.policy_id, "ipp_a1");
    assert_int_equal(r.action, MODEL_ACTION_ALLOW);
    assert_int_equal(r.state, MODEL_STATE_NEW);
    ui_form_free(f);
}

static void test_every_keystroke_is_checked(void **state)
{
    (void)state;
    ui_form *f = rule_form("");
    type(f, "10");
    assert_string_not_equal(ui_form_error(f, UI_RULE_CIDR), "");
    type(f, ".0.0.0");
    assert_non_null(strstr(ui_form_error(f, UI_RULE_CIDR), "mask"));
    type(f, "/8");
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR), "");
    type(f, " ");
    assert_non_null(strstr(ui_form_error(f, UI_RULE_CIDR), "trailing"));
    ui_form_free(f);
}

static void test_untouched_fields_hide_reasons_until_submit(void **state)
{
    (void)state;
    ui_form *f = rule_form(NULL);
    assert_false(ui_form_valid(f));
    assert_false(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_false(ui_form_shows_error(f, UI_RULE_POLICY));
    ui_form_key(f, UI_KEY_TAB);
    ui_form_key(f, UI_KEY_TAB);
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_REFUSED);
    /* The first invalid field gets the focus and both reasons show. */
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    assert_true(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_true(ui_form_shows_error(f, UI_RULE_POLICY));
    assert_non_null(strstr(ui_form_error(f, UI_RULE_POLICY), "ipp_"));
    ui_form_free(f);
}

static void test_esc_cancels(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    type(f, "10.0.0.0/8");
    assert_int_equal(ui_form_key(f, UI_KEY_ESC), UI_FORM_CANCEL);
    ui_form_free(f);
    f = cred_form();
    ui_form_key(f, UI_KEY_TAB);
    type(f, "bind:x.example.com");
    assert_int_equal(ui_form_key(f, UI_KEY_ESC), UI_FORM_CANCEL);
    ui_form_free(f);
}

static void test_policy_cycles_known_ids(void **state)
{
    (void)state;
    ui_form *f = rule_form("");
    ui_form_key(f, UI_KEY_TAB);
    assert_int_equal(ui_form_focus(f), UI_RULE_POLICY);
    assert_string_equal(ui_form_hint(f, UI_RULE_POLICY), "Up/Down: 3 known policies");
    const char *want[] = {"ipp_a1", "ipp_a2", "ipp_b1", "ipp_a1"};
    for (size_t i = 0; i < 4; i++) {
        ui_form_key(f, UI_KEY_DOWN);
        assert_string_equal(ui_form_text(f, UI_RULE_POLICY), want[i]);
    }
    ui_form_key(f, UI_KEY_UP);
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_b1");
    assert_int_equal(ui_form_focus(f), UI_RULE_POLICY);
    /* What was typed narrows the ids offered. */
    ui_form_key(f, CTRL_U);
    type(f, "ipp_a");
    ui_form_key(f, UI_KEY_DOWN);
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_a1");
    ui_form_key(f, UI_KEY_DOWN);
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_a2");
    ui_form_key(f, UI_KEY_DOWN);
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_a1");
    ui_form_key(f, CTRL_U);
    type(f, "ipp_z");
    ui_form_key(f, UI_KEY_DOWN);
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_z");
    assert_non_null(strstr(ui_form_message(f), "no known policy"));
    ui_form_free(f);
}

static void test_policy_prefilled(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a2");
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_a2");
    ui_form_key(f, UI_KEY_TAB);
    ui_form_key(f, UI_KEY_DOWN); /* from the pre-filled id: the next one */
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_b1");
    ui_form_free(f);
}

static void test_choice_field(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    type(f, "192.168.0.0/16");
    keys(f, UI_KEY_TAB, 2);
    assert_int_equal(ui_form_focus(f), UI_RULE_ACTION);
    assert_string_equal(ui_form_text(f, UI_RULE_ACTION), "allow");
    ui_form_key(f, UI_KEY_RIGHT);
    assert_string_equal(ui_form_text(f, UI_RULE_ACTION), "deny");
    ui_form_key(f, 'a');
    assert_string_equal(ui_form_text(f, UI_RULE_ACTION), "allow");
    ui_form_key(f, ' ');
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_rule r;
    assert_int_equal(ui_form_rule_get(f, &r, NULL), ERROR_OK);
    assert_int_equal(r.action, MODEL_ACTION_DENY);
    ui_form_free(f);
}

/* The keys a key bar shows while the form is open: the form's, by the field. */
static const char *hints_text(const ui_form *f, char *buf, size_t size)
{
    ui_key_hint h[8];
    size_t n = ui_form_hints(f, h, 8), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d:%s", i ? " " : "", h[i].key,
                                 h[i].label);
    return buf;
}

static void test_form_hints(void **state)
{
    (void)state;
    char buf[256], want[256];
    ui_form *f = rule_form("");
    snprintf(want, sizeof want, "%d:save %d:next field %d:cancel %d:previous field",
             UI_KEY_ENTER, UI_KEY_TAB, UI_KEY_ESC, UI_KEY_BTAB);
    assert_string_equal(hints_text(f, buf, sizeof buf), want);
    ui_form_key(f, UI_KEY_TAB); /* the policy: Down goes through the known ids */
    assert_non_null(strstr(hints_text(f, buf, sizeof buf), ":next known policy"));
    ui_form_key(f, UI_KEY_TAB); /* the action: Space goes through the options */
    snprintf(want, sizeof want, "%d:next option", ' ');
    assert_non_null(strstr(hints_text(f, buf, sizeof buf), want));
    ui_key_hint one[1];
    assert_int_equal(ui_form_hints(f, one, 1), 1); /* at most `max` */
    assert_int_equal(one[0].key, UI_KEY_ENTER);
    ui_form_free(f);
    f = cred_form();
    ui_form_key(f, UI_KEY_TAB); /* the ACL: Enter on a typed line opens the next */
    snprintf(want, sizeof want, "%d:save ", UI_KEY_ENTER); /* an empty line: Enter saves */
    assert_memory_equal(hints_text(f, buf, sizeof buf), want, strlen(want));
    type(f, "bind:a.example.com");
    assert_non_null(strstr(hints_text(f, buf, sizeof buf), ":new line"));
    ui_form_free(f);
}

static void test_up_down_move_between_plain_fields(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    ui_form_key(f, UI_KEY_DOWN);
    assert_int_equal(ui_form_focus(f), UI_RULE_POLICY);
    keys(f, UI_KEY_TAB, 2);
    assert_int_equal(ui_form_focus(f), UI_RULE_DESCRIPTION);
    ui_form_key(f, UI_KEY_UP);
    assert_int_equal(ui_form_focus(f), UI_RULE_ACTION);
    ui_form_key(f, UI_KEY_BTAB);
    assert_int_equal(ui_form_focus(f), UI_RULE_POLICY);
    ui_form_free(f);
}

static void test_acl_list(void **state)
{
    (void)state;
    ui_form *f = cred_form();
    type(f, "web agent");
    ui_form_key(f, UI_KEY_TAB);
    assert_int_equal(ui_form_focus(f), UI_CRED_ACL);
    type(f, "bind:*.example.com");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_CONTINUE);
    assert_int_equal(ui_form_lines(f, UI_CRED_ACL), 2);
    assert_int_equal(ui_form_line_focus(f, UI_CRED_ACL), 1);
    type(f, "bind:bad domain");
    assert_non_null(strstr(ui_form_line_error(f, UI_CRED_ACL, 1), "whitespace"));
    assert_string_equal(ui_form_line_error(f, UI_CRED_ACL, 0), "");
    assert_true(ui_form_shows_error(f, UI_CRED_ACL));
    ui_form_key(f, UI_KEY_ENTER); /* a third, empty line */
    assert_int_equal(ui_form_lines(f, UI_CRED_ACL), 3);
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_REFUSED);
    assert_int_equal(ui_form_focus(f), UI_CRED_ACL);
    assert_int_equal(ui_form_line_focus(f, UI_CRED_ACL), 1);
    ui_form_key(f, CTRL_U);
    type(f, "bind:env=prod");
    assert_string_equal(ui_form_error(f, UI_CRED_ACL), "");
    ui_form_key(f, UI_KEY_DOWN);
    assert_int_equal(ui_form_line_focus(f, UI_CRED_ACL), 2);
    /* Enter on the empty last line saves; empty lines are not rules. */
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_cred c = {0};
    assert_int_equal(ui_form_cred_get(f, &c, NULL), ERROR_OK);
    assert_string_equal(c.description, "web agent");
    assert_int_equal(c.acl.count, 2);
    assert_string_equal(c.acl.rules[0], "bind:*.example.com");
    assert_string_equal(c.acl.rules[1], "bind:env=prod");
    model_cred_clear(&c);
    ui_form_free(f);
}

static void test_acl_lines_removed_and_star_alone(void **state)
{
    (void)state;
    ui_form *f = cred_form();
    ui_form_key(f, UI_KEY_TAB);
    type(f, "*");
    ui_form_key(f, UI_KEY_ENTER);
    type(f, "bind:a.example.com");
    assert_non_null(strstr(ui_form_error(f, UI_CRED_ACL), "'*' must be the only rule"));
    /* The whole list's reason: no single line is wrong. */
    assert_string_equal(ui_form_line_error(f, UI_CRED_ACL, 0), "");
    assert_string_equal(ui_form_line_error(f, UI_CRED_ACL, 1), "");
    ui_form_key(f, CTRL_U);
    ui_form_key(f, UI_KEY_BACKSPACE); /* removes the empty line */
    assert_int_equal(ui_form_lines(f, UI_CRED_ACL), 1);
    assert_int_equal(ui_form_line_focus(f, UI_CRED_ACL), 0);
    assert_string_equal(ui_form_error(f, UI_CRED_ACL), "");
    /* The last line is never removed. */
    ui_form_key(f, CTRL_U);
    ui_form_key(f, UI_KEY_BACKSPACE);
    assert_int_equal(ui_form_lines(f, UI_CRED_ACL), 1);
    /* Up from the first line leaves the list. */
    ui_form_key(f, UI_KEY_UP);
    assert_int_equal(ui_form_focus(f), UI_CRED_DESCRIPTION);
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_cred c = {0};
    assert_int_equal(ui_form_cred_get(f, &c, NULL), ERROR_OK);
    assert_int_equal(c.acl.count, 0);
    model_cred_clear(&c);
    ui_form_free(f);
}

static void test_owner_and_metadata_checked(void **state)
{
    (void)state;
    ui_form *f = cred_form();
    keys(f, UI_KEY_TAB, 3);
    assert_int_equal(ui_form_focus(f), UI_CRED_OWNER);
    type(f, "bob");
    assert_non_null(strstr(ui_form_error(f, UI_CRED_OWNER), "usr_"));
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_REFUSED);
    ui_form_key(f, CTRL_U);
    assert_string_equal(ui_form_error(f, UI_CRED_OWNER), "");
    type(f, "usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    ui_form_free(f);
}

static void test_utf8_editing(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    keys(f, UI_KEY_TAB, 3);
    assert_int_equal(ui_form_focus(f), UI_RULE_DESCRIPTION);
    type(f, "héllo 日本");
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "héllo 日本");
    keys(f, UI_KEY_LEFT, 2);
    ui_form_key(f, UI_KEY_BACKSPACE);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "héllo日本");
    ui_form_key(f, UI_KEY_HOME);
    keys(f, UI_KEY_RIGHT, 2);
    assert_int_equal(ui_form_cursor(f, UI_RULE_DESCRIPTION), 3); /* after "hé" */
    ui_form_key(f, UI_KEY_BACKSPACE);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "hllo日本");
    ui_form_key(f, UI_KEY_DEL);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "hlo日本");
    type(f, "l");
    ui_form_key(f, UI_KEY_LEFT);
    ui_form_key(f, CTRL_D); /* Del's other key */
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "hlo日本");
    type(f, "€");
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "h€lo日本");
    ui_form_key(f, CTRL_E);
    ui_form_key(f, UI_KEY_BACKSPACE);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "h€lo日");
    ui_form_key(f, UI_KEY_RIGHT); /* at the end: stays */
    assert_int_equal(ui_form_cursor(f, UI_RULE_DESCRIPTION), strlen("h€lo日"));
    type(f, " 🚀x");
    ui_form_key(f, CTRL_W);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "h€lo日 ");
    ui_form_key(f, CTRL_A);
    ui_form_key(f, UI_KEY_RIGHT);
    ui_form_key(f, CTRL_K);
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "h");
    ui_form_key(f, UI_KEY_LEFT);
    ui_form_key(f, UI_KEY_LEFT);
    ui_form_key(f, UI_KEY_BACKSPACE); /* at the start: nothing */
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "h");
    ui_form_free(f);
}

static void test_control_characters_never_inserted(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    keys(f, UI_KEY_TAB, 3);
    int bad[] = {0x01b, 0x07, 0x0a - 1, 0x7f - 0x70, 0x85, 0x9b, 0xD800, 0x110000,
                 UI_KEY_F1, UI_KEY_PGDN, UI_KEY_INSERT};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i] == UI_KEY_ESC)
            continue;
        ui_form_key(f, bad[i]);
    }
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "");
    ui_form_free(f);
}

static void test_limit_shows_its_own_message(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    keys(f, UI_KEY_TAB, 3);
    keys(f, 'a', 300);
    size_t len = strlen(ui_form_text(f, UI_RULE_DESCRIPTION));
    assert_true(len > MODEL_DESCRIPTION_MAX && len < 300);
    assert_non_null(strstr(ui_form_error(f, UI_RULE_DESCRIPTION), "the limit is 255"));
    keys(f, UI_KEY_BACKSPACE, (int)(len - MODEL_DESCRIPTION_MAX));
    assert_string_equal(ui_form_error(f, UI_RULE_DESCRIPTION), "");
    ui_form_free(f);
}

static void test_message_cleared_by_next_change(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    type(f, "10.0.0.0/8");
    ui_form_set_message(f, "policy %s already has a rule", "ipp_a1");
    assert_string_equal(ui_form_message(f), "policy ipp_a1 already has a rule");
    ui_form_key(f, UI_KEY_LEFT); /* moving is not a change */
    assert_string_equal(ui_form_message(f), "policy ipp_a1 already has a rule");
    type(f, "x");
    assert_string_equal(ui_form_message(f), "");
    ui_form_free(f);
}

static void test_ipv6_canonical_on_submit(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_b1");
    type(f, "2001:DB8:0:0::/32");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_rule r;
    assert_int_equal(ui_form_rule_get(f, &r, NULL), ERROR_OK);
    assert_string_equal(r.cidr, "2001:db8::/32");
    ui_form_free(f);
}

/* The store checks every write itself: its refusal goes under the field the gate
 * names as a value (kind_check_row), and goes away when that field changes. */
static bool refuse(ui_form *f, model_object *row)
{
    const kind_field *bad = NULL;
    error_info why = {ERROR_OK, ""};
    if (kind_check_row(row, &bad, &why) == ERROR_OK)
        assert_null(bad);
    return ui_form_record_refused(f, row->kind, bad, why.msg);
}

static void test_store_refusal_under_its_field(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    type(f, "10.0.0.0/8");
    keys(f, UI_KEY_TAB, 2);
    model_object row;
    model_object_init(&row, MODEL_KIND_RULE);
    strcpy(row.rule.cidr, "10.0.0.1/8");
    strcpy(row.rule.policy_id, "ipp_a1");
    assert_true(refuse(f, &row));
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    assert_true(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR),
                        "cidr: host bits set: did you mean 10.0.0.0/8?");
    assert_false(ui_form_valid(f));
    type(f, "x");
    ui_form_key(f, UI_KEY_BACKSPACE);
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR), "");
    strcpy(row.rule.cidr, "10.0.0.0/8");
    strcpy(row.rule.policy_id, "ipx_a1");
    assert_true(refuse(f, &row));
    assert_int_equal(ui_form_focus(f), UI_RULE_POLICY);
    strcpy(row.rule.policy_id, "ipp_a1"); /* every field fine */
    assert_false(refuse(f, &row));
    strcpy(row.rule.created_at, "yesterday"); /* refused, but about no field of the form */
    assert_false(refuse(f, &row));
    ui_form_free(f);
    f = cred_form();
    model_object cred;
    model_object_init(&cred, MODEL_KIND_CRED);
    strcpy(cred.cred.owner_id, "team_a1");
    assert_true(refuse(f, &cred));
    assert_int_equal(ui_form_focus(f), UI_CRED_OWNER);
    assert_non_null(strstr(ui_form_error(f, UI_CRED_OWNER), "usr_"));
    ui_form_free(f);
}

/* A message from a template cut to its buffer never ends inside a character. */
static void test_record_format_cuts_whole_characters(void **state)
{
    (void)state;
    model_object row;
    model_object_init(&row, MODEL_KIND_RULE);
    strcpy(row.rule.cidr, "10.0.0.0/8");
    strcpy(row.rule.description, "\xe6\x97\xa5\xe6\x9c\xac"); /* two 3-byte characters */
    char out[16];
    for (size_t size = 1; size <= 8; size++) {
        memset(out, 'z', sizeof out);
        ui_record_format(&row, "{description}", out, size);
        size_t want = size - 1 >= 6 ? 6 : size - 1 >= 3 ? 3 : 0;
        if (strlen(out) != want)
            fail_msg("size %zu: %zu bytes, want %zu", size, strlen(out), want);
    }
    ui_record_format(&row, "r \xc3\xa9{cidr}", out, 4); /* the template's own text */
    assert_string_equal(out, "r ");
    ui_record_format(&row, "r \xc3\xa9{cidr}", out, 5);
    assert_string_equal(out, "r \xc3\xa9");
    ui_record_format(&row, "{cidr} \xe6\x97\xa5", out, sizeof out);
    assert_string_equal(out, "10.0.0.0/8 \xe6\x97\xa5");
}

/* The screen text of a form drawn on a w x h canvas, rows joined by '\n'. */
static void draw_text(const ui_form *f, int w, int h, bool ascii, char *out, size_t size)
{
    ui_canvas c;
    assert_int_equal(ui_canvas_init(&c, w, h, ascii, NULL), ERROR_OK);
    ui_form_draw(f, &c, (ui_rect){0, 1, w, h - 2});
    size_t used = 0;
    out[0] = '\0';
    for (int y = 0; y < h && used + 1 < size; y++) {
        char row[1024];
        ui_canvas_row_text(&c, y, row, sizeof row);
        used += (size_t)snprintf(out + used, size - used, "%s\n", row);
    }
    ui_canvas_free(&c);
}

static void test_draw_shows_reason_next_to_field(void **state)
{
    (void)state;
    ui_form *f = rule_form("ipp_a1");
    type(f, "10.0.0.1/8");
    char screen[8192];
    draw_text(f, 80, 24, false, screen, sizeof screen);
    assert_non_null(strstr(screen, " Create rule "));
    assert_non_null(strstr(screen, "> CIDR          10.0.0.1/8"));
    assert_non_null(strstr(screen, "! host bits set: did you mean 10.0.0.0/8?"));
    assert_non_null(strstr(screen, "(\xe2\x80\xa2) allow  ( ) deny"));
    assert_non_null(strstr(screen, "Esc cancel"));
    draw_text(f, 80, 24, true, screen, sizeof screen);
    assert_non_null(strstr(screen, "(*) allow  ( ) deny"));
    assert_non_null(strstr(screen, "+-"));
    ui_form_free(f);
}

static void test_draw_scrolls_to_focus_and_long_text(void **state)
{
    (void)state;
    ui_form *f = cred_form();
    ui_form_key(f, UI_KEY_TAB);
    for (int i = 0; i < 30; i++) {
        char line[64];
        snprintf(line, sizeof line, "bind:host%d.example.com", i);
        type(f, line);
        ui_form_key(f, UI_KEY_ENTER);
    }
    type(f, "bind:last.example.com");
    char screen[16384];
    draw_text(f, 80, 24, false, screen, sizeof screen);
    assert_non_null(strstr(screen, "> "));
    assert_non_null(strstr(screen, "bind:last.example.com"));
    assert_null(strstr(screen, "bind:host0.example.com"));
    /* A long value scrolls so the cursor's end shows. */
    keys(f, UI_KEY_TAB, 3);
    for (int i = 0; i < 10; i++)
        type(f, "0123456789");
    type(f, "END");
    draw_text(f, 80, 24, false, screen, sizeof screen);
    assert_non_null(strstr(screen, "789END"));
    ui_form_free(f);
}

/* ---- the edit form ------------------------------------------------------------ */

static model_object synced_rule(void)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.id, "ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a");
    strcpy(o.rule.cidr, "10.1.0.0/16");
    strcpy(o.rule.policy_id, "ipp_a1");
    o.rule.action = MODEL_ACTION_DENY;
    strcpy(o.rule.description, "office");
    o.rule.state = MODEL_STATE_SYNCED;
    return o;
}

static ui_form *edit_form(const model_object *o)
{
    ui_form *f = NULL;
    assert_int_equal(ui_form_record_edit(o, &f, NULL), ERROR_OK);
    return f;
}

static void test_edit_form_prefilled_fixed_fields_read_only(void **state)
{
    (void)state;
    model_object row = synced_rule();
    ui_form *f = edit_form(&row);
    assert_string_equal(ui_form_title(f), "Edit rule ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a");
    assert_string_equal(ui_form_text(f, UI_RULE_CIDR), "10.1.0.0/16");
    assert_string_equal(ui_form_text(f, UI_RULE_POLICY), "ipp_a1");
    assert_string_equal(ui_form_text(f, UI_RULE_ACTION), "deny");
    assert_string_equal(ui_form_text(f, UI_RULE_DESCRIPTION), "office");
    assert_false(ui_form_readonly(f, UI_RULE_CIDR));
    assert_true(ui_form_readonly(f, UI_RULE_POLICY));
    assert_true(ui_form_readonly(f, UI_RULE_ACTION));
    assert_false(ui_form_readonly(f, UI_RULE_DESCRIPTION));
    assert_true(ui_form_valid(f));
    /* The focus skips the read-only fields, both ways and with Up/Down. */
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    ui_form_key(f, UI_KEY_TAB);
    assert_int_equal(ui_form_focus(f), UI_RULE_DESCRIPTION);
    ui_form_key(f, UI_KEY_BTAB);
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    ui_form_key(f, UI_KEY_DOWN);
    assert_int_equal(ui_form_focus(f), UI_RULE_DESCRIPTION);
    keys(f, UI_KEY_TAB, 2);
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR); /* metadata, then round */
    /* Typing anywhere never reaches them: nothing changed, nothing to save. */
    type(f, "d");
    keys(f, UI_KEY_BACKSPACE, 1);
    assert_string_equal(ui_form_text(f, UI_RULE_ACTION), "deny");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_object out;
    unsigned fields = 99;
    assert_int_equal(ui_form_record_changes(f, &row, &out, &fields, NULL), ERROR_OK);
    assert_int_equal(fields, 0);
    model_object_clear(&out);
    ui_form_free(f);
}

static void test_edit_form_changed_fields(void **state)
{
    (void)state;
    model_object row = synced_rule();
    ui_form *f = edit_form(&row);
    ui_form_key(f, CTRL_U);
    type(f, "10.2.0.0/16");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_object out;
    unsigned fields = 0;
    assert_int_equal(ui_form_record_changes(f, &row, &out, &fields, NULL), ERROR_OK);
    const kind_field *cidr = kind_field_by_name(MODEL_KIND_RULE, "cidr");
    assert_int_equal(fields, kind_field_bit(MODEL_KIND_RULE, cidr));
    assert_string_equal(out.rule.cidr, "10.2.0.0/16");
    assert_string_equal(out.rule.id, row.rule.id);            /* the row's own */
    assert_int_equal(out.rule.state, MODEL_STATE_SYNCED);
    assert_int_equal(out.rule.action, MODEL_ACTION_DENY);
    model_object_clear(&out);
    ui_form_free(f);
    /* A value retyped in another spelling of the same CIDR is no change. */
    strcpy(row.rule.cidr, "2001:db8::/32");
    f = edit_form(&row);
    ui_form_key(f, CTRL_U);
    type(f, "2001:DB8:0::/32");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    assert_int_equal(ui_form_record_changes(f, &row, &out, &fields, NULL), ERROR_OK);
    assert_int_equal(fields, 0);
    model_object_clear(&out);
    ui_form_free(f);
}

/* The edit form checks as the create form does: the same reason, nothing given. */
static void test_edit_form_bad_cidr_as_create(void **state)
{
    (void)state;
    model_object row = synced_rule();
    ui_form *f = edit_form(&row);
    ui_form_key(f, CTRL_U);
    type(f, "10.0.0.1/8");
    assert_true(ui_form_shows_error(f, UI_RULE_CIDR));
    assert_string_equal(ui_form_error(f, UI_RULE_CIDR),
                        "host bits set: did you mean 10.0.0.0/8?");
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_REFUSED);
    assert_int_equal(ui_form_focus(f), UI_RULE_CIDR);
    model_object out;
    unsigned fields = 0;
    error_info e = {0};
    assert_int_equal(ui_form_record_changes(f, &row, &out, &fields, &e), ERROR_INVALID);
    assert_int_equal(fields, 0);
    model_object_clear(&out);
    /* A store refusal by field (the natural key's clash) goes under that field. */
    ui_form_key(f, CTRL_U);
    type(f, "10.3.0.0/16");
    assert_true(ui_form_record_refused(f, MODEL_KIND_RULE,
                                       kind_field_by_name(MODEL_KIND_RULE, "cidr"),
                                       "policy ipp_a1 already has a rule for 10.3.0.0/16"));
    assert_true(ui_form_shows_error(f, UI_RULE_CIDR));
    ui_form_free(f);
}

static void test_edit_form_credential_acl(void **state)
{
    (void)state;
    model_object row;
    model_object_init(&row, MODEL_KIND_CRED);
    strcpy(row.cred.id, "cr_2VhYfCwqPkX0n4sF5nYfW3eJb1a");
    strcpy(row.cred.description, "web agent");
    strcpy(row.cred.owner_id, "usr_a1");
    assert_int_equal(model_acl_add(&row.cred.acl, "bind:a.example.com", NULL), ERROR_OK);
    assert_int_equal(model_acl_add(&row.cred.acl, "bind:b.example.com", NULL), ERROR_OK);
    row.cred.state = MODEL_STATE_SYNCED;
    ui_form *f = edit_form(&row);
    assert_int_equal(ui_form_lines(f, UI_CRED_ACL), 2);
    assert_string_equal(ui_form_line(f, UI_CRED_ACL, 1), "bind:b.example.com");
    assert_true(ui_form_readonly(f, UI_CRED_OWNER));
    assert_string_equal(ui_form_text(f, UI_CRED_OWNER), "usr_a1");
    /* Into the ACL, its second line replaced. */
    ui_form_key(f, UI_KEY_TAB);
    assert_int_equal(ui_form_focus(f), UI_CRED_ACL);
    ui_form_key(f, UI_KEY_DOWN);
    ui_form_key(f, CTRL_U);
    type(f, "bind:c.example.com");
    keys(f, UI_KEY_TAB, 2); /* metadata, then round past the owner */
    assert_int_equal(ui_form_focus(f), UI_CRED_DESCRIPTION);
    assert_int_equal(ui_form_key(f, UI_KEY_ENTER), UI_FORM_SUBMIT);
    model_object out;
    unsigned fields = 0;
    assert_int_equal(ui_form_record_changes(f, &row, &out, &fields, NULL), ERROR_OK);
    assert_int_equal(fields, kind_field_bit(MODEL_KIND_CRED,
                                            kind_field_by_name(MODEL_KIND_CRED, "acl")));
    assert_int_equal(out.cred.acl.count, 2);
    assert_string_equal(out.cred.acl.rules[0], "bind:a.example.com");
    assert_string_equal(out.cred.acl.rules[1], "bind:c.example.com");
    assert_string_equal(out.cred.owner_id, "usr_a1");
    assert_null(out.cred.token);
    model_object_clear(&out);
    ui_form_free(f);
    model_object_clear(&row);
}

static void test_edit_form_draws_read_only(void **state)
{
    (void)state;
    model_object row = synced_rule();
    ui_form *f = edit_form(&row);
    char screen[8192];
    draw_text(f, 80, 24, false, screen, sizeof screen);
    assert_non_null(strstr(screen, " Edit rule ipr_"));
    assert_non_null(strstr(screen, "Policy        ipp_a1  (read-only)"));
    assert_non_null(strstr(screen, "Action        deny  (read-only)"));
    assert_null(strstr(screen, "CIDR          10.1.0.0/16  (read-only)"));
    ui_form_free(f);
}

/* Which states the edit form opens on; a value of an edit on one line. */
static void test_editable_states_and_values(void **state)
{
    (void)state;
    const char *why;
    assert_true(ui_record_editable(MODEL_STATE_SYNCED, &why));
    assert_true(ui_record_editable(MODEL_STATE_NEW, &why));
    assert_true(ui_record_editable(MODEL_STATE_CONFLICT, &why));
    assert_false(ui_record_editable(MODEL_STATE_CREATING, &why));
    assert_non_null(strstr(why, "sync first"));
    assert_false(ui_record_editable(MODEL_STATE_DELETING, &why));
    assert_non_null(strstr(why, "deleted"));
    char v[32];
    ui_edit_value_text("bind:a\nbind:b", v, sizeof v);
    assert_string_equal(v, "bind:a, bind:b");
    ui_edit_value_text("", v, sizeof v);
    assert_string_equal(v, "(empty)");
    ui_edit_value_text("é\né\né\né\né\né\né\né\né\né\né", v, 12);
    assert_true(strlen(v) < 12);
    assert_int_not_equal((unsigned char)v[strlen(v) - 1], 0xC3); /* whole characters */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_cidr_reason_then_fixed),
        cmocka_unit_test(test_every_keystroke_is_checked),
        cmocka_unit_test(test_untouched_fields_hide_reasons_until_submit),
        cmocka_unit_test(test_esc_cancels),
        cmocka_unit_test(test_policy_cycles_known_ids),
        cmocka_unit_test(test_policy_prefilled),
        cmocka_unit_test(test_choice_field),
        cmocka_unit_test(test_up_down_move_between_plain_fields),
        cmocka_unit_test(test_acl_list),
        cmocka_unit_test(test_acl_lines_removed_and_star_alone),
        cmocka_unit_test(test_owner_and_metadata_checked),
        cmocka_unit_test(test_utf8_editing),
        cmocka_unit_test(test_control_characters_never_inserted),
        cmocka_unit_test(test_limit_shows_its_own_message),
        cmocka_unit_test(test_message_cleared_by_next_change),
        cmocka_unit_test(test_ipv6_canonical_on_submit),
        cmocka_unit_test(test_store_refusal_under_its_field),
        cmocka_unit_test(test_record_format_cuts_whole_characters),
        cmocka_unit_test(test_draw_shows_reason_next_to_field),
        cmocka_unit_test(test_draw_scrolls_to_focus_and_long_text),
        cmocka_unit_test(test_edit_form_prefilled_fixed_fields_read_only),
        cmocka_unit_test(test_edit_form_changed_fields),
        cmocka_unit_test(test_edit_form_bad_cidr_as_create),
        cmocka_unit_test(test_edit_form_credential_acl),
        cmocka_unit_test(test_edit_form_draws_read_only),
        cmocka_unit_test(test_editable_states_and_values),
        cmocka_unit_test(test_form_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

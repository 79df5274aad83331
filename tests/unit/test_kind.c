/*
 * kind: the descriptors of rules and credentials, kind_validate_row (the store's
 * gate), and the store refusing, through store_insert itself, every bad value of
 * the validation table with the validator's own words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"
#include "rampart/store.h"
#include "rampart/validate.h"

/* The validation table (validate_cases.h): its cases[] (inputs built by build_input,
 * K_* kinds) feed the store below. */
#include "validate_cases.h"

/* ---- descriptors ---------------------------------------------------------- */

static const struct {
    model_kind kind;
    const char *noun, *plural, *command, *id_prefix, *api_plural, *api_path, *table;
    bool has_token;
    const char *const fields[6]; /* the user's fields, in order; NULL-terminated */
} descriptors[] = {
    {MODEL_KIND_RULE, "rule", "rules", "rules", "ipr", "ip_policy_rules", "/ip_policy_rules",
     "rules", false, {"cidr", "ip_policy_id", "action", "description", "metadata", NULL}},
    {MODEL_KIND_CRED, "credential", "credentials", "creds", "cr", "credentials",
     "/credentials", "credentials", true, {"description", "acl", "metadata", "owner_id", NULL}},
};

static void test_descriptors(void **state)
{
    (void)state;
    assert_int_equal(sizeof descriptors / sizeof descriptors[0], MODEL_KIND_COUNT);
    for (size_t i = 0; i < MODEL_KIND_COUNT; i++) {
        const kind_desc *d = kind_get(descriptors[i].kind);
        assert_int_equal(d->kind, descriptors[i].kind);
        assert_string_equal(d->noun, descriptors[i].noun);
        assert_string_equal(d->plural, descriptors[i].plural);
        assert_string_equal(d->command, descriptors[i].command);
        assert_string_equal(d->id_prefix, descriptors[i].id_prefix);
        assert_string_equal(d->api_plural, descriptors[i].api_plural);
        assert_string_equal(d->api_path, descriptors[i].api_path);
        assert_string_equal(d->table, descriptors[i].table);
        assert_int_equal(d->has_token, descriptors[i].has_token);
        assert_true(d->label && d->validate);
        size_t struct_size = d->kind == MODEL_KIND_RULE ? sizeof(model_rule)
                                                        : sizeof(model_cred);
        size_t n = 0;
        for (; descriptors[i].fields[n]; n++) {
            const kind_field *f = &d->fields[n];
            assert_true(n < d->field_count);
            assert_string_equal(f->name, descriptors[i].fields[n]);
            assert_ptr_equal(kind_field_by_name(d->kind, f->name), f);
            assert_true(f->offset + f->size <= struct_size);
            assert_int_equal(f->size == 0, f->type != KIND_FIELD_TEXT);
        }
        assert_int_equal(n, d->field_count);
    }
    /* Out of range: the rule descriptor, never NULL. */
    assert_ptr_equal(kind_get(MODEL_KIND_COUNT), kind_get(MODEL_KIND_RULE));
    assert_ptr_equal(kind_get((model_kind)-1), kind_get(MODEL_KIND_RULE));
}

/* The offsets of the common fields land on each kind's own members, so the
 * accessors read what a kind-specific line would. */
static void test_head_offsets(void **state)
{
    (void)state;
    model_object r, c;
    model_object_init(&r, MODEL_KIND_RULE);
    model_object_init(&c, MODEL_KIND_CRED);
    r.rule.state = MODEL_STATE_EDITED;
    c.cred.state = MODEL_STATE_ORPHANED;
    strcpy(c.cred.error, "lost");
    assert_ptr_equal(model_object_id(&r), r.rule.id);
    assert_ptr_equal(model_object_id(&c), c.cred.id);
    assert_int_equal(model_object_state(&r), MODEL_STATE_EDITED);
    assert_int_equal(model_object_state(&c), MODEL_STATE_ORPHANED);
    assert_ptr_equal(model_object_error(&r), r.rule.error);
    assert_string_equal(model_object_error(&c), "lost");
    assert_ptr_equal(kind_value(&c, "uri", NULL, 0), c.cred.uri);
    assert_ptr_equal(kind_value(&r, "created_at", NULL, 0), r.rule.created_at);
    /* The common part is the same memory whichever member names it. */
    assert_ptr_equal(c.head.metadata, c.cred.metadata);
    assert_ptr_equal(r.head.description, r.rule.description);
    assert_ptr_equal(kind_at(&c, offsetof(model_head, state)), &c.cred.state);
    model_object_clear(&c);
}

/* What the command line, the console's forms and the wire format take from a
 * field: its flag, its label, whether the API nests it. */
static void test_field_words(void **state)
{
    (void)state;
    assert_string_equal(kind_field_by_name(MODEL_KIND_RULE, "ip_policy_id")->flag, "policy");
    assert_string_equal(kind_field_by_name(MODEL_KIND_CRED, "owner_id")->flag, "owner");
    assert_null(kind_field_by_name(MODEL_KIND_RULE, "cidr")->flag);
    assert_string_equal(kind_field_by_name(MODEL_KIND_RULE, "ip_policy_id")->nested,
                        "ip_policy");
    assert_string_equal(kind_field_by_name(MODEL_KIND_CRED, "acl")->label, "ACL rules");
    assert_string_equal(kind_get(MODEL_KIND_RULE)->api_noun, "ip policy rule");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const kind_desc *d = kind_get((model_kind)k);
        for (size_t i = 0; i < d->field_count; i++) {
            const kind_field *f = &d->fields[i];
            /* A form shows every create field by its label. */
            assert_true(!(f->flags & KIND_FIELD_CREATE) || (f->label && f->label[0]));
            assert_int_equal(kind_field_in_head(d->kind, f),
                             strcmp(f->name, "description") == 0 ||
                                 strcmp(f->name, "metadata") == 0);
        }
    }
}

static void test_kind_label(void **state)
{
    (void)state;
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.cidr, "10.0.0.0/8");
    strcpy(o.rule.description, "not the label");
    assert_ptr_equal(kind_label(&o), o.rule.cidr);
    model_object_init(&o, MODEL_KIND_CRED);
    strcpy(o.cred.id, "cr_2Zz1lqOxDdQyVpYc");
    assert_ptr_equal(kind_label(&o), o.cred.id); /* no description: the id */
    strcpy(o.cred.description, "web-1");
    assert_ptr_equal(kind_label(&o), o.cred.description);
}

static void test_kind_field_by_name(void **state)
{
    (void)state;
    static const struct {
        model_kind kind;
        const char *name;
        bool found;
        kind_field_type type;
        unsigned flags;
    } lookups[] = {
        {MODEL_KIND_RULE, "cidr", true, KIND_FIELD_TEXT,
         KIND_FIELD_CREATE | KIND_FIELD_EDIT | KIND_FIELD_REQUIRED},
        {MODEL_KIND_RULE, "ip_policy_id", true, KIND_FIELD_TEXT,
         KIND_FIELD_CREATE | KIND_FIELD_REQUIRED | KIND_FIELD_POLICY},
        {MODEL_KIND_RULE, "action", true, KIND_FIELD_ACTION,
         KIND_FIELD_CREATE | KIND_FIELD_REQUIRED},
        {MODEL_KIND_RULE, "description", true, KIND_FIELD_TEXT,
         KIND_FIELD_CREATE | KIND_FIELD_EDIT},
        {MODEL_KIND_CRED, "acl", true, KIND_FIELD_ACL, KIND_FIELD_CREATE | KIND_FIELD_EDIT},
        {MODEL_KIND_CRED, "owner_id", true, KIND_FIELD_TEXT, KIND_FIELD_CREATE | KIND_FIELD_CALLER},
        {MODEL_KIND_RULE, "acl", false, 0, 0},
        {MODEL_KIND_RULE, "owner_id", false, 0, 0},
        {MODEL_KIND_CRED, "cidr", false, 0, 0},
        {MODEL_KIND_RULE, "policy_id", false, 0, 0}, /* the wire name is ip_policy_id */
        {MODEL_KIND_RULE, "CIDR", false, 0, 0},
        {MODEL_KIND_CRED, "", false, 0, 0},
        {MODEL_KIND_CRED, NULL, false, 0, 0},
    };
    for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++) {
        const kind_field *f = kind_field_by_name(lookups[i].kind, lookups[i].name);
        if ((f != NULL) != lookups[i].found)
            fail_msg("%s field \"%s\": found %d", kind_get(lookups[i].kind)->noun,
                     lookups[i].name ? lookups[i].name : "(null)", f != NULL);
        if (!f)
            continue;
        assert_int_equal(f->type, lookups[i].type);
        assert_int_equal(f->flags, lookups[i].flags);
    }
    /* A field's check: the cidr's canonicalises, the owner's takes "" (the caller). */
    const kind_field *cidr = kind_field_by_name(MODEL_KIND_RULE, "cidr");
    char canon[MODEL_CIDR_MAX + 1];
    assert_int_equal(cidr->check("2001:DB8::/32", canon, sizeof canon, NULL), ERROR_OK);
    assert_string_equal(canon, "2001:db8::/32");
    const kind_field *owner = kind_field_by_name(MODEL_KIND_CRED, "owner_id");
    assert_int_equal(owner->check("", NULL, 0, NULL), ERROR_OK);
    assert_int_equal(owner->check("org_2Zz1", NULL, 0, NULL), ERROR_INVALID);
}

/* ---- kind_validate_row ---------------------------------------------------- */

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

/* A row the gate takes: a rule of POLICY for 10.0.0.0/8, or an empty credential. */
static model_object base_row(model_kind kind)
{
    model_object o;
    model_object_init(&o, kind);
    if (kind == MODEL_KIND_RULE) {
        strcpy(o.rule.cidr, "10.0.0.0/8");
        strcpy(o.rule.policy_id, POLICY);
        o.rule.action = MODEL_ACTION_ALLOW;
    }
    return o;
}

/* A base row with a few fields changed (NULL: as in the base row), and what the
 * gate says: NULL when it takes the row, else how its message starts. */
typedef struct row_case {
    model_kind kind;
    const char *id, *cidr, *description;
    const char *acl[3]; /* NULL-terminated */
    int state;          /* -1: new */
    const char *want;
    const char *canon; /* a rule taken: its cidr afterwards */
} row_case;

static const row_case row_cases[] = {
    {MODEL_KIND_RULE, NULL, "2001:DB8::/32", NULL, {NULL}, -1, NULL, "2001:db8::/32"},
    {MODEL_KIND_RULE, "local_2Zz1lqOxDdQyVpYc", NULL, NULL, {NULL}, -1, NULL, "10.0.0.0/8"},
    {MODEL_KIND_RULE, "ipr_2Zz1lqOxDdQyVpYc", NULL, NULL, {NULL}, MODEL_STATE_REMOTE_DELETED,
     NULL, "10.0.0.0/8"},
    {MODEL_KIND_RULE, "cr_2Zz1lqOxDdQyVpYc", NULL, NULL, {NULL}, -1,
     "id must start with ipr_", NULL},
    {MODEL_KIND_CRED, "ipr_2Zz1lqOxDdQyVpYc", NULL, NULL, {NULL}, -1,
     "id must start with cr_", NULL},
    {MODEL_KIND_CRED, "local_", NULL, NULL, {NULL}, -1, "id must start with cr_", NULL},
    {MODEL_KIND_RULE, NULL, NULL, NULL, {NULL}, MODEL_STATE_COUNT,
     "state: 10 is not a sync state", NULL},
    /* The head is checked before the fields. */
    {MODEL_KIND_RULE, "ipr_a-b", "10.0.0.1/8", NULL, {NULL}, -1,
     "id has a character that is not a letter or digit", NULL},
    /* A later field refused: the cidr is not canonicalised either. */
    {MODEL_KIND_RULE, NULL, "2001:DB8::/32", "\xFF", {NULL}, -1,
     "description is not valid UTF-8", NULL},
    {MODEL_KIND_CRED, NULL, NULL, "web-1", {"bind:a.example.com", "bind:env=*", NULL}, -1,
     NULL, NULL},
    {MODEL_KIND_CRED, NULL, NULL, NULL, {"*", "bind:a.example.com", NULL}, -1,
     "acl rule 1: '*' must be the only rule", NULL},
    {MODEL_KIND_CRED, NULL, NULL, NULL, {"bind:a.example.com", "bind:a\nb", NULL}, -1,
     "acl rule 2: ", NULL},
};

static model_object row_of(const row_case *c)
{
    model_object o = base_row(c->kind);
    if (c->id)
        strcpy(model_object_id_buf(&o), c->id);
    if (c->kind == MODEL_KIND_RULE) {
        if (c->cidr)
            strcpy(o.rule.cidr, c->cidr);
        if (c->description)
            strcpy(o.rule.description, c->description);
        if (c->state >= 0)
            o.rule.state = (model_state)c->state;
        return o;
    }
    if (c->description)
        strcpy(o.cred.description, c->description);
    for (size_t i = 0; c->acl[i]; i++)
        assert_int_equal(model_acl_add(&o.cred.acl, c->acl[i], NULL), ERROR_OK);
    if (c->state >= 0)
        o.cred.state = (model_state)c->state;
    return o;
}

/* The gate says which field it refused, as a value: the first field in the order
 * the kind's validate checks them, NULL for what every row has. */
static void test_check_row_bad_field(void **state)
{
    (void)state;
    static const struct {
        const char *id, *cidr, *policy, *description, *metadata, *want, *msg;
        int action;
    } rules[] = {
        {"", "10.0.0.0/8", "ipp_a1", "", "", NULL, NULL, MODEL_ACTION_ALLOW},
        {"", "10.0.0.1/8", "ipp_a1", "", "", "cidr", "cidr: host bits set",
         MODEL_ACTION_ALLOW},
        {"", "10.0.0.0/8", "ipx_a1", "", "", "ip_policy_id", "policy: ", MODEL_ACTION_DENY},
        {"", "10.0.0.0/8", "ipp_a1", "", "", "action", "action: ", 7},
        {"", "10.0.0.0/8", "ipp_a1", "\xFF", "", "description", "description ",
         MODEL_ACTION_ALLOW},
        {"", "10.0.0.0/8", "ipp_a1", "", "\xFF", "metadata", "metadata ", MODEL_ACTION_ALLOW},
        {"", "10.0.0.1/8", "ipx_a1", "\xFF", "", "cidr", "cidr: ", MODEL_ACTION_ALLOW},
        {"", "10.0.0.0/8", "ipx_a1", "\xFF", "", "ip_policy_id", "policy: ", 7},
        /* the head first, and it is no field's */
        {"ipr_a-b", "10.0.0.1/8", "ipp_a1", "", "", NULL, "id ", MODEL_ACTION_ALLOW},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        model_object o;
        model_object_init(&o, MODEL_KIND_RULE);
        strcpy(o.rule.id, rules[i].id);
        strcpy(o.rule.cidr, rules[i].cidr);
        strcpy(o.rule.policy_id, rules[i].policy);
        strcpy(o.rule.description, rules[i].description);
        strcpy(o.rule.metadata, rules[i].metadata);
        o.rule.action = (model_action)rules[i].action;
        error_info err = {ERROR_OK, ""};
        const kind_field *bad = kind_get(MODEL_KIND_RULE)->fields; /* overwritten */
        error_code rc = kind_check_row(&o, &bad, &err);
        if (!rules[i].msg) {
            assert_int_equal(rc, ERROR_OK);
            assert_null(bad);
            continue;
        }
        assert_int_equal(rc, ERROR_INVALID);
        if (strncmp(err.msg, rules[i].msg, strlen(rules[i].msg)) != 0)
            fail_msg("rule case %zu: \"%s\" does not start with \"%s\"", i, err.msg,
                     rules[i].msg);
        if (!rules[i].want) {
            assert_null(bad);
            continue;
        }
        assert_ptr_equal(bad, kind_field_by_name(MODEL_KIND_RULE, rules[i].want));
        /* kind_validate_row is the same gate without the field */
        error_info again = {ERROR_OK, ""};
        assert_int_equal(kind_validate_row(&o, &again), ERROR_INVALID);
        assert_string_equal(again.msg, err.msg);
        assert_int_equal(kind_check_row(&o, NULL, &again), ERROR_INVALID);
    }

    model_object c;
    model_object_init(&c, MODEL_KIND_CRED);
    error_info err;
    const kind_field *bad = kind_get(MODEL_KIND_CRED)->fields;
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_OK);
    assert_null(bad);
    /* owner */
    strcpy(c.cred.owner_id, "team_a1");
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_INVALID);
    assert_ptr_equal(bad, kind_field_by_name(MODEL_KIND_CRED, "owner_id"));
    /* acl before owner */
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:foo..com", &err), ERROR_OK);
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_INVALID);
    assert_ptr_equal(bad, kind_field_by_name(MODEL_KIND_CRED, "acl"));
    assert_non_null(strstr(err.msg, "acl rule 1"));
    /* the gate checks metadata before the acl (validate_cred's order) */
    strcpy(c.cred.metadata, "\xFF");
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_INVALID);
    assert_ptr_equal(bad, kind_field_by_name(MODEL_KIND_CRED, "metadata"));
    assert_non_null(strstr(err.msg, "metadata"));
    /* description first */
    strcpy(c.cred.description, "\xFF");
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_INVALID);
    assert_ptr_equal(bad, kind_field_by_name(MODEL_KIND_CRED, "description"));
    model_object_clear(&c);

    /* A user may write all of the API's 4,096 bytes of metadata (the creation
     * marker no longer takes a share of them). */
    model_object_init(&c, MODEL_KIND_CRED);
    memset(c.cred.metadata, 'm', MODEL_METADATA_MAX);
    c.cred.metadata[MODEL_METADATA_MAX] = '\0';
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_OK);
    assert_null(bad);
    model_object_clear(&c);

    /* A head field: refused, but no field of the kind's */
    model_object_init(&c, MODEL_KIND_CRED);
    strcpy(c.cred.description, "\xFF");
    strcpy(c.cred.created_at, "yesterday");
    bad = kind_get(MODEL_KIND_CRED)->fields;
    assert_int_equal(kind_check_row(&c, &bad, &err), ERROR_INVALID);
    assert_null(bad);
    model_object_clear(&c);
    model_object unknown;
    model_object_init(&unknown, MODEL_KIND_COUNT);
    bad = kind_get(MODEL_KIND_RULE)->fields;
    assert_int_equal(kind_check_row(&unknown, &bad, &err), ERROR_INVALID);
    assert_null(bad);
}

static void test_validate_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof row_cases / sizeof row_cases[0]; i++) {
        const row_case *c = &row_cases[i];
        model_object o = row_of(c), before;
        memcpy(&before, &o, sizeof before);
        error_info err = {ERROR_OK, ""};
        error_code rc = kind_validate_row(&o, &err);
        if (rc != (c->want ? ERROR_INVALID : ERROR_OK))
            fail_msg("row case %zu: %s (%s)", i, error_code_name(rc), err.msg);
        if (c->want) {
            if (strncmp(err.msg, c->want, strlen(c->want)) != 0)
                fail_msg("row case %zu: \"%s\" does not start with \"%s\"", i, err.msg,
                         c->want);
            assert_memory_equal(&o, &before, sizeof o); /* refused: untouched */
        } else if (c->kind == MODEL_KIND_RULE) {
            assert_string_equal(o.rule.cidr, c->canon);
        }
        model_object_clear(&o);
    }
    model_object unknown;
    model_object_init(&unknown, MODEL_KIND_COUNT);
    error_info err;
    assert_int_equal(kind_validate_row(&unknown, &err), ERROR_INVALID);
    assert_string_equal(err.msg, "object of unknown kind 2");
}

/* ---- the store refuses every bad value of the validation table ------------ */

/* Value lists for fields the validation table has no rows for. */
enum { SRC_TIME = K_ACL_RULE + 1, SRC_URI };

static const char *const time_values[] = {
    "2025-09-04T10:11:15Z", "2025-09-04T10:11:15.5+02:00", "", "2025-09-04",
    "2025-09-04 10:11:15Z", "2025-13-04T10:11:15Z", "2025-09-04T10:11:15", "yesterday",
    "2025-02-30T10:11:15Z", NULL,
};

static const char *const uri_values[] = {
    "https://api.example.com/ip_policy_rules/ipr_1", "http://127.0.0.1:8080/x", "",
    "ftp://api.example.com/x", "api.example.com/x", "/relative", "https://x/a b",
    "https://x/\x1b[31m", NULL,
};

/* An action the row carries when the text is not one: model_action has no value
 * for "Allow" or "permit", so a caller's mistake reaches the gate as a number. */
#define BAD_ACTION ((model_action)(MODEL_ACTION_DENY + 1))

/*
 * Where a value goes in a row, and how the gate must judge it there: the field's
 * validator, called here directly, with the prefix the gate puts in front.
 */
typedef struct gate_field {
    const char *name;
    model_kind kind;
    int source;             /* the table's K_* rows, or SRC_TIME / SRC_URI */
    kind_field_type type;   /* text at offset/size, the action, or the only ACL rule */
    size_t offset, size;    /* in model_rule / model_cred */
    error_code (*judge)(model_kind kind, const char *value, error_info *why);
    bool reprefix;          /* ids: the table's id prefix becomes the kind's */
} gate_field;

static error_code judge_cidr(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    char canon[MODEL_CIDR_MAX + 1];
    return validate_cidr(v, NULL, canon, sizeof canon, why) ? error_prefix(why, "cidr")
                                                           : ERROR_OK;
}

static error_code judge_policy(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_id(v, "ipp", "id", why) ? error_prefix(why, "policy") : ERROR_OK;
}

static error_code judge_action(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    model_action a;
    if (validate_action(v, &a, NULL) == ERROR_OK)
        return ERROR_OK;
    model_object o = base_row(MODEL_KIND_RULE);
    o.rule.action = BAD_ACTION;
    return validate_rule(&o.rule, why);
}

static error_code judge_description(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_description(v, why);
}

static error_code judge_metadata(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_metadata(v, why);
}

static error_code judge_error_text(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_text(v, MODEL_ERROR_MAX, "error text", why);
}

/* One ACL rule as a whole ACL: validate_acl names its position, "acl rule 1: …". */
static error_code judge_acl(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    static const char lone[] = "acl rule: ";
    if (validate_acl_rule(v, why) == ERROR_OK)
        return ERROR_OK;
    assert_int_equal(strncmp(why->msg, lone, sizeof lone - 1), 0);
    char rest[ERROR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", why->msg + sizeof lone - 1);
    return error_set(why, ERROR_INVALID, "acl rule 1: %s", rest);
}

static error_code judge_owner(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    static const char *const owners[] = {"usr", "bot"};
    return v[0] ? validate_id_among(v, owners, 2, "owner id", why) : ERROR_OK; /* empty: the caller */
}

static error_code judge_id(model_kind kind, const char *v, error_info *why)
{
    if (!v[0] || validate_is_local_id(v))
        return ERROR_OK; /* the store gives it a local id / a local row */
    return validate_id(v, kind_get(kind)->id_prefix, "id", why);
}

static error_code judge_time(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return v[0] ? validate_timestamp(v, "created_at", why) : ERROR_OK; /* empty: now */
}

static error_code judge_uri(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_uri(v, "uri", why);
}

static error_code judge_policy_uri(model_kind kind, const char *v, error_info *why)
{
    (void)kind;
    return validate_uri(v, "ip_policy.uri", why);
}

#define RULE_TEXT(f) KIND_FIELD_TEXT, offsetof(model_rule, f), sizeof(((model_rule *)0)->f)
#define CRED_TEXT(f) KIND_FIELD_TEXT, offsetof(model_cred, f), sizeof(((model_cred *)0)->f)
#define RULE MODEL_KIND_RULE
#define CRED MODEL_KIND_CRED

static const gate_field gate_fields[] = {
    {"store gate: rule id", RULE, K_ID, RULE_TEXT(id), judge_id, true},
    {"store gate: rule uri", RULE, SRC_URI, RULE_TEXT(uri), judge_uri, false},
    {"store gate: rule created_at", RULE, SRC_TIME, RULE_TEXT(created_at), judge_time, false},
    {"store gate: rule cidr", RULE, K_CIDR, RULE_TEXT(cidr), judge_cidr, false},
    {"store gate: rule policy id", RULE, K_ID, RULE_TEXT(policy_id), judge_policy, false},
    {"store gate: rule action", RULE, K_ACTION, KIND_FIELD_ACTION, 0, 0, judge_action, false},
    {"store gate: rule description", RULE, K_DESC, RULE_TEXT(description), judge_description,
     false},
    {"store gate: rule metadata", RULE, K_META, RULE_TEXT(metadata), judge_metadata, false},
    {"store gate: rule policy uri", RULE, SRC_URI, RULE_TEXT(policy_uri), judge_policy_uri,
     false},
    {"store gate: rule error text", RULE, K_DESC, RULE_TEXT(error), judge_error_text, false},
    {"store gate: credential id", CRED, K_ID, CRED_TEXT(id), judge_id, true},
    {"store gate: credential uri", CRED, SRC_URI, CRED_TEXT(uri), judge_uri, false},
    {"store gate: credential created_at", CRED, SRC_TIME, CRED_TEXT(created_at), judge_time,
     false},
    {"store gate: credential description", CRED, K_DESC, CRED_TEXT(description),
     judge_description, false},
    {"store gate: credential metadata", CRED, K_META, CRED_TEXT(metadata), judge_metadata,
     false},
    {"store gate: credential acl", CRED, K_ACL_RULE, KIND_FIELD_ACL, 0, 0, judge_acl, false},
    {"store gate: credential owner id", CRED, K_OWNER, CRED_TEXT(owner_id), judge_owner,
     false},
    {"store gate: credential error text", CRED, K_DESC, CRED_TEXT(error), judge_error_text,
     false},
};

#define GATE_COUNT (sizeof gate_fields / sizeof gate_fields[0])

/* The values fed to `gf`, as heap strings (*n of them; free each and the array). */
static char **field_values(const gate_field *gf, size_t *n)
{
    const char *const *list = gf->source == SRC_TIME ? time_values
                              : gf->source == SRC_URI ? uri_values
                                                      : NULL;
    char **out = calloc(CASE_COUNT + 16, sizeof *out);
    assert_non_null(out);
    *n = 0;
    for (size_t i = 0; list && list[i]; i++)
        out[(*n)++] = strdup(list[i]);
    static char in[INPUT_MAX];
    for (size_t i = 0; !list && i < CASE_COUNT; i++) {
        const struct vcase *c = &cases[i];
        if ((int)c->kind != gf->source)
            continue;
        build_input(c, in, sizeof in);
        const char *body = in;
        const char *prefix = "";
        size_t plen = c->id_prefix ? strlen(c->id_prefix) : 0;
        if (gf->reprefix && plen && strncmp(in, c->id_prefix, plen) == 0) {
            prefix = kind_get(gf->kind)->id_prefix; /* "ipp_ab-c" -> "ipr_ab-c" */
            body = in + plen;
        }
        size_t len = strlen(prefix) + strlen(body) + 1;
        out[*n] = malloc(len);
        assert_non_null(out[*n]);
        snprintf(out[(*n)++], len, "%s%s", prefix, body);
    }
    return out;
}

/* Put `v` in the row; false when the field's buffer cannot hold it. */
static bool put_value(const gate_field *gf, model_object *row, const char *v)
{
    model_action action;
    switch (gf->type) {
    case KIND_FIELD_ACTION:
        row->rule.action = model_action_parse(v, &action) ? action : BAD_ACTION;
        return true;
    case KIND_FIELD_ACL:
        assert_int_equal(model_acl_add(&row->cred.acl, v, NULL), ERROR_OK);
        return true;
    case KIND_FIELD_TEXT:
        break;
    }
    /* The union's members share the object's address. */
    return model_copy_text((char *)&row->rule + gf->offset, gf->size, v);
}

static size_t row_count(store *st, model_kind kind)
{
    size_t n = 99;
    error_info err;
    assert_int_equal(store_count(st, kind, NULL, &n, &err), ERROR_OK);
    return n;
}

/* Test names show values with anything unprintable as '?', cut short. */
static const char *shown(const char *v, char *buf, size_t size)
{
    size_t i = 0;
    for (; v[i] && i + 4 < size; i++)
        buf[i] = v[i] >= 0x20 && v[i] < 0x7F ? v[i] : '?';
    snprintf(buf + i, size - i, "%s", v[i] ? "..." : "");
    return buf;
}

/* The kind's field a gate_field is (by type, and offset for text); NULL for what
 * every row has (id, uri, created_at, the policy uri, the error text). */
static const kind_field *field_of(const gate_field *gf)
{
    const kind_desc *d = kind_get(gf->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (f->type == gf->type && (f->type != KIND_FIELD_TEXT || f->offset == gf->offset))
            return f;
    }
    return NULL;
}

/*
 * One value through store_insert. A value the field's validator refuses: ERROR_INVALID
 * with exactly its message (prefixed as the gate does), the row as given, nothing
 * written, and kind_validate_row saying the same. A value it takes: stored (then
 * removed, so the next value starts from an empty table).
 */
static void check_gate_value(store *st, const gate_field *gf, const char *v, size_t *refused,
                             size_t *unfit)
{
    char buf[48];
    error_info want = {ERROR_OK, ""};
    error_code verdict = gf->judge(gf->kind, v, &want);
    model_object row = base_row(gf->kind), before;
    if (!put_value(gf, &row, v)) {
        /* Longer than the model's buffer: only a value the API refuses anyway. */
        if (verdict != ERROR_INVALID)
            fail_msg("%s: \"%s\" is valid but does not fit", gf->name, shown(v, buf, sizeof buf));
        (*unfit)++;
        model_object_clear(&row);
        return;
    }
    memcpy(&before, &row, sizeof before);
    error_info got = {ERROR_OK, ""};
    error_code rc = store_insert(st, &row, &got);
    /* A queued create is a person's: the store (not the gate, which keeps a
     * pulled rule of that form) refuses an IPv4-mapped cidr with its IPv4 form. */
    error_info given = {ERROR_OK, ""};
    if (verdict == ERROR_OK && field_of(gf) == kind_field_by_name(MODEL_KIND_RULE, "cidr") &&
        validate_cidr_given(v, &given) != ERROR_OK) {
        error_prefix(&given, "cidr");
        assert_int_equal(rc, ERROR_INVALID);
        assert_string_equal(got.msg, given.msg);
        assert_int_equal(row_count(st, gf->kind), 0);
        model_object_clear(&row);
        return;
    }
    if (verdict == ERROR_OK) {
        if (rc != ERROR_OK)
            fail_msg("%s: \"%s\" refused: %s", gf->name, shown(v, buf, sizeof buf), got.msg);
        assert_int_equal(row_count(st, gf->kind), 1);
        assert_int_equal(store_remove(st, gf->kind, model_object_id(&row), &got), ERROR_OK);
        model_object_clear(&row);
        return;
    }
    if (rc != ERROR_INVALID || strcmp(got.msg, want.msg) != 0)
        fail_msg("%s: \"%s\": got %s \"%s\", want invalid \"%s\"", gf->name,
                 shown(v, buf, sizeof buf), error_code_name(rc), got.msg, want.msg);
    assert_memory_equal(&row, &before, sizeof row);
    assert_int_equal(row_count(st, gf->kind), 0);
    error_info gate = {ERROR_OK, ""};
    assert_int_equal(kind_validate_row(&row, &gate), ERROR_INVALID);
    assert_string_equal(gate.msg, want.msg);
    /* kind_check_row: the same message, and the field as a value */
    const kind_field *bad = kind_get(gf->kind)->fields; /* overwritten */
    error_info checked = {ERROR_OK, ""};
    assert_int_equal(kind_check_row(&row, &bad, &checked), ERROR_INVALID);
    assert_string_equal(checked.msg, want.msg);
    if (bad != field_of(gf))
        fail_msg("%s: \"%s\": the gate names %s", gf->name, shown(v, buf, sizeof buf),
                 bad ? bad->name : "no field");
    (*refused)++;
    model_object_clear(&row);
}

static void test_store_gate(void **state)
{
    const gate_field *gf = *state;
    store *st = NULL;
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &st, &err), ERROR_OK);
    size_t n, refused = 0, unfit = 0;
    char **values = field_values(gf, &n);
    for (size_t i = 0; i < n; i++) {
        check_gate_value(st, gf, values[i], &refused, &unfit);
        free(values[i]);
    }
    free(values);
    store_close(st);
    assert_true(refused > 0);
    print_message("%zu values: %zu refused by the store, %zu taken, %zu too long for the "
                  "model's buffer\n", n, refused, n - refused - unfit, unfit);
}

/* kind_value's buffer may be NULL for every field: an ACL without one is "". */
static void test_value_without_buffer(void **state)
{
    (void)state;
    model_object c;
    model_object_init(&c, MODEL_KIND_CRED);
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:a.example", NULL), ERROR_OK);
    assert_int_equal(model_acl_add(&c.cred.acl, "bind:b.example", NULL), ERROR_OK);
    assert_string_equal(kind_value(&c, "acl", NULL, 0), "");
    char buf[64] = "untouched";
    assert_string_equal(kind_value(&c, "acl", buf, 0), "");
    assert_string_equal(buf, "untouched");
    assert_string_equal(kind_value(&c, "acl", buf, sizeof buf),
                        "bind:a.example, bind:b.example");
    strcpy(c.cred.description, "web");
    assert_string_equal(kind_value(&c, "description", NULL, 0), "web");
    model_object_clear(&c);
}

static const struct CMUnitTest kind_tests[] = {
    cmocka_unit_test(test_descriptors),
    cmocka_unit_test(test_head_offsets),
    cmocka_unit_test(test_field_words),
    cmocka_unit_test(test_kind_label),
    cmocka_unit_test(test_kind_field_by_name),
    cmocka_unit_test(test_check_row_bad_field),
    cmocka_unit_test(test_validate_row),
    cmocka_unit_test(test_value_without_buffer),
};

#define KIND_TEST_COUNT (sizeof kind_tests / sizeof kind_tests[0])

int main(void)
{
    static struct CMUnitTest tests[KIND_TEST_COUNT + GATE_COUNT];
    for (size_t i = 0; i < KIND_TEST_COUNT; i++)
        tests[i] = kind_tests[i];
    for (size_t i = 0; i < GATE_COUNT; i++)
        tests[KIND_TEST_COUNT + i] = (struct CMUnitTest){gate_fields[i].name, test_store_gate,
                                                         NULL, NULL, (void *)&gate_fields[i]};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

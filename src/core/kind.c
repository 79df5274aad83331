/* kind: the descriptors of rules and credentials, and the store's row gate. */
#include "rampart/kind.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rampart/utf8.h"
#include "rampart/validate.h"

/* ---- field checks -------------------------------------------------------- */

static error_code check_cidr(const char *text, char *canon, size_t canon_size,
                             error_info *err)
{
    return validate_cidr(text, NULL, canon, canon_size, err);
}

static error_code check_policy(const char *text, char *canon, size_t canon_size,
                               error_info *err)
{
    (void)canon;
    (void)canon_size;
    return validate_id(text, "ipp", "policy id", err);
}

static error_code check_description(const char *text, char *canon, size_t canon_size,
                                    error_info *err)
{
    (void)canon;
    (void)canon_size;
    return validate_description(text, err);
}

static error_code check_metadata(const char *text, char *canon, size_t canon_size,
                                 error_info *err)
{
    (void)canon;
    (void)canon_size;
    return validate_metadata(text, err);
}

static error_code check_owner(const char *text, char *canon, size_t canon_size,
                              error_info *err)
{
    (void)canon;
    (void)canon_size;
    static const char *const owners[] = {"usr", "bot"};
    return text && text[0] ? validate_id_among(text, owners, 2, "owner id", err) : ERROR_OK;
}

#define RULE_TEXT(f, flags, check, label, arg, help)                                     \
    {#f, KIND_FIELD_TEXT, offsetof(model_rule, f), sizeof(((model_rule *)0)->f), flags, \
     check, NULL, NULL, NULL, label, arg, help}
#define CRED_TEXT(f, flags, check, label, arg, help)                                     \
    {#f, KIND_FIELD_TEXT, offsetof(model_cred, f), sizeof(((model_cred *)0)->f), flags, \
     check, NULL, NULL, NULL, label, arg, help}

/* The user's fields in the order forms and `show` list them. */
static const kind_field rule_fields[] = {
    {"cidr", KIND_FIELD_TEXT, offsetof(model_rule, cidr), sizeof(((model_rule *)0)->cidr),
     KIND_FIELD_CREATE | KIND_FIELD_EDIT | KIND_FIELD_REQUIRED, check_cidr, NULL, NULL, NULL,
     "CIDR", "CIDR",
     "IPv4 or IPv6 range with its mask, at the network address\n"
     "(10.0.0.0/8, 2001:db8::/32; one address: 10.1.2.3/32)"},
    {"ip_policy_id", KIND_FIELD_TEXT, offsetof(model_rule, policy_id),
     sizeof(((model_rule *)0)->policy_id),
     KIND_FIELD_CREATE | KIND_FIELD_REQUIRED | KIND_FIELD_POLICY, check_policy, "policy_id",
     "policy", "ip_policy", "Policy", "ipp_ID",
     "the IP policy; default: the policy setting (config\n"
     "file, per profile, or RAMPART_POLICY), named on stderr\n"
     "when used"},
    {"action", KIND_FIELD_ACTION, offsetof(model_rule, action), 0,
     KIND_FIELD_CREATE | KIND_FIELD_REQUIRED, NULL, NULL, NULL, NULL, "Action", "allow|deny",
     "what the rule does to an address in its range"},
    RULE_TEXT(description, KIND_FIELD_CREATE | KIND_FIELD_EDIT, check_description,
              "Description", "TEXT", "up to 255 bytes"),
    RULE_TEXT(metadata, KIND_FIELD_CREATE | KIND_FIELD_EDIT | KIND_FIELD_OPAQUE, check_metadata,
              "Metadata", "TEXT", "up to 4096 bytes"),
};

static const kind_field cred_fields[] = {
    CRED_TEXT(description, KIND_FIELD_CREATE | KIND_FIELD_EDIT, check_description,
              "Description", "TEXT",
              "who or what will use it (up to 255 bytes); agents can\n"
              "fetch the token by this name"),
    {"acl", KIND_FIELD_ACL, offsetof(model_cred, acl), 0, KIND_FIELD_CREATE | KIND_FIELD_EDIT,
     NULL, NULL, NULL, NULL, "ACL rules", "RULE",
     "a bind rule, repeatable: bind:example.com,\n"
     "bind:*.example.com, bind:env=prod, bind:host.example.net:20002,\n"
     "bind:*; or '*' alone (no restriction, like no --acl)"},
    CRED_TEXT(metadata, KIND_FIELD_CREATE | KIND_FIELD_EDIT | KIND_FIELD_OPAQUE,
              check_metadata, "Metadata", "TEXT", "up to 4096 bytes"),
    {"owner_id", KIND_FIELD_TEXT, offsetof(model_cred, owner_id),
     sizeof(((model_cred *)0)->owner_id), KIND_FIELD_CREATE | KIND_FIELD_CALLER, check_owner,
     NULL, "owner", NULL, "Owner", "ID", "owner (usr_ID or bot_ID); default: the API key's owner"},
};

/* What every row has, and a rule's policy_uri: the store's columns. */
static const kind_field rule_head[] = {
    RULE_TEXT(id, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    RULE_TEXT(uri, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    RULE_TEXT(created_at, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    RULE_TEXT(error, 0, NULL, NULL, NULL, NULL),
    RULE_TEXT(policy_uri, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
};

static const kind_field cred_head[] = {
    CRED_TEXT(id, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    CRED_TEXT(uri, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    CRED_TEXT(created_at, KIND_FIELD_REMOTE, NULL, NULL, NULL, NULL),
    CRED_TEXT(error, 0, NULL, NULL, NULL, NULL),
};

/* Each kind's struct begins with model_head (model.h): the same offsets. */
#define SAME_HEAD(t, m) _Static_assert(offsetof(t, m) == offsetof(model_head, m), #t "." #m)
#define SAME_HEADS(t)                                                                  \
    SAME_HEAD(t, id);                                                                  \
    SAME_HEAD(t, uri);                                                                 \
    SAME_HEAD(t, created_at);                                                          \
    SAME_HEAD(t, description);                                                         \
    SAME_HEAD(t, metadata);                                                            \
    SAME_HEAD(t, state);                                                               \
    SAME_HEAD(t, error)
SAME_HEADS(model_rule);
SAME_HEADS(model_cred);

/* ---- per-kind functions -------------------------------------------------- */

static const char *rule_label(const model_object *obj)
{
    return obj->rule.cidr;
}

static const char *cred_label(const model_object *obj)
{
    return obj->cred.description[0] ? obj->cred.description : obj->cred.id;
}

static error_code rule_validate(model_object *obj, error_info *err)
{
    return validate_rule(&obj->rule, err);
}

static error_code cred_validate(model_object *obj, error_info *err)
{
    error_code rc = validate_cred(&obj->cred, err);
    return rc != ERROR_OK ? rc : check_owner(obj->cred.owner_id, NULL, 0, err);
}

/* One row per kind: what differs, in the order of kind_desc. `fn` names the
 * kind's functions above (fn_label, fn_validate, …). */
#define KIND(k, noun, plural, command, prefix, api, table, token, fields, fn, api_noun, traits) \
    [k] = {k, noun, plural, command, prefix, api, "/" api, table, token, fields,             \
           sizeof(fields) / sizeof((fields)[0]), fn##_label, fn##_validate, fn##_head,        \
           sizeof(fn##_head) / sizeof(fn##_head[0]), api_noun, traits}

static const kind_desc kinds[MODEL_KIND_COUNT] = {
    KIND(MODEL_KIND_RULE, "rule", "rules", "rules", "ipr", "ip_policy_rules", "rules", false,
         rule_fields, rule, "ip policy rule", KIND_KEYED | KIND_IN_POLICY),
    KIND(MODEL_KIND_CRED, "credential", "credentials", "creds", "cr", "credentials",
         "credentials", true, cred_fields, cred, "credential",
         KIND_MARKED | KIND_ROTATES),
};

const kind_desc *kind_get(model_kind kind)
{
    return (unsigned)kind < MODEL_KIND_COUNT ? &kinds[kind] : &kinds[MODEL_KIND_RULE];
}

const char *kind_label(const model_object *obj)
{
    return kind_get(obj->kind)->label(obj);
}

bool kind_field_in_head(model_kind kind, const kind_field *f)
{
    (void)kind;
    return f->offset == offsetof(model_head, description) ||
           f->offset == offsetof(model_head, metadata);
}

const kind_field *kind_field_by_name(model_kind kind, const char *name)
{
    const kind_desc *d = kind_get(kind);
    for (size_t i = 0; name && i < d->field_count; i++) {
        if (strcmp(d->fields[i].name, name) == 0)
            return &d->fields[i];
    }
    return NULL;
}

unsigned kind_field_bit(model_kind kind, const kind_field *f)
{
    return 1u << (unsigned)(f - kind_get(kind)->fields);
}

unsigned kind_field_set(model_kind kind, unsigned flags)
{
    const kind_desc *d = kind_get(kind);
    unsigned set = 0;
    for (size_t i = 0; i < d->field_count; i++) {
        if ((d->fields[i].flags & flags) == flags)
            set |= 1u << i;
    }
    return set;
}

const char *kind_field_names(model_kind kind, unsigned set, char *buf, size_t size)
{
    const kind_desc *d = kind_get(kind);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < d->field_count && used + 1 < size; i++) {
        if (!(set & (1u << i)))
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", d->fields[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}

/* ---- values by name ------------------------------------------------------ */

/* The union's members all start where it starts: an offset in the kind's struct
 * is an offset from here. */
const void *kind_at(const model_object *obj, size_t offset)
{
    return (const char *)&obj->rule + offset;
}

void *kind_at_mut(model_object *obj, size_t offset)
{
    return (char *)&obj->rule + offset;
}

const void *kind_field_at(const model_object *obj, const kind_field *f)
{
    return kind_at(obj, f->offset);
}

void *kind_field_at_mut(model_object *obj, const kind_field *f)
{
    return kind_at_mut(obj, f->offset);
}

/* What every row has (its head, and the kind's head fields: a rule's policy_uri);
 * NULL for another name. */
static const char *head_value(const model_object *obj, const char *name)
{
    if (strcmp(name, "state") == 0)
        return model_state_name(obj->head.state);
    const kind_desc *d = kind_get(obj->kind);
    for (size_t i = 0; i < d->head_field_count; i++) {
        if (strcmp(name, d->head_fields[i].name) == 0)
            return kind_field_at(obj, &d->head_fields[i]);
    }
    return NULL;
}

static const char *join_acl(const model_acl *acl, char *buf, size_t size)
{
    if (!buf || size == 0)
        return ""; /* nowhere to join it (kind.h) */
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < acl->count && used + 1 < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", acl->rules[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    utf8_trim_partial(buf); /* snprintf may have cut a character */
    return buf;
}

const char *kind_value(const model_object *obj, const char *name, char *buf, size_t size)
{
    const char *head = head_value(obj, name);
    if (head)
        return head;
    const kind_field *f = kind_field_by_name(obj->kind, name);
    if (!f)
        return "";
    switch (f->type) {
    case KIND_FIELD_ACTION:
        return model_action_name(*(const model_action *)kind_field_at(obj, f));
    case KIND_FIELD_ACL:
        return join_acl(kind_field_at(obj, f), buf, size);
    case KIND_FIELD_TEXT:
    default:
        return kind_field_at(obj, f);
    }
}

/* One field's own check of obj's value. */
static error_code check_field(const model_object *obj, const kind_field *f, error_info *why)
{
    const void *at = kind_field_at(obj, f);
    switch (f->type) {
    case KIND_FIELD_ACTION:
        return (unsigned)*(const model_action *)at > MODEL_ACTION_DENY
                   ? error_set(why, ERROR_INVALID, "must be allow or deny")
                   : ERROR_OK;
    case KIND_FIELD_ACL:
        return validate_acl(at, why);
    case KIND_FIELD_TEXT:
    default:
        return f->check ? f->check(at, NULL, 0, why) : ERROR_OK;
    }
}

/* ---- the store's gate ---------------------------------------------------- */

static error_code check_head(const kind_desc *d, const model_head *h, error_info *err)
{
    if (h->id[0] && !validate_is_local_id(h->id) && validate_id(h->id, d->id_prefix, "id", err))
        return err->code;
    if (h->created_at[0] && validate_timestamp(h->created_at, "created_at", err))
        return err->code;
    if (validate_uri(h->uri, "uri", err))
        return err->code;
    if ((unsigned)h->state >= MODEL_STATE_COUNT)
        return error_set(err, ERROR_INVALID, "state: %d is not a sync state", (int)h->state);
    return validate_text(h->error, MODEL_ERROR_MAX, "error text", err);
}

/*
 * The user's fields in the order the kind's validate checks them, each by the
 * check the gate applies (validate_rule: cidr, policy, action, description,
 * metadata; a credential's: validate_cred's description, metadata, acl, then the
 * owner's check). The gate's message
 * comes from the kind's validate; this says which field it was about.
 */
static const size_t rule_gate_order[] = {0, 1, 2, 3, 4};
static const size_t cred_gate_order[] = {0, 2, 1, 3};
_Static_assert(sizeof rule_gate_order / sizeof rule_gate_order[0] ==
                   sizeof rule_fields / sizeof rule_fields[0],
               "every rule field in the gate's order");
_Static_assert(sizeof cred_gate_order / sizeof cred_gate_order[0] ==
                   sizeof cred_fields / sizeof cred_fields[0],
               "every credential field in the gate's order");


/* The first field, in the gate's order, that the gate refuses; NULL when none. */
static const kind_field *gate_bad_field(const model_object *obj)
{
    const kind_desc *d = kind_get(obj->kind);
    const size_t *order = obj->kind == MODEL_KIND_CRED ? cred_gate_order : rule_gate_order;
    error_info scratch;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[order[i]];
        if (check_field(obj, f, &scratch) != ERROR_OK)
            return f;
    }
    return NULL;
}

error_code kind_check_row(model_object *obj, const kind_field **bad_field, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (bad_field)
        *bad_field = NULL;
    if ((unsigned)obj->kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)obj->kind);
    const kind_desc *d = kind_get(obj->kind);
    if (check_head(d, &obj->head, err))
        return err->code;
    if (obj->kind == MODEL_KIND_RULE &&
        validate_uri(obj->rule.policy_uri, "ip_policy.uri", err))
        return err->code;
    if (d->validate(obj, err) != ERROR_OK) {
        if (bad_field)
            *bad_field = gate_bad_field(obj);
        return err->code;
    }
    return ERROR_OK;
}

error_code kind_validate_row(model_object *obj, error_info *err)
{
    return kind_check_row(obj, NULL, err);
}

static bool same_acl(const model_acl *a, const model_acl *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++) {
        if (strcmp(a->rules[i], b->rules[i]) != 0)
            return false;
    }
    return true;
}

bool kind_field_same(const kind_field *f, const model_object *a, const model_object *b)
{
    const void *x = kind_field_at(a, f), *y = kind_field_at(b, f);
    switch (f->type) {
    case KIND_FIELD_ACL:
        return same_acl(x, y);
    case KIND_FIELD_ACTION:
        return *(const model_action *)x == *(const model_action *)y;
    case KIND_FIELD_TEXT:
        break;
    }
    return strcmp(x, y) == 0;
}

/*
 * kind: one descriptor per object kind (IP policy rule, tunnel credential), so that
 * what is the same for both kinds is written once, over the descriptor.
 *
 * - kind_get never fails for a valid model_kind; descriptors are static, read-only
 *   and safe from any thread.
 * - A descriptor says what differs between the kinds: names (for messages, the
 *   command line, the API, the database), the fields with their checks, how a row
 *   is named in a plan or a message, and what its rows do (traits). The codec
 *   reads it (codec_object_*); it never calls the codec.
 * - What is truly one kind's own stays in one place each: tokens (store_token_*,
 *   the create reply), policy membership and the natural key (store_rule_find, the
 *   pull merge), ACL lists (validate_acl, the store's one-rule-per-line column).
 * - kind_validate_row is the store's gate: every row the store writes passes it
 *   (user input, pulled pages, the reference server's own rows). It canonicalises in
 *   place (a CIDR to its canonical text) and refuses with the same sentence the
 *   forms show ("cidr: host bits set: did you mean 10.0.0.0/8?").
 */
#ifndef RAMPART_KIND_H
#define RAMPART_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"

typedef enum kind_field_type {
    KIND_FIELD_TEXT,   /* a NUL-terminated buffer in the kind's struct */
    KIND_FIELD_ACTION, /* model_action (rules) */
    KIND_FIELD_ACL     /* model_acl (credentials) */
} kind_field_type;

enum kind_field_flags {
    KIND_FIELD_CREATE = 1u << 0,   /* the user sets it when creating */
    KIND_FIELD_EDIT = 1u << 1,     /* the API lets it change after creation */
    KIND_FIELD_REQUIRED = 1u << 2, /* a create without it is refused */
    KIND_FIELD_REMOTE = 1u << 3,   /* assigned by the remote (id, uri, created_at) */
    KIND_FIELD_OPAQUE = 1u << 4,   /* for machines (metadata): a text filter skips it */
    KIND_FIELD_CALLER = 1u << 5,   /* a create that leaves it empty gets the caller's id */
    KIND_FIELD_POLICY = 1u << 6    /* the IP policy the row is kept in (KIND_IN_POLICY):
                                    * a create without it takes the policy setting */
};

/*
 * One field of a kind, as the user and the API see it. `check` validates one value
 * of a text field as typed (NULL: none beyond length and UTF-8); the canonical text
 * goes to `canon` when it is not NULL (`canon_size` >= the field's size).
 */
typedef struct kind_field {
    const char *name;   /* wire name (the API's and the JSON's), and the key of forms
                         * and edits: "cidr", "acl"; the command line's flag may differ
                         * (`flag`) */
    kind_field_type type;
    size_t offset;      /* in model_rule or model_cred */
    size_t size;        /* buffer size of a text field; 0 for the other types */
    unsigned flags;     /* kind_field_flags */
    error_code (*check)(const char *text, char *canon, size_t canon_size,
                        error_info *err);
    const char *column; /* the store's column when it is not `name` (NULL: `name`) */
    const char *flag;   /* the command line's flag (no "--") when not `name`: "policy" */
    const char *nested; /* in the API's objects, the value is this member's "id"
                         * ("ip_policy": {"id", "uri"}); create bodies send `name` */
    const char *label;  /* a form's label for it: "CIDR", "ACL rules" */
    /* A generic create's --help (cli_object_create_fields): the option's
     * placeholder ("ID") and what it takes, lines joined by '\n' (NULL: none). */
    const char *arg, *help;
} kind_field;

/* What a kind's rows do that the other kind's do not: the behaviour that truly
 * differs, asked by trait rather than by kind. */
enum kind_trait {
    KIND_KEYED = 1u << 0,     /* a natural key (a rule's policy and CIDR): a second row
                               * with it is refused, and an import finds rows by it */
    KIND_MARKED = 1u << 1,    /* no natural key: a create carries a creation marker in
                               * its metadata until the PATCH that takes it away */
    KIND_ROTATES = 1u << 2,   /* a row can be rotated: a successor with a new token */
    KIND_IN_POLICY = 1u << 3  /* rows are kept in an IP policy: listings filter by it */
};

typedef struct kind_desc {
    model_kind kind;
    const char *noun;       /* "rule", "credential": in messages */
    const char *plural;     /* "rules", "credentials" */
    const char *command;    /* command-line group: "rules", "creds" */
    const char *id_prefix;  /* remote ids: "ipr", "cr" */
    const char *api_plural; /* the list's key: "ip_policy_rules", "credentials" */
    const char *api_path;   /* collection path: "/ip_policy_rules", "/credentials" */
    const char *table;      /* the store's table: "rules", "credentials" */
    bool has_token;         /* the create reply carries a secret kept by the store */
    const kind_field *fields;
    size_t field_count;
    /* What names a row for a person: a rule's cidr, a credential's description
     * (its id when the description is empty). Points into `obj`. */
    const char *(*label)(const model_object *obj);
    /* The user's fields of a create: checked, canonicalised in place on success
     * only (validate_rule / validate_cred). */
    error_code (*validate)(model_object *obj, error_info *err);
    /* The store's row beside the user's fields: what every row has (id, uri,
     * created_at, error) and what the remote assigns to one kind (a rule's
     * policy_uri), as text fields named by their column. */
    const kind_field *head_fields;
    size_t head_field_count;
    const char *api_noun;   /* the API's word in its messages: "ip policy rule" */
    unsigned traits;        /* kind_trait */
} kind_desc;

/* The descriptor of `kind` (MODEL_KIND_RULE for an out-of-range value). */
const kind_desc *kind_get(model_kind kind);

/* Shorthand for kind_get(obj->kind)->label(obj). */
const char *kind_label(const model_object *obj);

/* Whether `f` is one of the fields every kind has (model_head: description,
 * metadata), which the wire format writes with the head. */
bool kind_field_in_head(model_kind kind, const kind_field *f);

/* A field of `kind` by its name, NULL when the kind has none. */
const kind_field *kind_field_by_name(model_kind kind, const char *name);

/*
 * A set of one kind's fields, as a bit mask: bit i stands for the descriptor's
 * fields[i]. What a PATCH body held (codec_patch_decode) and what an edit changes
 * (store_update) are such sets, so both speak of fields by the descriptor alone.
 * kind_field_bit: the bit of `f`, which must be one of `kind`'s fields.
 * kind_field_set: the fields that carry every flag of `flags` (KIND_FIELD_EDIT:
 * what may change after creation).
 */
unsigned kind_field_bit(model_kind kind, const kind_field *f);
unsigned kind_field_set(model_kind kind, unsigned flags);

/* The names of the fields in `set`, in descriptor order, joined by ", " into
 * `buf` (cut to fit `size`), for messages: "cidr, description, metadata". */
const char *kind_field_names(model_kind kind, unsigned set, char *buf, size_t size);

/* What lies `offset` bytes into obj's kind struct (an offset in model_head or of a
 * kind_field of obj's kind). */
const void *kind_at(const model_object *obj, size_t offset);
void *kind_at_mut(model_object *obj, size_t offset);

/* Whether `a` and `b` (of f's kind) hold the same value in field `f`: text byte
 * for byte, an action as itself, an ACL rule by rule in order. */
bool kind_field_same(const kind_field *f, const model_object *a, const model_object *b);

/* Where field `f` of obj's kind lives in the object (f must be one of that kind's
 * fields): a char buffer, a model_action or a model_acl by f->type. */
const void *kind_field_at(const model_object *obj, const kind_field *f);
void *kind_field_at_mut(model_object *obj, const kind_field *f);

/*
 * A field by name as one line of text, for tables, details and templates: the
 * kind's fields ("cidr", "acl": its rules joined by ", ", cut at a UTF-8 boundary
 * to fit `size`; "action") and what every row has ("id", "state", "error",
 * "created_at", "uri", and a rule's "policy_uri"). Returns a pointer into `obj`
 * or into `buf` (`size` bytes; only an ACL is built there), "" for an unknown
 * name or an empty ACL. `buf` may be NULL (or `size` 0) for any name: an ACL
 * then reads as "" (a caller that shows ACLs passes a buffer).
 */
const char *kind_value(const model_object *obj, const char *name, char *buf, size_t size);

/*
 * The whole row as the store is about to write it: id (empty, a local id, or the
 * kind's prefix and base62), the user's fields through the kind's validate (a CIDR
 * canonicalised in place), created_at (empty or RFC 3339), uris (empty or
 * absolute http(s)), a rule's policy uri, the state, the error text (UTF-8).
 * ERROR_INVALID with a message that starts with the field's name; the object is
 * changed only when every check passed.
 *
 * kind_check_row is the gate; `bad_field` (may be NULL) says, as a value, which
 * of the kind's fields the refusal is about: the descriptor's field whose check
 * failed, or NULL when it passed or the refusal is about what every row has (id,
 * uri, created_at, state, error text, a rule's policy uri) or an unknown kind. A
 * form puts the message under that field: the field decides, never the text.
 * kind_validate_row is kind_check_row without `bad_field`.
 */
error_code kind_check_row(model_object *obj, const kind_field **bad_field, error_info *err);
error_code kind_validate_row(model_object *obj, error_info *err);

#endif

/*
 * model: the records rampart keeps (IP policy rules, tunnel credentials) and their
 * sync states, as plain C values shared by every module.
 *
 * - Text fields are NUL-terminated UTF-8 in fixed buffers sized by the API's limits
 *   (+1 for the NUL); an absent field is the empty string ("absent and \"\" alike").
 * - model_rule owns no heap memory: copy it with `=`.
 * - model_cred owns its ACL array and its token (heap). Zero-initialise a
 *   model_cred before first use and release it with model_cred_clear(), which wipes
 *   the token before freeing it. Copy one only with model_cred_copy().
 * - Nothing here validates: see validate.h. Nothing here does I/O.
 */
#ifndef RAMPART_MODEL_H
#define RAMPART_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

#define MODEL_ID_MAX 64           /* prefix + '_' + base62 body; longer ids are refused */
#define MODEL_URI_MAX 1024
#define MODEL_TIME_MAX 40         /* RFC 3339 */
#define MODEL_DESCRIPTION_MAX 255 /* bytes, API limit */
#define MODEL_METADATA_MAX 4096   /* bytes, API limit */
#define MODEL_CIDR_MAX 64         /* longest IPv6 text form + "/128" fits */
#define MODEL_ACL_RULE_MAX 1024   /* bytes of one ACL rule */
#define MODEL_ERROR_MAX 512       /* last server message kept on a row */

typedef enum model_action {
    MODEL_ACTION_ALLOW,
    MODEL_ACTION_DENY
} model_action;

/*
 * Sync states of DESIGN.md. A row that reached "gone" is no longer stored.
 * Order is stable: it is stored in the database as text, never as a number,
 * but arrays indexed by state (counts) rely on MODEL_STATE_COUNT.
 */
typedef enum model_state {
    MODEL_STATE_NEW,            /* created locally, intent saved, not sent */
    MODEL_STATE_CREATING,       /* create being sent */
    MODEL_STATE_SYNCED,         /* matches the remote */
    MODEL_STATE_DELETING,       /* deleted locally, remote delete pending */
    MODEL_STATE_FAILED,         /* remote rejected the create; see the row's error */
    MODEL_STATE_UNKNOWN,        /* create outcome ambiguous; a listing decides */
    MODEL_STATE_ORPHANED,       /* credential exists remotely but its token was lost */
    MODEL_STATE_REMOTE_DELETED, /* gone from a complete remote listing; for review */
    MODEL_STATE_EDITED,         /* exists remotely, edited here: a PATCH is pending */
    MODEL_STATE_CONFLICT,       /* waits for the user's choice (store_resolve) */
    MODEL_STATE_COUNT
} model_state;

/*
 * What every object has, whatever its kind: the first members of model_rule and
 * model_cred, written once here, and model_head itself, so an object's common
 * part is `obj->head` (model_object) whatever its kind.
 */
#define MODEL_HEAD_MEMBERS                                                              \
    char id[MODEL_ID_MAX + 1];          /* ipr_…, cr_… or local_… */                    \
    char uri[MODEL_URI_MAX + 1];        /* empty until the remote assigned one */        \
    char created_at[MODEL_TIME_MAX + 1];                                                 \
    char description[MODEL_DESCRIPTION_MAX + 1];                                         \
    char metadata[MODEL_METADATA_MAX + 1];                                               \
    model_state state;                                                                   \
    char error[MODEL_ERROR_MAX + 1]; /* why the row is failed/orphaned; else empty */

typedef struct model_head {
    MODEL_HEAD_MEMBERS
} model_head;

typedef struct model_rule {
    MODEL_HEAD_MEMBERS
    char cidr[MODEL_CIDR_MAX + 1];      /* canonical form once validated */
    char policy_id[MODEL_ID_MAX + 1];   /* ipp_… */
    char policy_uri[MODEL_URI_MAX + 1]; /* may be empty */
    model_action action;
} model_rule;

typedef struct model_acl {
    size_t count;
    char **rules; /* count heap strings, owned by the enclosing model_cred */
} model_acl;

typedef struct model_cred {
    MODEL_HEAD_MEMBERS
    char owner_id[MODEL_ID_MAX + 1];    /* usr_… or bot_…; empty: the caller */
    model_acl acl;                      /* empty: no restriction */
    char *token;                        /* heap, NULL unless held; secret */
} model_cred;

/*
 * The two kinds of object the API manages. Code that is the same for both takes a
 * model_kind (or a model_object) and asks the kind's descriptor (kind.h) for what
 * differs; only what is truly one kind's own (tokens, policy membership, ACL lists)
 * is written for one kind.
 */
typedef enum model_kind {
    MODEL_KIND_RULE,
    MODEL_KIND_CRED,
    MODEL_KIND_COUNT
} model_kind;

/*
 * One object of either kind: a tagged union. `kind` says which member is valid;
 * `head`, what every kind has, is valid for both.
 * Ownership follows the member: a credential's ACL and token are heap; initialise
 * with model_object_init, release with model_object_clear, copy with
 * model_object_copy (never with `=` when it may hold a credential).
 */
typedef struct model_object {
    model_kind kind;
    union {
        model_head head; /* the common part: both kinds begin with it (C11 6.5.2.3) */
        model_rule rule;
        model_cred cred;
    };
} model_object;

/* Whether an object of `kind` owns heap memory (a credential's ACL and token),
 * which model_object_clear releases. */
bool model_kind_owns_heap(model_kind kind);

/* Zero `obj` and set its kind (no heap is held afterwards). */
void model_object_init(model_object *obj, model_kind kind);

/* Release what the object owns (a credential's ACL, wiped token) and zero it,
 * keeping its kind. NULL is a no-op. */
void model_object_clear(model_object *obj);

/* Deep copy: `dst` must hold no heap (initialised or cleared) before. */
error_code model_object_copy(model_object *dst, const model_object *src, error_info *err);

/* The fields every kind has, whichever member is valid. The returned buffers are
 * the object's own (MODEL_ID_MAX + 1, MODEL_ERROR_MAX + 1 bytes). */
const char *model_object_id(const model_object *obj);
char *model_object_id_buf(model_object *obj);
model_state model_object_state(const model_object *obj);
const char *model_object_error(const model_object *obj);

/* "allow" / "deny". */
const char *model_action_name(model_action action);

/* Parse "allow" or "deny" exactly (case-sensitive, like the API); false otherwise. */
bool model_action_parse(const char *text, model_action *out);

/* "new", "creating", "synced", "deleting", "failed", "unknown", "orphaned",
 * "remote_deleted", "edited", "conflict". */
const char *model_state_name(model_state state);

/* Parse a state name as above; false when unknown. */
bool model_state_parse(const char *text, model_state *out);

/*
 * Copy `src` into the fixed buffer `dst` of `size` bytes. Returns false (and
 * leaves `dst` as the longest UTF-8-whole prefix) when `src` does not fit.
 */
bool model_copy_text(char *dst, size_t size, const char *src);

/* Append a copy of `rule` to the ACL. ERROR_NOMEM on allocation failure. */
error_code model_acl_add(model_acl *acl, const char *rule, error_info *err);

/* Free the ACL's rules; leaves it empty. */
void model_acl_clear(model_acl *acl);

/* Store a copy of `token` (NULL clears) in `cred`, wiping any previous one. */
error_code model_cred_set_token(model_cred *cred, const char *token, error_info *err);

/* Deep copy: `dst` must be cleared (zeroed or model_cred_clear'ed) first. */
error_code model_cred_copy(model_cred *dst, const model_cred *src, error_info *err);

/* Free the ACL and wipe+free the token; leaves `cred` zeroed. NULL is a no-op. */
void model_cred_clear(model_cred *cred);

/* Overwrite `len` bytes of a secret so the compiler cannot drop the stores. */
void model_wipe(void *buf, size_t len);

/* True when each of the `len` bytes at `key` is visible ASCII (0x21-0x7e): the
 * shape of an API key, wherever one comes from (the config, a key_command). */
bool model_key_chars_ok(const char *key, size_t len);

/* free() for libraries that free copies of secrets without clearing them
 * (jansson, libcurl): zeroes the whole block malloc handed out, then frees it.
 * `p` must come from malloc/calloc/realloc/strdup; NULL is a no-op. */
void model_free_wiped(void *p);

/* realloc() with the same guarantee for the block it leaves: always moves (new
 * block, copy, old block wiped and freed). n == 0 frees `p` and returns NULL; NULL
 * when out of memory (`p` untouched). */
void *model_realloc_wiped(void *p, size_t n);

#endif

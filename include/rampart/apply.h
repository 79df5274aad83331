/*
 * apply: keep the rules of one IP policy, of one action, in step with a list of
 * CIDRs, with the fewest requests: the smallest change that makes the rules that
 * an apply NAME owns equal to the list (apply_plan_build), then that change
 * queued for the next sync in one transaction (apply_plan_queue). Offline, from
 * the cache alone, like every change.
 *
 * - Ownership: a rule belongs to apply NAME when its metadata is exactly
 *   {"rampart_apply":"NAME"} (apply_metadata) and its action is the apply's. An
 *   apply never touches another rule, but to take it over with `adopt` (a rule
 *   of the same action and no metadata holding a list entry: its metadata
 *   becomes NAME's).
 * - The store's natural key (policy, cidr) is unique among live rules: a list
 *   entry held by a live rule the apply does not own (the other action, another
 *   NAME, none) is a conflict, never a duplicate create.
 * - Requests counted are what the next sync sends for this change: a create or a
 *   retry (an owned rule failed or deleted remotely, still listed) a POST; a
 *   delete a DELETE (0 for a rule never sent); an edit (an owned rule leaving the
 *   list takes the cidr of one joining it, and its description,
 *   apply_edit_description) or an adopt a PATCH (0 for a queued create); and
 *   the GET that looks before each DELETE and PATCH.
 * - The list must be sorted, without repeated prefixes (cidrset_sort, then
 *   cidrset_dedupe or cidrset_aggregate). A list applied again plans nothing.
 * - Errors come back in error_info; nothing here prints.
 */
#ifndef RAMPART_APPLY_H
#define RAMPART_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/cidrset.h"
#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"

#define APPLY_NAME_MAX 64
#define APPLY_NAME_DEFAULT "default"
/* The metadata of an applied rule: APPLY_META_HEAD NAME APPLY_META_TAIL. */
#define APPLY_META_HEAD "{\"rampart_apply\":\""
#define APPLY_META_TAIL "\"}"
#define APPLY_META_MAX (sizeof APPLY_META_HEAD + APPLY_NAME_MAX + sizeof APPLY_META_TAIL)

/* A NAME: 1..64 of letters, digits, '.', '_', '-' (so it needs no escaping in
 * JSON and a later apply recognises it exactly). ERROR_INVALID with why. */
error_code apply_name_check(const char *name, error_info *err);

/* The metadata that marks a rule as NAME's (a checked name). */
void apply_metadata(const char *name, char out[APPLY_META_MAX]);

/* The NAME a rule's metadata marks it with, into `name`; false (and "") when the
 * metadata is not exactly an apply's mark. */
bool apply_metadata_name(const char *metadata, char name[APPLY_NAME_MAX + 1]);

/* What one line of a plan does. In the order a plan lists them. */
typedef enum apply_op_kind {
    APPLY_CONFLICT, /* a list entry held by a live rule the apply does not own */
    APPLY_BLOCKED,  /* an owned rule left as it is: its create is in flight
                       (creating, unknown) or it is a conflict: sync or resolve it */
    APPLY_DELETE,   /* an owned rule not in the list */
    APPLY_DROP,     /* an owned rule deleted remotely, not in the list: removed here */
    APPLY_EDIT,     /* an owned rule not in the list takes the cidr of an entry */
    APPLY_ADOPT,    /* adopt: an unowned rule holding an entry becomes NAME's */
    APPLY_RETRY,    /* an owned rule, failed or deleted remotely, in the list */
    APPLY_CREATE,   /* an entry no rule holds */
    APPLY_KEEP,     /* an owned rule in the list (counted, not listed) */
    APPLY_OP_COUNT
} apply_op_kind;

/* "conflict", "blocked", "delete", "drop", "edit", "adopt", "retry", "create",
 * "keep". */
const char *apply_op_name(apply_op_kind kind);

/* A rule the plan is about (owned, or holding a list entry). */
typedef struct apply_rule {
    char id[MODEL_ID_MAX + 1];
    char cidr[MODEL_CIDR_MAX + 1];
    char owner[APPLY_NAME_MAX + 1]; /* its apply NAME; "" when none */
    char *description;              /* heap (owned rules), NULL otherwise */
    model_action action;
    model_state state;
    bool has_metadata;
} apply_rule;

typedef struct apply_op {
    apply_op_kind kind;
    size_t entry;      /* index in the list; SIZE_MAX: none (delete, drop, blocked) */
    size_t rule;       /* index in plan->rules; SIZE_MAX: none (create) */
    unsigned requests; /* what the next sync sends for it: 0 or 1 */
} apply_op;

typedef struct apply_request {
    const char *policy_id;
    model_action action;
    const char *name;        /* checked (apply_name_check) */
    const char *description; /* of rules without a note of their own, new or
                                reused (NULL: new ones get the name, reused ones
                                keep theirs) */
    bool adopt;
    const cidrset *list;     /* sorted, no prefix twice */
} apply_request;

typedef struct apply_plan {
    apply_op *ops;             /* every kind but keep, in apply_op_kind order, then
                                  by cidr */
    size_t nops;
    apply_rule *rules;
    size_t nrules;
    size_t count[APPLY_OP_COUNT];
    size_t posts, deletes, patches; /* requests, by method */
    size_t gets;                    /* the look before each DELETE and PATCH */
    size_t policy_rules;            /* rules of the policy in the cache, any state */
} apply_plan;

/*
 * The smallest change for `req` over the cache's rules of req->policy_id (one
 * store_policy_rules walk). `out` (holding nothing before) is released with
 * apply_plan_free whatever the result. ERROR_NOMEM or the store's errors.
 */
error_code apply_plan_build(store *st, const apply_request *req, apply_plan *out,
                            error_info *err);

void apply_plan_free(apply_plan *plan);

/* The requests of a plan: posts + deletes + patches + gets. */
size_t apply_plan_requests(const apply_plan *plan);

/* The description a create of list entry `entry` gets: its note, else the
 * request's description, else the request's name. */
const char *apply_entry_description(const apply_request *req, size_t entry);

/* The description an edit gives its rule: the entry's note, else the request's
 * description; NULL when the rule keeps its own (neither, or the same text).
 * `op` is an APPLY_EDIT of `plan`. */
const char *apply_edit_description(const apply_request *req, const apply_plan *plan,
                                   const apply_op *op);

/* Told how far a queue is (done of total ops), every few hundred ops. */
typedef void (*apply_progress_fn)(void *ctx, size_t done, size_t total);

/*
 * Queue the plan's ops (all but conflicts and blocked rules) in one transaction
 * (store_begin .. store_commit; the caller holds none): deletes and drops first,
 * so the keys they free can be taken, then edits, adopts, retries and creates,
 * each through the store's gate. All or nothing: a refusal rolls everything back
 * and names the cidr ("10.0.0.0/8: …"). `progress` may be NULL.
 */
error_code apply_plan_queue(store *st, const apply_request *req, const apply_plan *plan,
                            apply_progress_fn progress, void *ctx, error_info *err);

#endif

/*
 * impact: which client addresses a change of one IP policy would flip, decided
 * for both sides at once from ONE index whose rules are tagged before, after or
 * both. "Before" is the policy as the remote holds it now; "after" as it will be
 * once the local side (the queued changes, or an apply's plan) is in force.
 * - Decisions are check's (policy.h): an address is allowed by a side iff it lies
 *   inside an allow rule of that side and inside no deny rule of it (deny wins);
 *   the deciding rule is the most specific deny that matched, else the most
 *   specific allow. IPv4 and IPv6 are separate; an IPv4-mapped rule
 *   ("::ffff:10.0.0.0/104") decides as the IPv4 prefix it carries (addresses
 *   come parsed, mapped ones as IPv4: policy_addr_parse).
 * - Which cached rules count (impact_index_load), by the row's state: synced:
 *   both sides; new, creating, unknown, failed: after; deleting: before; edited:
 *   its base cidr before, its own after; remote_deleted: neither; conflict:
 *   before the remote's side (its base, or the remote's value of a conflicting
 *   field; nothing when the remote object is gone or a local create clashed on
 *   its key), after its own values (nothing for a delete the remote changed,
 *   "changed"; both for "crossed", which holds the remote's values). Changes
 *   (an apply's plan) then edit the after side.
 * - A rule on one side only is a change: a flipped address is put down to the
 *   deciding rule(s) that are (at least one always is).
 * - The index is built, then read only. Nothing here prints or allocates per
 *   address checked; impact_eval allocates its result once.
 */
#ifndef RAMPART_IMPACT_H
#define RAMPART_IMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rampart/error.h"
#include "rampart/logscan.h"
#include "rampart/model.h"
#include "rampart/store.h"
#include "rampart/validate.h"

enum {
    IMPACT_BEFORE = 1u << 0,
    IMPACT_AFTER = 1u << 1,
    IMPACT_BOTH = IMPACT_BEFORE | IMPACT_AFTER
};

#define IMPACT_NO_RULE UINT32_MAX

typedef struct impact_index impact_index;

error_code impact_index_new(impact_index **out, error_info *err);
void impact_index_free(impact_index *ix); /* NULL: no-op */

/* One rule on `sides` (IMPACT_BEFORE, _AFTER or _BOTH). `pfx` must have its host
 * bits clear (ERROR_INVALID otherwise). `rule_id` is copied ("" for a rule an
 * apply would create). `apply`: the change comes from an apply's plan. */
error_code impact_index_add(impact_index *ix, const validate_prefix *pfx, model_action action,
                            const char *rule_id, unsigned sides, bool apply,
                            error_info *err);

/* What an apply's plan does to the after side. */
typedef enum impact_change_kind {
    IMPACT_CHANGE_REMOVE, /* rule `rule_id` leaves the after side */
    IMPACT_CHANGE_MOVE,   /* rule `rule_id` takes `pfx` on the after side */
    IMPACT_CHANGE_ADD     /* a rule of `action` for `pfx` joins the after side
                             (`rule_id` the retried rule's, or "" for a create) */
} impact_change_kind;

typedef struct impact_change {
    impact_change_kind kind;
    char rule_id[MODEL_ID_MAX + 1];
    validate_prefix pfx;
    model_action action;
} impact_change;

/*
 * The index of `policy_id`'s cached rules, both sides tagged by state (see the
 * contract), with `changes` (may be NULL when n is 0) applied to the after side.
 * A cached cidr validate refuses fails the load with ERROR_INVALID naming the
 * rule (no answer is better than one that ignores a deny rule). *out NULL on
 * failure.
 */
error_code impact_index_load(store *st, const char *policy_id, const impact_change *changes,
                             size_t n, impact_index **out, error_info *err);

/* Rules held, and those on one side only (the changes). */
size_t impact_index_rules(const impact_index *ix);
size_t impact_index_changed(const impact_index *ix);

/* A rule of the index, for printing (an IPv4-mapped rule's cidr as the IPv4
 * prefix it decides as). `label`: "synced" (both sides), "pending"
 * (after only), "apply" (after only, from an apply), "removed" (before only);
 * one side of a row in conflict "conflict" (its after waits for a resolve, not
 * a sync), a failed create "failed". */
typedef struct impact_rule_info {
    const char *id; /* "" for an apply's create */
    char cidr[MODEL_CIDR_MAX + 1];
    model_action action;
    unsigned sides;
    const char *label;
} impact_rule_info;

void impact_rule_get(const impact_index *ix, uint32_t rule, impact_rule_info *out);

/* One side's decision: allowed, and the deciding rule (IMPACT_NO_RULE: none). */
typedef struct impact_side {
    bool allowed;
    uint32_t rule;
} impact_side;

/* Decide `addr` on both sides at once. */
void impact_check(const impact_index *ix, const policy_addr *addr, impact_side *before,
                  impact_side *after);

/* An address whose decision changes. */
typedef struct impact_flip {
    size_t addr;       /* index in the evaluated address array */
    uint64_t requests; /* its count, for the order */
    impact_side before, after;
} impact_flip;

/* A changed rule and what it flips (an address flipped by two changes together
 * counts for each). */
typedef struct impact_rule_count {
    uint32_t rule;
    size_t addresses;
    uint64_t requests;
} impact_rule_count;

typedef struct impact_result {
    impact_flip *flips; /* most requests first, then address order */
    size_t nflips;
    impact_rule_count *rules; /* most requests first */
    size_t nrules;
    size_t denied_addresses, allowed_addresses; /* newly denied / newly allowed */
    uint64_t denied_requests, allowed_requests;
} impact_result;

/* Evaluate every address of `addrs` once on both sides. `out` (zeroed before) is
 * released with impact_result_free whatever the result. ERROR_NOMEM. */
error_code impact_eval(const impact_index *ix, const logscan_addr *addrs, size_t n,
                       impact_result *out, error_info *err);

void impact_result_free(impact_result *r);

/* What the whole queue does to the addresses of a log: every policy of the cache
 * that a queued change touches, each decided as impact_index_load and
 * impact_eval do, the flips added up (the console's pending view). */
typedef struct impact_totals {
    size_t policies; /* policies a queued change touches */
    size_t denied_addresses, allowed_addresses;
    uint64_t denied_requests, allowed_requests;
} impact_totals;

error_code impact_queue_totals(store *st, const logscan_addr *addrs, size_t n,
                               impact_totals *out, error_info *err);

#endif

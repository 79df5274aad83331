/*
 * policy: "is this address allowed by IP policy P?", decided from the cached rules
 * with a prefix structure (never a scan of the rules): per policy and family a
 * path-compressed binary trie whose nodes say which allow and deny rule ends
 * there; a check walks the address's bits once (jump tables stand for several
 * levels at a time in large subtrees). Policies are found by a hash of their id.
 *
 * - An address is allowed by a policy iff it lies inside at least one allow rule
 *   of that policy and inside no deny rule of it (deny wins, whatever the prefix
 *   lengths). A policy with no rules allows nothing.
 * - IPv4 and IPv6 are separate families: an IPv4 address never matches an IPv6
 *   rule. An IPv4-mapped IPv6 address ("::ffff:10.0.0.1") is checked as the IPv4
 *   address it carries, because that is the peer a dual-stack socket reports.
 * - The index is built once (policy_index_new/add/finish, or policy_index_load)
 *   and then read only: any number of threads may call policy_check on the same
 *   index at once without locks; nothing may add to it meanwhile. To follow
 *   changes, build a new index and swap it in (the agent's indexer does so when
 *   the rules change).
 * - Which rules count: policy_index_load takes the rules the admin means to be in
 *   force: every state but deleting, remote_deleted and failed (a conflict only
 *   when it holds the remote's values: store_conflict_holds_remote). A decision says
 *   whether the deciding rule is already synced.
 * - policy_check allocates nothing and fails only on the address. Memory grows
 *   with the rules (policy_index_bytes); while the agent swaps, two are alive.
 */
#ifndef RAMPART_POLICY_H
#define RAMPART_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rampart/buf.h"
#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"

typedef struct policy_index policy_index;

/* A parsed address: family 4 or 6, bytes in network order (v4 in bytes[0..3]). */
typedef struct policy_addr {
    int family;
    uint8_t bytes[16];
} policy_addr;

/*
 * Parse "10.1.2.3", "2001:db8::1" or an IPv4-mapped IPv6 address (checked as IPv4)
 * into *out. No prefix, no zone, no surrounding space, no leading zeros in IPv4
 * octets. ERROR_INVALID with a reason that does not quote the text ("not an IPv4
 * or IPv6 address").
 */
error_code policy_addr_parse(const char *text, policy_addr *out, error_info *err);

/* An empty index. *out is NULL on failure; free with policy_index_free. */
error_code policy_index_new(policy_index **out, error_info *err);

/*
 * Add one rule. `cidr` must be canonical (as validate leaves it: no host bits);
 * ERROR_INVALID otherwise. `rule_id` and `policy_id` are copied. `synced` is
 * reported back in decisions. The same cidr twice in one policy with both
 * actions is allowed (deny wins).
 */
error_code policy_index_add(policy_index *ix, const char *policy_id, const char *cidr,
                            model_action action, const char *rule_id, bool synced,
                            error_info *err);

/*
 * Build an index from every rule in force in `st` (see the contract), walking
 * the cache page by page, and finish it (policy_index_finish). A cached cidr in
 * another valid form ("2001:DB8::/32", as a remote listing may send it) is taken
 * in its canonical form; one validate refuses fails the load with
 * ERROR_INVALID naming the rule (no decision is better than one that ignores a
 * deny rule). *out is NULL on failure.
 */
error_code policy_index_load(store *st, policy_index **out, error_info *err);

/* The same for the rules of one policy only (one indexed range of the cache:
 * what a single check needs). ERROR_INVALID for an empty id. */
error_code policy_index_load_policy(store *st, const char *policy_id, policy_index **out,
                                    error_info *err);

/* The same for a few addresses: only the rules of `policy_id` that contain one
 * of the `n` addresses (the store's cidr_key lookups, not the whole policy), so a
 * check of one address costs the same at 100 rules and at 100,000. The decisions
 * are the whole policy's: a rule that contains no address decides none. */
error_code policy_index_load_containing(store *st, const char *policy_id,
                                        const policy_addr *addrs, size_t n,
                                        policy_index **out, error_info *err);

/*
 * Lay the index out for fast checks (breadth-first node order, jump tables) and
 * give back spare memory; call once all rules are added (policy_index_load
 * does). Optional: an index answers the same before and after, and rules may
 * still be added after it (a trie added to loses its table until the next
 * call). On ERROR_NOMEM the index still answers correctly, maybe slower.
 */
error_code policy_index_finish(policy_index *ix, error_info *err);

/* Rules held, and distinct policies. A rule repeating the prefix and action of
 * an earlier one of its policy is not held (the earlier one decides). */
size_t policy_index_rule_count(const policy_index *ix);
size_t policy_index_policy_count(const policy_index *ix);

/* Heap bytes the index holds (for figures and logs). */
size_t policy_index_bytes(const policy_index *ix);

/* Free the index. NULL is a no-op. */
void policy_index_free(policy_index *ix);

typedef struct policy_decision {
    bool allowed;
    bool policy_known;               /* the policy has at least one rule here */
    /* The rule that decided: the most specific deny rule that matched, else the
     * most specific allow rule that matched; rule_id and cidr "" (and action
     * deny, synced false) when none matched. */
    char rule_id[MODEL_ID_MAX + 1];
    char cidr[MODEL_CIDR_MAX + 1];
    model_action action;
    bool synced;                     /* that rule is confirmed by the remote */
} policy_decision;

/* Decide for a parsed address. Never fails; thread-safe on a built index. A NULL
 * index, policy id or address, or an unknown policy: not allowed, not known. */
void policy_check_addr(const policy_index *ix, const char *policy_id,
                       const policy_addr *addr, policy_decision *out);

/* Parse `ip` then decide. ERROR_INVALID for a bad address (see policy_addr_parse);
 * `out` then says not allowed, policy not known, no rule. */
error_code policy_check(const policy_index *ix, const char *policy_id, const char *ip,
                        policy_decision *out, error_info *err);

/*
 * Decide for each of `n` parsed addresses from the rules of one policy in force
 * in the cache (policy_index_load_policy, then policy_check_addr). *known: the
 * policy has at least one rule in force here. The load's error (a cached rule
 * validate refuses, the database) is returned and nothing is decided.
 */
error_code policy_check_cached(store *st, const char *policy_id, const policy_addr *addrs,
                               size_t n, policy_decision *out, bool *known, error_info *err);

/* A decision's words, the same everywhere it is said: decision "allowed" or
 * "denied"; the deciding rule's action, cidr and id and "synced" or "pending",
 * each "-" when no rule matched. Pointers into `d` or static text. */
typedef struct policy_words {
    const char *decision, *action, *cidr, *rule, *sync;
} policy_words;

void policy_decision_words(const policy_decision *d, policy_words *out);

/* One line about a decision, for a status line: "10.1.2.3: denied in ipp_x by
 * deny rule 10.0.0.0/8 ipr_y (synced)", or that no rule contains it, or that the
 * policy has no rules in force (`known` false). Cut to `size`. */
void policy_decision_sentence(const char *ip, const char *policy_id, const policy_decision *d,
                              bool known, char *buf, size_t size);

typedef enum policy_json_style {
    POLICY_JSON_COMPACT, /* {"ip":"10.1.2.3","policy":…}: the agent's reply */
    POLICY_JSON_SPACED   /* {"ip": "10.1.2.3", "policy": …}: a line of check --json */
} policy_json_style;

/*
 * Append the decision `d` about `ip` in policy `policy_id` as one JSON object,
 * keys in this order: ip, policy, allowed, policy_known, action, cidr, synced,
 * rule_id (the last four null when no rule matched). The one writer of this
 * object: `rampart check --json` and the agent's check route answer with it, so
 * they cannot drift apart. Strings are escaped by buf_json_string. False when
 * the buffer failed (out of memory).
 */
bool policy_decision_json(buf_t *out, const char *ip, const char *policy_id,
                          const policy_decision *d, policy_json_style style);

#endif

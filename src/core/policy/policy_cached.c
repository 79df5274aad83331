/* policy_cached: decide from the cache, and a decision's words (see policy.h).
 * `rampart check` and the console's `:check` both come through here, so they
 * load the same rules and say a decision with the same words. */
#include <stdio.h>

#include "rampart/policy.h"

/* Up to this many addresses, only the rules containing them are read. */
enum { FEW_ADDRESSES = 16 };

/* Whether the policy has a rule in force: the first one of its indexed range. */
static error_code policy_in_force(store *st, const char *policy_id, bool *known,
                                  error_info *err)
{
    unsigned all = (1u << MODEL_STATE_COUNT) - 1;
    store_query q = {
        .policy_id = policy_id,
        .states = (all & ~((1u << MODEL_STATE_DELETING) | (1u << MODEL_STATE_REMOTE_DELETED) |
                           (1u << MODEL_STATE_FAILED) | (1u << MODEL_STATE_CONFLICT))) |
                  STORE_STATES_HELD,
    };
    model_object row;
    size_t n = 0;
    error_code rc = store_page(st, MODEL_KIND_RULE, &q, NULL, STORE_FORWARD, 1, &row, &n, err);
    if (rc == ERROR_OK && n)
        model_object_clear(&row);
    *known = n > 0;
    return rc;
}

error_code policy_check_cached(store *st, const char *policy_id, const policy_addr *addrs,
                               size_t n, policy_decision *out, bool *known, error_info *err)
{
    policy_index *ix = NULL;
    bool few = n <= FEW_ADDRESSES;
    error_code rc = few ? policy_index_load_containing(st, policy_id, addrs, n, &ix, err)
                        : policy_index_load_policy(st, policy_id, &ix, err);
    if (rc == ERROR_OK && few)
        rc = policy_in_force(st, policy_id, known, err);
    if (rc != ERROR_OK) {
        policy_index_free(ix);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        policy_check_addr(ix, policy_id, &addrs[i], &out[i]);
    if (!few)
        *known = policy_index_policy_count(ix) > 0;
    policy_index_free(ix);
    return ERROR_OK;
}

void policy_decision_words(const policy_decision *d, policy_words *out)
{
    bool ruled = d->rule_id[0] != '\0';
    out->decision = d->allowed ? "allowed" : "denied";
    out->action = ruled ? model_action_name(d->action) : "-";
    out->cidr = ruled ? d->cidr : "-";
    out->rule = ruled ? d->rule_id : "-";
    out->sync = !ruled ? "-" : d->synced ? "synced" : "pending";
}

void policy_decision_sentence(const char *ip, const char *policy_id, const policy_decision *d,
                              bool known, char *buf, size_t size)
{
    policy_words w;
    policy_decision_words(d, &w);
    if (!known)
        snprintf(buf, size, "%s: %s in %s: the policy has no rules in force in this cache, "
                 "so nothing is allowed", ip, w.decision, policy_id);
    else if (!d->rule_id[0])
        snprintf(buf, size, "%s: %s in %s: no rule of the policy contains it", ip, w.decision,
                 policy_id);
    else
        snprintf(buf, size, "%s: %s in %s by %s rule %s %s (%s)", ip, w.decision, policy_id,
                 w.action, w.cidr, w.rule, w.sync);
}

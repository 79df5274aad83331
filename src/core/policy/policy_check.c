/*
 * policy_check: parsing the address and walking the trie. Reads the index only,
 * allocates nothing, so any number of threads may check at once.
 */
#include "rampart/policy.h"

#include <arpa/inet.h>
#include <string.h>

#include "policy_internal.h"

/*
 * One pass over the text for what inet_pton would accept or misread: spaces
 * and control bytes, a prefix, a zone, and a leading zero in a dotted octet
 * (some inet_pton accept "010.0.0.1", and some tools read that as octal).
 * NULL when none, else the reason. *colon: the text has a ':' (IPv6).
 */
static const char *refusal(const char *text, bool *colon)
{
    size_t seg = 0;
    bool dotted = false; /* the segment being read is an IPv4 octet */
    *colon = false;
    for (size_t i = 0;; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '.' || c == ':' || c == '\0') {
            if ((c == '.' || (c == '\0' && dotted)) && i - seg > 1 && text[seg] == '0')
                return "an IPv4 octet has a leading zero";
            if (c == '\0')
                return NULL;
            dotted = c == '.';
            *colon |= c == ':';
            seg = i + 1;
        } else if (c <= ' ' || c >= 0x7f) {
            return "spaces and control characters are not allowed";
        } else if (c == '/') {
            return "give one address, not a range";
        } else if (c == '%') {
            return "a zone id is not allowed";
        }
        if (i >= INET6_ADDRSTRLEN)
            return "too long";
    }
}

error_code policy_addr_parse(const char *text, policy_addr *out, error_info *err)
{
    static const char bad[] = "not an IPv4 or IPv6 address";
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return error_set(err, ERROR_INVALID, "no address given");
    bool colon;
    const char *why = refusal(text, &colon);
    if (why)
        return error_set(err, ERROR_INVALID, "%s: %s", bad, why);
    if (!colon) {
        if (inet_pton(AF_INET, text, out->bytes) != 1)
            return error_set(err, ERROR_INVALID, "%s", bad);
        out->family = 4;
        return ERROR_OK;
    }
    if (inet_pton(AF_INET6, text, out->bytes) != 1)
        return error_set(err, ERROR_INVALID, "%s", bad);
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    out->family = 6;
    if (memcmp(out->bytes, mapped, sizeof mapped) == 0) {
        /* What a dual-stack socket reports for an IPv4 peer. */
        memmove(out->bytes, out->bytes + 12, 4);
        memset(out->bytes + 4, 0, 12);
        out->family = 4;
    }
    return ERROR_OK;
}

static void fill(const policy_index *ix, uint32_t ref, model_action action,
                 policy_decision *out)
{
    const char *id = ix->text + (ref >> 1);
    size_t idn = strlen(id);
    memcpy(out->rule_id, id, idn + 1);
    const char *cidr = id + idn + 1;
    memcpy(out->cidr, cidr, strlen(cidr) + 1);
    out->action = action;
    out->synced = ref & 1u;
}

void policy_check_addr(const policy_index *ix, const char *policy_id,
                       const policy_addr *addr, policy_decision *out)
{
    out->allowed = false;
    out->policy_known = false;
    out->rule_id[0] = '\0';
    out->cidr[0] = '\0';
    out->action = MODEL_ACTION_DENY;
    out->synced = false;
    if (!ix || !policy_id || !addr || (addr->family != 4 && addr->family != 6))
        return;
    uint32_t p = policy_lookup(ix, policy_id, policy_hash(policy_id));
    if (p == POLICY_NONE)
        return;
    out->policy_known = true;
    uint64_t a[2];
    policy_key(addr->family, addr->bytes, a);
    unsigned maxlen = addr->family == 4 ? 32 : 128;
    uint32_t allow = POLICY_NONE, deny = POLICY_NONE;
    uint32_t n = ix->policies[p].trie[addr->family == 4 ? POLICY_V4 : POLICY_V6].root;
    /* Deeper rules overwrite shallower ones: the most specific of each action. */
    while (n != POLICY_NONE) {
        const policy_node *node = &ix->nodes[n];
        if (!policy_node_matches(node, a))
            break;
        if (node->rule[MODEL_ACTION_DENY] != POLICY_NONE)
            deny = node->rule[MODEL_ACTION_DENY];
        if (node->rule[MODEL_ACTION_ALLOW] != POLICY_NONE)
            allow = node->rule[MODEL_ACTION_ALLOW];
        if (node->len >= maxlen)
            break;
        if (node->jump == POLICY_NONE) {
            n = node->child[policy_bit(a, node->len)];
            continue;
        }
        const policy_jump *j = &ix->jumps[node->jump + policy_bits(a, node->len, node->jbits)];
        if (j->rule[MODEL_ACTION_DENY] != POLICY_NONE)
            deny = j->rule[MODEL_ACTION_DENY];
        if (j->rule[MODEL_ACTION_ALLOW] != POLICY_NONE)
            allow = j->rule[MODEL_ACTION_ALLOW];
        n = j->next;
    }
    if (deny != POLICY_NONE) {
        fill(ix, deny, MODEL_ACTION_DENY, out);
    } else if (allow != POLICY_NONE) {
        fill(ix, allow, MODEL_ACTION_ALLOW, out);
        out->allowed = true;
    }
}

error_code policy_check(const policy_index *ix, const char *policy_id, const char *ip,
                        policy_decision *out, error_info *err)
{
    policy_addr addr;
    error_code rc = policy_addr_parse(ip, &addr, err);
    /* A refused address decides nothing: out says so (not allowed, no rule). */
    policy_check_addr(rc == ERROR_OK ? ix : NULL, policy_id, &addr, out);
    return rc;
}

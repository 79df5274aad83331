/*
 * Fuzz target: the policy index (trie, path compression, jump tables) against a
 * plain scan of the same rules. The input gives up to 48 rules and then queries;
 * every query is decided by the index (built, then again after
 * policy_index_finish) and by the scan, which must agree on allowed, known, and
 * the deciding rule's prefix and action.
 *   rule  (18 bytes): flags (bit 0 IPv6, bit 1 deny, bits 2-3 policy), prefix
 *                     length, 16 address bytes (host bits cleared here)
 *   query (18 bytes): flags (bits 0-1 policy, bit 2 IPv4-mapped IPv6 text),
 *                     the rule it starts from, then 16 bytes XORed into the
 *                     address from the last byte of the prefix on
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/policy.h"
#include "rampart/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { RULES_MAX = 48, REC = 18 };

static const char *const policies[] = {"ipp_2Fuzz0PolicyA", "ipp_2Fuzz0PolicyB",
                                       "ipp_2Fuzz0PolicyC", "ipp_2Fuzz0PolicyD"};

typedef struct rule {
    int family; /* 4 or 6 */
    uint8_t addr[16];
    unsigned bits;
    model_action action;
    unsigned policy;
    char cidr[MODEL_CIDR_MAX + 1];
} rule;

static bool inside(const rule *r, int family, const uint8_t *a)
{
    if (r->family != family)
        return false;
    unsigned full = r->bits / 8, rest = r->bits % 8;
    if (memcmp(r->addr, a, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (r->addr[full] & mask) == (a[full] & mask);
}

/* The contract, by a scan: deny wins; the deciding rule is the most specific. */
static void scan(const rule *rules, size_t n, unsigned policy, int family, const uint8_t *a,
                 policy_decision *out)
{
    memset(out, 0, sizeof *out);
    out->action = MODEL_ACTION_DENY;
    const rule *allow = NULL, *deny = NULL;
    for (size_t i = 0; i < n; i++) {
        const rule *r = &rules[i];
        if (r->policy != policy)
            continue;
        out->policy_known = true;
        if (!inside(r, family, a))
            continue;
        const rule **best = r->action == MODEL_ACTION_DENY ? &deny : &allow;
        if (!*best || r->bits > (*best)->bits)
            *best = r;
    }
    const rule *d = deny ? deny : allow;
    out->allowed = allow && !deny;
    if (d) {
        memcpy(out->cidr, d->cidr, sizeof out->cidr);
        out->action = d->action;
    }
}

static void same(const policy_decision *a, const policy_decision *b)
{
    if (a->allowed != b->allowed || a->policy_known != b->policy_known ||
        strcmp(a->cidr, b->cidr) != 0 || (a->cidr[0] && a->action != b->action))
        abort();
}

/* An IPv4-mapped rule (a remote's, kept as it is) decides as the IPv4 prefix it
 * means: the scan takes it so; its text stays the rule's. */
static void unmap(rule *r)
{
    static const uint8_t v4_mapped[12] = {[10] = 0xFF, [11] = 0xFF};
    if (r->family != 6 || r->bits < 96 || memcmp(r->addr, v4_mapped, 12) != 0)
        return;
    memmove(r->addr, r->addr + 12, 4);
    memset(r->addr + 4, 0, 12);
    r->bits -= 96;
    r->family = 4;
}

static size_t read_rules(const uint8_t **data, size_t *size, rule *rules)
{
    size_t want = *size ? (size_t)(**data % (RULES_MAX + 1)) : 0;
    if (*size) {
        (*data)++;
        (*size)--;
    }
    size_t n = 0;
    for (; n < want && *size >= REC; *data += REC, *size -= REC) {
        const uint8_t *d = *data;
        rule *r = &rules[n];
        memset(r, 0, sizeof *r);
        r->family = d[0] & 1 ? 6 : 4;
        r->action = d[0] & 2 ? MODEL_ACTION_DENY : MODEL_ACTION_ALLOW;
        r->policy = (d[0] >> 2) & 3;
        unsigned max = r->family == 4 ? 32 : 128;
        r->bits = d[1] % (max + 1);
        memcpy(r->addr, d + 2, r->family == 4 ? 4 : 16);
        for (unsigned b = r->bits; b < max; b++)
            r->addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
        char text[INET6_ADDRSTRLEN];
        inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->addr, text, sizeof text);
        char cidr[MODEL_CIDR_MAX + 8];
        snprintf(cidr, sizeof cidr, "%s/%u", text, r->bits);
        error_info err = {0};
        if (validate_cidr(cidr, NULL, r->cidr, sizeof r->cidr, &err) != ERROR_OK)
            continue;
        unmap(r);
        n++;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rule rules[RULES_MAX];
    size_t n = read_rules(&data, &size, rules);
    policy_index *ix;
    error_info err = {0};
    if (policy_index_new(&ix, &err) != ERROR_OK)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char id[MODEL_ID_MAX + 1];
        snprintf(id, sizeof id, "ipr_2Fuzz%zu", i);
        if (policy_index_add(ix, policies[rules[i].policy], rules[i].cidr, rules[i].action,
                             id, i % 2 == 0, &err) != ERROR_OK)
            abort(); /* validate's canonical form must be accepted */
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && policy_index_finish(ix, &err) != ERROR_OK)
            abort();
        const uint8_t *q = data;
        for (size_t left = size; left >= REC; q += REC, left -= REC) {
            unsigned policy = q[0] & 3;
            const rule *from = n ? &rules[q[1] % n] : NULL;
            int family = from ? from->family : (q[1] & 1 ? 6 : 4);
            uint8_t a[16] = {0};
            if (from)
                memcpy(a, from->addr, sizeof a);
            unsigned start = from ? from->bits / 8 : 0;
            for (unsigned i = start; i < 16; i++)
                a[i] ^= q[2 + i];
            if (family == 4)
                memset(a + 4, 0, 12);
            char text[INET6_ADDRSTRLEN + 8];
            uint8_t mapped[16] = {[10] = 0xFF, [11] = 0xFF};
            if (family == 4 && (q[0] & 4)) {
                memcpy(mapped + 12, a, 4);
                inet_ntop(AF_INET6, mapped, text, sizeof text);
            } else {
                inet_ntop(family == 4 ? AF_INET : AF_INET6, a, text, sizeof text);
            }
            policy_decision want, got;
            static const uint8_t v4_mapped[12] = {[10] = 0xFF, [11] = 0xFF};
            if (family == 6 && memcmp(a, v4_mapped, 12) == 0) { /* checked as IPv4 */
                memmove(a, a + 12, 4);
                memset(a + 4, 0, 12);
                family = 4;
            }
            scan(rules, n, policy, family, a, &want);
            if (policy_check(ix, policies[policy], text, &got, &err) != ERROR_OK)
                abort();
            same(&want, &got);
        }
    }
    policy_index_free(ix);
    return 0;
}

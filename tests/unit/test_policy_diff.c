/* policy: a differential test of the prefix index against a plain scan of the
 * same random rules (nested and overlapping, both families, both actions), before
 * and after the index is finished and when rules are added after that. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/policy/policy_internal.h" /* to see that jump tables get built */
#include "rampart/policy.h"
#include "rampart/validate.h"

#define A MODEL_ACTION_ALLOW
#define D MODEL_ACTION_DENY

typedef struct rrule {
    int policy;
    int family;
    uint8_t bytes[16];
    unsigned len;
    model_action action;
    char id[48];
    bool kept; /* false: the same prefix and action came earlier in its policy */
} rrule;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state; /* xorshift64*, fixed seed: reproducible */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1du;
}

static void truncate_bytes(uint8_t *b, size_t n, unsigned len)
{
    for (size_t i = 0; i < n; i++) {
        unsigned lo = (unsigned)i * 8;
        if (len >= lo + 8)
            continue;
        b[i] = len <= lo ? 0 : (uint8_t)(b[i] & (0xff << (8 - (len - lo))));
    }
}

static bool in_prefix(const uint8_t *a, const rrule *r)
{
    uint8_t t[16];
    size_t n = r->family == 4 ? 4 : 16;
    memcpy(t, a, n);
    truncate_bytes(t, n, r->len);
    return memcmp(t, r->bytes, n) == 0;
}

/* A few shared stems, so rules nest and overlap as real ones do. */
static void random_bytes(int family, uint8_t *b)
{
    static const uint8_t stems[4][4] = {
        {10, 0, 0, 0}, {192, 168, 0, 0}, {0x20, 0x01, 0x0d, 0xb8}, {0xfd, 0, 0, 0}};
    size_t n = family == 4 ? 4 : 16;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)rnd();
    uint64_t r = rnd() % 8;
    if (r < 4)
        memcpy(b, stems[r], (size_t)(1 + rnd() % 3));
}

static unsigned random_len(int family)
{
    unsigned max = family == 4 ? 32 : 128;
    uint64_t r = rnd() % 10;
    if (r == 0)
        return (unsigned)(rnd() % 4);     /* short, even /0 */
    if (r == 1)
        return max;                       /* host routes */
    return (unsigned)(rnd() % (max + 1));
}

static void format_cidr(const rrule *r, char *buf, size_t size)
{
    char addr[INET6_ADDRSTRLEN];
    assert_non_null(inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->bytes, addr,
                              sizeof addr));
    snprintf(buf, size, "%s/%u", addr, r->len);
    /* The index takes the canonical form validate writes. */
    char canon[MODEL_CIDR_MAX + 1];
    error_info err;
    assert_int_equal(validate_cidr(buf, NULL, canon, sizeof canon, &err), ERROR_OK);
    snprintf(buf, size, "%s", canon);
}

static void scan(const rrule *rules, size_t n, int policy, const policy_addr *a,
                 bool *allowed, const char **rule)
{
    const rrule *allow = NULL, *deny = NULL;
    for (size_t i = 0; i < n; i++) {
        const rrule *r = &rules[i];
        if (!r->kept || r->policy != policy || r->family != a->family ||
            !in_prefix(a->bytes, r))
            continue;
        const rrule **best = r->action == D ? &deny : &allow;
        if (!*best || r->len > (*best)->len)
            *best = r;
    }
    *allowed = !deny && allow;
    *rule = deny ? deny->id : allow ? allow->id : "";
}

static void random_addr(const rrule *rules, size_t n, int family, policy_addr *a)
{
    memset(a, 0, sizeof *a);
    a->family = family;
    size_t bytes = family == 4 ? 4 : 16;
    random_bytes(family, a->bytes);
    if (rnd() % 2 == 0) {
        /* Inside a rule's prefix (of the family), random below it. */
        for (int tries = 0; tries < 16; tries++) {
            const rrule *r = &rules[rnd() % n];
            if (r->family != family)
                continue;
            uint8_t low[16];
            for (size_t i = 0; i < bytes; i++)
                low[i] = (uint8_t)rnd();
            for (size_t i = 0; i < bytes; i++) {
                unsigned lo = (unsigned)i * 8;
                uint8_t keep = r->len >= lo + 8 ? 0xff : r->len <= lo ? 0
                             : (uint8_t)(0xff << (8 - (r->len - lo)));
                a->bytes[i] = (uint8_t)((r->bytes[i] & keep) | (low[i] & ~keep));
            }
            break;
        }
    }
}

enum { DIFF_POLICIES = 3, DIFF_ROUNDS = 6, DIFF_CHECKS = 1500 };

typedef struct diff_stats {
    size_t checked, allowed, denied_by_rule;
} diff_stats;

/* Make rules[from..to) and add them; *kept counts those the index holds. */
static void add_random_rules(policy_index *ix, rrule *rules, size_t from, size_t to,
                             size_t round, size_t *kept)
{
    for (size_t i = from; i < to; i++) {
        rrule *r = &rules[i];
        r->policy = (int)(rnd() % DIFF_POLICIES);
        r->family = rnd() % 2 ? 4 : 6;
        random_bytes(r->family, r->bytes);
        r->len = random_len(r->family);
        truncate_bytes(r->bytes, r->family == 4 ? 4 : 16, r->len);
        r->action = rnd() % 3 == 0 ? D : A; /* more allows, or little is allowed */
        snprintf(r->id, sizeof r->id, "ipr_%zu_%zu", round, i);
        r->kept = true;
        for (size_t j = 0; j < i && r->kept; j++) {
            const rrule *o = &rules[j];
            if (o->policy == r->policy && o->family == r->family && o->len == r->len &&
                o->action == r->action && memcmp(o->bytes, r->bytes, 16) == 0)
                r->kept = false;
        }
        *kept += r->kept;
        char cidr[MODEL_CIDR_MAX + 1], policy[24];
        format_cidr(r, cidr, sizeof cidr);
        snprintf(policy, sizeof policy, "ipp_%d", r->policy);
        error_info err;
        if (policy_index_add(ix, policy, cidr, r->action, r->id, false, &err) != ERROR_OK)
            fail_msg("add %s: %s", cidr, err.msg);
    }
    assert_int_equal(policy_index_rule_count(ix), *kept);
}

static void compare(const policy_index *ix, const rrule *rules, size_t n, const char *phase,
                    diff_stats *st)
{
    for (size_t k = 0; k < DIFF_CHECKS; k++) {
        policy_addr a;
        random_addr(rules, n, rnd() % 2 ? 4 : 6, &a);
        int p = (int)(rnd() % DIFF_POLICIES);
        char policy[24];
        snprintf(policy, sizeof policy, "ipp_%d", p);
        bool want_allowed;
        const char *want_rule;
        scan(rules, n, p, &a, &want_allowed, &want_rule);
        policy_decision d;
        policy_check_addr(ix, policy, &a, &d);
        if (d.allowed != want_allowed || strcmp(d.rule_id, want_rule) != 0) {
            char buf[INET6_ADDRSTRLEN];
            inet_ntop(a.family == 4 ? AF_INET : AF_INET6, a.bytes, buf, sizeof buf);
            fail_msg("%s, %zu rules, %s in %s: index says %d by '%s', scan %d by '%s'",
                     phase, n, buf, policy, d.allowed, d.rule_id, want_allowed, want_rule);
        }
        st->checked++;
        st->allowed += d.allowed;
        st->denied_by_rule += !d.allowed && d.rule_id[0];
    }
}

/* Tables in the index, and how many of them hang below another one. */
static void count_tables(const policy_index *ix, size_t *tables, size_t *nested)
{
    size_t tops = 0, all = 0;
    for (size_t i = 0; i < ix->nnodes; i++)
        all += ix->nodes[i].jump != POLICY_NONE;
    for (size_t p = 0; p < ix->npolicies; p++) {
        for (int f = 0; f < 2; f++) {
            /* The top table hangs at the first node with two children. */
            uint32_t n = ix->policies[p].trie[f].root;
            while (n != POLICY_NONE && ix->nodes[n].jump == POLICY_NONE &&
                   (ix->nodes[n].child[0] == POLICY_NONE ||
                    ix->nodes[n].child[1] == POLICY_NONE))
                n = ix->nodes[n].child[0] != POLICY_NONE ? ix->nodes[n].child[0]
                                                         : ix->nodes[n].child[1];
            tops += n != POLICY_NONE && ix->nodes[n].jump != POLICY_NONE;
        }
    }
    *tables += all;
    *nested += all - tops;
}

/*
 * Each round: the index as built, then finished (new layout, jump tables), then
 * with more rules added after finishing (the changed tries drop their tables),
 * then finished again; every phase against a scan of the same rules.
 */
static void differential(void **state)
{
    (void)state;
    static const size_t sizes[DIFF_ROUNDS] = {1, 8, 40, 200, 800, 4000};
    diff_stats st = {0};
    size_t tables = 0, nested = 0;
    for (size_t round = 0; round < DIFF_ROUNDS; round++) {
        size_t n = sizes[round], first = n - n / 4, kept = 0;
        rrule *rules = calloc(n, sizeof *rules);
        assert_non_null(rules);
        policy_index *ix = NULL;
        error_info err;
        assert_int_equal(policy_index_new(&ix, &err), ERROR_OK);
        add_random_rules(ix, rules, 0, first, round, &kept);
        compare(ix, rules, first, "as built", &st);
        assert_int_equal(policy_index_finish(ix, &err), ERROR_OK);
        count_tables(ix, &tables, &nested);
        compare(ix, rules, first, "finished", &st);
        add_random_rules(ix, rules, first, n, round, &kept);
        compare(ix, rules, n, "added after finish", &st);
        assert_int_equal(policy_index_finish(ix, &err), ERROR_OK);
        compare(ix, rules, n, "finished again", &st);
        policy_index_free(ix);
        free(rules);
    }
    /* Both outcomes and the jump tables must be exercised, or this proves little. */
    assert_int_equal(st.checked, (size_t)DIFF_ROUNDS * 4 * DIFF_CHECKS);
    assert_true(st.allowed > st.checked / 10);
    assert_true(st.denied_by_rule > st.checked / 20);
    assert_true(tables >= 4);
    assert_true(nested >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * bench_policy: figures of policy decisions, printed as "figure value" lines.
 *
 *   bench_policy [RULES]   build an index of RULES random rules (default 100000:
 *                          IPv4 and IPv6, allow and deny, over a few policies) and
 *                          time decisions on one core
 *
 *   rules, policies          what the index holds
 *   build_ms                 policy_index_add of every rule
 *   index_bytes              heap held by the index (index_bytes_per_rule too)
 *   checks_per_s             policy_check_addr on pre-parsed random addresses
 *   parse_checks_per_s       policy_check: the same, parsing the address text first
 *   scan_checks_per_s        baseline: the same decisions by scanning the policy's
 *                            rules (pre-parsed, in arrays), as code without an index does
 *   ratio                    checks_per_s / scan_checks_per_s
 *   hash_checks_per_s        stricter baseline: one exact-match probe of a hash
 *                            table of the rules' addresses (the policy id hashed
 *                            too), what the cheapest lookup of any kind costs
 *   hash_ratio               checks_per_s / hash_checks_per_s
 *
 * Half the addresses fall inside some rule (random bits below its prefix), half
 * are random, so walks go deep as well as stop early. Fixed seed.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/policy.h"

enum { POLICIES = 4, ADDRS = 1 << 16, SCAN_ADDRS = 200 };
#define MIN_SECONDS 0.5

typedef struct brule {
    int policy;
    int family;
    uint8_t bytes[16];
    unsigned len;
    model_action action;
} brule;

typedef struct probe {
    const char *policy;
    int policy_index;
    policy_addr addr;
    char text[INET6_ADDRSTRLEN];
} probe;

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x9e3779b97f4a7c15u;
}

/* CPU time of this thread: the figures are per core, and a shared machine's
 * other work does not count against them. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t keep_mask(unsigned len, size_t byte)
{
    unsigned lo = (unsigned)byte * 8;
    if (len >= lo + 8)
        return 0xff;
    if (len <= lo)
        return 0;
    return (uint8_t)(0xff << (8 - (len - lo)));
}

/* Prefix lengths as they come in practice: IPv4 mostly /16../32 (a few /8../15),
 * IPv6 mostly the usual allocation sizes. */
static unsigned random_len(int family)
{
    static const unsigned v6[] = {32, 40, 48, 56, 64, 64, 96, 112, 127, 128};
    if (family == 4)
        return rnd() % 10 ? 16 + (unsigned)(rnd() % 17) : 8 + (unsigned)(rnd() % 8);
    return rnd() % 4 ? v6[rnd() % (sizeof v6 / sizeof v6[0])] : (unsigned)(rnd() % 129);
}

static void random_rule(brule *r)
{
    r->policy = (int)(rnd() % POLICIES);
    r->family = rnd() % 2 ? 4 : 6;
    r->len = random_len(r->family);
    size_t n = r->family == 4 ? 4 : 16;
    memset(r->bytes, 0, sizeof r->bytes);
    for (size_t i = 0; i < n; i++)
        r->bytes[i] = (uint8_t)(rnd() & keep_mask(r->len, i));
    if (r->family == 6 && r->len >= 16) {
        r->bytes[0] = 0x20; /* global unicast, as most rules are */
        r->bytes[1] = (uint8_t)(r->bytes[1] & 0x0f);
    }
    r->action = rnd() % 4 == 0 ? MODEL_ACTION_DENY : MODEL_ACTION_ALLOW;
}

static void rule_cidr(const brule *r, char *buf, size_t size)
{
    char addr[INET6_ADDRSTRLEN];
    inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->bytes, addr, sizeof addr);
    snprintf(buf, size, "%s/%u", addr, r->len);
}

static void random_probe(const brule *rules, size_t n, char (*policies)[48], probe *p)
{
    const brule *r = &rules[rnd() % n];
    p->policy_index = rnd() % 2 ? r->policy : (int)(rnd() % POLICIES);
    p->policy = policies[p->policy_index];
    p->addr.family = r->family;
    size_t bytes = r->family == 4 ? 4 : 16;
    memset(p->addr.bytes, 0, sizeof p->addr.bytes);
    bool inside = rnd() % 2;
    for (size_t i = 0; i < bytes; i++) {
        uint8_t keep = inside ? keep_mask(r->len, i) : 0;
        p->addr.bytes[i] = (uint8_t)((r->bytes[i] & keep) | (rnd() & (uint8_t)~keep));
    }
    if (!inside && r->family == 6)
        p->addr.bytes[0] = 0x20;
    inet_ntop(r->family == 4 ? AF_INET : AF_INET6, p->addr.bytes, p->text, sizeof p->text);
}

static bool scan_allowed(const brule *rules, size_t n, const probe *p)
{
    bool allow = false;
    for (size_t i = 0; i < n; i++) {
        const brule *r = &rules[i];
        if (r->policy != p->policy_index || r->family != p->addr.family)
            continue;
        size_t bytes = r->family == 4 ? 4 : 16;
        bool in = true;
        for (size_t b = 0; b < bytes && in; b++)
            in = (p->addr.bytes[b] & keep_mask(r->len, b)) == r->bytes[b];
        if (!in)
            continue;
        if (r->action == MODEL_ACTION_DENY)
            return false;
        allow = true;
    }
    return allow;
}

/* The stricter baseline: rules' network addresses in an open-addressing table. */
typedef struct hslot {
    uint64_t k[2];
    uint32_t tag; /* 0: empty; else policy hash | 1 */
    uint32_t family;
} hslot;

typedef struct htable {
    hslot *slots;
    size_t mask;
} htable;

static uint32_t fnv(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static uint64_t hmix(const uint64_t k[2], uint32_t tag)
{
    uint64_t x = (k[0] ^ (k[1] * 0x9e3779b97f4a7c15u) ^ tag) * 0xff51afd7ed558ccdu;
    return x ^ x >> 29;
}

static void to_key(const uint8_t *b, uint64_t k[2])
{
    memcpy(k, b, 16);
}

static bool htable_build(htable *t, const brule *rules, size_t n, char (*policies)[48])
{
    size_t cap = 1;
    while (cap < 2 * n)
        cap *= 2;
    t->slots = calloc(cap, sizeof *t->slots);
    t->mask = cap - 1;
    if (!t->slots)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint64_t k[2];
        to_key(rules[i].bytes, k);
        uint32_t tag = fnv(policies[rules[i].policy]) | 1u;
        size_t j = hmix(k, tag) & t->mask;
        while (t->slots[j].tag)
            j = (j + 1) & t->mask;
        t->slots[j] = (hslot){{k[0], k[1]}, tag, (uint32_t)rules[i].family};
    }
    return true;
}

static bool htable_has(const htable *t, const probe *p)
{
    uint64_t k[2];
    to_key(p->addr.bytes, k);
    uint32_t tag = fnv(p->policy) | 1u;
    for (size_t j = hmix(k, tag) & t->mask; t->slots[j].tag; j = (j + 1) & t->mask) {
        const hslot *s = &t->slots[j];
        if (s->tag == tag && s->k[0] == k[0] && s->k[1] == k[1] &&
            s->family == (uint32_t)p->addr.family)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    if (n == 0) {
        fprintf(stderr, "usage: bench_policy [RULES]\n");
        return 2;
    }
    char policies[POLICIES][48];
    for (int i = 0; i < POLICIES; i++) /* as long as real ids: the hash reads them all */
        snprintf(policies[i], sizeof policies[i], "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb%02d", i);
    brule *rules = calloc(n, sizeof *rules);
    probe *probes = calloc(ADDRS, sizeof *probes);
    if (!rules || !probes)
        return 1;
    for (size_t i = 0; i < n; i++)
        random_rule(&rules[i]);

    policy_index *ix = NULL;
    error_info err;
    double t0 = now_s();
    if (policy_index_new(&ix, &err) != ERROR_OK)
        return 1;
    for (size_t i = 0; i < n; i++) {
        char cidr[MODEL_CIDR_MAX + 1], id[40];
        rule_cidr(&rules[i], cidr, sizeof cidr);
        snprintf(id, sizeof id, "ipr_%027zu", i);
        if (policy_index_add(ix, policies[rules[i].policy], cidr, rules[i].action, id,
                             i % 3 != 0, &err) != ERROR_OK) {
            fprintf(stderr, "bench_policy: %s\n", err.msg);
            return 1;
        }
    }
    if (policy_index_finish(ix, &err) != ERROR_OK)
        return 1;
    double build = now_s() - t0;
    for (size_t i = 0; i < ADDRS; i++)
        random_probe(rules, n, policies, &probes[i]);

    size_t allowed = 0, checks = 0;
    policy_decision d;
    t0 = now_s();
    double elapsed;
    do {
        for (size_t i = 0; i < ADDRS; i++) {
            policy_check_addr(ix, probes[i].policy, &probes[i].addr, &d);
            allowed += d.allowed;
        }
        checks += ADDRS;
    } while ((elapsed = now_s() - t0) < MIN_SECONDS);
    double rate = (double)checks / elapsed;

    size_t pchecks = 0;
    t0 = now_s();
    do {
        for (size_t i = 0; i < ADDRS; i++) {
            if (policy_check(ix, probes[i].policy, probes[i].text, &d, &err) != ERROR_OK) {
                fprintf(stderr, "bench_policy: %s\n", err.msg);
                return 1;
            }
            allowed += d.allowed;
        }
        pchecks += ADDRS;
    } while ((elapsed = now_s() - t0) < MIN_SECONDS);
    double prate = (double)pchecks / elapsed;

    /* The baseline answers the same question; check that it agrees, too. */
    size_t schecks = 0, disagree = 0;
    t0 = now_s();
    do {
        for (size_t i = 0; i < SCAN_ADDRS; i++) {
            bool a = scan_allowed(rules, n, &probes[i]);
            policy_check_addr(ix, probes[i].policy, &probes[i].addr, &d);
            disagree += a != d.allowed;
        }
        schecks += SCAN_ADDRS;
    } while ((elapsed = now_s() - t0) < MIN_SECONDS);
    double srate = (double)schecks / elapsed;

    htable ht;
    if (!htable_build(&ht, rules, n, policies))
        return 1;
    size_t hchecks = 0, hits = 0;
    t0 = now_s();
    do {
        for (size_t i = 0; i < ADDRS; i++)
            hits += htable_has(&ht, &probes[i]);
        hchecks += ADDRS;
    } while ((elapsed = now_s() - t0) < MIN_SECONDS);
    double hrate = (double)hchecks / elapsed;
    free(ht.slots);

    printf("rules %zu\n", policy_index_rule_count(ix));
    printf("policies %zu\n", policy_index_policy_count(ix));
    printf("build_ms %.0f\n", build * 1e3);
    printf("index_bytes %zu\n", policy_index_bytes(ix));
    printf("index_bytes_per_rule %.0f\n",
           (double)policy_index_bytes(ix) / (double)policy_index_rule_count(ix));
    printf("checks_per_s %.0f\n", rate);
    printf("parse_checks_per_s %.0f\n", prate);
    printf("scan_checks_per_s %.0f\n", srate);
    printf("ratio %.1f\n", rate / srate);
    printf("hash_checks_per_s %.0f\n", hrate);
    printf("hash_ratio %.2f\n", rate / hrate);
    printf("hash_hits %zu\n", hits);
    printf("allowed_share %.2f\n", (double)allowed / (double)(checks + pchecks));
    policy_index_free(ix);
    free(rules);
    free(probes);
    if (disagree) {
        fprintf(stderr, "bench_policy: the index and the scan disagree on %zu checks\n",
                disagree);
        return 1;
    }
    return 0;
}

/* hostrules: every export format decides as `rampart check` does. Each rendering
 * is read back by a small interpreter of its tool's rule (nginx and iptables: the
 * first matching line; nftables: the decide chain over its sets) and compared
 * with the policy index on addresses at and around every rule's edges (deny
 * inside allow, allow inside deny, both families, IPv4-mapped), plus random ones.
 * The real tools check the same files in tests/e2e/export_host.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/cidrset.h"
#include "rampart/hostrules.h"
#include "rampart/policy.h"

#define P "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a"

static const struct {
    const char *cidr;
    model_action action;
} rules[] = {
    {"10.0.0.0/8", MODEL_ACTION_ALLOW},        {"10.1.2.3/32", MODEL_ACTION_DENY},
    {"10.1.0.0/16", MODEL_ACTION_ALLOW},       {"10.1.128.0/17", MODEL_ACTION_ALLOW},
    {"192.168.0.0/16", MODEL_ACTION_DENY},     {"192.168.1.7/32", MODEL_ACTION_ALLOW},
    {"172.16.0.0/24", MODEL_ACTION_ALLOW},     {"172.16.1.0/24", MODEL_ACTION_ALLOW},
    {"2001:db8::/32", MODEL_ACTION_ALLOW},     {"2001:db8:dead::/48", MODEL_ACTION_DENY},
    {"2001:db8:dead:beef::1/128", MODEL_ACTION_ALLOW},
    /* A remote rule in IPv4-mapped form: decided as the IPv4 prefix it means. */
    {"::ffff:198.51.100.0/120", MODEL_ACTION_ALLOW}, {"203.0.113.0/24", MODEL_ACTION_DENY},
};
enum { NRULES = sizeof rules / sizeof rules[0] };

typedef struct fixture {
    hostrules_set set;
    policy_index *ix;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    error_info e;
    snprintf(f->set.policy_id, sizeof f->set.policy_id, "%s", P);
    assert_int_equal(policy_index_new(&f->ix, &e), ERROR_OK);
    for (size_t i = 0; i < NRULES; i++) {
        char id[32];
        snprintf(id, sizeof id, "ipr_r%zu", i);
        assert_int_equal(hostrules_add(&f->set, id, rules[i].cidr, rules[i].action,
                                       MODEL_STATE_SYNCED, "note \"x\", y", &e),
                         ERROR_OK);
        assert_int_equal(policy_index_add(f->ix, P, rules[i].cidr, rules[i].action, id, true,
                                          &e),
                         ERROR_OK);
    }
    hostrules_sort(&f->set);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    hostrules_free(&f->set);
    policy_index_free(f->ix);
    free(f);
    return 0;
}

static char *render(const fixture *f, hostrules_format fmt, const char *ports)
{
    buf_t out = {0};
    error_info e;
    hostrules_opts opt = {.name = NULL, .ports = ports};
    if (hostrules_render(&f->set, fmt, &opt, &out, &e) != ERROR_OK)
        fail_msg("render: %s", e.msg);
    return buf_take(&out);
}

/* ---- the interpreters ---- */

static bool covers(const char *cidr, const policy_addr *a)
{
    validate_prefix p, x = {.family = a->family, .bits = a->family == 4 ? 32 : 128};
    error_info e;
    memcpy(x.addr, a->bytes, sizeof x.addr);
    if (strcmp(cidr, "all") == 0)
        return true;
    if (cidrset_parse_entry(cidr, &p, &e) != ERROR_OK)
        fail_msg("not a cidr in the output: %s", cidr);
    return cidrset_contains(&p, &x);
}

/* nginx: "allow X;" / "deny X;", the first match decides; none: allowed. */
static bool nginx_allows(const char *text, const policy_addr *a)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        char verb[8], cidr[80];
        if (sscanf(line, "%7s %79[^;];", verb, cidr) != 2 || verb[0] == '#')
            continue;
        if (covers(cidr, a))
            return strcmp(verb, "allow") == 0;
    }
    return true;
}

/* iptables-restore: "-A C -s X ... -j V" or "-A C -j V" lines, the first match. */
static bool xtables_allows(const char *text, const policy_addr *a)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        if (strncmp(line, "-A ", 3) != 0)
            continue;
        char cidr[80] = "all";
        const char *s = strstr(line, " -s ");
        const char *eol = strchr(line, '\n');
        if (s && (!eol || s < eol))
            sscanf(s + 4, "%79s", cidr);
        if (covers(cidr, a))
            return strncmp(strstr(line, " -j ") + 4, "ACCEPT", 6) == 0;
    }
    return true;
}

/* nftables: the elements of set `name`, then the decide chain's lines in order. */
static bool in_nft_set(const char *text, const char *name, const policy_addr *a)
{
    char head[48];
    snprintf(head, sizeof head, "set %s {", name);
    const char *s = strstr(text, head);
    assert_non_null(s);
    const char *end = strstr(s, "\t}\n");
    const char *el = strstr(s, "elements = {");
    if (!el || el > end)
        return false;
    for (const char *p = el + 12; p < end;) {
        while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\t')
            p++;
        if (*p == '}')
            break;
        char cidr[80];
        assert_int_equal(sscanf(p, "%79[^,} \n]", cidr), 1);
        if (covers(cidr, a))
            return true;
        p += strlen(cidr);
    }
    return false;
}

static bool nft_allows(const char *text, const policy_addr *a)
{
    const char *chain = strstr(text, "chain decide {");
    assert_non_null(chain);
    for (const char *line = strchr(chain, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        char fam[8], set[32], verdict[16];
        while (*line == '\t')
            line++;
        if (strncmp(line, "drop", 4) == 0)
            return false;
        assert_int_equal(sscanf(line, "%7s saddr @%31s %15s", fam, set, verdict), 3);
        bool family = strcmp(fam, a->family == 4 ? "ip" : "ip6") == 0;
        if (family && in_nft_set(text, set, a))
            return strcmp(verdict, "accept") == 0;
    }
    return false;
}

/* ---- addresses to try ---- */

static void add_addr(policy_addr *out, size_t *n, int family, const unsigned char *bytes)
{
    policy_addr a = {.family = family};
    memcpy(a.bytes, bytes, family == 4 ? 4 : 16);
    out[(*n)++] = a;
}

/* Every rule's first and last address and the ones just outside, and random ones
 * inside 10/8, 192.168/16 and 2001:db8::/32. */
static size_t sample(policy_addr *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < NRULES && n + 4 <= max; i++) {
        validate_prefix p;
        error_info e;
        assert_int_equal(validate_cidr(rules[i].cidr, &p, NULL, 0, &e), ERROR_OK);
        size_t len = p.family == 4 ? 4 : 16;
        unsigned char lo[16], hi[16], below[16], above[16];
        memcpy(lo, p.addr, 16);
        memcpy(hi, p.addr, 16);
        for (unsigned b = p.bits; b < len * 8; b++)
            hi[b / 8] |= (unsigned char)(0x80u >> (b % 8));
        memcpy(below, lo, 16);
        memcpy(above, hi, 16);
        for (size_t k = len; k-- > 0 && below[k]-- == 0;)
            ;
        for (size_t k = len; k-- > 0 && ++above[k] == 0;)
            ;
        add_addr(out, &n, p.family, lo);
        add_addr(out, &n, p.family, hi);
        add_addr(out, &n, p.family, below);
        add_addr(out, &n, p.family, above);
    }
    uint32_t x = 2463534242u;
    while (n < max) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        unsigned char b[16] = {0};
        int family = x % 3 == 0 ? 6 : 4;
        if (family == 4) {
            b[0] = x % 2 ? 10 : 192;
            b[1] = b[0] == 10 ? (unsigned char)(x >> 8) % 3 : 168;
            b[2] = (unsigned char)(x >> 16);
            b[3] = (unsigned char)(x >> 24);
        } else {
            b[0] = 0x20, b[1] = 0x01, b[2] = 0x0d, b[3] = 0xb8;
            b[4] = x % 2 ? 0xde : (unsigned char)(x >> 8);
            b[5] = 0xad;
            b[6] = (unsigned char)(x >> 12) % 2 ? 0xbe : 0;
            b[7] = 0xef;
            b[15] = (unsigned char)(x >> 20) % 3;
        }
        add_addr(out, &n, family, b);
    }
    return n;
}

static void compare(const fixture *f, hostrules_format fmt, int only_family,
                    bool (*allows)(const char *, const policy_addr *))
{
    char *text = render(f, fmt, NULL);
    policy_addr addrs[600];
    size_t n = sample(addrs, 600);
    size_t allowed = 0, denied = 0;
    for (size_t i = 0; i < n; i++) {
        if (only_family && addrs[i].family != only_family)
            continue;
        policy_decision d;
        policy_check_addr(f->ix, P, &addrs[i], &d);
        char ip[INET6_ADDRSTRLEN];
        inet_ntop(addrs[i].family == 4 ? AF_INET : AF_INET6, addrs[i].bytes, ip, sizeof ip);
        if (allows(text, &addrs[i]) != d.allowed)
            fail_msg("%s: %s: the export says %s, check says %s", hostrules_format_name(fmt),
                     ip, d.allowed ? "denied" : "allowed", d.allowed ? "allowed" : "denied");
        allowed += d.allowed;
        denied += !d.allowed;
    }
    assert_true(allowed > 20 && denied > 20); /* both outcomes were tried */
    free(text);
}

static void nginx_decides_as_check(void **state)
{
    compare(*state, HOSTRULES_NGINX, 0, nginx_allows);
}

static void iptables_decides_as_check(void **state)
{
    compare(*state, HOSTRULES_IPTABLES, 4, xtables_allows);
    compare(*state, HOSTRULES_IP6TABLES, 6, xtables_allows);
}

static void nftables_decides_as_check(void **state)
{
    compare(*state, HOSTRULES_NFTABLES, 0, nft_allows);
}

/* ---- the texts ---- */

static void nftables_sets_are_merged_and_ports_guarded(void **state)
{
    char *text = render(*state, HOSTRULES_NFTABLES, "443,8000-8100");
    assert_non_null(strstr(text, "elements = { 10.0.0.0/8, 172.16.0.0/23, 192.168.1.7/32, "
                                 "198.51.100.0/24 }"));
    assert_null(strstr(text, "10.1.0.0/16")); /* inside 10/8: merged away in the set */
    assert_non_null(strstr(text, "th dport { 443,8000-8100 } jump decide"));
    assert_non_null(strstr(text, "delete table inet rampart\n"));
    free(text);
}

static void json_and_csv_escape_descriptions(void **state)
{
    char *json = render(*state, HOSTRULES_JSON, NULL);
    assert_non_null(strstr(json, "\"description\": \"note \\\"x\\\", y\""));
    assert_non_null(strstr(json, "{\"action\": \"deny\", \"cidr\": \"10.1.2.3/32\""));
    free(json);
    char *csv = render(*state, HOSTRULES_CSV, NULL);
    assert_non_null(strstr(csv, "action,cidr,family,id,state,description\n"));
    assert_non_null(strstr(csv, ",\"note \"\"x\"\", y\"\n"));
    free(csv);
}

static void output_is_the_same_each_time(void **state)
{
    for (int fmt = 0; fmt < HOSTRULES_FORMAT_COUNT; fmt++) {
        char *a = render(*state, (hostrules_format)fmt, NULL);
        char *b = render(*state, (hostrules_format)fmt, NULL);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
}

static void options_are_checked(void **state)
{
    (void)state;
    error_info e;
    assert_int_equal(hostrules_name_check("edge_v4-1", &e), ERROR_OK);
    assert_int_equal(hostrules_name_check("1abc", &e), ERROR_INVALID);
    assert_int_equal(hostrules_name_check("a b", &e), ERROR_INVALID);
    assert_int_equal(hostrules_name_check("abcdefghijklmnopqrstuvwxyz123", &e), ERROR_INVALID);
    assert_int_equal(hostrules_ports_check("443", &e), ERROR_OK);
    assert_int_equal(hostrules_ports_check("80,443,8000-8100", &e), ERROR_OK);
    static const char *const bad[] = {"", "0", "65536", "80,", "8100-8000", "08", "a",
                                      "80 443", "1-2-3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(hostrules_ports_check(bad[i], &e), ERROR_INVALID);
    hostrules_format fmt;
    assert_true(hostrules_format_parse("ip6tables", &fmt));
    assert_int_equal(fmt, HOSTRULES_IP6TABLES);
    assert_false(hostrules_format_parse("pf", &fmt));
}

static void empty_policy_refuses_everything(void **state)
{
    (void)state;
    fixture f = {0};
    snprintf(f.set.policy_id, sizeof f.set.policy_id, "%s", P);
    char *text = render(&f, HOSTRULES_NGINX, NULL);
    policy_addr a = {.family = 4, .bytes = {10, 0, 0, 1}};
    assert_false(nginx_allows(text, &a));
    free(text);
    text = render(&f, HOSTRULES_NFTABLES, NULL);
    assert_false(nft_allows(text, &a));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nginx_decides_as_check, setup, teardown),
        cmocka_unit_test_setup_teardown(iptables_decides_as_check, setup, teardown),
        cmocka_unit_test_setup_teardown(nftables_decides_as_check, setup, teardown),
        cmocka_unit_test_setup_teardown(nftables_sets_are_merged_and_ports_guarded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(json_and_csv_escape_descriptions, setup, teardown),
        cmocka_unit_test_setup_teardown(output_is_the_same_each_time, setup, teardown),
        cmocka_unit_test(options_are_checked),
        cmocka_unit_test(empty_policy_refuses_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* cidrset: reading lists (text, JSON, --key paths) with their lines and problems,
 * overlaps, and aggregation (exact and minimal, checked against every address of
 * small spaces, both families). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/cidrset.h"
#include "rampart/utf8.h"

/* ---- helpers ---- */

typedef struct parsed {
    cidrset set;
    cidrset_problems problems;
    bool json;
    error_code rc;
    error_info err;
} parsed;

static parsed *parse_keys(const char *text, const char *const *keys, size_t nkeys)
{
    parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    cidrset_parse_opts opt = {keys, nkeys};
    p->rc = cidrset_parse(text, strlen(text), &opt, &p->set, &p->problems, &p->json, &p->err);
    return p;
}

static parsed *parse(const char *text)
{
    return parse_keys(text, NULL, 0);
}

static void parsed_free(parsed *p)
{
    cidrset_free(&p->set);
    cidrset_problems_free(&p->problems);
    free(p);
}

static const char *cidr_at(const cidrset *s, size_t i)
{
    static char buf[MODEL_CIDR_MAX + 1];
    cidrset_format(&s->items[i].pfx, buf);
    return buf;
}

static void add(cidrset *s, const char *text, size_t line, const char *note)
{
    validate_prefix p;
    error_info e;
    assert_int_equal(cidrset_parse_entry(text, &p, &e), ERROR_OK);
    assert_int_equal(cidrset_add(s, &p, line, note, &e), ERROR_OK);
}

/* ---- text ---- */

static void text_entries_comments_and_lines(void **state)
{
    (void)state;
    parsed *p = parse("\xEF\xBB\xBF# header\r\n"
                      "10.0.0.0/8   # office\r\n"
                      "\n"
                      "  192.168.1.5 ; one host\n"
                      "2001:DB8::/32\n"
                      "; only a comment\n"
                      "2001:db8::1");
    assert_int_equal(p->rc, ERROR_OK);
    assert_false(p->json);
    assert_int_equal(p->problems.total, 0);
    assert_int_equal(p->set.count, 4);
    assert_string_equal(cidr_at(&p->set, 0), "10.0.0.0/8");
    assert_int_equal(p->set.items[0].line, 2);
    assert_string_equal(p->set.items[0].note, "office");
    assert_string_equal(cidr_at(&p->set, 1), "192.168.1.5/32");
    assert_int_equal(p->set.items[1].line, 4);
    assert_string_equal(p->set.items[1].note, "one host");
    assert_string_equal(cidr_at(&p->set, 2), "2001:db8::/32");
    assert_null(p->set.items[2].note);
    assert_string_equal(cidr_at(&p->set, 3), "2001:db8::1/128");
    assert_int_equal(p->set.items[3].line, 7);
    parsed_free(p);
}

static void text_every_problem_with_its_line(void **state)
{
    (void)state;
    parsed *p = parse("10.0.0.1/8\n"
                      "10.0.0.0/8\n"
                      "not-an-address\n"
                      "1.2.3.4 and more\n"
                      "::1/129\n"
                      "010.0.0.0/8\n");
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->problems.total, 5);
    assert_int_equal(p->problems.items[0].line, 1);
    assert_non_null(strstr(p->problems.items[0].msg, "did you mean 10.0.0.0/8?"));
    assert_int_equal(p->problems.items[1].line, 3);
    assert_int_equal(p->problems.items[2].line, 4);
    assert_non_null(strstr(p->problems.items[2].msg, "one entry per line"));
    assert_int_equal(p->problems.items[3].line, 5);
    assert_non_null(strstr(p->problems.items[3].msg, "0..128"));
    assert_int_equal(p->problems.items[4].line, 6);
    assert_non_null(strstr(p->problems.items[4].msg, "leading zero"));
    assert_int_equal(p->set.count, 1);
    parsed_free(p);
}

static void text_bad_comment_is_dropped_and_counted(void **state)
{
    (void)state;
    parsed *p = parse("10.0.0.0/8 # caf\xE9\n");
    assert_int_equal(p->problems.total, 0);
    assert_int_equal(p->problems.bad_notes, 1);
    assert_null(p->set.items[0].note);
    parsed_free(p);
}

static void text_refuses_key(void **state)
{
    (void)state;
    const char *keys[] = {"a"};
    parsed *p = parse_keys("10.0.0.0/8\n", keys, 1);
    assert_int_equal(p->rc, ERROR_INVALID);
    parsed_free(p);
}

/* ---- JSON ---- */

static void json_array_with_lines(void **state)
{
    (void)state;
    parsed *p = parse("[\n  \"10.0.0.0/8\",\n  \"2001:db8::/32\",\n  \"1.2.3.4\",\n"
                      "  \"10\\u002e1.0.0/16\"\n]\n");
    assert_int_equal(p->rc, ERROR_OK);
    assert_true(p->json);
    assert_int_equal(p->set.count, 4);
    assert_int_equal(p->set.items[1].line, 3);
    assert_string_equal(cidr_at(&p->set, 2), "1.2.3.4/32");
    assert_string_equal(cidr_at(&p->set, 3), "10.1.0.0/16");
    assert_int_equal(p->set.items[3].line, 5);
    parsed_free(p);
}

static void json_problems_name_lines(void **state)
{
    (void)state;
    parsed *p = parse("[\"10.0.0.0/8\",\n 5,\n {\"a\": 1},\n \"10.0.0.1/8\", null]");
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->problems.total, 4);
    assert_int_equal(p->problems.items[0].line, 2);
    assert_non_null(strstr(p->problems.items[0].msg, "got a number"));
    assert_int_equal(p->problems.items[1].line, 3);
    assert_non_null(strstr(p->problems.items[1].msg, "got an object"));
    assert_int_equal(p->problems.items[2].line, 4);
    assert_non_null(strstr(p->problems.items[2].msg, "did you mean 10.0.0.0/8?"));
    assert_non_null(strstr(p->problems.items[3].msg, "got null"));
    parsed_free(p);
}

static const char published[] =
    "{\n"
    "  \"syncToken\": \"1700000000\",\n"
    "  \"hooks\": [\"192.30.252.0/22\", \"2001:db8:1::/48\"],\n"
    "  \"web\": [\"10.9.0.0/16\"],\n"
    "  \"meta\": {\"inner\": {\"list\": [\"172.16.0.0/12\"]}},\n"
    "  \"prefixes\": [\n"
    "    {\"ip_prefix\": \"3.5.140.0/22\", \"region\": \"x\"},\n"
    "    {\"ipv6_prefix\": \"2001:db8:2::/48\", \"region\": \"y\"},\n"
    "    {\"ip_prefix\": \"3.5.144.0/22\", \"nested\": [1, 2, {\"ip_prefix\": 3}]}\n"
    "  ]\n"
    "}\n";

static void json_keys_and_paths(void **state)
{
    (void)state;
    const char *one[] = {"hooks"};
    parsed *p = parse_keys(published, one, 1);
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->set.count, 2);
    assert_int_equal(p->set.items[0].line, 3);
    parsed_free(p);

    const char *deep[] = {"meta.inner.list"};
    p = parse_keys(published, deep, 1);
    assert_int_equal(p->set.count, 1);
    assert_string_equal(cidr_at(&p->set, 0), "172.16.0.0/12");
    parsed_free(p);

    const char *through[] = {"prefixes.ip_prefix", "prefixes.ipv6_prefix", "web"};
    p = parse_keys(published, through, 3);
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->problems.total, 0);
    assert_int_equal(p->set.count, 4);
    assert_string_equal(cidr_at(&p->set, 0), "10.9.0.0/16");
    assert_string_equal(cidr_at(&p->set, 1), "3.5.140.0/22");
    assert_int_equal(p->set.items[1].line, 7);
    assert_string_equal(cidr_at(&p->set, 2), "2001:db8:2::/48");
    assert_string_equal(cidr_at(&p->set, 3), "3.5.144.0/22");
    parsed_free(p);
}

static void json_key_errors(void **state)
{
    (void)state;
    parsed *p = parse(published);
    assert_int_equal(p->rc, ERROR_INVALID);
    assert_non_null(strstr(p->err.msg, "--key"));
    assert_non_null(strstr(p->err.msg, "hooks, web, prefixes"));
    parsed_free(p);

    const char *typo[] = {"hoks"};
    p = parse_keys(published, typo, 1);
    assert_int_equal(p->rc, ERROR_INVALID);
    assert_non_null(strstr(p->err.msg, "'hoks'"));
    parsed_free(p);

    const char *empty[] = {"a..b"};
    p = parse_keys(published, empty, 1);
    assert_int_equal(p->rc, ERROR_INVALID);
    parsed_free(p);

    const char *objects[] = {"prefixes"};
    p = parse_keys(published, objects, 1);
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->problems.total, 3); /* three objects where strings are due */
    assert_int_equal(p->problems.items[0].line, 7);
    parsed_free(p);
}

static void json_syntax_errors_name_their_line(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t line;
    } cases[] = {
        {"[\"10.0.0.0/8\",\n\"10.1.0.0/16\"\n\"x\"]", 3},
        {"[\"10.0.0.0/8\",]", 1},
        {"[\n\n\"10.0.0.0/8\"", 3},
        {"{\"a\": [1 2]}", 1},
        {"[\"a\tb\"]", 1},
        {"[01]", 1},
        {"[\"x\\q\"]", 1},
        {"[] []", 1},
        {"[tru]", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parsed *p = parse(cases[i].text);
        assert_int_equal(p->rc, ERROR_FORMAT);
        char want[32];
        snprintf(want, sizeof want, "line %zu:", cases[i].line);
        if (!strstr(p->err.msg, want))
            fail_msg("case %zu: %s", i, p->err.msg);
        parsed_free(p);
    }
}

static void json_deep_nesting_is_refused(void **state)
{
    (void)state;
    size_t n = 5000;
    char *text = malloc(2 * n + 1);
    assert_non_null(text);
    memset(text, '[', n);
    memset(text + n, ']', n);
    text[2 * n] = '\0';
    parsed *p = parse(text);
    assert_int_equal(p->rc, ERROR_FORMAT);
    assert_non_null(strstr(p->err.msg, "nested too deeply"));
    parsed_free(p);
    free(text);
}

/* ---- order, overlaps, aggregation ---- */

static void overlaps_nearest_container_and_duplicates(void **state)
{
    (void)state;
    cidrset s = {0};
    add(&s, "10.1.2.0/24", 3, NULL);
    add(&s, "10.0.0.0/8", 1, NULL);
    add(&s, "10.1.0.0/16", 2, NULL);
    add(&s, "10.1.2.0/24", 4, NULL);
    add(&s, "11.0.0.0/8", 5, NULL);
    add(&s, "2001:db8::/32", 6, NULL);
    add(&s, "2001:db8:1::/48", 7, NULL);
    cidrset_sort(&s);
    cidrset_overlap *o = NULL;
    size_t n = 0;
    error_info e;
    assert_int_equal(cidrset_overlaps(&s, &o, &n, &e), ERROR_OK);
    assert_int_equal(n, 4);
    assert_int_equal(s.items[o[0].inner].line, 2); /* /16 inside /8 */
    assert_int_equal(s.items[o[0].outer].line, 1);
    assert_int_equal(s.items[o[1].inner].line, 3); /* /24 inside /16 (the nearest) */
    assert_int_equal(s.items[o[1].outer].line, 2);
    assert_true(o[2].same);
    assert_int_equal(s.items[o[2].inner].line, 4);
    assert_int_equal(s.items[o[2].outer].line, 3);
    assert_int_equal(s.items[o[3].inner].line, 7);
    free(o);
    assert_int_equal(cidrset_dedupe(&s), 1);
    assert_int_equal(s.count, 6);
    cidrset_free(&s);
}

static void aggregate_examples(void **state)
{
    (void)state;
    cidrset s = {0};
    add(&s, "10.0.1.0/24", 2, "b");
    add(&s, "10.0.0.0/24", 1, "b");
    add(&s, "10.0.2.0/23", 3, "b");
    add(&s, "10.0.0.128/25", 4, "c"); /* inside: goes, the container's note stays */
    add(&s, "192.168.0.0/24", 5, "x");
    add(&s, "192.168.1.0/24", 6, "y"); /* merged with a different note: none */
    add(&s, "2001:db8::/33", 7, NULL);
    add(&s, "2001:db8:8000::/33", 8, NULL);
    add(&s, "::/1", 9, NULL);
    add(&s, "8000::/1", 10, NULL);
    cidrset_sort(&s);
    assert_int_equal(cidrset_aggregate(&s), 7);
    assert_int_equal(s.count, 3);
    assert_string_equal(cidr_at(&s, 0), "10.0.0.0/22");
    assert_int_equal(s.items[0].line, 1);
    assert_string_equal(s.items[0].note, "b");
    assert_string_equal(cidr_at(&s, 1), "192.168.0.0/23");
    assert_null(s.items[1].note);
    assert_string_equal(cidr_at(&s, 2), "::/0");
    cidrset_free(&s);
}

/* Deterministic pseudo-random numbers (xorshift), so a failure repeats. */
static uint32_t rnd(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static bool covered(const cidrset *s, const validate_prefix *addr)
{
    for (size_t i = 0; i < s->count; i++) {
        if (cidrset_contains(&s->items[i].pfx, addr))
            return true;
    }
    return false;
}

/* Random prefixes inside one /24 (IPv4) or one /120 (IPv6): every one of the 256
 * addresses is covered after aggregation iff it was before, and the result has
 * no entry inside another and no two halves of one prefix (so it is minimal). */
static void aggregate_is_exact_and_minimal(int family, uint32_t seed)
{
    uint32_t x = seed;
    for (int round = 0; round < 300; round++) {
        cidrset s = {0}, before = {0};
        size_t n = 1 + rnd(&x) % 12;
        for (size_t i = 0; i < n; i++) {
            validate_prefix p = {.family = family};
            unsigned base = family == 4 ? 24 : 120;
            p.bits = base + rnd(&x) % 9;
            size_t last = family == 4 ? 3 : 15;
            p.addr[0] = 10;
            unsigned host = rnd(&x) & 0xFFu;
            unsigned keep = p.bits - base;
            p.addr[last] = (unsigned char)(keep ? host & (0xFFu << (8 - keep)) : 0);
            error_info e;
            assert_int_equal(cidrset_add(&s, &p, i + 1, NULL, &e), ERROR_OK);
            assert_int_equal(cidrset_add(&before, &p, i + 1, NULL, &e), ERROR_OK);
        }
        cidrset_sort(&s);
        cidrset_aggregate(&s);
        for (unsigned a = 0; a < 256; a++) {
            validate_prefix addr = {.family = family, .bits = family == 4 ? 32 : 128};
            addr.addr[0] = 10;
            addr.addr[family == 4 ? 3 : 15] = (unsigned char)a;
            assert_int_equal(covered(&s, &addr), covered(&before, &addr));
        }
        for (size_t i = 0; i + 1 < s.count; i++) {
            assert_true(cidrset_compare(&s.items[i].pfx, &s.items[i + 1].pfx) < 0);
            assert_false(cidrset_contains(&s.items[i].pfx, &s.items[i + 1].pfx));
            validate_prefix a = s.items[i].pfx, b = s.items[i + 1].pfx;
            if (a.bits == b.bits && a.bits > 0) {
                a.bits--;
                b.bits--;
                /* halves would share the parent with the first one's bits */
                assert_false(cidrset_contains(&a, &s.items[i + 1].pfx) &&
                             cidrset_contains(&b, &s.items[i].pfx));
            }
        }
        cidrset_free(&s);
        cidrset_free(&before);
    }
}

static void aggregate_random_v4(void **state)
{
    (void)state;
    aggregate_is_exact_and_minimal(4, 0x9E3779B9u);
}

static void aggregate_random_v6(void **state)
{
    (void)state;
    aggregate_is_exact_and_minimal(6, 0x85EBCA6Bu);
}

/* A comment longer than a description, of two-byte characters: cut to whole
 * characters (it was cut inside one, and the create then refused). */
static void long_non_ascii_note_is_cut_whole(void **state)
{
    (void)state;
    char text[1024] = "10.0.0.0/8 # ";
    for (int i = 0; i < 200; i++)
        strcat(text, "\xc3\xa9"); /* é */
    strcat(text, "\n");
    parsed *p = parse(text);
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->set.count, 1);
    const char *note = p->set.items[0].note;
    assert_non_null(note);
    assert_int_equal(strlen(note), 254);
    assert_int_equal(utf8_find_invalid(note, strlen(note), NULL), strlen(note));
    parsed_free(p);
}

/* A --key member named twice in one object: which is the list is unclear, so
 * nothing is taken; a member off the paths may repeat (it is not read). */
static void key_member_twice_is_refused(void **state)
{
    (void)state;
    const char *keys[] = {"a"};
    parsed *p = parse_keys("{\"a\": [\"10.0.0.0/8\"],\n \"a\": [\"10.1.0.0/16\"]}", keys, 1);
    assert_int_equal(p->rc, ERROR_FORMAT);
    assert_non_null(strstr(p->err.msg, "line 2: member \"a\" appears twice"));
    parsed_free(p);
    p = parse_keys("{\"b\": 1, \"b\": 2, \"a\": [\"10.0.0.0/8\"]}", keys, 1);
    assert_int_equal(p->rc, ERROR_OK);
    assert_int_equal(p->set.count, 1);
    parsed_free(p);
}

/* The text form read a few bytes at a time: lines cut anywhere, a comment, a byte
 * order mark, no newline at the end; an endless line stops it at once. */
static void text_reader_streams(void **state)
{
    (void)state;
    const char text[] = "\xEF\xBB\xBF" "10.0.0.0/8 # office\n\n192.168.1.5\r\n2001:db8::/32";
    cidrset_text_reader *r = calloc(1, sizeof *r);
    assert_non_null(r);
    cidrset set = {0};
    cidrset_problems problems = {0};
    error_info err;
    for (size_t at = 0; at < sizeof text - 1; at += 3) {
        size_t n = sizeof text - 1 - at < 3 ? sizeof text - 1 - at : 3;
        assert_int_equal(cidrset_text_feed(r, text + at, n, &set, &problems, &err), ERROR_OK);
    }
    assert_int_equal(cidrset_text_end(r, &set, &problems, &err), ERROR_OK);
    assert_int_equal(problems.total, 0);
    assert_int_equal(set.count, 3);
    assert_string_equal(cidr_at(&set, 0), "10.0.0.0/8");
    assert_string_equal(set.items[0].note, "office");
    assert_int_equal(set.items[2].line, 4);
    cidrset_free(&set);
    memset(r, 0, sizeof *r);
    char zeros[CIDRSET_LINE_MAX / 2];
    memset(zeros, 0, sizeof zeros);
    assert_int_equal(cidrset_text_feed(r, zeros, sizeof zeros, &set, &problems, &err), ERROR_OK);
    assert_int_equal(cidrset_text_feed(r, zeros, sizeof zeros, &set, &problems, &err), ERROR_OK);
    assert_int_equal(cidrset_text_feed(r, zeros, 1, &set, &problems, &err), ERROR_FORMAT);
    assert_non_null(strstr(err.msg, "line 1 is longer than 4096 bytes"));
    cidrset_free(&set);
    cidrset_problems_free(&problems);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_entries_comments_and_lines),
        cmocka_unit_test(text_every_problem_with_its_line),
        cmocka_unit_test(text_bad_comment_is_dropped_and_counted),
        cmocka_unit_test(text_refuses_key),
        cmocka_unit_test(json_array_with_lines),
        cmocka_unit_test(json_problems_name_lines),
        cmocka_unit_test(json_keys_and_paths),
        cmocka_unit_test(json_key_errors),
        cmocka_unit_test(json_syntax_errors_name_their_line),
        cmocka_unit_test(json_deep_nesting_is_refused),
        cmocka_unit_test(overlaps_nearest_container_and_duplicates),
        cmocka_unit_test(aggregate_examples),
        cmocka_unit_test(aggregate_random_v4),
        cmocka_unit_test(aggregate_random_v6),
        cmocka_unit_test(long_non_ascii_note_is_cut_whole),
        cmocka_unit_test(key_member_twice_is_refused),
        cmocka_unit_test(text_reader_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

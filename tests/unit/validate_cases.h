/*
 * The validation table: one row per input and what the validators must make of it.
 * test_validate.c runs every row through its validator; test_kind.c feeds the same
 * inputs through the store's gate. Include after <cmocka.h>.
 */
#ifndef RAMPART_VALIDATE_CASES_H
#define RAMPART_VALIDATE_CASES_H

#include <stdio.h>
#include <string.h>

#include "rampart/validate.h"

/*
 * One table row per input. The input is head + `times` copies of unit + tail, so
 * long and byte-exact inputs (255 vs 256 bytes) stay readable here.
 * For an OK row `want` is the expected canonical CIDR (or NULL); for an INVALID
 * row it is a substring the message must contain.
 */
enum kind { K_CIDR, K_IP, K_ACTION, K_ID, K_OWNER, K_LOCAL, K_DESC, K_META, K_ACL_RULE };

struct vcase {
    enum kind kind;
    const char *head;
    const char *unit;
    size_t times;
    const char *tail;
    const char *id_prefix; /* K_ID only */
    error_code code;
    const char *want;
};

#define OK(k, s) {k, s, NULL, 0, NULL, NULL, ERROR_OK, NULL}
#define BAD(k, s, m) {k, s, NULL, 0, NULL, NULL, ERROR_INVALID, m}
#define CANON(s, c) {K_CIDR, s, NULL, 0, NULL, NULL, ERROR_OK, c}
#define REP(k, h, u, n, t, code, m) {k, h, u, n, t, NULL, code, m}
#define REP_ID(p, n, code, m) {K_ID, p "_", "a", n, "", p, code, m}
#define ID_OK(p, s) {K_ID, s, NULL, 0, NULL, p, ERROR_OK, NULL}
#define ID_BAD(p, s, m) {K_ID, s, NULL, 0, NULL, p, ERROR_INVALID, m}

static const struct vcase cases[] = {
    /* IPv4 networks */
    CANON("10.0.0.0/8", "10.0.0.0/8"),
    CANON("10.1.2.3/32", "10.1.2.3/32"),
    CANON("0.0.0.0/0", "0.0.0.0/0"),
    CANON("172.16.0.0/12", "172.16.0.0/12"),
    CANON("255.255.255.255/32", "255.255.255.255/32"),
    BAD(K_CIDR, "", "empty: write a network with its mask"),
    BAD(K_CIDR, "10.1.2.3", "mask missing: write 10.1.2.3/32 for one address"),
    BAD(K_CIDR, "10.0.0.0/33", "prefix length 33 out of range: IPv4 allows 0..32"),
    BAD(K_CIDR, "10.0.0.0/99999", "out of range: IPv4 allows 0..32"),
    BAD(K_CIDR, "10.0.0.0/08", "prefix length has a leading zero: write /8"),
    BAD(K_CIDR, "10.0.0.0/00", "prefix length has a leading zero: write /0"),
    BAD(K_CIDR, "10.0.0.0/", "prefix length missing after '/': IPv4 allows 0..32"),
    BAD(K_CIDR, "10.0.0.0/abc", "prefix length \"abc\" is not a number"),
    BAD(K_CIDR, "10.0.0.0/8/8", "more than one '/'"),
    BAD(K_CIDR, "10.0.0.0/255.0.0.0", "write the prefix length, not a netmask: /8"),
    BAD(K_CIDR, "10.0.0.1/8", "host bits set: did you mean 10.0.0.0/8?"),
    BAD(K_CIDR, "192.168.1.77/24", "host bits set: did you mean 192.168.1.0/24?"),
    BAD(K_CIDR, "10.0.0.1/0", "did you mean 0.0.0.0/0?"),
    BAD(K_CIDR, "172.31.255.255/12", "did you mean 172.16.0.0/12?"),
    BAD(K_CIDR, "010.0.0.0/8", "octet 1 has a leading zero"),
    BAD(K_CIDR, "10.01.0.0/16", "write 1, not 01"),
    BAD(K_CIDR, "10.0.0.256/32", "octet 4 is 256: an octet is 0..255"),
    BAD(K_CIDR, "10.0.0.1000/32", "octet 4 is 1000"),
    BAD(K_CIDR, "10.0.0/24", "too few octets: 3 of 4"),
    BAD(K_CIDR, "10.0.0.0.0/8", "too many octets: 5"),
    BAD(K_CIDR, "10..0.0/8", "octet 2 is empty"),
    BAD(K_CIDR, ".10.0.0/8", "starts with a dot"),
    BAD(K_CIDR, "1.2.3.4./32", "ends with a dot"),
    BAD(K_CIDR, "10.0.0.x/8", "unexpected character 'x' at byte offset 7"),
    BAD(K_CIDR, "example.com/24", "not an IP address"),
    BAD(K_CIDR, "/8", "address missing before '/'"),
    BAD(K_CIDR, " 10.0.0.0/8", "leading space: remove it"),
    BAD(K_CIDR, "10.0.0.0/8 ", "trailing space: remove it"),
    BAD(K_CIDR, "10.0.0.0 /8", "space inside at byte offset 8"),
    BAD(K_CIDR, "\t10.0.0.0/8", "leading tab"),
    BAD(K_CIDR, "10.0.0.0/8\n", "trailing line break"),
    BAD(K_CIDR, "10.0.0.0/8\xC2\xA0", "trailing non-breaking space"),
    REP(K_CIDR, "", "1", 70, "", ERROR_INVALID, "too long: 70 bytes; the limit is 64"),

    /* IPv6 networks, canonical per RFC 5952 */
    CANON("2001:DB8::/32", "2001:db8::/32"),
    CANON("::/0", "::/0"),
    CANON("::ffff:1.2.3.4/128", "::ffff:1.2.3.4/128"),
    CANON("fe80::/10", "fe80::/10"),
    CANON("::1/128", "::1/128"),
    CANON("2001:0db8:0000:0000:0000:0000:0000:0001/128", "2001:db8::1/128"),
    CANON("2001:db8:0:0:1:0:0:1/128", "2001:db8::1:0:0:1/128"),
    CANON("2001:db8:0:1:1:1:1:1/128", "2001:db8:0:1:1:1:1:1/128"),
    CANON("1:2:3:4:5:6:7::/128", "1:2:3:4:5:6:7:0/128"),
    CANON("2001:DB8:ABCD:12F0::/60", "2001:db8:abcd:12f0::/60"),
    BAD(K_CIDR, "2001:db8::1", "mask missing: write 2001:db8::1/128 for one address"),
    BAD(K_CIDR, "2001:db8::/129", "prefix length 129 out of range: IPv6 allows 0..128"),
    BAD(K_CIDR, "2001:db8::1/32", "host bits set: did you mean 2001:db8::/32?"),
    BAD(K_CIDR, "fe80::1/10", "host bits set: did you mean fe80::/10?"),
    BAD(K_CIDR, "2001:db8:abcd:12ff::/60", "did you mean 2001:db8:abcd:12f0::/60?"),
    BAD(K_CIDR, "::ffff:1.2.3.4/96", "did you mean ::ffff:0.0.0.0/96?"),
    BAD(K_CIDR, "fe80::1%eth0/64", "zone id \"%eth0\" not allowed"),
    BAD(K_CIDR, "fe80::1%eth0", "zone id \"%eth0\" not allowed"),
    BAD(K_CIDR, "1::2::3/128", "'::' may appear only once"),
    BAD(K_CIDR, "1:::2/128", "':::' is not valid"),
    BAD(K_CIDR, "12345::/16", "group \"12345\" has more than 4 hex digits"),
    BAD(K_CIDR, "1:2:3:4:5:6:7/112", "too few groups: 7 of 8"),
    BAD(K_CIDR, "1:2:3:4:5:6:7:8:9/128", "too many groups: 9"),
    BAD(K_CIDR, "1:2:3:4:5:6:7:8::/128", "too many groups: 8 besides '::'"),
    BAD(K_CIDR, ":1::/16", "starts with a single ':'"),
    BAD(K_CIDR, "1::2:/128", "ends with a single ':'"),
    BAD(K_CIDR, "2001:db8::g/128", "unexpected character 'g'"),
    BAD(K_CIDR, "[2001:db8::]/32", "brackets are not part of the address"),
    BAD(K_CIDR, "::ffff:01.2.3.4/128", "embedded IPv4: octet 1 has a leading zero"),
    BAD(K_CIDR, "1.2.3.4::/128", "an embedded IPv4 address may only come last"),
    BAD(K_CIDR, " ::/0", "leading space"),
    BAD(K_CIDR, "10.1.2.3:80/32", "a port is not part of an address: drop \":80\""),

    /* bare addresses */
    OK(K_IP, "10.1.2.3"),
    OK(K_IP, "0.0.0.0"),
    OK(K_IP, "::1"),
    OK(K_IP, "2001:DB8::1"),
    OK(K_IP, "::ffff:1.2.3.4"),
    BAD(K_IP, "10.0.0.0/8", "give an address, not a range: drop \"/8\""),
    BAD(K_IP, "2001:db8::/32", "give an address, not a range"),
    BAD(K_IP, "", "empty: write an address"),
    BAD(K_IP, "01.2.3.4", "octet 1 has a leading zero"),
    BAD(K_IP, "fe80::1%eth0", "zone id"),
    BAD(K_IP, " 10.1.2.3", "leading space"),
    BAD(K_IP, "1.2.3", "too few octets"),

    /* actions */
    OK(K_ACTION, "allow"),
    OK(K_ACTION, "deny"),
    BAD(K_ACTION, "Allow", "action must be lower-case"),
    BAD(K_ACTION, "permit", "action must be allow or deny, not \"permit\""),
    BAD(K_ACTION, "", "action is empty"),
    BAD(K_ACTION, "allow ", "action must be allow or deny"),

    /* ids */
    ID_OK("ipp", "ipp_1a2B3c"),
    ID_OK("ipp", "ipp_abc"),
    ID_OK("cr", "cr_2Zx9Q0rT8yLmN4vB7cK1pW3sE5d"),
    REP_ID("ipp", 60, ERROR_OK, NULL),
    REP_ID("ipp", 61, ERROR_INVALID, "policy id is 65 bytes; the limit is 64"),
    ID_BAD("ipp", "ipr_abc", "policy id must start with ipp_; this one starts with ipr_"),
    ID_BAD("ipp", "abc", "policy id must start with ipp_"),
    ID_BAD("ipp", "IPP_abc", "policy id must start with ipp_"),
    ID_BAD("ipp", "ippabc", "policy id must start with ipp_"),
    ID_BAD("ipp", "ipp_ab-c",
           "policy id has a character that is not a letter or digit: '-'"),
    ID_BAD("ipp", "ipp_ab c", "not a letter or digit: a space"),
    ID_BAD("ipp", "ipp_\xC3\xA9", "not a letter or digit: '\xC3\xA9'"),
    ID_BAD("ipp", "ipp_a\xFF", "not a letter or digit: byte 0xFF"),
    ID_BAD("ipp", "ipp_", "policy id has nothing after ipp_"),
    ID_BAD("ipp", "", "policy id is empty"),
    OK(K_OWNER, "usr_abc"),
    OK(K_OWNER, "bot_XYZ9"),
    BAD(K_OWNER, "org_abc", "owner id must start with usr_ or bot_; this one starts with org_"),
    BAD(K_OWNER, "usr", "owner id must start with usr_ or bot_"),
    BAD(K_OWNER, "usr_", "owner id has nothing after usr_"),
    BAD(K_OWNER, "bot_a.b", "owner id has a character that is not a letter or digit: '.'"),
    BAD(K_OWNER, "", "owner id is empty"),
    OK(K_LOCAL, "local_abc"),
    REP(K_LOCAL, "local_", "Z", 27, "", ERROR_OK, NULL),
    REP(K_LOCAL, "local_", "Z", 59, "", ERROR_INVALID, NULL),
    BAD(K_LOCAL, "local_", NULL),
    BAD(K_LOCAL, "local-abc", NULL),
    BAD(K_LOCAL, "ipr_abc", NULL),
    BAD(K_LOCAL, "local_a_b", NULL),
    BAD(K_LOCAL, "", NULL),

    /* description: bytes, not characters */
    OK(K_DESC, ""),
    OK(K_DESC, "office VPN"),
    OK(K_DESC, "tab\there\nand a line break"),
    REP(K_DESC, "", "a", 255, "", ERROR_OK, NULL),
    REP(K_DESC, "", "a", 256, "", ERROR_INVALID, "description is 256 bytes; the limit is 255"),
    REP(K_DESC, "", "\xC3\xA9", 85, "", ERROR_OK, NULL),
    REP(K_DESC, "", "\xC3\xA9", 127, "", ERROR_OK, NULL),
    REP(K_DESC, "", "\xC3\xA9", 128, "", ERROR_INVALID,
        "description is 256 bytes; the limit is 255 (characters outside ASCII"),
    REP(K_DESC, "", "a", 251, "\xF0\x9F\x98\x80", ERROR_OK, NULL),
    REP(K_DESC, "", "a", 252, "\xF0\x9F\x98\x80", ERROR_INVALID,
        "description is 256 bytes; the limit is 255"),
    REP(K_DESC, "", "a", 253, "\xF0\x9F\x98\x80", ERROR_INVALID,
        "description is 257 bytes"),
    OK(K_DESC, "\xF4\x8F\xBF\xBF"),
    OK(K_DESC, "\xEF\xBF\xBF"),
    OK(K_DESC, "\xED\x9F\xBF"),
    OK(K_DESC, "\xEE\x80\x80"),
    BAD(K_DESC, "ab\xC3", "not valid UTF-8 at byte offset 2: truncated sequence"),
    BAD(K_DESC, "\xE2\x82", "at byte offset 0: truncated sequence"),
    BAD(K_DESC, "\xE2\x28\xA1", "at byte offset 0: truncated sequence"),
    BAD(K_DESC, "ok\xF0\x9F\x98", "at byte offset 2: truncated sequence"),
    BAD(K_DESC, "\xC0\xAF", "at byte offset 0: overlong encoding"),
    BAD(K_DESC, "x\xE0\x80\xAF", "at byte offset 1: overlong encoding"),
    BAD(K_DESC, "\xF0\x82\x82\xAC", "overlong encoding"),
    BAD(K_DESC, "\xED\xA0\x80", "surrogate"),
    BAD(K_DESC, "\xF4\x90\x80\x80", "code point above U+10FFFF"),
    BAD(K_DESC, "\xF5\x80\x80\x80", "code point above U+10FFFF"),
    BAD(K_DESC, "\xFF", "byte that never occurs in UTF-8"),
    BAD(K_DESC, "abc\x80", "at byte offset 3: continuation byte without a lead byte"),

    /* metadata */
    OK(K_META, "{\"team\":\"net\"}"),
    REP(K_META, "", "m", 4096, "", ERROR_OK, NULL),
    REP(K_META, "", "m", 4097, "", ERROR_INVALID, "metadata is 4097 bytes; the limit is 4096"),
    BAD(K_META, "\xC3\x28", "metadata is not valid UTF-8 at byte offset 0"),

    /* ACL rules */
    OK(K_ACL_RULE, "*"),
    OK(K_ACL_RULE, "bind:*"),
    OK(K_ACL_RULE, "bind:*.example.com"),
    OK(K_ACL_RULE, "bind:foo.example.com"),
    OK(K_ACL_RULE, "bind:FOO.Example.COM"),
    OK(K_ACL_RULE, "bind:a-b.example.com"),
    OK(K_ACL_RULE, "bind:localhost"),
    OK(K_ACL_RULE, "bind:env=prod"),
    OK(K_ACL_RULE, "bind:*=prod"),
    OK(K_ACL_RULE, "bind:env=*"),
    OK(K_ACL_RULE, "bind:*=*"),
    OK(K_ACL_RULE, "bind:app.k8s.io/name=web-1_a"),
    OK(K_ACL_RULE, "bind:1.tcp.example.net:20002"),
    OK(K_ACL_RULE, "bind:10.1.2.3:443"),
    OK(K_ACL_RULE, "bind:x:1"),
    OK(K_ACL_RULE, "bind:x:65535"),
    REP(K_ACL_RULE, "bind:", "abcdefghi.", 25, "abc", ERROR_OK, NULL),
    REP(K_ACL_RULE, "bind:", "abcdefghi.", 25, "abcd", ERROR_INVALID,
        "domain is 254 bytes; the limit is 253"),
    REP(K_ACL_RULE, "bind:", "a", 63, ".com", ERROR_OK, NULL),
    REP(K_ACL_RULE, "bind:", "a", 64, ".com", ERROR_INVALID,
        "is 64 bytes; a domain label is at most 63"),
    REP(K_ACL_RULE, "bind:", "a", 1020, "", ERROR_INVALID,
        "acl rule: 1025 bytes; the limit is 1024"),
    BAD(K_ACL_RULE, "", "acl rule: empty"),
    BAD(K_ACL_RULE, "bind:", "empty bind target"),
    BAD(K_ACL_RULE, "foo.example.com", "acl rule: must start with 'bind:'"),
    BAD(K_ACL_RULE, "**", "must start with 'bind:'"),
    BAD(K_ACL_RULE, "BIND:foo.com", "'bind:' must be lower-case"),
    BAD(K_ACL_RULE, "bind:foo.*.com",
        "wildcard only allowed as the whole first label: *.example.com"),
    BAD(K_ACL_RULE, "bind:*foo.example.com", "wildcard only allowed as the whole first label"),
    BAD(K_ACL_RULE, "bind:*.*.example.com", "wildcard only allowed as the whole first label"),
    BAD(K_ACL_RULE, "bind:**", "wildcard only allowed as the whole first label"),
    BAD(K_ACL_RULE, "bind:*.", "wildcard needs a domain after it"),
    BAD(K_ACL_RULE, "bind:foo..com", "empty label: two dots in a row"),
    BAD(K_ACL_RULE, "bind:.foo.com", "domain starts with a dot"),
    BAD(K_ACL_RULE, "bind:foo.com.", "domain ends with a dot"),
    BAD(K_ACL_RULE, "bind:-foo.com", "label \"-foo\" starts with a hyphen"),
    BAD(K_ACL_RULE, "bind:foo-.com", "label \"foo-\" ends with a hyphen"),
    BAD(K_ACL_RULE, "bind:foo_bar.com", "domain has a character that is not allowed: '_'"),
    BAD(K_ACL_RULE, "bind:f\xC3\xB6o.com", "not allowed: '\xC3\xB6'"),
    BAD(K_ACL_RULE, "bind:\xFF.com", "not allowed: byte 0xFF"),
    BAD(K_ACL_RULE, "bind: foo.com", "whitespace at byte offset 5"),
    BAD(K_ACL_RULE, " bind:foo.com", "leading whitespace"),
    BAD(K_ACL_RULE, "bind:foo.com\t", "trailing whitespace"),
    BAD(K_ACL_RULE, "bind:env=", "label has no value: write * to match any"),
    BAD(K_ACL_RULE, "bind:=prod", "label has no key"),
    BAD(K_ACL_RULE, "bind:env=pr*d", "wildcard in a label must be the whole value"),
    BAD(K_ACL_RULE, "bind:e*=prod", "wildcard in a label must be the whole key"),
    BAD(K_ACL_RULE, "bind:env=prod=x", "label has more than one '='"),
    BAD(K_ACL_RULE, "bind:env=prod!", "label value has a character that is not allowed: '!'"),
    BAD(K_ACL_RULE, "bind:en:v=prod", "label key has a character that is not allowed: ':'"),
    BAD(K_ACL_RULE, "bind:example.com:0", "port 0 out of range: use 1..65535"),
    BAD(K_ACL_RULE, "bind:example.com:65536", "port 65536 out of range"),
    BAD(K_ACL_RULE, "bind:example.com:080", "port has a leading zero: write 80"),
    BAD(K_ACL_RULE, "bind:example.com:", "address has no port after ':'"),
    BAD(K_ACL_RULE, "bind::443", "address has no host before ':'"),
    BAD(K_ACL_RULE, "bind:example.com:http", "port has a character that is not allowed: 'h'"),
    BAD(K_ACL_RULE, "bind:*.example.com:443", "wildcard not allowed in an address"),
    BAD(K_ACL_RULE, "bind:010.1.2.3:443", "address host: octet 1 has a leading zero"),
    BAD(K_ACL_RULE, "bind:1.2.3:443", "address host: too few octets"),
    BAD(K_ACL_RULE, "bind:a:b:1", "address has more than one ':'"),
};

#undef OK
#undef BAD
#undef CANON
#undef REP
#undef REP_ID
#undef ID_OK
#undef ID_BAD

#define CASE_COUNT (sizeof cases / sizeof cases[0])
#define INPUT_MAX 8192

static inline void build_input(const struct vcase *c, char *buf, size_t size)
{
    size_t len = 0;
    len += (size_t)snprintf(buf + len, size - len, "%s", c->head);
    for (size_t i = 0; i < c->times; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s", c->unit);
    snprintf(buf + len, size - len, "%s", c->tail ? c->tail : "");
    assert_true(strlen(buf) < size - 1);
}

#endif

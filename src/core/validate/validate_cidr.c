/*
 * validate_cidr: IP addresses and CIDR networks. The parsers here are stricter
 * than inet_pton on purpose: every refusal names the part to fix, and an
 * address is only accepted when inet_pton agrees as well.
 */
#include "rampart/validate.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define V4_BYTES 4
#define V6_BYTES 16
#define V6_GROUPS 8
#define QUOTE_MAX 40 /* longest piece of input repeated back in a message */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Only short printable ASCII is echoed back, so a message never carries broken text. */
static bool quotable(const char *s, size_t n)
{
    if (n > QUOTE_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] > 0x7E)
            return false;
    }
    return true;
}

/* Length of the whitespace character at `s` (0 when none) and its name. */
static size_t space_at(const char *s, const char **name)
{
    static const struct {
        char c;
        const char *name;
    } ascii[] = {
        {' ', "space"},         {'\t', "tab"},          {'\n', "line break"},
        {'\r', "line break"},   {'\v', "vertical tab"}, {'\f', "form feed"},
    };
    for (size_t i = 0; i < sizeof ascii / sizeof ascii[0]; i++) {
        if (*s == ascii[i].c) {
            *name = ascii[i].name;
            return 1;
        }
    }
    /* U+00A0 arrives with text pasted from web pages and looks like a space. */
    if ((unsigned char)s[0] == 0xC2 && (unsigned char)s[1] == 0xA0) {
        *name = "non-breaking space";
        return 2;
    }
    return 0;
}

static error_code check_spaces(const char *text, error_info *err)
{
    const char *name = NULL;
    if (space_at(text, &name))
        return error_set(err, ERROR_INVALID, "leading %s: remove it", name);
    for (size_t i = 0; text[i]; i++) {
        size_t n = space_at(text + i, &name);
        if (n == 0)
            continue;
        if (text[i + n] == '\0')
            return error_set(err, ERROR_INVALID, "trailing %s: remove it", name);
        return error_set(err, ERROR_INVALID, "%s inside at byte offset %zu: remove it",
                         name, i);
    }
    return ERROR_OK;
}

static error_code check_zone(const char *text, error_info *err)
{
    const char *pct = strchr(text, '%');
    if (!pct)
        return ERROR_OK;
    size_t n = strcspn(pct, "/");
    if (quotable(pct, n))
        return error_set(err, ERROR_INVALID,
                         "zone id \"%.*s\" not allowed: a rule matches addresses, "
                         "not interfaces; drop it", (int)n, pct);
    return error_set(err, ERROR_INVALID,
                     "zone id (after '%%') not allowed: a rule matches addresses, "
                     "not interfaces; drop it");
}

static error_code parse_octet(const char *s, size_t n, size_t index, unsigned char *out,
                              error_info *err)
{
    if (n == 0)
        return error_set(err, ERROR_INVALID, "octet %zu is empty", index);
    if (n > 1 && s[0] == '0') {
        size_t z = 0;
        while (z < n - 1 && s[z] == '0')
            z++;
        /* Some tools read a leading zero as octal, so the intent is ambiguous. */
        return error_set(err, ERROR_INVALID,
                         "octet %zu has a leading zero (some tools read that as octal): "
                         "write %.*s, not %.*s", index, (int)(n - z), s + z, (int)n, s);
    }
    unsigned value = 0;
    for (size_t i = 0; i < n && value <= 255; i++)
        value = value * 10 + (unsigned)(s[i] - '0');
    if (n > 3 || value > 255)
        return error_set(err, ERROR_INVALID, "octet %zu is %.*s: an octet is 0..255", index,
                         (int)n, s);
    *out = (unsigned char)value;
    return ERROR_OK;
}

/* Byte `c` at offset `i` has no place in an address; `rule` says what does. */
static error_code bad_char(char c, size_t i, const char *rule, error_info *err)
{
    if (c >= 0x21 && c <= 0x7E)
        return error_set(err, ERROR_INVALID,
                         "unexpected character '%c' at byte offset %zu: %s", c, i, rule);
    return error_set(err, ERROR_INVALID, "unexpected byte 0x%02X at byte offset %zu: %s",
                     (unsigned char)c, i, rule);
}

static error_code check_v4_chars(const char *s, size_t n, error_info *err)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (is_digit(c) || c == '.')
            continue;
        return bad_char(c, i, "an IPv4 address has digits and dots only", err);
    }
    if (s[0] == '.')
        return error_set(err, ERROR_INVALID, "starts with a dot");
    if (s[n - 1] == '.')
        return error_set(err, ERROR_INVALID, "ends with a dot");
    return ERROR_OK;
}

static error_code parse_v4(const char *s, size_t n, unsigned char out[V4_BYTES],
                           error_info *err)
{
    error_code rc = check_v4_chars(s, n, err);
    if (rc)
        return rc;
    size_t octets = 1;
    for (size_t i = 0; i < n; i++)
        octets += s[i] == '.';
    if (octets < V4_BYTES)
        return error_set(err, ERROR_INVALID,
                         "too few octets: %zu of 4 (an IPv4 address is like 10.1.2.3)",
                         octets);
    if (octets > V4_BYTES)
        return error_set(err, ERROR_INVALID,
                         "too many octets: %zu (an IPv4 address has 4, like 10.1.2.3)",
                         octets);
    size_t start = 0;
    for (size_t k = 0; k < V4_BYTES; k++) {
        size_t end = start;
        while (end < n && s[end] != '.')
            end++;
        rc = parse_octet(s + start, end - start, k + 1, &out[k], err);
        if (rc)
            return rc;
        start = end + 1;
    }
    return ERROR_OK;
}

static error_code check_v6_chars(const char *s, size_t n, error_info *err)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (is_hex(c) || c == ':' || c == '.')
            continue;
        if (c == '[' || c == ']')
            return error_set(err, ERROR_INVALID,
                             "brackets are not part of the address: drop them");
        return bad_char(c, i, "an IPv6 address has hex digits and colons", err);
    }
    return ERROR_OK;
}

static error_code check_v6_colons(const char *s, size_t n, const char **dbl,
                                  error_info *err)
{
    if (memmem(s, n, ":::", 3))
        return error_set(err, ERROR_INVALID, "':::' is not valid: use '::' once");
    *dbl = memmem(s, n, "::", 2);
    if (*dbl && memmem(*dbl + 2, n - (size_t)(*dbl + 2 - s), "::", 2))
        return error_set(err, ERROR_INVALID,
                         "'::' may appear only once: write the other run of zeros as 0");
    if (s[0] == ':' && (n < 2 || s[1] != ':'))
        return error_set(err, ERROR_INVALID, "starts with a single ':': write '::' or drop it");
    if (s[n - 1] == ':' && (n < 2 || s[n - 2] != ':'))
        return error_set(err, ERROR_INVALID, "ends with a single ':': write '::' or drop it");
    return ERROR_OK;
}

/* Checks one colon-separated group; an embedded IPv4 tail counts as two groups. */
static error_code check_v6_group(const char *g, size_t n, bool last, size_t *groups,
                                 error_info *err)
{
    if (memchr(g, '.', n)) {
        if (!last)
            return error_set(err, ERROR_INVALID,
                             "an embedded IPv4 address may only come last");
        unsigned char v4[V4_BYTES];
        error_code rc = parse_v4(g, n, v4, err);
        if (rc) {
            error_prefix(err, "embedded IPv4");
            return rc;
        }
        *groups += 2;
        return ERROR_OK;
    }
    if (n > 4)
        return error_set(err, ERROR_INVALID, "group \"%.*s\" has more than 4 hex digits",
                         (int)n, g);
    *groups += 1;
    return ERROR_OK;
}

static error_code count_v6_groups(const char *s, size_t n, bool compressed,
                                  error_info *err)
{
    size_t groups = 0;
    size_t start = 0;
    while (start < n) {
        size_t end = start;
        while (end < n && s[end] != ':')
            end++;
        if (end > start) {
            error_code rc = check_v6_group(s + start, end - start, end == n, &groups, err);
            if (rc)
                return rc;
        }
        start = end + 1;
    }
    if (compressed && groups >= V6_GROUPS)
        return error_set(err, ERROR_INVALID,
                         "too many groups: %zu besides '::', which stands for at least "
                         "one (an IPv6 address has 8)", groups);
    if (!compressed && groups > V6_GROUPS)
        return error_set(err, ERROR_INVALID,
                         "too many groups: %zu (an IPv6 address has 8)", groups);
    if (!compressed && groups < V6_GROUPS)
        return error_set(err, ERROR_INVALID,
                         "too few groups: %zu of 8; write '::' for a run of zero groups",
                         groups);
    return ERROR_OK;
}

static error_code parse_v6(const char *s, size_t n, unsigned char out[V6_BYTES],
                           error_info *err)
{
    const char *dbl = NULL;
    error_code rc = check_v6_chars(s, n, err);
    if (!rc)
        rc = check_v6_colons(s, n, &dbl, err);
    if (!rc)
        rc = count_v6_groups(s, n, dbl != NULL, err);
    if (rc)
        return rc;
    char buf[MODEL_CIDR_MAX + 1];
    if (n >= sizeof buf)
        return error_set(err, ERROR_INVALID, "too long for an IPv6 address");
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (inet_pton(AF_INET6, buf, out) != 1)
        return error_set(err, ERROR_INVALID, "not a valid IPv6 address");
    return ERROR_OK;
}

/* "10.1.2.3:80" is an IPv4 host with a port, not IPv6: returns the ":80" part. */
static const char *host_port_suffix(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return NULL;
    size_t before = (size_t)(colon - s);
    if (!memchr(s, '.', before) || memchr(colon + 1, ':', n - before - 1))
        return NULL;
    return colon;
}

static error_code parse_address(const char *s, size_t n, validate_prefix *p,
                                error_info *err)
{
    memset(p, 0, sizeof *p);
    if (n == 0)
        return error_set(err, ERROR_INVALID,
                         "address missing before '/': write e.g. 10.0.0.0/8");
    const char *port = host_port_suffix(s, n);
    if (port) {
        size_t plen = n - (size_t)(port - s);
        if (quotable(port, plen))
            return error_set(err, ERROR_INVALID,
                             "a port is not part of an address: drop \"%.*s\"", (int)plen,
                             port);
        return error_set(err, ERROR_INVALID, "a port is not part of an address: drop it");
    }
    if (memchr(s, ':', n)) {
        p->family = 6;
        return parse_v6(s, n, p->addr, err);
    }
    if (is_digit(s[0]) || s[0] == '.') {
        p->family = 4;
        return parse_v4(s, n, p->addr, err);
    }
    return error_set(err, ERROR_INVALID,
                     "not an IP address: expected IPv4 like 10.0.0.0/8 or IPv6 like "
                     "2001:db8::/32");
}

static unsigned max_bits(int family)
{
    return family == 4 ? 32 : 128;
}

/* A dotted netmask ("255.0.0.0") gets the prefix length it stands for, if any. */
static bool netmask_bits(const char *s, size_t n, unsigned *bits)
{
    unsigned char m[V4_BYTES];
    if (parse_v4(s, n, m, NULL) != ERROR_OK)
        return false;
    unsigned count = 0;
    bool ended = false;
    for (unsigned i = 0; i < 32; i++) {
        bool set = (m[i / 8] >> (7 - i % 8)) & 1;
        if (set && ended)
            return false;
        ended = ended || !set;
        count += set;
    }
    *bits = count;
    return true;
}

static error_code parse_bits(const char *s, size_t n, int family, unsigned *bits,
                             error_info *err)
{
    unsigned max = max_bits(family);
    const char *ip = family == 4 ? "IPv4" : "IPv6";
    if (n == 0)
        return error_set(err, ERROR_INVALID,
                         "prefix length missing after '/': %s allows 0..%u", ip, max);
    if (memchr(s, '/', n))
        return error_set(err, ERROR_INVALID, "more than one '/'");
    unsigned nm;
    if (family == 4 && memchr(s, '.', n) && netmask_bits(s, n, &nm))
        return error_set(err, ERROR_INVALID,
                         "write the prefix length, not a netmask: /%u", nm);
    for (size_t i = 0; i < n; i++) {
        if (is_digit(s[i]))
            continue;
        if (quotable(s, n))
            return error_set(err, ERROR_INVALID,
                             "prefix length \"%.*s\" is not a number: %s allows 0..%u",
                             (int)n, s, ip, max);
        return error_set(err, ERROR_INVALID,
                         "prefix length is not a number: %s allows 0..%u", ip, max);
    }
    if (n > 1 && s[0] == '0') {
        size_t z = 0;
        while (z < n - 1 && s[z] == '0')
            z++;
        return error_set(err, ERROR_INVALID, "prefix length has a leading zero: write /%.*s",
                         (int)(n - z), s + z);
    }
    unsigned value = 0;
    for (size_t i = 0; i < n && value <= max; i++)
        value = value * 10 + (unsigned)(s[i] - '0');
    if (n > 3 || value > max)
        return error_set(err, ERROR_INVALID,
                         "prefix length %.*s out of range: %s allows 0..%u", (int)n, s, ip,
                         max);
    *bits = value;
    return ERROR_OK;
}

static void format_addr(const validate_prefix *p, char *buf, size_t size)
{
    if (p->family == 4) {
        snprintf(buf, size, "%u.%u.%u.%u", p->addr[0], p->addr[1], p->addr[2], p->addr[3]);
        return;
    }
    if (!inet_ntop(AF_INET6, p->addr, buf, (socklen_t)size) && size > 0)
        buf[0] = '\0';
}

/* Clears the bits after the prefix in `p`; true when any of them was set. */
static bool clear_host_bits(validate_prefix *p)
{
    bool had = false;
    size_t nbytes = p->family == 4 ? V4_BYTES : V6_BYTES;
    for (size_t i = 0; i < nbytes; i++) {
        unsigned first = (unsigned)i * 8;
        unsigned keep = p->bits <= first ? 0 : p->bits - first >= 8 ? 8 : p->bits - first;
        unsigned char mask = (unsigned char)(keep == 0 ? 0 : 0xFFu << (8 - keep));
        had = had || (p->addr[i] & (unsigned char)~mask) != 0;
        p->addr[i] &= mask;
    }
    return had;
}

static error_code check_common(const char *text, const char *empty_hint, error_info *err)
{
    if (!text || !*text)
        return error_set(err, ERROR_INVALID, "empty: %s", empty_hint);
    error_code rc = check_spaces(text, err);
    if (rc)
        return rc;
    size_t len = strlen(text);
    if (len > MODEL_CIDR_MAX)
        return error_set(err, ERROR_INVALID, "too long: %zu bytes; the limit is %d", len,
                         MODEL_CIDR_MAX);
    return check_zone(text, err);
}

static error_code parse_cidr(const char *text, validate_prefix *p, error_info *err)
{
    error_code rc = check_common(text, "write a network with its mask, e.g. 10.0.0.0/8",
                                 err);
    if (rc)
        return rc;
    const char *slash = strchr(text, '/');
    size_t alen = slash ? (size_t)(slash - text) : strlen(text);
    rc = parse_address(text, alen, p, err);
    if (rc)
        return rc;
    if (!slash)
        return error_set(err, ERROR_INVALID, "mask missing: write %s/%u for one address",
                         text, max_bits(p->family));
    rc = parse_bits(slash + 1, strlen(slash + 1), p->family, &p->bits, err);
    if (rc)
        return rc;
    validate_prefix net = *p;
    if (clear_host_bits(&net)) {
        char buf[INET6_ADDRSTRLEN];
        format_addr(&net, buf, sizeof buf);
        return error_set(err, ERROR_INVALID, "host bits set: did you mean %s/%u?", buf,
                         p->bits);
    }
    return ERROR_OK;
}

error_code validate_cidr(const char *text, validate_prefix *out, char *canon,
                         size_t canon_size, error_info *err)
{
    validate_prefix p;
    error_code rc = parse_cidr(text, &p, err);
    if (rc)
        return rc;
    if (canon) {
        char addr[INET6_ADDRSTRLEN];
        int n;
        if (p.family == 4) {
            n = snprintf(canon, canon_size, "%s", text);
        } else {
            format_addr(&p, addr, sizeof addr);
            n = snprintf(canon, canon_size, "%s/%u", addr, p.bits);
        }
        if (n < 0 || (size_t)n >= canon_size)
            return error_set(err, ERROR_INVALID,
                             "canonical form needs %d bytes; the buffer has %zu", n + 1,
                             canon_size);
    }
    if (out)
        *out = p;
    return ERROR_OK;
}

error_code validate_ip(const char *text, validate_prefix *out, error_info *err)
{
    error_code rc = check_common(text, "write an address, e.g. 10.1.2.3", err);
    if (rc)
        return rc;
    const char *slash = strchr(text, '/');
    if (slash) {
        if (quotable(slash, strlen(slash)))
            return error_set(err, ERROR_INVALID,
                             "give an address, not a range: drop \"%s\"", slash);
        return error_set(err, ERROR_INVALID,
                         "give an address, not a range: drop the part from '/'");
    }
    validate_prefix p;
    rc = parse_address(text, strlen(text), &p, err);
    if (rc)
        return rc;
    p.bits = max_bits(p.family);
    if (out)
        *out = p;
    return ERROR_OK;
}

bool validate_prefix_unmap(const validate_prefix *p, validate_prefix *v4)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (p->family != 6 || p->bits < 96 || memcmp(p->addr, mapped, sizeof mapped) != 0)
        return false;
    if (v4) {
        memset(v4, 0, sizeof *v4);
        v4->family = 4;
        memcpy(v4->addr, p->addr + 12, 4);
        v4->bits = p->bits - 96;
    }
    return true;
}

error_code validate_cidr_given(const char *text, error_info *err)
{
    validate_prefix p;
    if (validate_cidr(text, &p, NULL, 0, err) != ERROR_OK)
        return err->code;
    return validate_prefix_given(&p, err);
}

error_code validate_prefix_given(const validate_prefix *p, error_info *err)
{
    validate_prefix v4;
    if (!validate_prefix_unmap(p, &v4))
        return ERROR_OK;
    return error_set(err, ERROR_INVALID,
                     "an IPv4-mapped address is an IPv6 rule to the remote, which an IPv4 "
                     "client never meets: write %u.%u.%u.%u/%u",
                     v4.addr[0], v4.addr[1], v4.addr[2], v4.addr[3], v4.bits);
}

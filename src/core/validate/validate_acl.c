/*
 * validate_acl: bind rules of a credential's ACL (api-facts.md, "Credentials and
 * ACLs"). Anything the service would answer with a 400 is refused here with the
 * part to fix; the grammar is kept no stricter than what production accepts.
 * Also validate_describe_char, the naming of a character its messages and
 * validate.c's share (validate.c calls here, never the other way).
 */
#include "rampart/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rampart/utf8.h"

#define ACL_BIND "bind:"
#define ACL_ANY "*"
#define DOMAIN_MAX 253
#define DOMAIN_LABEL_MAX 63
#define QUOTE_LABEL_MAX 20 /* bytes of an over-long label shown in a message */
#define PORT_MAX 65535u
#define CHAR_DESC_MAX 32

static const char *const wildcard_hint =
    "wildcard only allowed as the whole first label: *.example.com";
static const char *const address_wildcard =
    "wildcard not allowed in an address: name one host";

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Label keys and values: enough for "env=prod" and "app.example.com/tier=web-1". */
static bool is_label_char(char c)
{
    return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static error_code check_spaces(const char *text, size_t len, error_info *err)
{
    for (size_t i = 0; i < len; i++) {
        if (!is_space(text[i]))
            continue;
        if (i == 0)
            return error_set(err, ERROR_INVALID, "leading whitespace: remove it");
        if (i == len - 1)
            return error_set(err, ERROR_INVALID, "trailing whitespace: remove it");
        return error_set(err, ERROR_INVALID, "whitespace at byte offset %zu: remove it", i);
    }
    return ERROR_OK;
}

void validate_describe_char(const char *s, char *buf, size_t size)
{
    unsigned char c = (unsigned char)s[0];
    uint32_t cp;
    int len;
    if (c == ' ')
        snprintf(buf, size, "a space");
    else if (c == 0xC2 && (unsigned char)s[1] == 0xA0)
        snprintf(buf, size, "a non-breaking space");
    else if (c < 0x20 || c == 0x7F)
        snprintf(buf, size, "control character 0x%02X", c);
    else if (c < 0x80)
        snprintf(buf, size, "'%c'", c);
    else if ((len = utf8_decode(s, strlen(s), &cp)) > 0)
        snprintf(buf, size, "'%.*s'", len, s);
    else
        snprintf(buf, size, "byte 0x%02X", c);
}

static error_code bad_char(const char *at, const char *what, const char *allowed,
                           error_info *err)
{
    char desc[CHAR_DESC_MAX];
    validate_describe_char(at, desc, sizeof desc);
    return error_set(err, ERROR_INVALID, "%s has a character that is not allowed: %s; %s",
                     what, desc, allowed);
}

static error_code check_domain_label(const char *s, size_t n, error_info *err)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*')
            return error_set(err, ERROR_INVALID, "%s", wildcard_hint);
        if (!is_alnum(s[i]) && s[i] != '-')
            return bad_char(s + i, "domain", "use letters, digits, hyphens and dots", err);
    }
    if (n > DOMAIN_LABEL_MAX)
        return error_set(err, ERROR_INVALID,
                         "label \"%.*s…\" is %zu bytes; a domain label is at most %d",
                         QUOTE_LABEL_MAX, s, n, DOMAIN_LABEL_MAX);
    if (s[0] == '-')
        return error_set(err, ERROR_INVALID, "label \"%.*s\" starts with a hyphen", (int)n, s);
    if (s[n - 1] == '-')
        return error_set(err, ERROR_INVALID, "label \"%.*s\" ends with a hyphen", (int)n, s);
    return ERROR_OK;
}

static error_code check_domain(const char *s, size_t n, bool wildcard_ok, error_info *err)
{
    if (n > DOMAIN_MAX)
        return error_set(err, ERROR_INVALID, "domain is %zu bytes; the limit is %d", n,
                         DOMAIN_MAX);
    if (n >= 2 && s[0] == '*' && s[1] == '.') {
        if (!wildcard_ok)
            return error_set(err, ERROR_INVALID, "%s", address_wildcard);
        s += 2;
        n -= 2;
        if (n == 0)
            return error_set(err, ERROR_INVALID,
                             "wildcard needs a domain after it: *.example.com");
    }
    if (!wildcard_ok && memchr(s, '*', n))
        return error_set(err, ERROR_INVALID, "%s", address_wildcard);
    if (s[0] == '.')
        return error_set(err, ERROR_INVALID, "domain starts with a dot");
    if (s[n - 1] == '.')
        return error_set(err, ERROR_INVALID, "domain ends with a dot");
    size_t start = 0;
    while (start < n) {
        size_t end = start;
        while (end < n && s[end] != '.')
            end++;
        if (end == start)
            return error_set(err, ERROR_INVALID, "domain has an empty label: two dots in a row");
        error_code rc = check_domain_label(s + start, end - start, err);
        if (rc)
            return rc;
        start = end + 1;
    }
    return ERROR_OK;
}

static error_code check_label_part(const char *s, size_t n, const char *which,
                                   error_info *err)
{
    if (n == 0)
        return error_set(err, ERROR_INVALID, "label has no %s: write * to match any", which);
    if (n == 1 && s[0] == '*')
        return ERROR_OK;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*')
            return error_set(err, ERROR_INVALID,
                             "wildcard in a label must be the whole %s: write *", which);
        if (!is_label_char(s[i])) {
            const char *what = which[0] == 'k' ? "label key" : "label value";
            return bad_char(s + i, what, "use letters, digits and - _ . /", err);
        }
    }
    return ERROR_OK;
}

static error_code check_label(const char *t, error_info *err)
{
    const char *eq = strchr(t, '=');
    if (strchr(eq + 1, '='))
        return error_set(err, ERROR_INVALID, "label has more than one '=': write key=value");
    error_code rc = check_label_part(t, (size_t)(eq - t), "key", err);
    if (rc)
        return rc;
    return check_label_part(eq + 1, strlen(eq + 1), "value", err);
}

static error_code check_port(const char *s, error_info *err)
{
    size_t n = strlen(s);
    if (n == 0)
        return error_set(err, ERROR_INVALID, "address has no port after ':'");
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return bad_char(s + i, "port", "use a number 1..65535", err);
    }
    if (n > 1 && s[0] == '0') {
        size_t z = 0;
        while (z < n - 1 && s[z] == '0')
            z++;
        return error_set(err, ERROR_INVALID, "port has a leading zero: write %s", s + z);
    }
    unsigned value = 0;
    for (size_t i = 0; i < n && value <= PORT_MAX; i++)
        value = value * 10 + (unsigned)(s[i] - '0');
    if (n > 5 || value > PORT_MAX || value == 0)
        return error_set(err, ERROR_INVALID, "port %s out of range: use 1..65535", s);
    return ERROR_OK;
}

static bool all_digits_and_dots(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]) && s[i] != '.')
            return false;
    }
    return true;
}

/* "host:port" with a domain name or IPv4 host; a numeric host is read as IPv4. */
static error_code check_address(const char *t, error_info *err)
{
    const char *colon = strchr(t, ':');
    if (strchr(colon + 1, ':'))
        return error_set(err, ERROR_INVALID,
                         "address has more than one ':': write host:port with a domain "
                         "name or IPv4 host");
    size_t hlen = (size_t)(colon - t);
    if (hlen == 0)
        return error_set(err, ERROR_INVALID, "address has no host before ':'");
    error_code rc;
    if (all_digits_and_dots(t, hlen)) {
        char host[MODEL_ACL_RULE_MAX + 1];
        memcpy(host, t, hlen);
        host[hlen] = '\0';
        rc = validate_ip(host, NULL, err);
        if (rc) {
            error_prefix(err, "address host");
            return rc;
        }
    } else {
        rc = check_domain(t, hlen, false, err);
        if (rc)
            return rc;
    }
    return check_port(colon + 1, err);
}

static error_code check_target(const char *t, error_info *err)
{
    if (!*t)
        return error_set(err, ERROR_INVALID,
                         "empty bind target: write e.g. bind:foo.example.com");
    if (strcmp(t, ACL_ANY) == 0)
        return ERROR_OK;
    if (strchr(t, '='))
        return check_label(t, err);
    if (strchr(t, ':'))
        return check_address(t, err);
    return check_domain(t, strlen(t), true, err);
}

/* One rule; messages name the problem without the "acl rule" lead-in. */
static error_code check_rule(const char *text, error_info *err)
{
    if (!text || !*text)
        return error_set(err, ERROR_INVALID, "empty: write '*' or bind:<target>");
    size_t len = strlen(text);
    if (len > MODEL_ACL_RULE_MAX)
        return error_set(err, ERROR_INVALID, "%zu bytes; the limit is %d", len,
                         MODEL_ACL_RULE_MAX);
    error_code rc = check_spaces(text, len, err);
    if (rc)
        return rc;
    if (strcmp(text, ACL_ANY) == 0)
        return ERROR_OK;
    size_t blen = sizeof ACL_BIND - 1;
    if (strncmp(text, ACL_BIND, blen) != 0) {
        if (strncasecmp(text, ACL_BIND, blen) == 0)
            return error_set(err, ERROR_INVALID, "'bind:' must be lower-case");
        return error_set(err, ERROR_INVALID,
                         "must start with 'bind:' (or be '*' alone), e.g. "
                         "bind:*.example.com");
    }
    return check_target(text + blen, err);
}

error_code validate_acl_rule(const char *text, error_info *err)
{
    error_code rc = check_rule(text, err);
    if (rc)
        error_prefix(err, "acl rule");
    return rc;
}

error_code validate_acl(const model_acl *acl, error_info *err)
{
    if (!acl || !acl->rules)
        return ERROR_OK;
    for (size_t i = 0; i < acl->count; i++) {
        const char *rule = acl->rules[i];
        if (rule && strcmp(rule, ACL_ANY) == 0 && acl->count > 1)
            return error_set(err, ERROR_INVALID,
                             "acl rule %zu: '*' must be the only rule: it already allows "
                             "everything", i + 1);
        error_code rc = check_rule(rule, err);
        if (rc) {
            error_prefix(err, "acl rule %zu", i + 1);
            return rc;
        }
    }
    return ERROR_OK;
}

/*
 * validate: text fields, identifiers, actions, and whole rules and credentials.
 * Addresses live in validate_cidr.c, ACL rules (and validate_describe_char,
 * which both use) in validate_acl.c.
 */
#include "rampart/validate.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rampart/utf8.h"

#define QUOTE_MAX 40 /* longest piece of input repeated back in a message */
#define SEEN_PREFIX_MAX 8
#define LOCAL_PREFIX "local_"

static bool has_non_ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] >= 0x80)
            return true;
    }
    return false;
}

static bool quotable(const char *s)
{
    size_t i = 0;
    for (; i <= QUOTE_MAX && s[i]; i++) {
        if (s[i] < 0x20 || s[i] > 0x7E)
            return false;
    }
    return i <= QUOTE_MAX;
}

static bool is_base62(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t base62_span(const char *s)
{
    size_t n = 0;
    while (is_base62(s[n]))
        n++;
    return n;
}

error_code validate_text(const char *text, size_t max_bytes, const char *what,
                         error_info *err)
{
    if (!what)
        what = "text";
    if (!text)
        return ERROR_OK;
    size_t len = strlen(text);
    utf8_error why;
    size_t at = utf8_find_invalid(text, len, &why);
    if (at < len)
        return error_set(err, ERROR_INVALID, "%s is not valid UTF-8 at byte offset %zu: %s",
                         what, at, utf8_error_text(why));
    if (len <= max_bytes)
        return ERROR_OK;
    if (has_non_ascii(text, len))
        return error_set(err, ERROR_INVALID,
                         "%s is %zu bytes; the limit is %zu (characters outside ASCII "
                         "take 2 to 4 bytes each)", what, len, max_bytes);
    return error_set(err, ERROR_INVALID, "%s is %zu bytes; the limit is %zu", what, len,
                     max_bytes);
}

error_code validate_description(const char *text, error_info *err)
{
    return validate_text(text, MODEL_DESCRIPTION_MAX, "description", err);
}

error_code validate_metadata(const char *text, error_info *err)
{
    return validate_text(text, MODEL_METADATA_MAX, "metadata", err);
}

/* Appends "; this one starts with ipr_" when the input has a prefix of its own. */
static error_code prefix_error(const char *text, const char *what, const char *expected,
                               error_info *err)
{
    size_t n = 0;
    while (n < SEEN_PREFIX_MAX && text[n] >= 'a' && text[n] <= 'z')
        n++;
    if (n > 0 && text[n] == '_')
        return error_set(err, ERROR_INVALID, "%s must start with %s; this one starts with %.*s",
                         what, expected, (int)n + 1, text);
    return error_set(err, ERROR_INVALID, "%s must start with %s", what, expected);
}

/* The part after the prefix: base62, not empty, and the whole id within MODEL_ID_MAX. */
static error_code check_id_body(const char *text, const char *body, const char *what,
                                error_info *err)
{
    if (!*body)
        return error_set(err, ERROR_INVALID, "%s has nothing after %.*s", what,
                         (int)(body - text), text);
    size_t n = base62_span(body);
    if (body[n]) {
        char desc[32];
        validate_describe_char(body + n, desc, sizeof desc);
        return error_set(err, ERROR_INVALID,
                         "%s has a character that is not a letter or digit: %s", what,
                         desc);
    }
    size_t len = strlen(text);
    if (len > MODEL_ID_MAX)
        return error_set(err, ERROR_INVALID, "%s is %zu bytes; the limit is %d", what, len,
                         MODEL_ID_MAX);
    return ERROR_OK;
}

error_code validate_id(const char *text, const char *prefix, const char *what,
                       error_info *err)
{
    if (!what)
        what = "id";
    if (!text || !*text)
        return error_set(err, ERROR_INVALID, "%s is empty: expected %s_ followed by letters and digits",
                         what, prefix);
    size_t plen = strlen(prefix);
    if (strncmp(text, prefix, plen) != 0 || text[plen] != '_') {
        char expected[MODEL_ID_MAX + 2];
        snprintf(expected, sizeof expected, "%s_", prefix);
        return prefix_error(text, what, expected, err);
    }
    return check_id_body(text, text + plen + 1, what, err);
}

error_code validate_id_among(const char *text, const char *const *prefixes, size_t count,
                             const char *what, error_info *err)
{
    char expected[64] = "";
    for (size_t i = 0, used = 0; i < count && used < sizeof expected; i++) {
        int n = snprintf(expected + used, sizeof expected - used, "%s%s_",
                         i == 0 ? "" : i + 1 == count ? " or " : ", ", prefixes[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (!text || !*text)
        return error_set(err, ERROR_INVALID,
                         "%s is empty: expected %s followed by letters and digits", what,
                         expected);
    for (size_t i = 0; i < count; i++) {
        size_t plen = strlen(prefixes[i]);
        if (strncmp(text, prefixes[i], plen) == 0 && text[plen] == '_')
            return validate_id(text, prefixes[i], what, err);
    }
    return prefix_error(text, what, expected, err);
}

bool validate_is_local_id(const char *text)
{
    size_t plen = sizeof LOCAL_PREFIX - 1;
    if (!text || strncmp(text, LOCAL_PREFIX, plen) != 0)
        return false;
    return check_id_body(text, text + plen, "local id", NULL) == ERROR_OK;
}

error_code validate_action(const char *text, model_action *out, error_info *err)
{
    model_action action;
    if (!text || !*text)
        return error_set(err, ERROR_INVALID, "action is empty: use allow or deny");
    if (model_action_parse(text, &action)) {
        if (out)
            *out = action;
        return ERROR_OK;
    }
    if (strcasecmp(text, "allow") == 0 || strcasecmp(text, "deny") == 0)
        return error_set(err, ERROR_INVALID, "action must be lower-case: allow or deny");
    if (quotable(text))
        return error_set(err, ERROR_INVALID, "action must be allow or deny, not \"%s\"", text);
    return error_set(err, ERROR_INVALID, "action must be allow or deny");
}

error_code validate_rule(model_rule *rule, error_info *err)
{
    char canon[MODEL_CIDR_MAX + 1];
    error_code rc = validate_cidr(rule->cidr, NULL, canon, sizeof canon, err);
    if (rc) {
        error_prefix(err, "cidr");
        return rc;
    }
    rc = validate_id(rule->policy_id, "ipp", "id", err);
    if (rc) {
        error_prefix(err, "policy");
        return rc;
    }
    if (rule->action != MODEL_ACTION_ALLOW && rule->action != MODEL_ACTION_DENY)
        return error_set(err, ERROR_INVALID, "action: must be allow or deny");
    rc = validate_description(rule->description, err);
    if (!rc)
        rc = validate_metadata(rule->metadata, err);
    if (rc)
        return rc;
    /* Only a rule that passed every check is touched. */
    memcpy(rule->cidr, canon, strlen(canon) + 1);
    return ERROR_OK;
}

error_code validate_cred(const model_cred *cred, error_info *err)
{
    error_code rc = validate_description(cred->description, err);
    if (!rc)
        rc = validate_metadata(cred->metadata, err);
    if (!rc)
        rc = validate_acl(&cred->acl, err);
    return rc;
}

/* `n` digits at `s` as a number, or -1. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static bool in_range(int v, int lo, int hi) { return v >= lo && v <= hi; }

/* "hh:mm" of an offset, or "Z" (RFC 3339 5.6 allows "z" as well, like "t"). */
static bool valid_zone(const char *z)
{
    if (strcmp(z, "Z") == 0 || strcmp(z, "z") == 0)
        return true;
    return (z[0] == '+' || z[0] == '-') && in_range(digits(z + 1, 2), 0, 23) && z[3] == ':' &&
           in_range(digits(z + 4, 2), 0, 59) && z[6] == '\0';
}

/* Days in `month` (1-12) of `year`, Gregorian: a leap year is divisible by 4,
 * and a century only when divisible by 400 (2000 was, 1900 was not). */
static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return month == 2 && leap ? 29 : days[month - 1];
}

/* "YYYY-MM-DD" with a day that exists: 2025-02-31 is well-formed but no date. */
static bool valid_date(const char *t)
{
    int year = digits(t, 4), month = digits(t + 5, 2);
    return year >= 0 && t[4] == '-' && in_range(month, 1, 12) && t[7] == '-' &&
           in_range(digits(t + 8, 2), 1, days_in_month(year, month));
}

error_code validate_timestamp(const char *text, const char *what, error_info *err)
{
    const char *t = text ? text : "";
    bool ok = strlen(t) >= 20 && valid_date(t) && (t[10] == 'T' || t[10] == 't') &&
              in_range(digits(t + 11, 2), 0, 23) && t[13] == ':' &&
              in_range(digits(t + 14, 2), 0, 59) && t[16] == ':' &&
              in_range(digits(t + 17, 2), 0, 60);
    const char *zone = t + 19;
    if (ok && *zone == '.') {
        zone++;
        while (*zone >= '0' && *zone <= '9')
            zone++;
        ok = zone > t + 20;
    }
    if (ok && valid_zone(zone))
        return ERROR_OK;
    return error_set(err, ERROR_INVALID,
                     "%s is not an RFC 3339 timestamp like 2025-09-04T10:11:15Z", what);
}

error_code validate_uri(const char *text, const char *what, error_info *err)
{
    const char *u = text ? text : "";
    if (!*u)
        return ERROR_OK;
    if (strlen(u) > MODEL_URI_MAX)
        return error_set(err, ERROR_INVALID, "%s is longer than %d bytes", what,
                         MODEL_URI_MAX);
    if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0)
        return error_set(err, ERROR_INVALID, "%s must be an http(s) URL", what);
    for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
        if (*p <= ' ' || *p == 0x7F)
            return error_set(err, ERROR_INVALID,
                             "%s contains a space or control character", what);
    }
    return ERROR_OK;
}


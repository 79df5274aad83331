/* HTTP details of the API client outside the transport: Retry-After, the operation
 * id header, and where a URL would send the API key (libcurl's parsers only, through
 * curl_getdate and rampart/url.h; no connection is made here). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "api_internal.h"
#include "rampart/model.h"
#include "rampart/url.h"

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static bool only_blanks(const char *s)
{
    return *skip_blanks(s) == '\0';
}

static double clamp_delay(double s)
{
    if (s < 0)
        return 0;
    return s > API_RETRY_AFTER_MAX ? API_RETRY_AFTER_MAX : s;
}

/* delay-seconds; a sign and a fraction are tolerated (and clamped) rather than
 * thrown away: the server's intent is clear enough. */
static bool parse_seconds(const char *s, double *out)
{
    bool negative = *s == '-';
    if (negative)
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    double v = 0;
    for (; isdigit((unsigned char)*s); s++)
        v = v < 1e12 ? v * 10 + (*s - '0') : v;
    if (*s == '.') {
        double scale = 0.1;
        for (s++; isdigit((unsigned char)*s); s++, scale /= 10)
            v += (*s - '0') * scale;
    }
    if (!only_blanks(s))
        return false;
    *out = clamp_delay(negative ? -v : v);
    return true;
}

double api_retry_after(const char *value, time_t now)
{
    if (!value)
        return -1;
    const char *s = skip_blanks(value);
    if (!*s)
        return -1;
    double seconds;
    if (parse_seconds(s, &seconds))
        return seconds;
    /* libcurl's date parser reads the three forms of RFC 9110 (and is lenient
     * beyond them: a missing "GMT", a lower-case month). -1 is its failure, and
     * also 1969-12-31T23:59:59, a date no server means. */
    time_t when = curl_getdate(s, NULL);
    if (when == (time_t)-1)
        return -1;
    return clamp_delay(difftime(when, now));
}

bool api_is_operation_id_header(const char *name, size_t len)
{
    static const char suffix[] = "operation-id";
    size_t n = sizeof suffix - 1;
    return name && len >= n && strncasecmp(name + len - n, suffix, n) == 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool api_take_header_value(const char *value, size_t len, char *out, size_t size)
{
    if (!out || size == 0)
        return false;
    out[0] = '\0';
    if (!value)
        return false;
    while (len && is_blank(*value))
        value++, len--;
    while (len && is_blank(value[len - 1]))
        len--;
    if (len == 0 || len >= size)
        return false;
    memcpy(out, value, len);
    out[len] = '\0';
    return true;
}

void api_take_operation_id(const char *value, size_t len, char *out, size_t size)
{
    if (!api_take_header_value(value, len, out, size))
        return;
    for (const char *p = out; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!isalnum(c) && c != '_' && c != '-' && c != '.') {
            out[0] = '\0';
            return;
        }
    }
}

void api_take_etag(const char *value, size_t len, char *out, size_t size)
{
    if (!api_take_header_value(value, len, out, size))
        return;
    const char *p = out[0] == 'W' && out[1] == '/' ? out + 2 : out;
    size_t n = strlen(p);
    bool ok = n >= 2 && p[0] == '"' && p[n - 1] == '"';
    for (size_t i = 1; ok && i + 1 < n; i++)
        ok = p[i] > 0x20 && p[i] < 0x7f && p[i] != '"';
    if (!ok)
        out[0] = '\0';
}

bool api_cache_control_no_store(const char *value, size_t len)
{
    /* Directives are comma-separated tokens, case-insensitive (RFC 9111 5.2). */
    for (size_t i = 0; i + 8 <= len; i++) {
        bool starts = i == 0 || value[i - 1] == ',' || is_blank(value[i - 1]);
        size_t end = i + 8;
        bool ends = end == len || value[end] == ',' || is_blank(value[end]) ||
                    value[end] == '\r' || value[end] == '\n';
        if (starts && ends && strncasecmp(value + i, "no-store", 8) == 0)
            return true;
    }
    return false;
}

static error_code put_url(char *out, size_t size, error_info *err, const char *a,
                          const char *b)
{
    size_t len = strlen(a) + strlen(b);
    if (len + 1 > size || len > MODEL_URI_MAX)
        return error_set(err, ERROR_INVALID, "the page URL is longer than %d bytes",
                         MODEL_URI_MAX);
    snprintf(out, size, "%s%s", a, b);
    return ERROR_OK;
}

error_code api_page_url(const char *base, const char *collection, const char *url,
                        char *out, size_t size, error_info *err)
{
    url_parts want, got;
    error_code rc = url_parse(base, "api_url", &want, err);
    if (rc != ERROR_OK || !url)
        return rc != ERROR_OK ? rc : put_url(out, size, err, base, collection);
    /* A path ("/credentials?…") or an absolute URL; a scheme-relative "//host/…"
     * or a relative "page?…" is no way to write a page of this API. */
    bool path = url[0] == '/' && url[1] != '/';
    char full[MODEL_URI_MAX + 1];
    rc = path ? ERROR_OK : url_parse(url, "next_page_uri", &got, err);
    if (rc == ERROR_OK)
        rc = url_resolve(base, url, "next_page_uri", full, sizeof full, &got, err);
    if (rc != ERROR_OK)
        return rc;
    if (!url_same_origin(&want, &got))
        return error_set(err, ERROR_INVALID,
                         "next_page_uri points to %s://%s:%u, not the configured server "
                         "%s://%s:%u; refusing to send the API key there",
                         got.scheme, got.host, got.port, want.scheme, want.host, want.port);
    return put_url(out, size, err, full, "");
}

/* HTTP details of the API client that need no libcurl: Retry-After, the operation
 * id header, and where a URL would send the API key. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api_internal.h"
#include "rampart/model.h"

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

static int month_index(const char *name)
{
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++) {
        if (strcmp(name, months[i]) == 0)
            return i;
    }
    return -1;
}

/* The three date forms of RFC 9110 section 5.6.7. sscanf's %d and %s do not
 * depend on the locale, unlike strptime's month names. */
static bool parse_http_date(const char *s, time_t *out)
{
    struct tm tm = {0};
    char mon[4] = "";
    int day = 0, year = 0, n = 0;
    const char *comma = strchr(s, ',');
    if (comma) {
        const char *d = comma + 1;
        if (sscanf(d, " %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", &day, mon, &year,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 || n == 0) {
            n = 0;
            if (sscanf(d, " %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n", &day, mon, &year,
                       &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 || n == 0)
                return false;
            year += year < 70 ? 2000 : 1900;
        }
        s = d + n;
    } else {
        char wday[4];
        if (sscanf(s, "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", wday, mon, &day,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &year, &n) != 7 || n == 0)
            return false;
        s += n;
    }
    int m = month_index(mon);
    if (m < 0 || day < 1 || day > 31 || year < 1970 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0 || !only_blanks(s))
        return false;
    tm.tm_mday = day;
    tm.tm_mon = m;
    tm.tm_year = year - 1900;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = t;
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
    time_t when;
    if (!parse_http_date(s, &when))
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

static bool url_chars_ok(const char *url)
{
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        if (*p <= ' ' || *p == 0x7f || *p == '\\')
            return false;
    }
    return true;
}

static bool host_char_ok(unsigned char c, bool literal)
{
    if (literal)
        return isxdigit(c) || c == ':' || c == '.';
    return isalnum(c) || c == '-' || c == '.';
}

static error_code parse_port(const char *p, size_t len, unsigned *port, error_info *err)
{
    unsigned v = 0;
    if (len == 0 || len > 5 || p[0] == '0')
        return error_set(err, ERROR_INVALID, "the URL's port is not a number 1-65535");
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)p[i]))
            return error_set(err, ERROR_INVALID, "the URL's port is not a number 1-65535");
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    if (v > 65535)
        return error_set(err, ERROR_INVALID, "the URL's port is not a number 1-65535");
    *port = v;
    return ERROR_OK;
}

/* Split the authority (`a`, `len` bytes) into host and port. */
static error_code parse_authority(const char *a, size_t len, api_origin *out, error_info *err)
{
    bool literal = len > 0 && a[0] == '[';
    const char *host_end;
    if (literal) {
        host_end = memchr(a, ']', len);
        if (!host_end)
            return error_set(err, ERROR_INVALID, "the URL's IPv6 address lacks its ']'");
        host_end++;
    } else {
        host_end = memchr(a, ':', len);
        host_end = host_end ? host_end : a + len;
    }
    size_t host_len = (size_t)(host_end - a);
    if (host_len == 0 || (literal && host_len < 3) || host_len >= sizeof out->host)
        return error_set(err, ERROR_INVALID, "the URL has no usable host name");
    for (size_t i = literal; i < host_len - literal; i++) {
        if (!host_char_ok((unsigned char)a[i], literal))
            return error_set(err, ERROR_INVALID,
                             "the URL's host name has a character other than letters, "
                             "digits, '-' and '.'");
        out->host[i] = (char)tolower((unsigned char)a[i]);
    }
    out->host[0] = literal ? '[' : out->host[0];
    out->host[host_len - 1] = literal ? ']' : out->host[host_len - 1];
    out->host[host_len] = '\0';
    const char *rest = host_end;
    size_t rest_len = len - host_len;
    if (rest_len == 0)
        return ERROR_OK;
    if (*rest != ':')
        return error_set(err, ERROR_INVALID, "the URL has text after its host name");
    return parse_port(rest + 1, rest_len - 1, &out->port, err);
}

error_code api_parse_origin(const char *url, api_origin *out, error_info *err)
{
    memset(out, 0, sizeof *out);
    if (!url || !url_chars_ok(url))
        return error_set(err, ERROR_INVALID,
                         "the URL is empty or holds a space, control character or backslash");
    bool https = strncasecmp(url, "https://", 8) == 0;
    if (!https && strncasecmp(url, "http://", 7) != 0)
        return error_set(err, ERROR_INVALID, "the URL must start with https:// or http://");
    const char *a = url + (https ? 8 : 7);
    size_t len = strcspn(a, "/?#");
    if (memchr(a, '@', len) || memchr(a, '%', len))
        return error_set(err, ERROR_INVALID,
                         "the URL must not carry a user name, a password or an escaped host");
    strcpy(out->scheme, https ? "https" : "http");
    out->port = https ? 443 : 80;
    out->authority_end = (size_t)(a - url) + len;
    return parse_authority(a, len, out, err);
}

bool api_origin_is_loopback(const api_origin *o)
{
    if (strcmp(o->host, "localhost") == 0 || strcmp(o->host, "[::1]") == 0)
        return true;
    unsigned b[4];
    int n = 0;
    return sscanf(o->host, "%3u.%3u.%3u.%3u%n", &b[0], &b[1], &b[2], &b[3], &n) == 4 &&
           o->host[n] == '\0' && b[0] == 127 && b[1] < 256 && b[2] < 256 && b[3] < 256 &&
           strspn(o->host, "0123456789.") == strlen(o->host);
}

static error_code put_url(char *out, size_t size, error_info *err, const char *a,
                          size_t a_len, const char *b)
{
    size_t b_len = strlen(b);
    if (a_len + b_len + 1 > size || a_len + b_len > MODEL_URI_MAX)
        return error_set(err, ERROR_INVALID, "the page URL is longer than %d bytes",
                         MODEL_URI_MAX);
    memcpy(out, a, a_len);
    memcpy(out + a_len, b, b_len + 1);
    return ERROR_OK;
}

error_code api_page_url(const char *base, const char *collection, const char *url,
                        char *out, size_t size, error_info *err)
{
    api_origin want, got;
    if (api_parse_origin(base, &want, err) != ERROR_OK)
        return error_prefix(err, "api_url");
    if (!url)
        return put_url(out, size, err, base, strlen(base), collection);
    if (url[0] == '/' && url[1] != '/') {
        if (!url_chars_ok(url))
            return error_set(err, ERROR_INVALID,
                             "next_page_uri holds a space, control character or backslash");
        return put_url(out, size, err, base, want.authority_end, url);
    }
    if (api_parse_origin(url, &got, err) != ERROR_OK)
        return error_prefix(err, "next_page_uri");
    if (strcmp(want.scheme, got.scheme) != 0 || strcmp(want.host, got.host) != 0 ||
        want.port != got.port)
        return error_set(err, ERROR_INVALID,
                         "next_page_uri points to %s://%s:%u, not the configured server "
                         "%s://%s:%u; refusing to send the API key there",
                         got.scheme, got.host, got.port, want.scheme, want.host, want.port);
    return put_url(out, size, err, url, strlen(url), "");
}

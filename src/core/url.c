/* url: see rampart/url.h (and there why libcurl's URL API is used in core). */
#include "rampart/url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

static bool chars_ok(const char *url)
{
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        if (*p <= ' ' || *p == 0x7f || *p == '\\')
            return false;
    }
    return true;
}

static error_code curl_refused(CURLUcode rc, const char *what, error_info *err)
{
    if (rc == CURLUE_OUT_OF_MEMORY)
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (rc == CURLUE_BAD_SCHEME || rc == CURLUE_NO_SCHEME)
        return error_set(err, ERROR_INVALID,
                         "%s is not an absolute URL: it must start with https:// (or "
                         "http:// to this machine)", what);
    return error_set(err, ERROR_INVALID, "%s is not a usable URL: %s", what,
                     curl_url_strerror(rc));
}

/* True when libcurl finds `part` in the URL (a present but empty part counts). */
static bool has_part(CURLU *h, CURLUPart part)
{
    char *v = NULL;
    bool found = curl_url_get(h, part, &v, 0) == CURLUE_OK;
    curl_free(v);
    return found;
}

/* Copy a part into `out` (lower-cased); false when missing or too long. */
static bool get_lower(CURLU *h, CURLUPart part, unsigned flags, char *out, size_t size)
{
    char *v = NULL;
    bool ok = curl_url_get(h, part, &v, flags) == CURLUE_OK && strlen(v) < size;
    if (ok) {
        size_t i = 0;
        for (; v[i]; i++)
            out[i] = (char)tolower((unsigned char)v[i]);
        out[i] = '\0';
    }
    curl_free(v);
    return ok;
}

static bool host_ok(const char *host)
{
    size_t len = strlen(host);
    bool literal = host[0] == '[';
    if (len == 0 || (literal && (len < 3 || host[len - 1] != ']')))
        return false;
    for (size_t i = literal; i < len - literal; i++) {
        unsigned char c = (unsigned char)host[i];
        bool fits = literal ? isxdigit(c) || c == ':' || c == '.'
                            : isalnum(c) || c == '-' || c == '.';
        if (!fits)
            return false;
    }
    return true;
}

/* The checks of the contract on a URL libcurl has read into `h`. */
static error_code check_parts(CURLU *h, const char *what, url_parts *out, error_info *err)
{
    if (!get_lower(h, CURLUPART_SCHEME, 0, out->scheme, sizeof out->scheme) ||
        (strcmp(out->scheme, "https") != 0 && strcmp(out->scheme, "http") != 0))
        return error_set(err, ERROR_INVALID,
                         "%s: the scheme must be https:// (or http:// to this machine), "
                         "not %.16s://", what, out->scheme[0] ? out->scheme : "another");
    if (has_part(h, CURLUPART_USER) || has_part(h, CURLUPART_PASSWORD) ||
        has_part(h, CURLUPART_OPTIONS))
        return error_set(err, ERROR_INVALID,
                         "%s must not carry a user name or password (the API key goes in "
                         "api_key or RAMPART_API_KEY)", what);
    if (has_part(h, CURLUPART_ZONEID))
        return error_set(err, ERROR_INVALID, "%s must not name an IPv6 zone", what);
    if (!get_lower(h, CURLUPART_HOST, 0, out->host, sizeof out->host) || !host_ok(out->host))
        return error_set(err, ERROR_INVALID,
                         "%s: the host name must be ASCII letters, digits, '-' and '.', or "
                         "an IPv6 address in brackets", what);
    char port[8];
    char *end = NULL;
    unsigned long n = get_lower(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, port, sizeof port)
                          ? strtoul(port, &end, 10)
                          : 0;
    if (n == 0 || n > 65535 || !end || *end)
        return error_set(err, ERROR_INVALID, "%s: the port must be a number 1-65535", what);
    out->port = (unsigned)n;
    return ERROR_OK;
}

/* Read `url` into a new handle (`base` first when given, for a reference). */
static error_code load(const char *base, const char *url, const char *what, CURLU **h,
                       error_info *err)
{
    *h = NULL;
    if (!url || !*url)
        return error_set(err, ERROR_INVALID, "%s is empty", what);
    if (!chars_ok(url) || (base && !chars_ok(base)))
        return error_set(err, ERROR_INVALID,
                         "%s holds a space, control character or backslash", what);
    *h = curl_url();
    if (!*h)
        return error_set(err, ERROR_NOMEM, "out of memory");
    /* Any scheme is read, so that a wrong one gets our message, not libcurl's. */
    CURLUcode rc = base ? curl_url_set(*h, CURLUPART_URL, base, CURLU_NON_SUPPORT_SCHEME)
                        : CURLUE_OK;
    if (rc == CURLUE_OK)
        rc = curl_url_set(*h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
    return rc == CURLUE_OK ? ERROR_OK : curl_refused(rc, what, err);
}

error_code url_parse(const char *url, const char *what, url_parts *out, error_info *err)
{
    memset(out, 0, sizeof *out);
    CURLU *h;
    error_code rc = load(NULL, url, what, &h, err);
    if (rc == ERROR_OK)
        rc = check_parts(h, what, out, err);
    curl_url_cleanup(h);
    if (rc != ERROR_OK) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->has_query = strpbrk(url, "?#") != NULL;
    return ERROR_OK;
}

bool url_is_loopback(const url_parts *u)
{
    if (strcmp(u->host, "localhost") == 0 || strcmp(u->host, "[::1]") == 0)
        return true;
    struct in_addr a;
    return inet_pton(AF_INET, u->host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

bool url_same_origin(const url_parts *a, const url_parts *b)
{
    return strcmp(a->scheme, b->scheme) == 0 && strcmp(a->host, b->host) == 0 &&
           a->port == b->port;
}

error_code url_check_api_base(const char *url, const char *what, error_info *err)
{
    url_parts u;
    error_code rc = url_parse(url, what, &u, err);
    if (rc != ERROR_OK)
        return rc;
    if (strcmp(u.scheme, "https") != 0 && !url_is_loopback(&u))
        return error_set(err, ERROR_INVALID,
                         "%s: http:// only for a server on this machine (127.0.0.1, "
                         "localhost, [::1]); elsewhere https://, or the API key would cross "
                         "the network in clear", what);
    if (u.has_query)
        return error_set(err, ERROR_INVALID,
                         "%s must not carry a query or fragment: paths are appended to it",
                         what);
    return ERROR_OK;
}

error_code url_resolve(const char *base, const char *ref, const char *what, char *out,
                       size_t size, url_parts *parts, error_info *err)
{
    memset(parts, 0, sizeof *parts);
    CURLU *h;
    error_code rc = load(base, ref, what, &h, err);
    char *full = NULL;
    if (rc == ERROR_OK)
        rc = check_parts(h, what, parts, err);
    if (rc == ERROR_OK && curl_url_get(h, CURLUPART_URL, &full, 0) != CURLUE_OK)
        rc = error_set(err, ERROR_NOMEM, "out of memory");
    if (rc == ERROR_OK && strlen(full) >= size)
        rc = error_set(err, ERROR_INVALID, "%s: the URL is longer than %zu bytes", what,
                       size - 1);
    if (rc == ERROR_OK) {
        memcpy(out, full, strlen(full) + 1);
        parts->has_query = strpbrk(full, "?#") != NULL;
    } else {
        memset(parts, 0, sizeof *parts);
    }
    curl_free(full);
    curl_url_cleanup(h);
    return rc;
}

/*
 * url: the URLs rampart sends its API key to (api_url, and the next_page_uri of
 * each list page), read with libcurl's URL API (curl_url).
 *
 * config.c checks api_url with it when it is set, sync/api*.c the base URL before
 * a client is made and each page URL before it is fetched (why libcurl's parser
 * in core: DESIGN.md, "The shape").
 *
 * - url_parse accepts an absolute http:// or https:// URL as libcurl reads it
 *   and refuses: empty text; a space, control character or backslash anywhere
 *   (libcurl reads some of them in ways a person would not); another scheme; a
 *   user name, password or login options; an IPv6 zone id; a host with other
 *   than ASCII letters, digits, '-' and '.' (an IPv6 literal aside); port 0.
 * - Hosts are as libcurl reads them, then lower-cased: IPv4 in dotted quad
 *   ("http://127.1" is 127.0.0.1), IPv6 literals compressed and in brackets.
 * - Messages start with `what` (the setting's name: "api_url: ...") and never
 *   quote more of the URL than its scheme and host (a query can carry a key).
 *   Errors are ERROR_INVALID, or ERROR_NOMEM.
 * - No global state and thread-safe; needs no curl_global_init (each call makes
 *   and frees its own handle, so nothing outlives it).
 */
#ifndef RAMPART_URL_H
#define RAMPART_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

enum { URL_SCHEME_MAX = 8, URL_HOST_MAX = 256 };

/* Where a URL sends its requests. */
typedef struct url_parts {
    char scheme[URL_SCHEME_MAX]; /* "http" or "https" */
    char host[URL_HOST_MAX];     /* lower case; an IPv6 literal keeps its brackets */
    unsigned port;               /* as given, else the scheme's default */
    bool has_query;              /* a '?' or '#': a query or fragment, even empty */
} url_parts;

/* Parse `url` by the rules of the contract into *out (zeroed on failure). */
error_code url_parse(const char *url, const char *what, url_parts *out, error_info *err);

/* True for "localhost", 127.0.0.0/8 and [::1]: the key stays on this machine. */
bool url_is_loopback(const url_parts *u);

/* True when both send their requests to the same scheme, host and port. */
bool url_same_origin(const url_parts *a, const url_parts *b);

/*
 * The rule for the base URL of the API: url_parse's, and https:// unless the
 * host is loopback (plain http would carry the key across the network in
 * clear), and no query or fragment (paths are appended to it). The message of
 * a plain http:// to another host names the fix.
 */
error_code url_check_api_base(const char *url, const char *what, error_info *err);

/*
 * Resolve `ref` (an absolute URL, or a reference such as "/path?query")
 * against `base` as libcurl does (RFC 3986), write the URL libcurl will fetch
 * to `out` (`size` bytes), and its parts to *parts. The result must pass
 * url_parse; ERROR_INVALID too when it does not fit in `out`. Deciding which
 * references a caller accepts, and where they may point, is the caller's.
 */
error_code url_resolve(const char *base, const char *ref, const char *what, char *out,
                       size_t size, url_parts *parts, error_info *err);

#endif

/* Error bodies and the bearer check shared by the servers: see rampart/serve_reply.h. */
#include "rampart/serve_reply.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rampart/codec.h"
#include "rampart/ids.h"

void serve_error(http_response *resp, int status, const char *code, const char *fmt,
                 va_list ap)
{
    codec_api_error e = {.status_code = status};
    snprintf(e.error_code, sizeof e.error_code, "%s", code);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    /* Operation ids need not sort: plain random ones keep this path lock-free. */
    memcpy(e.operation_id, "op_", 3);
    if (ids_random_base62(e.operation_id + 3, IDS_BODY_LEN, NULL) != ERROR_OK)
        snprintf(e.operation_id, sizeof e.operation_id, "op_0");
    http_response_set(resp, status, codec_api_error_encode(&e));
    http_response_header(resp, "Operation-Id", e.operation_id);
}

/* Constant time in the expected key's bytes: the loop never stops at the first
 * mismatch. */
static bool key_matches(const char *key, size_t key_len, const char *given, size_t glen)
{
    unsigned diff = glen != key_len;
    for (size_t i = 0; i < key_len; i++)
        diff |= (unsigned char)key[i] ^ (unsigned char)(i < glen ? given[i] : 0);
    return diff == 0;
}

static void error_of(http_response *resp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void error_of(http_response *resp, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    serve_error(resp, status, code, fmt, ap);
    va_end(ap);
}

const char *serve_layer_code(int status)
{
    static const struct {
        int status;
        const char *code;
    } codes[] = {
        {400, "ERR_BAD_REQUEST"}, {404, "ERR_NOT_FOUND"}, {405, "ERR_METHOD_NOT_ALLOWED"},
        {413, "ERR_TOO_LARGE"},   {503, "ERR_UNAVAILABLE"},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (codes[i].status == status)
            return codes[i].code;
    }
    return "ERR_INTERNAL";
}

void serve_json(http_response *resp, int status, char *json)
{
    if (!json) {
        error_of(resp, 500, "ERR_INTERNAL", "out of memory");
        return;
    }
    http_response_set(resp, status, json);
}

bool serve_bearer_ok(const char *header, const char *key, size_t key_len)
{
    if (!header || !key || strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    const char *given = header + 7;
    while (*given == ' ')
        given++;
    size_t len = strlen(given);
    while (len > 0 && given[len - 1] == ' ')
        len--;
    return key_matches(key, key_len, given, len);
}

/* ---- replies a cache may keep ---- */

/* Skip blanks (RFC 9110's OWS: spaces and tabs). */
static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* One entity-tag at p: [W/]"opaque" with etagc characters (%x21, %x23-7E, and
 * obs-text). *opaque and *len: the quoted part, quotes included; NULL when p does
 * not start with one. Returns the first byte after it. */
static const char *entity_tag(const char *p, const char **opaque, size_t *len)
{
    *opaque = NULL;
    if (p[0] == 'W' && p[1] == '/')
        p += 2;
    if (*p != '"')
        return p;
    const char *q = p + 1;
    while (*q && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x21 || c == 0x7f)
            return p;
        q++;
    }
    if (*q != '"')
        return p;
    *opaque = p;
    *len = (size_t)(q + 1 - p);
    return q + 1;
}

bool serve_etag_matches(const char *header, const char *etag)
{
    if (!header || !etag)
        return false;
    const char *p = skip_ows(header);
    if (*p == '*')
        return *skip_ows(p + 1) == '\0';
    const char *want = etag[0] == 'W' && etag[1] == '/' ? etag + 2 : etag;
    size_t want_len = strlen(want);
    bool match = false;
    for (;;) {
        p = skip_ows(p);
        if (*p == ',') { /* empty list elements are allowed (RFC 9110 5.6.1) */
            p++;
            continue;
        }
        if (!*p)
            return match;
        const char *opaque;
        size_t len = 0;
        p = entity_tag(p, &opaque, &len);
        if (!opaque)
            return false;
        match = match || (len == want_len && memcmp(opaque, want, len) == 0);
        p = skip_ows(p);
        if (*p && *p != ',')
            return false;
    }
}

bool serve_cache_headers(http_response *resp, const char *etag, unsigned max_age_s)
{
    char value[96];
    if (max_age_s > SERVE_MAX_AGE_MAX)
        max_age_s = SERVE_MAX_AGE_MAX;
    if (max_age_s == 0)
        snprintf(value, sizeof value, "public, no-cache");
    else
        snprintf(value, sizeof value, "public, max-age=%u, stale-while-revalidate=%u",
                 max_age_s, max_age_s);
    return http_response_header(resp, "ETag", etag) &&
           http_response_header(resp, "Cache-Control", value);
}

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

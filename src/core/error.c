#include "rampart/error.h"

#include <stdio.h>
#include <string.h>

#include "rampart/utf8.h"

error_code error_vset(error_info *err, error_code code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n >= (int)sizeof err->msg)
        utf8_trim_partial(err->msg); /* never half a character at the end */
    return code;
}

error_code error_set(error_info *err, error_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

error_code error_prefix(error_info *err, const char *fmt, ...)
{
    if (!err)
        return ERROR_OK;
    char prefix[ERROR_MSG_MAX];
    char old[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    return error_set(err, err->code, "%s: %s", prefix, old);
}

void error_clear(error_info *err)
{
    if (!err)
        return;
    err->code = ERROR_OK;
    err->msg[0] = '\0';
}

const char *error_code_name(error_code code)
{
    static const char *const names[] = {
        [ERROR_OK] = "ok",
        [ERROR_INVALID] = "invalid",
        [ERROR_CONFLICT] = "conflict",
        [ERROR_NOT_FOUND] = "not_found",
        [ERROR_STATE] = "state",
        [ERROR_UNAVAILABLE] = "unavailable",
        [ERROR_FORMAT] = "format",
        [ERROR_CONFIG] = "config",
        [ERROR_IO] = "io",
        [ERROR_NOMEM] = "nomem",
    };
    if ((unsigned)code >= sizeof names / sizeof names[0] || !names[code])
        return "unknown";
    return names[code];
}

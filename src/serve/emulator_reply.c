/* emulator: its replies (error bodies in the API's shape, objects, store
 * failures), shared by emulator.c and the operations; calls no other emulator
 * file. */
#include "emulator_internal.h"

#include <stdarg.h>

#include "rampart/serve_reply.h"

void emu_error(http_response *resp, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    serve_error(resp, status, code, fmt, ap);
    va_end(ap);
}

void emu_reply(http_response *resp, int status, char *json)
{
    serve_json(resp, status, json);
}

void emu_store_error(http_response *resp, const error_info *e)
{
    switch (e->code) {
    case ERROR_NOT_FOUND:
        emu_error(resp, 404, "ERR_NOT_FOUND", "%s", e->msg);
        return;
    case ERROR_CONFLICT:
    case ERROR_INVALID:
        emu_error(resp, 400, "ERR_VALIDATION", "%s", e->msg);
        return;
    default:
        emu_error(resp, 500, "ERR_INTERNAL", "internal error: %s", e->msg);
        return;
    }
}

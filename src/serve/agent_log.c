/*
 * agent: the log lines (each prefixed with the UTC time, handed to the caller's
 * on_log) and the client text and peer names they carry. Below every other
 * agent file: it calls none of them.
 */
#include "agent_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rampart/ids.h"

enum { LOG_LINE_MAX = 1024 };

/* The line's time, formatted once a second per thread: every lookup logs a line,
 * and strftime with its time zone lookups would cost more than the rest of it. */
static size_t log_time(char *out, size_t size)
{
    static _Thread_local time_t shown = (time_t)-1;
    static _Thread_local char text[32];
    static _Thread_local size_t len;
    time_t now = time(NULL);
    if (now != shown) {
        ids_now_rfc3339(text, sizeof text);
        len = strlen(text);
        shown = now;
    }
    size_t n = len < size ? len : size - 1;
    memcpy(out, text, n);
    out[n] = '\0';
    return n;
}

void agent_log(agent *ag, const char *fmt, ...)
{
    if (!ag->on_log)
        return;
    char line[LOG_LINE_MAX];
    size_t n = log_time(line, sizeof line);
    line[n++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - n, fmt, ap);
    va_end(ap);
    ag->on_log(ag->log_ctx, line);
}

void agent_log_text(char *out, size_t size, const char *text)
{
    size_t n = 0;
    for (; text && *text && n + 1 < size; text++) {
        unsigned char c = (unsigned char)*text;
        out[n++] = c < ' ' || c >= 0x7F || c == '"' || c == '\\' ? '?' : (char)c;
    }
    if (size)
        out[n] = '\0';
}

void agent_peer_name(const http_request *req, char *out, size_t size)
{
    if (req->peer.family == AF_UNIX)
        snprintf(out, size, "uid:%ld", req->peer.uid);
    else
        snprintf(out, size, "key@%s", req->peer.addr);
}

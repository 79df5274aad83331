/* http: matching a request path against the route table (patterns with {name}
 * segments), the Allow list of a 405, and control characters in a path. */
#include "http_internal.h"

#include <stdio.h>
#include <string.h>

enum { SEGMENTS_MAX = 16 };

typedef struct segments {
    char *seg[SEGMENTS_MAX];
    size_t n;
    bool overflow; /* more segments than any route has: matches nothing */
} segments;

/* "/a/b" -> {"a", "b"}; "/" -> {""}; cuts `path` in place. */
static void split_path(char *path, segments *out)
{
    out->n = 0;
    out->overflow = false;
    char *p = path[0] == '/' ? path + 1 : path;
    for (;;) {
        if (out->n == SEGMENTS_MAX) {
            out->overflow = true;
            return;
        }
        out->seg[out->n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            return;
        *slash = '\0';
        p = slash + 1;
    }
}

/* Does `pattern` match the segments? Fills the path parameters when it does. */
static bool matches(const char *pattern, const segments *s, http_request *req,
                    char names[][HTTP_PARAM_NAME_MAX])
{
    const char *p = pattern[0] == '/' ? pattern + 1 : pattern;
    size_t i = 0, np = 0;
    for (;; i++) {
        size_t len = strcspn(p, "/");
        if (i >= s->n)
            return false;
        if (len > 2 && p[0] == '{' && p[len - 1] == '}') {
            if (!s->seg[i][0] || np == HTTP_PARAMS_MAX || len - 2 >= HTTP_PARAM_NAME_MAX)
                return false;
            memcpy(names[np], p + 1, len - 2);
            names[np][len - 2] = '\0';
            req->params[np] = (http_param){names[np], s->seg[i]};
            np++;
        } else if (strlen(s->seg[i]) != len || strncmp(s->seg[i], p, len) != 0) {
            return false;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    if (i + 1 != s->n)
        return false;
    req->nparams = np;
    return true;
}

static void append_allow(char allow[HTTP_ALLOW_MAX], const char *method)
{
    size_t used = strlen(allow);
    for (const char *at = allow; (at = strstr(at, method)) != NULL; at++) {
        size_t len = strlen(method);
        bool whole = (at == allow || at[-1] == ' ') && (at[len] == ',' || at[len] == '\0');
        if (whole)
            return;
    }
    snprintf(allow + used, HTTP_ALLOW_MAX - used, "%s%s", used ? ", " : "", method);
}

const http_route *http_route_find(const http_route *routes, size_t nroutes, char *path,
                                  http_request *req, char names[][HTTP_PARAM_NAME_MAX],
                                  char allow[HTTP_ALLOW_MAX])
{
    segments s;
    split_path(path, &s);
    allow[0] = '\0';
    for (size_t i = 0; !s.overflow && i < nroutes; i++) {
        if (!matches(routes[i].pattern, &s, req, names))
            continue;
        if (strcmp(routes[i].method, req->method) == 0)
            return &routes[i];
        append_allow(allow, routes[i].method);
    }
    req->nparams = 0;
    return NULL;
}

/* ---- control characters in a path ---- */

static bool control(unsigned char c)
{
    return c < 0x20 || c == 0x7F;
}

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

bool http_path_encoded_ctl(const char *uri)
{
    for (const char *p = uri; *p && *p != '?'; p++) {
        if (control((unsigned char)*p))
            return true;
        /* Decoded the way the library decodes: %HH, anything else stays as is. */
        if (*p == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0 &&
            control((unsigned char)(hex(p[1]) * 16 + hex(p[2]))))
            return true;
    }
    return false;
}

bool http_path_decoded_ctl(const char *path, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (control((unsigned char)path[i]))
            return true;
    }
    return false;
}

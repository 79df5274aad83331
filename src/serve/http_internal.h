/*
 * http internals shared by http.c and http_listen.c (the listening socket). Not part
 * of the public contract (see rampart/http.h); only http*.c include this, and only
 * http.c includes libmicrohttpd.
 */
#ifndef RAMPART_HTTP_INTERNAL_H
#define RAMPART_HTTP_INTERNAL_H

#include <sys/un.h>

#include "rampart/http.h"

/* A bound, listening socket and how to name it. */
typedef struct http_listener {
    int fd;                             /* -1 once closed or handed over */
    int family;                         /* AF_INET, AF_INET6 or AF_UNIX */
    char address[HTTP_ADDRESS_MAX];     /* "127.0.0.1:PORT", "[::1]:PORT" or the path */
    char unix_path[sizeof ((struct sockaddr_un *)0)->sun_path]; /* "" for TCP */
} http_listener;

/*
 * Parse `spec` ("tcp:HOST:PORT" or "unix:PATH"), create, bind and listen; or
 * ("fd:N") check and adopt a listening socket passed by systemd.
 * ERROR_INVALID for a bad or non-loopback address (the message names the fix),
 * ERROR_IO for socket errors (address in use, …). On failure out->fd is -1.
 */
error_code http_listener_open(const char *spec, http_listener *out, error_info *err);

/* Close the socket (if still held) and remove a unix socket file. Idempotent. */
void http_listener_close(http_listener *lis);

enum {
    HTTP_PARAM_NAME_MAX = 32, /* bytes of a {name} in a pattern, with the NUL */
    HTTP_ALLOW_MAX = 128      /* the Allow header of a 405 */
};

/*
 * The route for req->method and `path`, which is cut in place into segments (path
 * parameters point into it; their names are copied into `names`), or NULL: then
 * `allow` lists the methods of the routes matching the path ("GET, DELETE": a
 * 405), or is "" (a 404).
 */
const http_route *http_route_find(const http_route *routes, size_t nroutes, char *path,
                                  http_request *req, char names[][HTTP_PARAM_NAME_MAX],
                                  char allow[HTTP_ALLOW_MAX]);

#endif

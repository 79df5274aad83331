/*
 * Shared by the request-handler fuzz targets (fuzz_serve_api.c, fuzz_agent.c):
 * a fuzz input read as an HTTP request and dispatched, and a private temp directory.
 *
 * Input format (text, so seeds stay readable and mutations stay meaningful):
 *   METHOD SP PATH[?QUERY] LF      QUERY: NAME[=VALUE] joined by '&'
 *   NAME: VALUE LF                 zero or more headers (a name may come twice)
 *   LF                             then the body: every remaining byte
 * PATH is percent-decoded (%HH) as the library decodes it, so "web%00x" reaches
 * the server as the library hands it over: "web", a NUL, "x" (path_len says
 * so). Query values and headers are handed over as they are.
 */
#ifndef RAMPART_FUZZ_HTTP_H
#define RAMPART_FUZZ_HTTP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/http.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_QUERY_MAX = 24, FUZZ_HEADERS_MAX = 24 };

typedef struct fuzz_request {
    char *text;                            /* the input, cut in place */
    http_param query[FUZZ_QUERY_MAX];
    http_param headers[FUZZ_HEADERS_MAX];
    http_inject in;
} fuzz_request;

/* Cut "a&b=c" into arguments (an argument without '=' has the value ""). */
static void fuzz_split_query(char *q, fuzz_request *r)
{
    while (q && r->in.nquery < FUZZ_QUERY_MAX) {
        char *amp = strchr(q, '&');
        if (amp)
            *amp = '\0';
        char *eq = strchr(q, '=');
        if (eq)
            *eq = '\0';
        r->query[r->in.nquery++] = (http_param){q, eq ? eq + 1 : ""};
        q = amp ? amp + 1 : NULL;
    }
}

static int fuzz_hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Decode %HH in `p` in place, as the library does (anything else stays as it
 * is); the decoded length, which counts a NUL that "%00" left inside. */
static size_t fuzz_decode_path(char *p)
{
    char *w = p;
    for (const char *r = p; *r;) {
        if (r[0] == '%' && fuzz_hex(r[1]) >= 0 && fuzz_hex(r[2]) >= 0) {
            *w++ = (char)(fuzz_hex(r[1]) * 16 + fuzz_hex(r[2]));
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - p);
}

/* The next line of `*at` (cut at LF), or NULL at the end of the headers. */
static char *fuzz_next_line(char **at, char *end)
{
    if (!*at || *at >= end)
        return NULL;
    char *line = *at;
    char *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl) {
        *at = end;
        return line;
    }
    *nl = '\0';
    *at = nl + 1;
    return line;
}

/* Parse `data` into `r` (free with fuzz_request_free). False when out of memory. */
static int fuzz_request_parse(const unsigned char *data, size_t size, fuzz_request *r)
{
    memset(r, 0, sizeof *r);
    r->text = malloc(size + 1);
    if (!r->text)
        return 0;
    memcpy(r->text, data, size);
    r->text[size] = '\0';
    char *end = r->text + size;
    char *at = r->text;
    char *line = fuzz_next_line(&at, end);
    if (!line)
        line = end; /* empty input: "" method and path */
    char *sp = strchr(line, ' ');
    if (sp)
        *sp = '\0';
    r->in.method = line;
    char *target = sp ? sp + 1 : end;
    char *qm = strchr(target, '?');
    if (qm) {
        *qm = '\0';
        fuzz_split_query(qm + 1, r);
    }
    r->in.path_len = fuzz_decode_path(target);
    r->in.path = target;
    r->in.query = r->query;
    r->in.headers = r->headers;
    while ((line = fuzz_next_line(&at, end)) != NULL && *line) {
        char *colon = strchr(line, ':');
        if (!colon || r->in.nheaders == FUZZ_HEADERS_MAX)
            continue; /* the library drops what it cannot parse */
        *colon = '\0';
        char *value = colon + 1;
        while (*value == ' ')
            value++;
        r->headers[r->in.nheaders++] = (http_param){line, value};
    }
    if (at && at < end) {
        r->in.body = at;
        r->in.body_len = (size_t)(end - at);
    }
    return 1;
}

static void fuzz_request_free(fuzz_request *r)
{
    free(r->text);
    r->text = NULL;
}

/* With FUZZ_PRINT set (replaying seeds by hand), the reply on stderr. */
static void fuzz_print_reply(const http_response *resp)
{
    static int print = -1;
    if (print < 0)
        print = getenv("FUZZ_PRINT") != NULL;
    if (!print)
        return;
    fprintf(stderr, "%d", resp->status);
    for (size_t i = 0; i < resp->nheaders; i++)
        fprintf(stderr, " [%s: %s]", resp->headers[i].name, resp->headers[i].value);
    fprintf(stderr, " %s\n", resp->body ? resp->body : "");
}

/* A target's own rule about a request and its reply: abort() when broken. */
typedef void (*fuzz_check_fn)(const fuzz_request *r, const http_response *resp);

/* Hand the parsed request to `srv` as the http layer would; the reply's body must be
 * its text (the layer sends body_len bytes), and `check` (NULL: none) must hold.
 * Releases the reply and `r`. */
static inline void fuzz_dispatch_checked(http_server *srv, fuzz_request *r,
                                         fuzz_check_fn check)
{
    http_response resp = {0};
    http_server_dispatch(srv, &r->in, &resp);
    if (resp.body && strlen(resp.body) != resp.body_len)
        abort();
    fuzz_print_reply(&resp);
    if (check)
        check(r, &resp);
    http_response_set(&resp, 0, NULL);
    fuzz_request_free(r);
}

static inline void fuzz_dispatch(http_server *srv, fuzz_request *r)
{
    fuzz_dispatch_checked(srv, r, NULL);
}

/* Set-up failed: say what and exit. */
static void fuzz_fail(const char *what, const error_info *err)
{
    fprintf(stderr, "%s: %s\n", what, err->msg);
    exit(1);
}

/* A private directory for the target's files: on tmpfs when there is one (the
 * store syncs every commit), else TMPDIR or /tmp. Exits on failure. */
static void fuzz_temp_dir(char *out, size_t size, const char *name)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(out, size, "%s/rampart-fuzz-%s.XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(out)) {
        perror("mkdtemp");
        exit(1);
    }
}

/* The target's directory (fuzz_temp_dir makes it), and what stops the service that
 * uses it. */
static char fuzz_dir[256];
static void (*fuzz_stop_service)(void);

static void fuzz_cleanup(void)
{
    if (fuzz_stop_service)
        fuzz_stop_service();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fuzz_dir);
}

/* At exit: `stop` the service, then remove fuzz_dir (a flat tree of our own files). */
static void fuzz_cleanup_at_exit(void (*stop)(void))
{
    fuzz_stop_service = stop;
    atexit(fuzz_cleanup);
}

#endif

/*
 * http: the listening socket. Created here rather than by libmicrohttpd so that
 * the port picked for PORT 0 is known before serving, a unix socket gets mode 0600
 * before anyone can connect, and nothing ever listens beyond loopback.
 */
#include "http_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { BACKLOG = 128 };

typedef union any_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
    struct sockaddr_un un;
} any_addr;

/* "0".."65535", digits only, no leading zeros. */
static bool parse_port(const char *text, unsigned short *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 5 || (len > 1 && text[0] == '0'))
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(text[i] - '0');
    }
    if (v > 65535)
        return false;
    *out = (unsigned short)v;
    return true;
}

/* HOST of tcp:HOST:PORT: a loopback IPv4 address, "localhost" or "[v6 loopback]". */
static error_code parse_host(const char *host, any_addr *addr, socklen_t *len,
                             error_info *err)
{
    memset(addr, 0, sizeof *addr);
    size_t hl = strlen(host);
    if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
        char inner[INET6_ADDRSTRLEN + 1];
        if (hl - 2 >= sizeof inner)
            return error_set(err, ERROR_INVALID, "'%.64s' is not an IPv6 address", host);
        memcpy(inner, host + 1, hl - 2);
        inner[hl - 2] = '\0';
        if (inet_pton(AF_INET6, inner, &addr->in6.sin6_addr) != 1)
            return error_set(err, ERROR_INVALID, "'%.64s' is not an IPv6 address", host);
        if (!IN6_IS_ADDR_LOOPBACK(&addr->in6.sin6_addr))
            return error_set(err, ERROR_INVALID, "%s is not a loopback address: use [::1] "
                             "(or 127.0.0.1)", host);
        addr->in6.sin6_family = AF_INET6;
        *len = sizeof addr->in6;
        return ERROR_OK;
    }
    const char *v4 = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, v4, &addr->in4.sin_addr) != 1)
        return error_set(err, ERROR_INVALID, "'%.64s' is not an IPv4 address (IPv6: "
                         "[::1])", host);
    if ((ntohl(addr->in4.sin_addr.s_addr) >> 24) != 127)
        return error_set(err, ERROR_INVALID, "%s is not a loopback address: use 127.0.0.1",
                         host);
    addr->in4.sin_family = AF_INET;
    *len = sizeof addr->in4;
    return ERROR_OK;
}

static error_code parse_tcp(const char *rest, any_addr *addr, socklen_t *len,
                            error_info *err)
{
    const char *colon = strrchr(rest, ':');
    if (!colon || colon == rest)
        return error_set(err, ERROR_INVALID, "expected tcp:HOST:PORT, e.g. "
                         "tcp:127.0.0.1:8080 (PORT 0 picks a free one)");
    char host[128];
    size_t hl = (size_t)(colon - rest);
    if (hl >= sizeof host)
        return error_set(err, ERROR_INVALID, "host name too long");
    memcpy(host, rest, hl);
    host[hl] = '\0';
    unsigned short port;
    if (!parse_port(colon + 1, &port))
        return error_set(err, ERROR_INVALID, "port '%.16s' is not a number from 0 to 65535",
                         colon + 1);
    if (parse_host(host, addr, len, err))
        return err->code;
    if (addr->sa.sa_family == AF_INET6)
        addr->in6.sin6_port = htons(port);
    else
        addr->in4.sin_port = htons(port);
    return ERROR_OK;
}

static error_code sys_error(error_info *err, const char *what, const char *address)
{
    return error_set(err, ERROR_IO, "cannot %s %s: %s", what, address, strerror(errno));
}

/* Name the bound address, with the port the system picked. */
static error_code describe_tcp(http_listener *lis, error_info *err)
{
    any_addr a;
    socklen_t len = sizeof a;
    if (getsockname(lis->fd, &a.sa, &len) != 0)
        return sys_error(err, "inspect", "the listening socket");
    char host[INET6_ADDRSTRLEN];
    if (a.sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &a.in6.sin6_addr, host, sizeof host);
        snprintf(lis->address, sizeof lis->address, "[%s]:%u", host,
                 (unsigned)ntohs(a.in6.sin6_port));
    } else {
        inet_ntop(AF_INET, &a.in4.sin_addr, host, sizeof host);
        snprintf(lis->address, sizeof lis->address, "%s:%u", host,
                 (unsigned)ntohs(a.in4.sin_port));
    }
    return ERROR_OK;
}

static error_code open_tcp(const char *rest, http_listener *lis, error_info *err)
{
    any_addr addr;
    socklen_t len;
    if (parse_tcp(rest, &addr, &len, err))
        return err->code;
    lis->family = addr.sa.sa_family;
    lis->fd = socket(lis->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lis->fd < 0)
        return sys_error(err, "create a socket for", rest);
    int on = 1;
    /* A restarted server must not wait for TIME_WAIT connections of the last one. */
    setsockopt(lis->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (lis->family == AF_INET6)
        setsockopt(lis->fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(lis->fd, &addr.sa, len) != 0)
        return sys_error(err, "listen on", rest);
    if (listen(lis->fd, BACKLOG) != 0)
        return sys_error(err, "listen on", rest);
    return describe_tcp(lis, err);
}

/* A socket file nobody answers on is a leftover of a dead server: safe to replace.
 * Anything else (a live server, a regular file) stays. */
static bool stale_socket(const char *path, const any_addr *addr)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return false;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool stale = connect(fd, &addr->sa, sizeof addr->un) != 0 && errno == ECONNREFUSED;
    close(fd);
    return stale;
}

static error_code bind_unix(http_listener *lis, const any_addr *addr, error_info *err)
{
    if (bind(lis->fd, &addr->sa, sizeof addr->un) == 0)
        return ERROR_OK;
    if (errno != EADDRINUSE)
        return sys_error(err, "listen on", lis->unix_path);
    if (!stale_socket(lis->unix_path, addr))
        return error_set(err, ERROR_IO, "cannot listen on %s: it exists and is %s",
                         lis->unix_path, "not a stale socket (another server, or a file)");
    unlink(lis->unix_path);
    if (bind(lis->fd, &addr->sa, sizeof addr->un) != 0)
        return sys_error(err, "listen on", lis->unix_path);
    return ERROR_OK;
}

static error_code open_unix(const char *path, http_listener *lis, error_info *err)
{
    any_addr addr;
    memset(&addr, 0, sizeof addr);
    if (!path[0])
        return error_set(err, ERROR_INVALID, "expected unix:PATH");
    if (strlen(path) >= sizeof addr.un.sun_path)
        return error_set(err, ERROR_INVALID, "socket path longer than %zu bytes",
                         sizeof addr.un.sun_path - 1);
    addr.un.sun_family = AF_UNIX;
    memcpy(addr.un.sun_path, path, strlen(path) + 1);
    lis->family = AF_UNIX;
    lis->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lis->fd < 0)
        return sys_error(err, "create a socket for", path);
    memcpy(lis->unix_path, path, strlen(path) + 1);
    error_code rc = bind_unix(lis, &addr, err);
    if (rc != ERROR_OK) {
        lis->unix_path[0] = '\0'; /* not ours: never remove it */
        return rc;
    }
    /* Nobody can connect before listen(), so the mode is right before the first
     * peer whatever the umask was at bind time. */
    if (chmod(path, 0600) != 0)
        return sys_error(err, "set the mode of", path);
    if (listen(lis->fd, BACKLOG) != 0)
        return sys_error(err, "listen on", path);
    snprintf(lis->address, sizeof lis->address, "%s", path);
    return ERROR_OK;
}

error_code http_listener_open(const char *spec, http_listener *out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    error_code rc;
    if (spec && strncmp(spec, "tcp:", 4) == 0)
        rc = open_tcp(spec + 4, out, err);
    else if (spec && strncmp(spec, "unix:", 5) == 0)
        rc = open_unix(spec + 5, out, err);
    else
        rc = error_set(err, ERROR_INVALID, "expected tcp:HOST:PORT or unix:PATH, e.g. "
                       "tcp:127.0.0.1:0");
    if (rc != ERROR_OK)
        http_listener_close(out);
    return rc;
}

void http_listener_close(http_listener *lis)
{
    if (lis->fd >= 0)
        close(lis->fd);
    lis->fd = -1;
    if (lis->unix_path[0])
        unlink(lis->unix_path);
    lis->unix_path[0] = '\0';
}

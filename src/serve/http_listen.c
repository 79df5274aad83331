/*
 * http: the listening socket. Created here rather than by libmicrohttpd so that
 * the port picked for PORT 0 is known before serving, a unix socket gets mode 0600
 * before anyone can connect, and nothing ever listens beyond loopback. A socket
 * handed over by the service manager (socket activation, "fd:N") is checked to the
 * same rules before it is served.
 */
#include "http_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    BACKLOG = 1024,        /* bursts of connections: accepted at once, never left to
                              wait (http_guard.c), so a long queue costs nothing */
    LISTEN_FDS_START = 3,  /* sd_listen_fds(3): the first socket passed */
    LISTEN_FDS_MAX = 64    /* more than any unit of ours passes */
};

typedef union any_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
    struct sockaddr_un un;
} any_addr;

/* A whole number in 0..max: digits only, no sign, no leading zeros. */
static bool parse_uint(const char *text, long max, long *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 10 || (len > 1 && text[0] == '0') ||
        strspn(text, "0123456789") != len)
        return false;
    long v = strtol(text, NULL, 10);
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* "0".."65535", digits only, no leading zeros. */
static bool parse_port(const char *text, unsigned short *out)
{
    long v;
    if (!parse_uint(text, 65535, &v))
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
    memset(&a, 0, sizeof a);
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
    socklen_t len = 0;
    memset(&addr, 0, sizeof addr);
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

/* Why the file at `path` must stay, or NULL: a socket file nobody answers on is a
 * leftover of a dead server, safe to replace. A live server (another agent, or
 * the console's) or any other file stays. */
static const char *occupied(const char *path, const any_addr *addr)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return "it exists and is not a socket";
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return "it exists and cannot be probed";
    bool stale = connect(fd, &addr->sa, sizeof addr->un) != 0 && errno == ECONNREFUSED;
    close(fd);
    return stale ? NULL : "another server is answering on it";
}

static error_code bind_unix(http_listener *lis, const any_addr *addr, error_info *err)
{
    if (bind(lis->fd, &addr->sa, sizeof addr->un) == 0)
        return ERROR_OK;
    if (errno != EADDRINUSE)
        return sys_error(err, "listen on", lis->unix_path);
    const char *why = occupied(lis->unix_path, addr);
    if (why)
        return error_set(err, ERROR_IO, "cannot listen on %s: %s", lis->unix_path, why);
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

/* Why an inherited TCP socket may not be served, or NULL: the rule of
 * parse_host (loopback only) applies to sockets bound by someone else too. */
static const char *tcp_refusal(const any_addr *a)
{
    if (a->sa.sa_family == AF_INET)
        return (ntohl(a->in4.sin_addr.s_addr) >> 24) == 127 ? NULL
               : "is bound beyond loopback (ListenStream=127.0.0.1:PORT)";
    return IN6_IS_ADDR_LOOPBACK(&a->in6.sin6_addr) ? NULL
           : "is bound beyond loopback (ListenStream=[::1]:PORT)";
}

static void describe_unix(http_listener *lis, const any_addr *a, socklen_t len, long fd)
{
    size_t path_len = len > offsetof(struct sockaddr_un, sun_path)
                          ? len - offsetof(struct sockaddr_un, sun_path) : 0;
    if (path_len == 0 || a->un.sun_path[0] == '\0') /* unnamed or abstract */
        snprintf(lis->address, sizeof lis->address, "fd:%ld", fd);
    else
        snprintf(lis->address, sizeof lis->address, "%.*s", (int)strnlen(a->un.sun_path,
                 path_len), a->un.sun_path);
}

/* "fd:N": a socket already bound and listening. Nothing is closed or removed
 * unless it was accepted (a wrong N must not close stdout), and its socket file,
 * if any, belongs to whoever made it: never unlinked here. */
static error_code adopt_fd(const char *text, http_listener *lis, error_info *err)
{
    long fd;
    if (!parse_uint(text, INT_MAX, &fd))
        return error_set(err, ERROR_INVALID, "expected fd:N, N a file descriptor number");
    int type = 0, accepting = 0;
    socklen_t tl = sizeof type, al = sizeof accepting;
    if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0)
        return errno == ENOTSOCK
                   ? error_set(err, ERROR_INVALID, "fd %ld is not a socket", fd)
                   : error_set(err, ERROR_INVALID, "fd %ld: %s", fd, strerror(errno));
    if (type != SOCK_STREAM ||
        getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &al) != 0 || !accepting)
        return error_set(err, ERROR_INVALID, "fd %ld is not a listening stream socket "
                         "(ListenStream=, Accept=no)", fd);
    any_addr a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    if (getsockname((int)fd, &a.sa, &len) != 0)
        return error_set(err, ERROR_INVALID, "fd %ld: %s", fd, strerror(errno));
    if (a.sa.sa_family != AF_UNIX && a.sa.sa_family != AF_INET && a.sa.sa_family != AF_INET6)
        return error_set(err, ERROR_INVALID, "fd %ld is neither a unix nor a TCP socket", fd);
    const char *why = a.sa.sa_family == AF_UNIX ? NULL : tcp_refusal(&a);
    if (why)
        return error_set(err, ERROR_INVALID, "fd %ld %s", fd, why);
    if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0)
        return error_set(err, ERROR_IO, "fd %ld: %s", fd, strerror(errno));
    lis->fd = (int)fd;
    lis->family = a.sa.sa_family;
    if (lis->family == AF_UNIX) {
        describe_unix(lis, &a, len, fd);
        return ERROR_OK;
    }
    return describe_tcp(lis, err);
}

error_code http_listen_fds(int *first, int *count, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *first = LISTEN_FDS_START;
    *count = 0;
    const char *pid_text = getenv("LISTEN_PID");
    const char *fds_text = getenv("LISTEN_FDS");
    long pid, n;
    /* Meant for another process (a parent that did not clear them): not ours. */
    if (!pid_text || !fds_text || !parse_uint(pid_text, LONG_MAX / 2, &pid) ||
        pid != (long)getpid())
        return ERROR_OK;
    if (!parse_uint(fds_text, LISTEN_FDS_MAX, &n))
        return error_set(err, ERROR_INVALID, "LISTEN_FDS='%.16s' is not a count of sockets "
                         "(0 to %d)", fds_text, LISTEN_FDS_MAX);
    for (long fd = LISTEN_FDS_START; fd < LISTEN_FDS_START + n; fd++) {
        /* Not handed on to children (the sandbox server, …). */
        if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0)
            return error_set(err, ERROR_INVALID, "LISTEN_FDS says fd %ld was passed, but it "
                             "is not open", fd);
    }
    *count = (int)n;
    return ERROR_OK;
}

error_code http_listener_open(const char *spec, http_listener *out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    memset(out, 0, sizeof *out);
    out->fd = -1;
    error_code rc;
    if (spec && strncmp(spec, "tcp:", 4) == 0)
        rc = open_tcp(spec + 4, out, err);
    else if (spec && strncmp(spec, "unix:", 5) == 0)
        rc = open_unix(spec + 5, out, err);
    else if (spec && strncmp(spec, "fd:", 3) == 0)
        rc = adopt_fd(spec + 3, out, err);
    else
        rc = error_set(err, ERROR_INVALID, "expected tcp:HOST:PORT or unix:PATH (or fd:N, "
                       "a socket passed by the service manager), e.g. tcp:127.0.0.1:0");
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

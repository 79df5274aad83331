/* agent: default paths, the local key of TCP listeners, the socket's directory.
 * See rampart/agent.h. */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/config.h"
#include "rampart/fileperm.h"
#include "rampart/model.h"

enum { KEY_BYTES = 32, KEY_MIN_LEN = 16 };

static bool absolute(const char *p)
{
    return p && p[0] == '/';
}

static error_code fit(size_t size, int n, error_info *err)
{
    if (n < 0 || (size_t)n >= size)
        return error_set(err, ERROR_INVALID, "the path is longer than %zu bytes", size - 1);
    return ERROR_OK;
}

error_code agent_default_socket(char *buf, size_t size, const char *profile,
                                error_info *err)
{
    bool named = profile && *profile && strcmp(profile, "default") != 0;
    /* The name goes into a file name: the config's own rule for a profile's name
     * keeps it in the directory, whoever the caller. */
    if (named && !config_profile_name_valid(profile))
        return error_set(err, ERROR_INVALID, "'%.80s' is not a profile name", profile);
    char file[96] = "agent.sock";
    if (named)
        snprintf(file, sizeof file, "agent-%s.sock", profile);
    const char *run = getenv("XDG_RUNTIME_DIR");
    int n = absolute(run) ? snprintf(buf, size, "%s/rampart/%s", run, file)
                          : snprintf(buf, size, "/tmp/rampart-%ld/%s", (long)geteuid(), file);
    return fit(size, n, err);
}

error_code agent_default_key_path(char *buf, size_t size, error_info *err)
{
    const char *conf = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n;
    if (absolute(conf))
        n = snprintf(buf, size, "%s/rampart/agent.key", conf);
    else if (absolute(home))
        n = snprintf(buf, size, "%s/.config/rampart/agent.key", home);
    else
        return error_set(err, ERROR_CONFIG, "no HOME nor XDG_CONFIG_HOME: give the key file "
                         "with --key-file PATH");
    return fit(size, n, err);
}

/* ---- reading ---- */

static error_code unsafe(error_info *err, const char *path, const char *why)
{
    return error_set(err, ERROR_CONFIG, "key file %s %s", path, why);
}

/* A usable key: printable ASCII without spaces, long enough to be worth it. */
static bool key_text_ok(const char *key, size_t len)
{
    if (len < KEY_MIN_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c <= ' ' || c >= 0x7F)
            return false;
    }
    return true;
}

error_code agent_key_load(const char *path, char **key, size_t *len, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *key = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO must not block the open (fileperm refuses it below). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return error_set(err, errno == ELOOP ? ERROR_CONFIG : ERROR_IO,
                         "cannot open key file %s: %s", path,
                         errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return unsafe(err, path, "cannot be inspected");
    }
    if (fileperm_check_stat(path, &st, FILEPERM_AGENT_KEY, err) != ERROR_OK) {
        close(fd);
        return err->code;
    }
    char *buf = calloc(1, AGENT_KEY_MAX + 1);
    ssize_t n = buf ? read(fd, buf, AGENT_KEY_MAX) : -1;
    close(fd);
    if (!buf)
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (n < 0) {
        free(buf);
        return error_set(err, ERROR_IO, "cannot read key file %s: %s", path, strerror(errno));
    }
    size_t l = strcspn(buf, "\r\n");
    if (!key_text_ok(buf, l)) {
        model_wipe(buf, AGENT_KEY_MAX);
        free(buf);
        return unsafe(err, path, "holds no usable key (its first line must be at least 16 "
                      "printable characters without spaces): remove it to get a new one");
    }
    model_wipe(buf + l, AGENT_KEY_MAX - l); /* anything after the first line */
    *key = buf;
    *len = l;
    return ERROR_OK;
}

/* ---- creating ---- */

static error_code random_hex(char *out, error_info *err)
{
    unsigned char raw[KEY_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            model_wipe(raw, sizeof raw);
            return error_set(err, ERROR_IO, "the system's random source failed");
        }
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[2 * KEY_BYTES] = '\n';
    out[2 * KEY_BYTES + 1] = '\0';
    model_wipe(raw, sizeof raw);
    return ERROR_OK;
}

/* Written whole to a private temporary file, then linked into place: link() never
 * replaces, so two agents starting at once agree on one key, and no reader ever
 * sees half a file. */
static error_code create_key(const char *path, error_info *err)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return error_set(err, ERROR_INVALID, "key file path too long");
    char text[2 * KEY_BYTES + 2];
    if (random_hex(text, err) != ERROR_OK)
        return err->code;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t len = strlen(text);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    int saved = errno;
    model_wipe(text, sizeof text);
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && link(tmp, path) != 0 && errno != EEXIST) {
        ok = false;
        saved = errno;
    }
    if (fd >= 0)
        unlink(tmp);
    if (!ok)
        return error_set(err, ERROR_IO, "cannot create key file %s: %s", path,
                         strerror(saved));
    return ERROR_OK;
}

error_code agent_key_ensure(const char *path, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (!path || !*path)
        return error_set(err, ERROR_INVALID, "the key file path is empty");
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return error_set(err, ERROR_IO, "cannot inspect key file %s: %s", path,
                             strerror(errno));
        if (store_make_parent_dirs(path, err) != ERROR_OK)
            return err->code;
        if (create_key(path, err) != ERROR_OK)
            return err->code;
    }
    char *key;
    size_t len;
    if (agent_key_load(path, &key, &len, err) != ERROR_OK)
        return err->code;
    model_wipe(key, len);
    free(key);
    return ERROR_OK;
}

/* ---- the socket's directory ---- */

error_code agent_socket_dir_trusted(const char *socket_path, error_info *err)
{
    char copy[4200];
    if (snprintf(copy, sizeof copy, "%s", socket_path) >= (int)sizeof copy)
        return error_set(err, ERROR_INVALID, "socket path too long");
    return fileperm_check_path(dirname(copy), FILEPERM_SOCKET_DIR, err);
}

error_code agent_socket_dir_check(const char *socket_path, error_info *err)
{
    if (store_make_parent_dirs(socket_path, err) != ERROR_OK)
        return err->code;
    return agent_socket_dir_trusted(socket_path, err);
}

/* store: the cache's files on disk: its directories, the file itself, and who may
 * read them (fileperm.h), before SQLite opens anything. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/fileperm.h"

/*
 * mkdir with mode 0700 whatever the umask; an existing directory is fine (what it
 * may be is for its user to judge: fileperm). Only a directory made here is
 * chmod'ed: one that appeared meanwhile may be another user's, or a link to a
 * directory of ours that must keep its mode.
 */
static error_code make_private_dir(const char *dir, error_info *err)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            return error_set(err, ERROR_IO, "%s is not a directory", dir);
        return ERROR_OK;
    }
    if (errno != ENOENT)
        return error_set(err, ERROR_IO, "cannot use %s: %s", dir, strerror(errno));
    if (mkdir(dir, 0700) != 0) {
        if (errno == EEXIST)
            return ERROR_OK;
        return error_set(err, ERROR_IO, "cannot create %s: %s", dir, strerror(errno));
    }
    if (chmod(dir, 0700) != 0)
        return error_set(err, ERROR_IO, "cannot set mode of %s: %s", dir, strerror(errno));
    return ERROR_OK;
}

/*
 * Create the database's directory and any missing ancestors (like mkdir -p), each
 * new one 0700 as the XDG base directory spec asks (a fresh account may not have
 * ~/.local/share yet). Existing directories keep their mode.
 */
error_code store_make_parent_dirs(const char *path, error_info *err)
{
    char dir[PATH_MAX];
    if (!model_copy_text(dir, sizeof dir, path))
        return error_set(err, ERROR_INVALID, "database path is too long");
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return ERROR_OK;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        error_code rc = make_private_dir(dir, err);
        *p = '/';
        if (rc != ERROR_OK)
            return rc;
    }
    return make_private_dir(dir, err);
}

/* Create the file ourselves so it is 0600 from the first byte, whatever the umask. */
static error_code ensure_file(const char *path, error_info *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return ERROR_OK;
        return error_set(err, ERROR_IO, "cannot create %s: %s", path, strerror(errno));
    }
    int rc = fchmod(fd, 0600);
    int saved = errno;
    close(fd);
    if (rc != 0)
        return error_set(err, ERROR_IO, "cannot set mode of %s: %s", path, strerror(saved));
    return ERROR_OK;
}

/* The files SQLite keeps beside the cache; each holds pages of it, tokens included. */
static const char *const companions[] = {"-wal", "-shm", "-journal"};

error_code store_check_files(const char *path, error_info *err)
{
    if (fileperm_check_path(path, FILEPERM_CACHE, err) != ERROR_OK)
        return err->code;
    for (size_t i = 0; i < sizeof companions / sizeof companions[0]; i++) {
        char name[PATH_MAX + 16];
        if (snprintf(name, sizeof name, "%s%s", path, companions[i]) >= (int)sizeof name)
            return error_set(err, ERROR_INVALID, "database path is too long");
        error_code rc = fileperm_check_path(name, FILEPERM_CACHE, err);
        if (rc != ERROR_OK && rc != ERROR_NOT_FOUND)
            return rc;
    }
    return ERROR_OK;
}

bool store_is_memory(const char *path)
{
    return strcmp(path, ":memory:") == 0;
}

error_code store_prepare_path(const char *path, bool readonly, error_info *err)
{
    if (store_is_memory(path))
        return ERROR_OK;
    if (readonly) {
        if (access(path, F_OK) != 0)
            return error_set(err, ERROR_IO, "cannot open database %s: %s", path,
                             strerror(errno));
    } else {
        if (store_make_parent_dirs(path, err) || ensure_file(path, err))
            return err->code;
    }
    return store_check_files(path, err);
}

/*
 * fileperm: the one rule for who may own, read and change the files rampart keeps
 * secrets in or trusts, and the message that says how to fix one that breaks it.
 *
 * - One row per role (fileperm_role) says what the path must be (a regular file or
 *   a directory), whether a symbolic link is followed (it is not for what rampart
 *   makes itself: the socket's directory, the agent's key), who may own it (you;
 *   for the config file and a data directory root too) and which mode bits group
 *   and others must not have:
 *     cache (and its -wal, -shm, -journal)  file, yours, no access for others (600)
 *     config file                            file, yours or root's, not writable (go-w)
 *     config file holding api_key (in any    file, yours or root's, no access (600)
 *     profile's section)
 *     agent key file                         file (not a link), yours, no access (600)
 *     data directory (of the cache, the key) directory, yours or root's, not
 *                                            writable by others unless sticky
 *     socket directory                       directory (not a link), yours, not
 *                                            writable by others (700 when rampart
 *                                            makes it; others may be given search
 *                                            and read, e.g. for --allow-uid)
 * - A refusal is ERROR_CONFIG with one sentence: the path, the owner's uid or the
 *   mode found, the command that fixes it and why ("… is readable by others (mode
 *   0644): run 'chmod 600 …'; …: it holds tokens"); never a file's contents. A
 *   missing path is ERROR_NOT_FOUND (the caller decides), other failures ERROR_IO.
 */
#ifndef RAMPART_FILEPERM_H
#define RAMPART_FILEPERM_H

#include <sys/stat.h>

#include "rampart/error.h"

typedef enum fileperm_role {
    FILEPERM_CACHE,      /* the cache and its -wal, -shm, -journal: tokens */
    FILEPERM_CONFIG,     /* a config file without api_key */
    FILEPERM_CONFIG_KEY, /* a config file holding api_key */
    FILEPERM_AGENT_KEY,  /* the key of the agent's TCP listeners */
    FILEPERM_DATA_DIR,   /* the directory of the cache or of the agent's key */
    FILEPERM_SOCKET_DIR, /* the directory of the agent's unix socket */
    FILEPERM_ROLE_COUNT
} fileperm_role;

/* Judge `sb` (from fstat of an open file, or stat/lstat as the role asks) as the
 * file at `path` playing `role`. */
error_code fileperm_check_stat(const char *path, const struct stat *sb, fileperm_role role,
                               error_info *err);

/* Stat `path` (lstat for a role that follows no link) and judge it. */
error_code fileperm_check_path(const char *path, fileperm_role role, error_info *err);

/* What the role is called in messages ("cache", "socket directory"). */
const char *fileperm_role_name(fileperm_role role);

#endif

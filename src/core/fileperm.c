/* fileperm: one table of who may own and use each file rampart trusts; see
 * rampart/fileperm.h. */
#include "rampart/fileperm.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

typedef enum fileperm_type { FILEPERM_FILE, FILEPERM_DIR } fileperm_type;

static const struct {
    const char *noun;     /* "a <noun> that others can read" */
    fileperm_type type;
    bool follow;          /* stat, not lstat: a link to it is the user's choice */
    bool root_ok;         /* root may own it (an admin's config, /tmp above a cache) */
    bool sticky_ok;       /* a sticky directory protects what others did not make */
    mode_t deny;          /* bits group and others must not have */
    const char *chmod;    /* the fix of a mode, before the path */
    const char *why;      /* why rampart cares, after the refusal */
} roles[FILEPERM_ROLE_COUNT] = {
    [FILEPERM_CACHE] = {"cache", FILEPERM_FILE, true, false, false, 077, "chmod 600",
                        "it holds tokens"},
    [FILEPERM_CONFIG] = {"config file", FILEPERM_FILE, true, true, false, 022, "chmod go-w",
                         "whoever can change it can point api_url elsewhere and collect "
                         "the API key"},
    [FILEPERM_CONFIG_KEY] = {"config file holding api_key", FILEPERM_FILE, true, true, false,
                             077, "chmod 600", "it holds the API key"},
    [FILEPERM_AGENT_KEY] = {"agent key file", FILEPERM_FILE, false, false, false, 077,
                            "chmod 600", "it is the key of the agent's TCP listeners"},
    [FILEPERM_DATA_DIR] = {"data directory", FILEPERM_DIR, true, true, true, 022,
                           "chmod go-w", "whoever can write it can replace the files in it"},
    [FILEPERM_SOCKET_DIR] = {"socket directory", FILEPERM_DIR, false, false, false, 022,
                             "chmod 700",
                             "whoever controls it can put a socket of theirs where agents "
                             "look for rampart's and hand them false tokens"},
};

const char *fileperm_role_name(fileperm_role role)
{
    return roles[role].noun;
}

static error_code wrong_type(const char *path, const struct stat *sb, fileperm_role role,
                             error_info *err)
{
    if (S_ISLNK(sb->st_mode))
        return error_set(err, ERROR_CONFIG,
                         "%s is a symbolic link, not a %s of yours: remove it (rm '%s') and "
                         "rampart makes its own; %s",
                         path, roles[role].noun, path, roles[role].why);
    const char *noun = roles[role].noun;
    bool dir = roles[role].type == FILEPERM_DIR;
    return error_set(err, ERROR_CONFIG, "%s is not a %s%s: rampart needs a%s %s there", path,
                     dir ? "directory" : "regular file",
                     dir ? "" : " (a FIFO, a device or a socket is refused, never waited on)",
                     strchr("aeiou", noun[0]) ? "n" : "", noun);
}

static error_code wrong_owner(const char *path, const struct stat *sb, fileperm_role role,
                              error_info *err)
{
    unsigned me = (unsigned)geteuid();
    if (role == FILEPERM_SOCKET_DIR)
        return error_set(err, ERROR_CONFIG,
                         "%s belongs to another user (uid %u; you are uid %u): someone else "
                         "made it; remove it (as root: rm -r '%s') or set XDG_RUNTIME_DIR to "
                         "a directory of yours; rampart refuses a %s another user owns: %s",
                         path, (unsigned)sb->st_uid, me, path, roles[role].noun,
                         roles[role].why);
    return error_set(err, ERROR_CONFIG,
                     "%s belongs to another user (uid %u; you are uid %u): if it is yours, run "
                     "'chown %u %s' as root, else move it away; rampart refuses a %s another "
                     "user owns: %s",
                     path, (unsigned)sb->st_uid, me, me, path, roles[role].noun,
                     roles[role].why);
}

static error_code wrong_mode(const char *path, const struct stat *sb, fileperm_role role,
                             error_info *err)
{
    mode_t bad = sb->st_mode & roles[role].deny;
    const char *found = (bad & 022)   ? "can be written by others"
                        : (bad & 044) ? "is readable by others"
                                      : "can be used by others";
    const char *verb = (bad & 022) ? "change" : (bad & 044) ? "read" : "use";
    return error_set(err, ERROR_CONFIG,
                     "%s %s (mode %04o): run '%s %s'; rampart refuses a %s that others can "
                     "%s: %s",
                     path, found, (unsigned)(sb->st_mode & 07777), roles[role].chmod, path,
                     roles[role].noun, verb, roles[role].why);
}

error_code fileperm_check_stat(const char *path, const struct stat *sb, fileperm_role role,
                               error_info *err)
{
    bool is_type = roles[role].type == FILEPERM_DIR ? S_ISDIR(sb->st_mode)
                                                    : S_ISREG(sb->st_mode);
    if (!is_type)
        return wrong_type(path, sb, role, err);
    if (sb->st_uid != geteuid() && !(roles[role].root_ok && sb->st_uid == 0))
        return wrong_owner(path, sb, role, err);
    bool sticky = roles[role].sticky_ok && (sb->st_mode & S_ISVTX);
    if ((sb->st_mode & roles[role].deny) && !sticky)
        return wrong_mode(path, sb, role, err);
    return ERROR_OK;
}

error_code fileperm_check_path(const char *path, fileperm_role role, error_info *err)
{
    struct stat sb;
    int rc = roles[role].follow ? stat(path, &sb) : lstat(path, &sb);
    if (rc != 0 && errno == ENOENT)
        return error_set(err, ERROR_NOT_FOUND, "%s does not exist", path);
    if (rc != 0)
        return error_set(err, ERROR_IO, "cannot inspect %s: %s", path, strerror(errno));
    return fileperm_check_stat(path, &sb, role, err);
}

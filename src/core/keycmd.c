/* keycmd: the API key from a command's standard output; see rampart/keycmd.h. */
#include "rampart/keycmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rampart/model.h"
#include "rampart/words.h"

extern char **environ;

/* Signals a console or a server may catch, block or ignore: back to their defaults
 * in the command, so Ctrl-C and a closed pipe end it as they would in a shell. */
static const int default_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};

static error_code spawn(const words *w, bool quiet, int out_fd, pid_t *pid, error_info *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (size_t i = 0; i < sizeof default_signals / sizeof default_signals[0]; i++)
        sigaddset(&defaults, default_signals[i]);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawnp(pid, w->argv[0], &fa, &attr, w->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return error_set(err, ERROR_CONFIG, "cannot run it: %s", strerror(rc));
    return ERROR_OK;
}

/* Read the command's whole output: the first line (up to `size` - 1 bytes) into
 * `line`, the rest dropped so the command never blocks on a full pipe. */
static void read_first_line(int fd, char *line, size_t size, size_t *len, bool *too_long)
{
    char chunk[512];
    bool in_first = true;
    *len = 0;
    *too_long = false;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && in_first; i++) {
            if (chunk[i] == '\n')
                in_first = false;
            else if (*len + 1 < size)
                line[(*len)++] = chunk[i];
            else
                *too_long = true;
        }
    }
    model_wipe(chunk, sizeof chunk);
    line[*len] = '\0';
}

static int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return status;
}

static error_code judge_status(int status, error_info *err)
{
    if (status == -1)
        return error_set(err, ERROR_CONFIG, "lost track of it");
    if (WIFSIGNALED(status))
        return error_set(err, ERROR_CONFIG, "it was ended by signal %d", WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return error_set(err, ERROR_CONFIG,
                         "exit status 127: the command was not found or could not run");
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return error_set(err, ERROR_CONFIG, "exit status %d", WEXITSTATUS(status));
    return ERROR_OK;
}

/* Drop the line end and trailing blanks; then a key is printable ASCII, no space. */
static error_code judge_key(char *key, size_t len, bool too_long, size_t size,
                            error_info *err)
{
    while (len && (key[len - 1] == '\r' || key[len - 1] == ' ' || key[len - 1] == '\t'))
        key[--len] = '\0';
    if (too_long)
        return error_set(err, ERROR_CONFIG,
                         "exit status 0, but its first line is longer than %zu bytes: not "
                         "an API key",
                         size - 1);
    if (len == 0)
        return error_set(err, ERROR_CONFIG,
                         "exit status 0, but it printed no key (an empty first line)");
    if (!model_key_chars_ok(key, len))
        return error_set(err, ERROR_CONFIG,
                         "exit status 0, but its first line holds a space, a control "
                         "character or a byte that is not ASCII: not an API key");
    return ERROR_OK;
}

error_code keycmd_run(const char *command_line, bool quiet, char *key, size_t size,
                      error_info *err)
{
    key[0] = '\0';
    words w;
    if (words_split(command_line, &w, err) != ERROR_OK)
        return ERROR_CONFIG;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        words_free(&w);
        return error_set(err, ERROR_CONFIG, "cannot make a pipe: %s", strerror(errno));
    }
    pid_t pid = 0;
    error_code rc = spawn(&w, quiet, fds[1], &pid, err);
    words_free(&w);
    close(fds[1]);
    size_t len = 0;
    bool too_long = false;
    if (rc == ERROR_OK) {
        read_first_line(fds[0], key, size, &len, &too_long);
        rc = judge_status(wait_for(pid), err);
    }
    close(fds[0]);
    if (rc == ERROR_OK)
        rc = judge_key(key, len, too_long, size, err);
    if (rc != ERROR_OK)
        model_wipe(key, size);
    return rc;
}

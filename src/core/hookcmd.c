/* hookcmd: a user's command run on an event; see rampart/hookcmd.h. */
#include "rampart/hookcmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rampart/config.h"
#include "rampart/keycmd.h"
#include "rampart/words.h"

extern char **environ;

/* Ours without the secrets, then `extra`: a NULL-terminated array of pointers
 * into both (the caller frees the array only). */
static char **child_env(const char *const *extra)
{
    size_t n = 0, k = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    for (const char *const *x = extra; x && *x; x++)
        n++;
    char **out = calloc(n + 1, sizeof *out);
    if (!out)
        return NULL;
    for (char **e = environ; e && *e; e++) {
        if (!config_secret_env_entry(*e))
            out[k++] = *e;
    }
    for (const char *const *x = extra; x && *x; x++)
        out[k++] = (char *)*x;
    return out;
}

/* Every descriptor past stderr closed in the child: the API's connections, a
 * listener, whatever our own caller left open (a command that starts a daemon
 * would keep them for good). */
static void close_ours(posix_spawn_file_actions_t *fa)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
#else
    long max = sysconf(_SC_OPEN_MAX);
    int top = max > 0 && max < 65536 ? (int)max : 65536;
    for (int fd = STDERR_FILENO + 1; fd < top; fd++) {
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC))
            posix_spawn_file_actions_addclose(fa, fd);
    }
#endif
}

static error_code spawn(const words *w, const char *const *env, int out_fd, pid_t *pid,
                        error_info *err)
{
    char **envp = child_env(env);
    if (!envp)
        return error_set(err, ERROR_NOMEM, "out of memory");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0) {
        posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, out_fd, STDERR_FILENO);
    } else {
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    }
    close_ours(&fa);
    error_code rc = keycmd_spawn(w, &fa, envp, pid, err);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for it until `until`; past it, the group is killed. */
static error_code wait_for(pid_t pid, double until, double timeout_s, error_info *err)
{
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return error_set(err, ERROR_CONFIG, "lost track of it");
        if (now_s() >= until) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return error_set(err, ERROR_CONFIG, "it did not finish within %.0f s: killed",
                             timeout_s);
        }
        struct timespec nap = {0, 20 * 1000000L};
        nanosleep(&nap, NULL);
    }
    return keycmd_judge_status(status, err);
}

error_code hookcmd_run(const char *command_line, const char *const *env, int out_fd,
                       double timeout_s, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    words w;
    if (words_split(command_line, &w, err) != ERROR_OK)
        return ERROR_CONFIG;
    pid_t pid = 0;
    error_code rc = spawn(&w, env, out_fd, &pid, err);
    words_free(&w);
    if (rc != ERROR_OK)
        return rc;
    return wait_for(pid, now_s() + timeout_s, timeout_s, err);
}

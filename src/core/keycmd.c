/* keycmd: the API key from a command's standard output; see rampart/keycmd.h. */
#include "rampart/keycmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rampart/model.h"
#include "rampart/words.h"

extern char **environ;

/* Signals a console or a server may catch, block or ignore: back to their defaults
 * in the command, so Ctrl-C and a closed pipe end it as they would in a shell. */
static const int default_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};

error_code keycmd_spawn(const words *w, const posix_spawn_file_actions_t *fa,
                        char *const envp[], pid_t *pid, error_info *err)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (size_t i = 0; i < sizeof default_signals / sizeof default_signals[0]; i++)
        sigaddset(&defaults, default_signals[i]);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0); /* its own group: killed whole at the deadline */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
    int rc = posix_spawnp(pid, w->argv[0], fa, &attr, w->argv, envp ? envp : environ);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return error_set(err, ERROR_CONFIG, "cannot run it: %s", strerror(rc));
    return ERROR_OK;
}

static error_code spawn(const words *w, bool quiet, int out_fd, pid_t *pid, error_info *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    error_code rc = keycmd_spawn(w, &fa, NULL, pid, err);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Milliseconds left until `until` (at least 0). */
static int left_ms(double until)
{
    double left = until - now_s();
    return left > 0 ? (int)(left * 1000.0) + 1 : 0;
}

/* A command in a group of its own must still reach the terminal (a password
 * manager asking for its passphrase): when ours is the terminal's foreground
 * group, its group becomes it until it ends (and is woken, had it tried too
 * early). Returns whether the terminal must be given back. */
static bool lend_terminal(pid_t pid)
{
    if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp())
        return false;
    if (tcsetpgrp(STDIN_FILENO, pid) != 0)
        return false;
    kill(-pid, SIGCONT);
    return true;
}

/* Ours again: from a background group, SIGTTOU would stop us for asking. */
static void take_terminal_back(void)
{
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGTTOU, &ignore, &old);
    tcsetpgrp(STDIN_FILENO, getpgrp());
    sigaction(SIGTTOU, &old, NULL);
}

/* What the command printed and how it ended. */
typedef struct reading {
    char *line;
    size_t size, len;
    bool first_done, too_long;
    bool exited, late;
    int status;
} reading;

/* The first line into r->line (up to size - 1 bytes); the rest is read and
 * dropped, so the command never blocks on a full pipe. */
static void take(reading *r, const char *chunk, size_t n)
{
    for (size_t i = 0; i < n && !r->first_done; i++) {
        if (chunk[i] == '\n')
            r->first_done = true;
        else if (r->len + 1 < r->size)
            r->line[r->len++] = chunk[i];
        else
            r->too_long = true;
    }
}

/* Read while the command runs, until it has exited (then what it left in the
 * pipe, without waiting: a child it left behind may hold the pipe open) or
 * `until` passes (r->late). */
static void read_output(int fd, pid_t pid, double until, reading *r)
{
    char chunk[512];
    bool open = true;
    for (;;) {
        if (!r->exited) {
            pid_t w = waitpid(pid, &r->status, WNOHANG);
            if (w == pid || (w < 0 && errno != EINTR)) {
                r->exited = true;
                r->status = w == pid ? r->status : -1;
            }
        }
        int ms = r->exited ? 0 : left_ms(until);
        if (!r->exited && ms == 0) {
            r->late = true;
            break;
        }
        if (!open) {
            if (r->exited)
                break;
            struct timespec nap = {0, 10 * 1000000L}; /* its output closed; it still runs */
            nanosleep(&nap, NULL);
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, ms < 20 ? ms : 20);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            if (r->exited) /* nothing more waiting in the pipe */
                break;
            continue;
        }
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            open = false;
        else
            take(r, chunk, (size_t)n);
    }
    model_wipe(chunk, sizeof chunk);
    r->line[r->len] = '\0';
}

/* Past the deadline: the whole group goes, and the command is reaped. */
static void stop_group(pid_t pid, reading *r)
{
    kill(-pid, SIGKILL);
    while (!r->exited && waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    r->exited = true;
}

error_code keycmd_judge_status(int status, error_info *err)
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

error_code keycmd_run(const char *command_line, bool quiet, double timeout_s, char *key,
                      size_t size, error_info *err)
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
    reading r = {.line = key, .size = size};
    if (rc == ERROR_OK) {
        double until = now_s() + (timeout_s > 0 ? timeout_s : 10);
        bool lent = lend_terminal(pid);
        read_output(fds[0], pid, until, &r);
        if (r.late)
            stop_group(pid, &r);
        if (lent)
            take_terminal_back();
        rc = r.late ? error_set(err, ERROR_CONFIG, "it did not finish within %g s (the "
                                "key_command_timeout setting): stopped", timeout_s)
                    : keycmd_judge_status(r.status, err);
    }
    close(fds[0]);
    if (rc == ERROR_OK)
        rc = judge_key(key, r.len, r.too_long, size, err);
    if (rc != ERROR_OK)
        model_wipe(key, size);
    return rc;
}

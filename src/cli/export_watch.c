/*
 * `rampart export --watch`: a host that follows the policy. The cache's change
 * counter (SQLite's data_version, which moves when another connection commits:
 * a sync, an edit) is looked at every --interval seconds while the process
 * sleeps in sigtimedwait, so it never spins and SIGINT/SIGTERM end it at once.
 * When the counter moved, the policy is rendered again; only a rendering that
 * differs from what FILE holds is written (atomically) and followed by --exec.
 *
 * --exec runs without a shell: its words are split as rampart/words.h says (quotes
 * group, a backslash escapes) and handed to execvp. A shell would re-read whatever the
 * command names (a path with a space, a '$') each time; a user who wants one
 * says so with sh -c '...'.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_export.h"
#include "cli_object.h"
#include "rampart/words.h"

/* --exec's words (rampart/words.h), "{}" replaced by the file. */
static error_code exec_parse(const char *text, const char *file, words *c, error_info *err)
{
    if (words_split(text, c, err) != ERROR_OK)
        return error_prefix(err, "--exec");
    for (size_t i = 0; i < c->argc; i++) {
        if (strcmp(c->argv[i], "{}") == 0)
            c->argv[i] = (char *)file;
    }
    return ERROR_OK;
}

/* Run the command and wait for it; its status is reported on stderr. */
static void exec_run(cli_ctx *ctx, const words *c, const sigset_t *old)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, old, NULL);
        config_scrub_secret_env();
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0)
        fprintf(ctx->err, "%s: --exec: cannot start it: %s\n", ctx->program, strerror(errno));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        fprintf(ctx->err, "%s: --exec: the command was not found or could not run "
                "(exit 127)\n", ctx->program);
    else if (WIFEXITED(status))
        fprintf(ctx->err, "%s: --exec: exit status %d\n", ctx->program, WEXITSTATUS(status));
    else
        fprintf(ctx->err, "%s: --exec: ended by signal %d\n", ctx->program,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* What FILE holds now (empty when it does not exist), so an unchanged rendering
 * is not written again after a restart. */
static void read_current(const char *path, buf_t *into)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(into, chunk, n);
    fclose(f);
}

typedef struct watch {
    cli_ctx *ctx;
    store *st;
    const cli_export_args *a;
    words cmd;
    sigset_t stop, old;
    buf_t now, last;
} watch;

/* One look after the cache moved (or at the start): CLI_GO_ON to go on. */
static int refresh(watch *w, bool first)
{
    size_t rules = 0;
    int rc = cli_export_render(w->ctx, w->st, w->a, &w->now, &rules);
    if (rc == CLI_EXIT_NOT_FOUND)
        return CLI_GO_ON; /* the last file stays; said on stderr */
    if (rc != CLI_GO_ON)
        return rc;
    bool changed = w->now.len != w->last.len ||
                   (w->now.len && memcmp(w->now.data, w->last.data, w->now.len) != 0);
    if (changed) {
        if (!cli_export_write(w->ctx, w->a->output, w->now.data, w->now.len))
            return CLI_EXIT_FAILURE;
        buf_reset(&w->last);
        buf_append(&w->last, w->now.data, w->now.len);
        fprintf(w->ctx->err, "%s: export: wrote %zu rules\n", w->ctx->program, rules);
    }
    if ((changed || first) && w->cmd.argv)
        exec_run(w->ctx, &w->cmd, &w->old);
    return CLI_GO_ON;
}

static int watch_loop(watch *w)
{
    long long seen = 0;
    for (bool first = true;; first = false) {
        long long version = 0;
        error_info e = {0};
        if (store_data_version(w->st, &version, &e) != ERROR_OK)
            return cli_fail(w->ctx, &e);
        if (first || version != seen) {
            seen = version;
            int rc = refresh(w, first);
            if (rc != CLI_GO_ON)
                return rc;
        }
        struct timespec wait = {w->a->interval_s, 0};
        int sig = sigtimedwait(&w->stop, NULL, &wait);
        if (sig == SIGINT || sig == SIGTERM)
            return CLI_EXIT_OK;
    }
}

int cli_export_watch(cli_ctx *ctx, store *st, const cli_export_args *a)
{
    watch w = {.ctx = ctx, .st = st, .a = a};
    error_info e = {0};
    if (a->exec && exec_parse(a->exec, a->output, &w.cmd, &e) != ERROR_OK) {
        return cli_fail(ctx, &e);
    }
    read_current(a->output, &w.last);
    cli_serving_block(&w.stop, &w.old);
    int rc = watch_loop(&w);
    sigprocmask(SIG_SETMASK, &w.old, NULL);
    words_free(&w.cmd);
    buf_free(&w.now);
    buf_free(&w.last);
    return rc;
}

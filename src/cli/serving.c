/* What the long-running commands (serve-api, agent) share: signals and the
 * --ready-file tests poll for. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rampart/cli.h"
#include "rampart/termsafe.h"

void cli_serving_block(sigset_t *stop, sigset_t *old)
{
    sigemptyset(stop);
    sigaddset(stop, SIGINT);
    sigaddset(stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, stop, old);
    signal(SIGPIPE, SIG_IGN);
}

int cli_serving_wait(const sigset_t *stop)
{
    int sig = 0;
    while (sigwait(stop, &sig) != 0)
        ;
    return sig;
}

bool cli_write_ready(cli_ctx *ctx, const char *file, const char *text)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, file) == 0)
        return true;
    termsafe_fprintf(ctx->err, "%s: --ready-file: cannot write %s: %s\n", ctx->program, file,
                     strerror(errno));
    unlink(tmp);
    return false;
}

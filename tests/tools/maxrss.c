/*
 * maxrss: run a command and write its peak resident set size, in KiB, to a file
 * (the kernel's count for the waited-for child: getrusage(RUSAGE_CHILDREN)). For
 * the import's memory check (tests/e2e/cli_rules.sh) and the bench, where
 * /usr/bin/time may not be installed.
 *
 *   maxrss OUTFILE COMMAND [ARG...]    exit status: the command's (127: not run)
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: maxrss OUTFILE COMMAND [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("maxrss: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("maxrss: exec");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) {
        perror("maxrss: wait");
        return 127;
    }
    struct rusage ru;
    FILE *out = fopen(argv[1], "w");
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0 || !out || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 ||
        fclose(out) != 0) {
        perror("maxrss: result");
        return 127;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

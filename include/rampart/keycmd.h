/*
 * keycmd: the API key printed by a command (the `key_command` setting, e.g.
 * `pass show api/staging`), as many command-line clients take a secret from a
 * password manager instead of a file.
 *
 * - The command line is split into words as rampart/words.h says and run without
 *   a shell (posix_spawnp, searching PATH); a pipeline takes `sh -c '...'`. It
 *   inherits the environment, standard input and (unless `quiet`) standard error,
 *   so a password manager can ask for its passphrase; `quiet` sends its standard
 *   error to /dev/null (the console, which owns the terminal). Signals are at
 *   their defaults and unblocked in it.
 * - The key is the first line of its standard output, without the line end and
 *   trailing blanks (pass keeps the secret on the first line; the rest is read and
 *   dropped). It must be 1 to `size - 1` bytes of printable ASCII, no spaces.
 * - Failure (ERROR_CONFIG): the command cannot start, exits with a status other
 *   than 0 or is killed, prints no key, or prints one that breaks the rule above.
 *   The message names the command line and the exit status or signal, never a
 *   byte of the output; the caller adds which profile it belongs to.
 * - A deadline: the command runs in a process group of its own; reading stops at
 *   the end of the key's line (a child it left holding standard output does not
 *   hold us), and once the command itself has exited. At `timeout_s` seconds the
 *   whole group is killed and the run fails naming the deadline.
 * - The key goes only into `key` (wiped on failure); every buffer that held
 *   output is wiped before it is freed. Nothing is logged.
 */
#ifndef RAMPART_KEYCMD_H
#define RAMPART_KEYCMD_H

#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/words.h"

/* Run `command_line` and put the key it prints into `key` (`size` bytes). */
error_code keycmd_run(const char *command_line, bool quiet, double timeout_s, char *key,
                      size_t size, error_info *err);

/* Start the command of `w` as keycmd_run does (PATH searched, signals at their
 * defaults and unblocked, a process group of its own), with the file actions
 * `fa` and the environment `envp` (NULL: ours): hookcmd's commands start so too.
 * ERROR_CONFIG "cannot run it: …" when it cannot start. */
error_code keycmd_spawn(const words *w, const posix_spawn_file_actions_t *fa,
                        char *const envp[], pid_t *pid, error_info *err);

/* How a command ended, as a failure when it failed: ERROR_CONFIG "it was ended by
 * signal N", "exit status N" (127: not found or could not run); -1 (no status):
 * "lost track of it". ERROR_OK for exit status 0. */
error_code keycmd_judge_status(int status, error_info *err);

#endif

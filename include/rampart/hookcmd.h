/*
 * hookcmd: a command the user gave to run when something happened (a rotation's
 * --exec, once the successor's token is held), such as reloading a tunnel agent.
 *
 * Contract:
 * - The command line is split into words as rampart/words.h says and run without
 *   a shell (posix_spawnp, searching PATH), standard input /dev/null, standard
 *   output and error to `out_fd` (-1: /dev/null), signals at their defaults.
 * - It inherits no descriptor of ours past standard error.
 * - Its environment is ours without the variables that may hold a secret
 *   (config_secret_env_entry: the API key's, the reference server's key), plus
 *   `env` ("NAME=value" strings, NULL-terminated; may be NULL). Never a token.
 * - It runs in a process group of its own; at `timeout_s` seconds the whole group
 *   is killed and the run fails naming the deadline.
 * - Failure (ERROR_CONFIG): it cannot start, exits with a status other than 0, is
 *   killed. The message says which (exit status, signal), never its output.
 */
#ifndef RAMPART_HOOKCMD_H
#define RAMPART_HOOKCMD_H

#include "rampart/error.h"

error_code hookcmd_run(const char *command_line, const char *const *env, int out_fd,
                       double timeout_s, error_info *err);

#endif

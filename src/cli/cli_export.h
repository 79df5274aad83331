/*
 * cli_export: `rampart export`, internal to src/cli. export_host.c has the
 * command (options, one rendering to standard output or a file); export_watch.c
 * follows the cache (--watch): rewrites the file when the rendering changes and
 * runs --exec.
 */
#ifndef RAMPART_CLI_EXPORT_H
#define RAMPART_CLI_EXPORT_H

#include <stdbool.h>

#include "rampart/buf.h"
#include "rampart/cli.h"
#include "rampart/hostrules.h"

typedef struct cli_export_args {
    const char *policy;
    hostrules_format format;
    hostrules_opts opts;
    const char *output;   /* NULL: standard output */
    const char *exec;     /* --exec COMMAND, split into words (no shell) */
    int interval_s;       /* --watch: seconds between looks at the cache */
    bool allow_empty;
    bool no_ssh_check;    /* write even what would drop this SSH session's client */
} cli_export_args;

/*
 * Render the policy from the cache into `out` (emptied first). *rules receives
 * the rules in force. Returns CLI_GO_ON (cli_object.h), or the exit status after
 * printing why (a policy with no rules in force is CLI_EXIT_NOT_FOUND unless
 * allow_empty: a file that refuses every address is seldom what was meant).
 */
int cli_export_render(cli_ctx *ctx, store *st, const cli_export_args *a, buf_t *out,
                      size_t *rules);

/* Write `len` bytes to `path` through a temporary file in its directory renamed
 * over it (readers never see half a file), keeping an existing file's mode.
 * Prints why and returns false on failure. */
bool cli_export_write(cli_ctx *ctx, const char *path, const char *data, size_t len);

/* --watch: until SIGINT or SIGTERM. Returns the exit status. */
int cli_export_watch(cli_ctx *ctx, store *st, const cli_export_args *a);

#endif

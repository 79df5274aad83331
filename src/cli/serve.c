/* `rampart serve-api`: placeholder until the reference server lands. */
#include "rampart/cli.h"

int cli_serve_api(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    (void)argc, (void)argv;
    return cli_usage_error(ctx, path, "not available in this build");
}

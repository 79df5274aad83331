/*
 * `rampart rules …` and `rampart creds …`: what the groups' commands share, below
 * the table that dispatches them (objects.c): a command's start and its --sync.
 * See cli_object.h.
 */
#include "cli_object.h"
#include "cli_sync.h"
#include "rampart/sync.h"
#include "rampart/termsafe.h"

store *cli_object_open(cli_ctx *ctx, const cli_object_call *call, const cli_opt *opts,
                       size_t nopts, int argc, char **argv, int *first, int *exit_code)
{
    if (!cli_parse(ctx, call->path, call->cmd, opts, nopts, argc, argv, first, exit_code))
        return NULL;
    store *st = cli_store(ctx);
    *exit_code = st ? CLI_EXIT_OK : ctx->store_exit;
    return st;
}

/* --sync with no remote: the change is in the cache and queued; say so, and how to
 * configure a remote. */
static int no_remote(cli_ctx *ctx)
{
    const char *file = ctx->cfg.config_path[0] ? ctx->cfg.config_path : "the config file";
    termsafe_fprintf(ctx->err,
                     "%s: saved and queued, not sent: no remote is configured. Set "
                     "RAMPART_API_URL and RAMPART_API_KEY (or api_url and api_key in %s, "
                     "mode 600), then run '%s sync' (rampart(1), CONFIGURATION); until then "
                     "the queue waits here\n",
                     ctx->program, file, ctx->program);
    return CLI_EXIT_NO_REMOTE;
}

int cli_object_push(cli_ctx *ctx, const sync_row_ref *only, size_t count)
{
    if (!config_remote_configured(&ctx->cfg))
        return no_remote(ctx);
    sync_report report;
    FILE *out = ctx->out;
    ctx->out = ctx->err;
    cli_sync_args a = {.push = true, .scoped = true, .only = only, .only_count = count};
    int rc = cli_sync_run(ctx, &a, &report);
    ctx->out = out;
    return rc;
}

int cli_object_push_one(cli_ctx *ctx, model_kind kind, const char *id)
{
    sync_row_ref ref = {.kind = kind};
    model_copy_text(ref.id, sizeof ref.id, id);
    return cli_object_push(ctx, &ref, 1);
}

/* A follower's cache (read_only): the refusal of local changes and the kept pages
 * of its conditional GETs. See cli_follower.h. */
#include <stdio.h>
#include <stdlib.h>

#include "cli_follower.h"
#include "rampart/termsafe.h"

bool cli_follower(const cli_ctx *ctx)
{
    return config_flag(&ctx->cfg, CONFIG_READ_ONLY);
}

void cli_follower_setting(const cli_ctx *ctx, char *out, size_t size)
{
    const config *cfg = &ctx->cfg;
    if (cfg->sources[CONFIG_READ_ONLY] == CONFIG_SRC_ENV)
        snprintf(out, size, "%s=true in the environment", config_env_name(CONFIG_READ_ONLY));
    else
        snprintf(out, size, "%s = true in %s", config_key_name(CONFIG_READ_ONLY),
                 cfg->config_path[0] ? cfg->config_path : "the config file");
}

void cli_follower_reason(const cli_ctx *ctx, char *out, size_t size)
{
    char source[CONFIG_PATH_MAX + 64];
    cli_follower_setting(ctx, source, sizeof source);
    snprintf(out, size, "this cache follows a read-only remote (%s): it only pulls, and "
             "a change made here would never be sent. Make it where the data comes from "
             "(the hub's remote), or set read_only = false", source);
}

int cli_follower_refuse(cli_ctx *ctx, const char *path)
{
    char why[CONFIG_PATH_MAX + 512];
    cli_follower_reason(ctx, why, sizeof why);
    fprintf(ctx->err, "%s: ", ctx->program);
    termsafe_fprintf(ctx->err, "%s: refused: %s\n", path, why); /* the path is the user's */
    return CLI_EXIT_USAGE;
}

/* ---- kept pages ---- */

static bool pages_get(void *ctx, const char *url, char *etag, size_t etag_size, char **body,
                      size_t *len)
{
    return store_http_page_get(ctx, url, etag, etag_size, body, len, NULL) == ERROR_OK;
}

static void pages_reused(void *ctx, const char *url, long long now_ms)
{
    store_http_page_reused(ctx, url, now_ms, NULL);
}

static void pages_put(void *ctx, const char *url, const char *collection, const char *etag,
                      const char *body, size_t len, long long now_ms)
{
    store_http_page_put(ctx, url, collection, etag, body, len, now_ms, NULL);
}

static void pages_prune(void *ctx, const char *collection, long long before_ms)
{
    store_http_page_prune(ctx, collection, before_ms, NULL);
}

void cli_follower_pages(store *st, api_page_cache *pages)
{
    *pages = (api_page_cache){.ctx = st, .get = pages_get, .reused = pages_reused,
                              .put = pages_put, .prune = pages_prune};
}

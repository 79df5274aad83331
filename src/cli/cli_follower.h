/*
 * cli_follower: a cache that follows a hub (the setting read_only): it pulls from
 * the hub's mirror, through the cache in front of it, and changes nothing locally.
 * Internal to src/cli.
 *
 * - cli_follower is the one test of "this cache is a follower" for the command
 *   line and the console: read_only = true from the config file or
 *   RAMPART_READ_ONLY.
 * - cli_follower_refuse prints the one refusal of a local change, naming the
 *   setting and where it came from, and returns CLI_EXIT_USAGE (2): nothing was
 *   changed. Every command that would change rows calls it first (rules/creds
 *   create, update, resolve, delete, import, retry, discard; apply; sync's push).
 * - cli_follower_pages gives the API client the store's kept pages
 *   (store_http_page_*), so an unchanged page costs a 304. Failures there are
 *   not the pull's: a page that cannot be kept is simply fetched whole next time.
 */
#ifndef RAMPART_CLI_FOLLOWER_H
#define RAMPART_CLI_FOLLOWER_H

#include <stdbool.h>

#include "rampart/api.h"
#include "rampart/cli.h"

/* True when this cache follows a read-only remote. */
bool cli_follower(const cli_ctx *ctx);

/* "rampart: PATH: refused: …"; CLI_EXIT_USAGE. */
int cli_follower_refuse(cli_ctx *ctx, const char *path);

/* The same sentence without the prefix. */
void cli_follower_reason(const cli_ctx *ctx, char *out, size_t size);

/* The setting as the user would look for it: "read_only = true in PATH" or
 * "RAMPART_READ_ONLY=true in the environment". */
void cli_follower_setting(const cli_ctx *ctx, char *out, size_t size);

/* Fill `pages` (which must live as long as the client) to keep pages in `st`. */
void cli_follower_pages(store *st, api_page_cache *pages);

#endif

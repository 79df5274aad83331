/*
 * `rampart __complete`: the values the shell completions (assets/rampart.bash-
 * completion, assets/_rampart) offer from the cache: ids, policy ids, cidrs. Hidden
 * from the overview; see cli.h. (`__complete options` and `__complete values`, the
 * words each command and option takes, are cli_describe in common.c: main routes
 * them, since they need the command table.) A TAB runs it, so it is quick
 * (store_complete's index ranges, a read-only open, no server) and never says
 * anything but values.
 */
#include <string.h>

#include "rampart/cli.h"

enum { COMPLETE_MAX = 200 };

/* The word naming each kind of value. */
static const char *const whats[STORE_COMPLETE_COUNT] = {
    [STORE_COMPLETE_RULE_ID] = "rule-id", [STORE_COMPLETE_CRED_ID] = "cred-id",
    [STORE_COMPLETE_POLICY_ID] = "policy-id", [STORE_COMPLETE_CIDR] = "cidr"};

/* A value a shell can take as a word: printable ASCII, no space (the store's ids
 * and cidrs always are; anything else is left out rather than mangled). */
static bool shell_word(const char *v)
{
    for (; *v; v++) {
        if (*v <= ' ' || *v > '~')
            return false;
    }
    return true;
}

static error_code put_value(void *out, const char *value, error_info *err)
{
    (void)err;
    if (shell_word(value))
        fprintf(out, "%s\n", value);
    return ERROR_OK;
}

static bool find_what(const char *word, store_complete_what *out)
{
    for (int w = 0; w < STORE_COMPLETE_COUNT; w++) {
        if (whats[w] && strcmp(word, whats[w]) == 0) {
            *out = (store_complete_what)w;
            return true;
        }
    }
    return false;
}

static const cli_command complete_command = {
    "__complete", cli_complete, "[--sandbox] [--policy ID] rule-id|cred-id|policy-id|cidr [PREFIX]",
    "Values from the cache for shell completion (hidden).", NULL,
    .min_operands = 1, .max_operands = 2};

int cli_complete(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool sandbox = false;
    const char *policy = NULL;
    const cli_opt opts[] = {{"sandbox", CLI_OPT_FLAG, &sandbox},
                            {"policy", CLI_OPT_STRING, &policy}};
    FILE *err = ctx->err;
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet)
        return CLI_EXIT_OK;
    ctx->err = quiet; /* not a word of a usage error reaches the terminal */
    int first, rc;
    store_complete_what what;
    char db[CONFIG_PATH_MAX + 16];
    bool go = !ctx->config_error.code &&
              cli_parse(ctx, path, &complete_command, opts, 2, argc, argv, &first, &rc) &&
              find_what(argv[first], &what);
    ctx->err = err;
    fclose(quiet);
    if (!go)
        return CLI_EXIT_OK;
    if (sandbox || ctx->sandbox_wanted ? !cli_sandbox_cache_path(ctx, db, sizeof db)
                : snprintf(db, sizeof db, "%s", config_get(&ctx->cfg, CONFIG_DB)) <= 0)
        return CLI_EXIT_OK;
    store *st = NULL;
    error_info e = {0};
    if (store_open(db, STORE_READONLY, &st, &e) != ERROR_OK) /* no cache: no values */
        return CLI_EXIT_OK;
    store_complete(st, what, first + 1 < argc ? argv[first + 1] : "", policy, COMPLETE_MAX,
                   put_value, ctx->out, &e);
    store_close(st);
    return CLI_EXIT_OK;
}

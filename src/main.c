/* rampart: argv -> the command table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/api.h"
#include "rampart/cli.h"
#include "rampart/codec.h"

static int show_version(cli_ctx *ctx, const char *path, int argc, char **argv);
static int show_help(cli_ctx *ctx, const char *path, int argc, char **argv);

/* The overview's table. A command's synopsis and options are in its own table (its
 * --help); a group's subcommands come from the group's (`subcommands`).
 * CLI_CMD_NO_CONFIG: works even when the configuration is broken, to help fix it
 * (plan and __complete say so themselves: their exit statuses are their own). */
static const cli_command commands[] = {
    {.name = "tui", .run = cli_tui,
     .summary = "the console (what 'rampart' alone opens on a terminal)"},
    {.name = "rules", .run = cli_rules, .summary = "IP policy rules", .max_operands = -1,
     .subcommands = cli_rules_table},
    {.name = "creds", .run = cli_creds, .summary = "tunnel credentials", .max_operands = -1,
     .subcommands = cli_creds_table},
    {.name = "serve-api", .run = cli_serve_api,
     .summary = "run the remote API on this machine (reference server, sandbox, tests)",
     .max_operands = -1},
    {.name = "agent", .run = cli_agent,
     .summary = "serve tokens and policy checks to local agents (unix socket, loopback)",
     .max_operands = -1},
    {.name = "plan", .run = cli_plan,
     .summary = "what the next sync would do (+ - ! ~); sends nothing",
     .flags = CLI_CMD_NO_CONFIG},
    {.name = "sync", .run = cli_sync,
     .summary = "push queued changes, pull the remote's complete listings"},
    {.name = "check", .run = cli_check,
     .summary = "is each address allowed by the policy's cached rules? (exit 0 all allowed)",
     .max_operands = -1},
    {.name = "apply", .run = cli_apply,
     .summary = "make a policy's rules of one action equal to a list of CIDRs (fewest requests)",
     .max_operands = -1},
    {.name = "export", .run = cli_export,
     .summary = "a policy's rules for a host: nftables, nginx, iptables, ip6tables, json, csv",
     .max_operands = -1},
    {.name = "status", .run = cli_status,
     .summary = "what is cached, per sync state; where data lives"},
    {.name = "doctor", .run = cli_doctor,
     .summary = "check the cache, file modes, the socket directory and the remote; how to fix each",
     .flags = CLI_CMD_NO_CONFIG},
    {.name = "profiles", .run = cli_profiles,
     .summary = "the config file's profiles: remote, key source, cache, age of the last sync",
     .flags = CLI_CMD_NO_CONFIG},
    {.name = "help", .run = show_help, .summary = "this overview", .flags = CLI_CMD_NO_CONFIG},
    {.name = "version", .run = show_version, .summary = "print the version",
     .flags = CLI_CMD_NO_CONFIG},
    /* hidden: the shell completions' */
    {.name = "__complete", .run = cli_complete, .max_operands = -1, .flags = CLI_CMD_NO_CONFIG},
};

enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

enum { OVERVIEW_INDENT = 13, OVERVIEW_WIDTH = 79 };

/* A command's line of the overview: its summary, and a group's subcommands from
 * the group's own table, wrapped under the summary. */
static void put_overview_line(cli_ctx *ctx, const cli_command *cmd)
{
    fprintf(ctx->out, "  %-10s %s", cmd->name, cmd->summary);
    cli_command subs[CLI_GROUP_MAX];
    size_t n = cmd->subcommands ? cmd->subcommands(subs, CLI_GROUP_MAX) : 0;
    size_t col = OVERVIEW_INDENT + strlen(cmd->summary);
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? ": " : ", ";
        size_t len = strlen(subs[i].name) + (i + 1 < n); /* the name and its comma */
        if (col + 2 + len > OVERVIEW_WIDTH) {
            fprintf(ctx->out, "%s\n%*s", i == 0 ? ":" : ",", OVERVIEW_INDENT, "");
            col = OVERVIEW_INDENT;
            sep = "";
        }
        fprintf(ctx->out, "%s%s", sep, subs[i].name);
        col += strlen(sep) + strlen(subs[i].name);
    }
    fputc('\n', ctx->out);
}

void cli_print_main_help(cli_ctx *ctx)
{
    fprintf(ctx->out,
            "usage: %s [--profile NAME] [--db PATH] [--sandbox] COMMAND [ARGS]\n\n"
            "rampart keeps IP policy rules and tunnel credentials of a remote management\n"
            "API in a local cache: browse and edit offline, changes are queued for sync.\n\n"
            "Commands:\n",
            ctx->program);
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        if (commands[i].summary)
            put_overview_line(ctx, &commands[i]);
    }
    fprintf(ctx->out,
            "\n--sandbox runs this command against a private reference server on a\n"
            "loopback port, with its own cache: try everything with no account.\n"
            "--profile NAME (or RAMPART_PROFILE) selects the account of the config file's\n"
            "[profile.NAME] section: its remote, key and cache ('%s profiles' lists them;\n"
            "'default' is the settings outside any section). Both, and --db, go\n"
            "before or after the command.\n"
            "RAMPART_POLICY (or 'policy = ipp_ID' in the config file, per profile) is the\n"
            "IP policy rules create, apply, export and check use without --policy.\n"
            "\nEnvironment: RAMPART_PROFILE, RAMPART_DB, RAMPART_POLICY, RAMPART_API_URL,\n"
            "RAMPART_API_KEY, RAMPART_KEY_COMMAND, RAMPART_VERSION_HEADER, RAMPART_RATE,\n"
            "RAMPART_CONFIG (see rampart(1)).\n"
            "Exit status: 0 ok, 1 failure, 2 bad usage or input, 3 not found,\n"
            "4 a sync did not converge (see rampart(1) for each command).\n"
            "Run '%s COMMAND --help' for more.\n",
            ctx->program, ctx->program);
}

static int show_version(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    if (ctx->describe) /* takes nothing */
        return CLI_EXIT_OK;
    if (argc > 1)
        return cli_usage_error(ctx, path, "unexpected argument '%s'", argv[1]);
    fprintf(ctx->out, "rampart %s\n", RAMPART_VERSION);
    return CLI_EXIT_OK;
}

static int show_help(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    if (ctx->describe) /* takes nothing */
        return CLI_EXIT_OK;
    if (argc > 1)
        return cli_usage_error(ctx, path, "unexpected argument '%s' (for one command's "
                               "help: rampart COMMAND --help)", argv[1]);
    cli_print_main_help(ctx);
    return CLI_EXIT_OK;
}

/* No command: the console on a terminal; otherwise the status and the overview. */
static int default_view(cli_ctx *ctx)
{
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
        char *tui_argv[] = {"tui", NULL};
        return cli_tui(ctx, "tui", 1, tui_argv);
    }
    char *argv[] = {"status", NULL};
    int rc = cli_status(ctx, "status", 1, argv);
    fputc('\n', ctx->out);
    cli_print_main_help(ctx);
    return rc;
}

static const char *env_lookup(void *unused, const char *name)
{
    (void)unused;
    return getenv(name);
}

/* Secrets live in this process's memory: no core dumps, no ptrace by others,
 * and the libraries that copy them (jansson, libcurl) zero what they free. A
 * failure here weakens nothing the rest relies on, so it is not fatal. */
static void harden_process(void)
{
    umask(077);
    struct rlimit none = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    codec_wipe_freed_memory();
    error_info ignored = {0};
    (void)api_global_init_wiping(&ignored);
}

enum { GO_ON = -1 }; /* a global option was taken: parse the next word */

static int set_db(cli_ctx *ctx, const char *path)
{
    error_info e = {0};
    if (config_set(&ctx->cfg, CONFIG_DB, path, CONFIG_SRC_FLAG, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return GO_ON;
}

/* The global option at argv[*i]: GO_ON, or the exit status to end with. */
static int global_option(cli_ctx *ctx, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--version") == 0)
        return show_version(ctx, "", 1, argv);
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return show_help(ctx, "", 1, argv);
    if (strcmp(arg, "--sandbox") == 0) {
        ctx->sandbox_wanted = true; /* started by the command's cli_parse */
        return GO_ON;
    }
    if (strncmp(arg, "--profile=", 10) == 0)
        return GO_ON; /* taken before the configuration was loaded (profile_option) */
    if (strcmp(arg, "--profile") == 0) {
        if (*i + 1 >= argc)
            return cli_usage_error(ctx, "", "--profile needs a value: --profile NAME");
        ++*i;
        return GO_ON;
    }
    if (strncmp(arg, "--db=", 5) == 0)
        return set_db(ctx, arg + 5);
    if (strcmp(arg, "--db") == 0) {
        if (*i + 1 >= argc)
            return cli_usage_error(ctx, "", "--db needs a value: --db PATH");
        return set_db(ctx, argv[++*i]);
    }
    if (strncmp(arg, "--api-key", 9) == 0) {
        error_info e = {0};
        config_set(&ctx->cfg, CONFIG_API_KEY, "", CONFIG_SRC_FLAG, &e); /* explains why */
        return cli_fail(ctx, &e);
    }
    return cli_usage_error(ctx, "", "unknown option '%s' (see 'rampart --help')", arg);
}

static const cli_command *find_command(const char *name)
{
    for (size_t c = 0; c < COMMAND_COUNT; c++) {
        if (strcmp(name, commands[c].name) == 0)
            return &commands[c];
    }
    return NULL;
}

/* `__complete options|values …`: words being completed, not a command line. */
static bool completing(const cli_command *cmd, int argc, char **argv)
{
    return cmd->run == cli_complete && argc > 1 &&
           (strcmp(argv[1], "options") == 0 || strcmp(argv[1], "values") == 0);
}

/* The last --profile on the command's line, read as its parser reads it (its
 * options' values, "--", an option of its own named profile): the command runs
 * with ctx->scan, printing and doing nothing. */
static const char *command_profile(cli_ctx *ctx, const cli_command *cmd, int argc,
                                   char **argv)
{
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet)
        return NULL;
    FILE *out = ctx->out, *err = ctx->err;
    ctx->out = ctx->err = quiet;
    ctx->describe = ctx->scan = true;
    cmd->run(ctx, cmd->name, argc, argv);
    ctx->describe = ctx->scan = false;
    ctx->out = out;
    ctx->err = err;
    fclose(quiet);
    return ctx->scan_profile;
}

/*
 * --profile anywhere on the line (the last one wins), NULL when there is none.
 * Read before the configuration is loaded, since the profile decides which of the
 * file's sections applies: the words before the command as global_option reads
 * them, then the command's own words as its parser will (cli_parse skips it).
 */
static const char *profile_option(cli_ctx *ctx, int argc, char **argv)
{
    const char *name = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strncmp(argv[i], "--profile=", 10) == 0)
            name = argv[i] + 10;
        else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            name = argv[++i];
        else if (strcmp(argv[i], "--db") == 0)
            i++; /* its value, whatever it looks like */
    }
    const cli_command *cmd = i < argc ? find_command(argv[i]) : NULL;
    if (!cmd || completing(cmd, argc - i, argv + i))
        return name;
    const char *later = command_profile(ctx, cmd, argc - i, argv + i);
    return later ? later : name;
}

static int run(cli_ctx *ctx, int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        int rc = global_option(ctx, argc, argv, &i);
        if (rc != GO_ON)
            return rc;
    }
    if (i == argc)
        return ctx->config_error.code ? cli_fail(ctx, &ctx->config_error) : default_view(ctx);
    /* The completions' option lists come from the tables the commands parse with,
     * even with a broken configuration. */
    if (strcmp(argv[i], "__complete") == 0 && i + 1 < argc && strcmp(argv[i + 1], "options") == 0)
        return cli_describe(ctx, commands, COMMAND_COUNT, NULL, argc - i - 2, argv + i + 2);
    if (strcmp(argv[i], "__complete") == 0 && i + 2 < argc && strcmp(argv[i + 1], "values") == 0)
        return cli_describe(ctx, commands, COMMAND_COUNT, argv[argc - 1], argc - i - 3,
                            argv + i + 2);
    const cli_command *cmd = find_command(argv[i]);
    if (cmd && ctx->config_error.code && !(cmd->flags & CLI_CMD_NO_CONFIG))
        return cli_fail(ctx, &ctx->config_error);
    if (cmd)
        return cmd->run(ctx, cmd->name, argc - i, argv + i);
    return cli_usage_error(ctx, "", "unknown command '%s' (see 'rampart --help')", argv[i]);
}

int main(int argc, char **argv)
{
    harden_process();
    cli_ctx ctx = {.out = stdout, .err = stderr, .program = "rampart"};
    config_load_profile(&ctx.cfg, profile_option(&ctx, argc, argv), env_lookup, NULL,
                        &ctx.config_error);
    int rc = run(&ctx, argc, argv);
    store_close(ctx.st);
    cli_sandbox_stop(&ctx);
    config_clear(&ctx.cfg);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == CLI_EXIT_OK) {
        fprintf(stderr, "rampart: cannot write the output: %s\n", strerror(errno));
        rc = CLI_EXIT_FAILURE;
    }
    return rc;
}

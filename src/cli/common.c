/* Shared machinery of the command groups: dispatch, option parsing, output. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rampart/cli.h"
#include "rampart/buf.h"
#include "rampart/store.h"
#include "rampart/termsafe.h"
#include "rampart/validate.h"

enum { MAX_OPTS = 40, OPT_HELP = 1000, OPT_DB, OPT_PROFILE, OPT_SANDBOX };

/* The global options (rampart(1), GLOBAL OPTIONS) every command takes anywhere on
 * its line, unless it defines an option of the same name itself. */
static const struct option global_options[] = {
    {"db", required_argument, NULL, OPT_DB},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"sandbox", no_argument, NULL, OPT_SANDBOX},
};

enum { GLOBAL_COUNT = sizeof global_options / sizeof global_options[0] };

/* Their lines of a command's --help. */
static const struct {
    const char *name, *text;
} global_help[GLOBAL_COUNT] = {
    {"profile", "  --profile NAME  the config file's profile (default: $RAMPART_PROFILE)\n"},
    {"db", "  --db PATH       database file (default: $RAMPART_DB, then the config\n"
           "                  file, then $XDG_DATA_HOME/rampart/rampart.db)\n"},
    {"sandbox", "  --sandbox       against a private reference server on loopback\n"},
};

static bool defines(const cli_opt *opts, size_t nopts, const char *name);

void cli_print_help(cli_ctx *ctx, const char *path, const cli_command *cmd,
                    const cli_opt *opts, size_t nopts)
{
    fprintf(ctx->out, "usage: %s %s%s%s\n\n%s\n", ctx->program, path,
            cmd->args && *cmd->args ? " " : "", cmd->args ? cmd->args : "", cmd->summary);
    if (cmd->help)
        fprintf(ctx->out, "\n%s", cmd->help);
    fputs("\nGlobal options (here or before the command):\n", ctx->out);
    for (size_t g = 0; g < GLOBAL_COUNT; g++) /* the command's own takes the name */
        if (!defines(opts, nopts, global_help[g].name))
            fputs(global_help[g].text, ctx->out);
    fputs("  --help          this text\n", ctx->out);
}

void cli_print_overview(cli_ctx *ctx, const char *path, const cli_command *table,
                        size_t count)
{
    fprintf(ctx->out, "usage: %s %s COMMAND [OPTIONS]\n\nCommands:\n", ctx->program, path);
    for (size_t i = 0; i < count; i++)
        fprintf(ctx->out, "  %-8s %s\n", table[i].name, table[i].summary);
    fprintf(ctx->out, "\nRun '%s %s COMMAND --help' for the options of one.\n",
            ctx->program, path);
}

/* Edit distance of two short words: a "did you mean" for mistyped commands. */
static size_t edit_distance(const char *a, const char *b)
{
    enum { WORD_MAX = 32 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= WORD_MAX || lb >= WORD_MAX)
        return WORD_MAX;
    size_t row[WORD_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const cli_command *closest(const cli_command *table, size_t count, const char *word)
{
    const cli_command *best = NULL;
    size_t best_dist = 3; /* more than two edits away is no longer a typo */
    for (size_t i = 0; i < count; i++) {
        size_t d = edit_distance(table[i].name, word);
        if (d < best_dist) {
            best_dist = d;
            best = &table[i];
        }
    }
    return best;
}

/* ---- `__complete options` (cli_describe) ---------------------------------------- */

/* The visible names of a command table, one a line. */
static void describe_commands(cli_ctx *ctx, const cli_command *table, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (table[i].summary)
            fprintf(ctx->out, "%s\n", table[i].name);
    }
}

/* The values of the option ctx->describe_option names ("--NAME", or "-o" for the
 * output format), when it has a fixed set. */
static void describe_choices(cli_ctx *ctx, const cli_opt *opts, size_t nopts)
{
    const char *want = ctx->describe_option;
    for (size_t i = 0; i < nopts; i++) {
        bool named = strncmp(want, "--", 2) == 0 && strcmp(want + 2, opts[i].name) == 0;
        bool output = opts[i].kind == CLI_OPT_OUTPUT;
        if (!named && !(output && strcmp(want, "-o") == 0))
            continue;
        if (opts[i].kind == CLI_OPT_CHOICE || output) {
            const cli_choice *choice = opts[i].target;
            choice->print(ctx->out, choice->arg);
        }
        return;
    }
}

void cli_action_choices(FILE *out, const void *unused)
{
    (void)unused;
    for (int a = MODEL_ACTION_ALLOW; a <= MODEL_ACTION_DENY; a++)
        fprintf(out, "%s\n", model_action_name((model_action)a));
}

/* getopt's own tables, so what a TAB offers is what the command takes. */
static void describe_options(cli_ctx *ctx, const cli_opt *opts, size_t nopts,
                             const struct option *longopts, int n, const char *shorts)
{
    if (ctx->describe_option) {
        describe_choices(ctx, opts, nopts);
        return;
    }
    if (strchr(shorts, 'o'))
        fputs("-o=\n", ctx->out);
    for (int i = 0; i < n; i++) {
        size_t at = (size_t)longopts[i].val; /* its index in opts, or OPT_HELP/OPT_DB */
        if (at < nopts && opts[at].kind == CLI_OPT_REFUSED)
            continue;
        fprintf(ctx->out, "--%s%s\n", longopts[i].name,
                longopts[i].has_arg == no_argument ? "" : "=");
    }
}

/* The words the global option at argv[i] takes (2: with its value), 0 when it is
 * none. */
static int global_words(int argc, char **argv, int i)
{
    const char *a = argv[i];
    for (size_t g = 0; g < GLOBAL_COUNT && strncmp(a, "--", 2) == 0; g++) {
        size_t len = strlen(global_options[g].name);
        bool takes = global_options[g].has_arg == required_argument;
        if (strncmp(a + 2, global_options[g].name, len) != 0)
            continue;
        if (a[2 + len] == '\0')
            return takes && i + 1 < argc ? 2 : 1;
        if (a[2 + len] == '=' && takes)
            return 1;
    }
    return 0;
}

/* Global options between a group and its subcommand ("rules --profile x list"):
 * the subcommand's word goes first, where the group looks for it, and the
 * options after it, for its parser. Returns false when no word follows them. */
static bool subcommand_first(int argc, char **argv)
{
    int i = 1, n;
    while (i < argc && (n = global_words(argc, argv, i)) > 0)
        i += n;
    if (i >= argc)
        return i == 1;
    char *word = argv[i];
    memmove(argv + 2, argv + 1, (size_t)(i - 1) * sizeof *argv);
    argv[1] = word;
    return true;
}

const cli_command *cli_find_command(cli_ctx *ctx, const char *path, const cli_command *table,
                                    size_t count, int argc, char **argv, int *exit_code)
{
    if (!subcommand_first(argc, argv))
        argc = 1; /* only global options: no command named */
    if (argc >= 2 && strncmp(argv[1], "--api-key", 9) == 0) {
        error_info e = {0};
        config_set(&ctx->cfg, CONFIG_API_KEY, "", CONFIG_SRC_FLAG, &e); /* says why */
        *exit_code = cli_usage_error(ctx, path, "%s", e.msg);
        return NULL;
    }
    if (ctx->describe) {
        if (argc < 2 && !ctx->describe_option)
            describe_commands(ctx, table, count);
        *exit_code = CLI_EXIT_OK;
        for (size_t i = 0; argc >= 2 && i < count; i++) {
            if (strcmp(argv[1], table[i].name) == 0)
                return &table[i];
        }
        return NULL;
    }
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        cli_print_overview(ctx, path, table, count);
        *exit_code = argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        if (strcmp(argv[1], table[i].name) == 0)
            return &table[i];
    }
    const cli_command *near = closest(table, count, argv[1]);
    if (near)
        *exit_code = cli_usage_error(ctx, path, "unknown command '%s': did you mean '%s'?",
                                     argv[1], near->name);
    else
        *exit_code = cli_usage_error(ctx, path, "unknown command '%s' (run '%s %s --help')",
                                     argv[1], ctx->program, path);
    return NULL;
}

int cli_usage_error(cli_ctx *ctx, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (path && *path)
        fprintf(ctx->err, "%s: %s: ", ctx->program, path);
    else
        fprintf(ctx->err, "%s: ", ctx->program);
    /* The message echoes the user's words (an unknown option, a bad value). */
    termsafe_vfprintf(ctx->err, fmt, ap);
    fputc('\n', ctx->err);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_usage_missing(cli_ctx *ctx, const char *path, const char *missing)
{
    return cli_usage_error(ctx, path, "%s (and --policy, unless the policy setting names one)",
                           missing);
}

/* Whether `opts` defines an option called `name` (its own takes the place of a
 * global option of that name). */
static bool defines(const cli_opt *opts, size_t nopts, const char *name)
{
    for (size_t i = 0; i < nopts; i++) {
        if (strcmp(opts[i].name, name) == 0)
            return true;
    }
    return false;
}

/* The long options for getopt_long, and in `shorts` its optstring: ':' (report a
 * missing value as ':') and "o:" when an option is the output format. The global
 * options follow the command's own, but for those it defines itself. */
static int fill_options(const cli_opt *opts, size_t nopts, struct option *out,
                        char shorts[4])
{
    size_t n = 0;
    snprintf(shorts, 4, ":");
    for (; n < nopts && n < MAX_OPTS - GLOBAL_COUNT - 2; n++) {
        out[n] = (struct option){opts[n].name,
                                 opts[n].kind == CLI_OPT_FLAG ? no_argument : required_argument,
                                 NULL, (int)n};
        if (opts[n].kind == CLI_OPT_OUTPUT)
            snprintf(shorts, 4, ":o:");
    }
    out[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    for (size_t g = 0; g < GLOBAL_COUNT; g++) {
        if (!defines(opts, nopts, global_options[g].name))
            out[n++] = global_options[g];
    }
    out[n] = (struct option){0, 0, 0, 0};
    return (int)n;
}

static bool store_option(cli_ctx *ctx, const char *path, const cli_opt *opt,
                                     const char *arg)
{
    if (opt->kind == CLI_OPT_FLAG) {
        *(bool *)opt->target = true;
    } else if (opt->kind == CLI_OPT_STRING || opt->kind == CLI_OPT_REFUSED) {
        *(const char **)opt->target = arg;
    } else if (opt->kind == CLI_OPT_CHOICE || opt->kind == CLI_OPT_OUTPUT) {
        *((const cli_choice *)opt->target)->value = arg;
    } else {
        cli_list *list = opt->target;
        if (list->count == sizeof list->items / sizeof list->items[0]) {
            cli_usage_error(ctx, path, "--%s given more than %zu times", opt->name,
                            sizeof list->items / sizeof list->items[0]);
            return false;
        }
        list->items[list->count++] = arg;
    }
    return true;
}

static bool apply_db(cli_ctx *ctx, const char *path, const char *arg)
{
    error_info e = {0};
    if (config_set(&ctx->cfg, CONFIG_DB, arg, CONFIG_SRC_FLAG, &e) == ERROR_OK)
        return true;
    cli_usage_error(ctx, path, "--db: %s", e.msg);
    return false;
}

/* The index of the output format among `opts` (fill_options offered -o for it). */
static int output_option(const cli_opt *opts, size_t nopts)
{
    size_t i = 0;
    while (i + 1 < nopts && opts[i].kind != CLI_OPT_OUTPUT)
        i++;
    return (int)i;
}

static bool check_operands(cli_ctx *ctx, const char *path, const cli_command *cmd,
                           int argc, char **argv, int first)
{
    int n = argc - first;
    if (n < cmd->min_operands) {
        cli_usage_error(ctx, path, "missing argument (usage: %s %s %s)", ctx->program, path,
                        cmd->args);
        return false;
    }
    if (cmd->max_operands >= 0 && n > cmd->max_operands) {
        cli_usage_error(ctx, path, "unexpected argument '%s' (usage: %s %s %s)",
                        argv[first + cmd->max_operands], ctx->program, path, cmd->args);
        return false;
    }
    return true;
}

/* main's first look at the line (ctx->scan): only --profile is noted, nothing
 * is printed or set; the command runs nothing. */
static void scan_globals(cli_ctx *ctx, int argc, char **argv, const struct option *longopts,
                         const char *shorts)
{
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        if (c == OPT_PROFILE)
            ctx->scan_profile = optarg;
    }
}

/* A global option taken by cli_parse: false after printing a usage error. */
static bool take_global(cli_ctx *ctx, const char *path, int c, const char *arg)
{
    if (c == OPT_DB)
        return apply_db(ctx, path, arg);
    if (c == OPT_SANDBOX)
        ctx->sandbox_wanted = true;
    /* OPT_PROFILE: main read it before loading the configuration (ctx->scan). */
    return true;
}

/* --sandbox, once the whole line is read (a --db anywhere on it chooses the cache);
 * not for a command with a --sandbox of its own. */
static bool start_sandbox(cli_ctx *ctx, const cli_opt *opts, size_t nopts, int *exit_code)
{
    if (!ctx->sandbox_wanted || ctx->sandbox_pid || defines(opts, nopts, "sandbox"))
        return true;
    error_info e = {0};
    if (cli_sandbox_start(ctx, &e) == ERROR_OK)
        return true;
    *exit_code = cli_fail(ctx, &e);
    return false;
}

bool cli_parse(cli_ctx *ctx, const char *path, const cli_command *cmd, const cli_opt *opts,
               size_t nopts, int argc, char **argv, int *first_operand, int *exit_code)
{
    struct option longopts[MAX_OPTS];
    char shorts[4];
    int nlong = fill_options(opts, nopts, longopts, shorts);
    if (ctx->describe) {
        if (ctx->scan)
            scan_globals(ctx, argc, argv, longopts, shorts);
        else
            describe_options(ctx, opts, nopts, longopts, nlong, shorts);
        *exit_code = CLI_EXIT_OK;
        return false;
    }
    optind = 0; /* GNU getopt: full re-initialisation for this argv */
    opterr = 0;
    *exit_code = CLI_EXIT_USAGE;
    for (;;) {
        int c = getopt_long(argc, argv, shorts, longopts, NULL);
        if (c == -1)
            break;
        /* GNU getopt leaves a bad long option just before optind (optopt then holds
         * its value, not a letter); inside a cluster of short options ("-xy") only
         * optopt knows the letter. */
        char letter[3] = {'-', (char)optopt, '\0'};
        const char *last = optind > 0 && optind <= argc ? argv[optind - 1] : "";
        const char *word = strncmp(last, "--", 2) != 0 && optopt > 0 ? letter : last;
        if (c == '?' && strncmp(word, "--api-key", 9) == 0) {
            /* config_set explains why the key is refused from argv. */
            error_info e = {0};
            config_set(&ctx->cfg, CONFIG_API_KEY, "", CONFIG_SRC_FLAG, &e);
            cli_usage_error(ctx, path, "%s", e.msg);
            return false;
        }
        if (c == '?') {
            cli_usage_error(ctx, path, "unknown option '%s' (see '%s %s --help')", word,
                            ctx->program, path);
            return false;
        }
        if (c == ':') {
            cli_usage_error(ctx, path, "option '%s' needs a value", word);
            return false;
        }
        if (c == OPT_HELP) {
            cli_print_help(ctx, path, cmd, opts, nopts);
            *exit_code = CLI_EXIT_OK;
            return false;
        }
        if (c == 'o')
            c = output_option(opts, nopts);
        bool ok = c >= OPT_DB ? take_global(ctx, path, c, optarg)
                              : store_option(ctx, path, &opts[c], optarg);
        if (!ok)
            return false;
    }
    *first_operand = optind;
    return check_operands(ctx, path, cmd, argc, argv, optind) &&
           start_sandbox(ctx, opts, nopts, exit_code);
}

/* Where the policy setting in force was set: "RAMPART_POLICY", "the policy
 * setting of profile staging", ... */
static void policy_origin(const config *cfg, char *out, size_t size)
{
    const char *profile = config_profile(cfg);
    if (cfg->sources[CONFIG_POLICY] == CONFIG_SRC_ENV)
        snprintf(out, size, "%s", config_env_name(CONFIG_POLICY));
    else if (cfg->sources[CONFIG_POLICY] == CONFIG_SRC_FILE && cfg->profile[0])
        snprintf(out, size, "the config file's top-level policy setting, for profile %s",
                 profile);
    else
        snprintf(out, size, "the policy setting of profile %s", profile);
}

const char *cli_policy(cli_ctx *ctx, const char *path, const char *flag, bool say)
{
    error_info e = {0};
    if (flag && validate_id(flag, "ipp", "policy id", &e) != ERROR_OK) {
        cli_fail(ctx, &e); /* the words the console's form uses */
        return NULL;
    }
    if (flag)
        return flag;
    const char *setting = config_get(&ctx->cfg, CONFIG_POLICY);
    if (!*setting) {
        cli_usage_error(ctx, path, "which IP policy? pass --policy ipp_ID, or name a default "
                        "one: 'policy = ipp_ID' in the config file (per profile) or %s",
                        config_env_name(CONFIG_POLICY));
        return NULL;
    }
    if (say) {
        char origin[CONFIG_PROFILE_NAME_MAX + 96];
        policy_origin(&ctx->cfg, origin, sizeof origin);
        fprintf(ctx->err, "%s: policy %s (from %s)\n", ctx->program, setting, origin);
    }
    return setting;
}

store *cli_store(cli_ctx *ctx)
{
    if (ctx->st)
        return ctx->st;
    error_info e = {0};
    if (!config_get(&ctx->cfg, CONFIG_DB)[0]) {
        error_set(&e, ERROR_CONFIG,
                  "no database path: HOME is not set, so set RAMPART_DB or pass --db PATH");
        ctx->store_exit = cli_fail(ctx, &e);
        return NULL;
    }
    if (store_open(config_get(&ctx->cfg, CONFIG_DB), 0, &ctx->st, &e) != ERROR_OK) {
        ctx->store_exit = cli_fail(ctx, &e);
        ctx->st = NULL;
    }
    return ctx->st;
}

store *cli_store_existing(cli_ctx *ctx)
{
    if (ctx->st)
        return ctx->st;
    const char *path = config_get(&ctx->cfg, CONFIG_DB);
    struct stat sb;
    if (path[0] && strcmp(path, ":memory:") != 0 && stat(path, &sb) != 0 && errno == ENOENT) {
        error_info e = {0};
        error_set(&e, ERROR_IO,
                  "no cache at %s: nothing to read (a mistyped --db, RAMPART_DB or "
                  "profile?). A cache is made by a command that writes: '%s sync' pulls "
                  "the remote into it, '%s rules create' queues a change",
                  path, ctx->program, ctx->program);
        ctx->store_exit = cli_fail(ctx, &e);
        return NULL;
    }
    return cli_store(ctx);
}

int cli_fail(cli_ctx *ctx, const error_info *e)
{
    /* A message may quote the user, a file or the remote. A row not found is said
     * with the cache it was looked for in (a wrong --db or profile shows). */
    bool where = e->code == ERROR_NOT_FOUND && ctx->st;
    termsafe_fprintf(ctx->err, "%s: %s%s%s%s\n", ctx->program,
                     e->msg[0] ? e->msg : "unknown error", where ? " (in the cache " : "",
                     where ? config_get(&ctx->cfg, CONFIG_DB) : "", where ? ")" : "");
    switch (e->code) {
    case ERROR_OK:
        return CLI_EXIT_OK;
    case ERROR_NOT_FOUND:
    case ERROR_UNAVAILABLE:
        return CLI_EXIT_NOT_FOUND;
    case ERROR_INVALID:
    case ERROR_CONFLICT:
    case ERROR_STATE:
    case ERROR_FORMAT:
    case ERROR_CONFIG:
        return CLI_EXIT_USAGE;
    case ERROR_IO:
    case ERROR_NOMEM:
    default:
        return CLI_EXIT_FAILURE;
    }
}

/* Printable ASCII only: one byte is one column and nothing needs escaping. */
static bool plain_ascii(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c >= 0x7F)
            return false;
    }
    return true;
}

void cli_put_cell(FILE *out, const char *text, int width, int max)
{
    size_t left = strlen(text);
    /* Most cells (ids, states, CIDRs) go out in one call: a long listing is
     * mostly these. */
    if ((max <= 0 || left <= (size_t)max) && plain_ascii(text, left)) {
        fprintf(out, "%-*s", width, text);
        return;
    }
    /* Cut before the first character (an escape is one) that would leave no
     * room for the "…". */
    bool cut = max > 0 && termsafe_width(text, left) > (size_t)max;
    int room = cut ? max - 1 : INT_MAX, cols = 0;
    while (left) {
        termsafe_glyph g;
        size_t n = termsafe_next(text, left, &g);
        if (cols + g.width > room)
            break;
        fwrite(g.text, 1, g.len, out);
        cols += g.width;
        text += n;
        left -= n;
    }
    if (cut) {
        fputs("\xE2\x80\xA6", out); /* "…": the cell goes on */
        cols++;
    }
    for (; cols < width; cols++)
        fputc(' ', out);
}

int cli_put_json(cli_ctx *ctx, char *json)
{
    if (!json) {
        fprintf(ctx->err, "%s: out of memory\n", ctx->program);
        return CLI_EXIT_FAILURE;
    }
    fputs(json, ctx->out);
    fputc('\n', ctx->out);
    free(json);
    return CLI_EXIT_OK;
}

bool cli_read_file(cli_ctx *ctx, const char *path, char **data, size_t *len)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        termsafe_fprintf(ctx->err, "%s: cannot open %s: %s\n", ctx->program, path,
                         strerror(errno));
        return false;
    }
    buf_t b = {0};
    while (buf_reserve(&b, 1 << 16)) {
        size_t room = b.cap - b.len - 1;
        size_t got = fread(b.data + b.len, 1, room, f);
        buf_commit(&b, got);
        if (got < room) /* end of file, or an error ferror reports */
            break;
    }
    int read_errno = ferror(f) ? errno : 0;
    if (!is_stdin)
        fclose(f);
    if (b.failed || read_errno) {
        termsafe_fprintf(ctx->err, "%s: cannot read %s: %s\n", ctx->program, path,
                         read_errno ? strerror(read_errno) : "out of memory");
        buf_free(&b);
        return false;
    }
    *len = b.len;
    *data = buf_take(&b);
    return *data != NULL;
}

void cli_json_array_sep(cli_ctx *ctx, size_t index)
{
    fputs(index == 0 ? "[\n" : ",\n", ctx->out);
}

void cli_json_array_end(cli_ctx *ctx, size_t count)
{
    fputs(count == 0 ? "[]\n" : "\n]\n", ctx->out);
}

void cli_put_field(cli_ctx *ctx, const char *label, const char *value)
{
    if (!value || !*value)
        return;
    fprintf(ctx->out, "%-12s ", label);
    cli_put_cell(ctx->out, value, 0, 0);
    fputc('\n', ctx->out);
}

void cli_put_json_string(FILE *out, const char *s)
{
    buf_t b = {0};
    buf_json_string(&b, s);
    if (!b.failed)
        fwrite(b.data, 1, b.len, out);
    else
        fputs("null", out); /* out of memory: still JSON */
    buf_free(&b);
}

int cli_describe(cli_ctx *ctx, const cli_command *table, size_t count, const char *option,
                 int argc, char **argv)
{
    if (argc < 1) {
        if (!option)
            describe_commands(ctx, table, count);
        return CLI_EXIT_OK;
    }
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet)
        return CLI_EXIT_OK;
    FILE *err = ctx->err;
    ctx->err = quiet; /* a TAB never shows an error */
    ctx->describe = true;
    ctx->describe_option = option;
    for (size_t i = 0; i < count; i++) {
        if (table[i].summary && strcmp(argv[0], table[i].name) == 0)
            table[i].run(ctx, table[i].name, argc, argv);
    }
    ctx->describe = false;
    ctx->describe_option = NULL;
    ctx->err = err;
    fclose(quiet);
    return CLI_EXIT_OK;
}

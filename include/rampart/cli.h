/*
 * cli: the command line. main() builds a cli_ctx and hands argv to the command
 * groups below; each group dispatches its subcommands through a table.
 *
 * - A command returns an exit status (cli_exit). Results go to ctx->out, errors to
 *   ctx->err as one line "rampart: <what was wrong and what to do>". Nothing else
 *   is printed; no command calls exit().
 * - Invalid input changes nothing: commands validate everything before the first
 *   write, and multi-row writes run in one transaction.
 * - --json prints API wire-format objects plus "state" (a list prints a JSON array),
 *   exact: JSON escapes what it must. Every other line that holds text from the
 *   user, the cache, a file or the remote is written through termsafe
 *   (rampart/termsafe.h): control characters, bidi controls, zero-width characters
 *   and bytes that are not UTF-8 are shown escaped ("\x1b", "\u202e"), so a
 *   hostile description, server message or argument cannot drive the terminal.
 *   Human tables are aligned in display columns, an escape counting as its
 *   characters. The other forms for programs (-o, rampart/cli_output.h) hold to
 *   the same: YAML escapes controls as JSON does, -o name prints ids (validated
 *   base62), and CSV is exact only when standard output is not a terminal (on
 *   one, its cells go through termsafe first).
 * - Secrets: the API key is never printed; a token is printed only by
 *   `creds token` (and, later, by a create that synced), on stdout.
 */
#ifndef RAMPART_CLI_H
#define RAMPART_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "rampart/cli_output.h"
#include "rampart/config.h"
#include "rampart/error.h"
#include "rampart/store.h"

/* Few, stable, documented in rampart(1). */
typedef enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILURE = 1,   /* runtime failure: database, file system */
    CLI_EXIT_USAGE = 2,     /* bad flag, bad value, bad file, unsafe config */
    CLI_EXIT_NOT_FOUND = 3, /* no such record, or its token is not held here */
    CLI_EXIT_NOT_CONVERGED = 4, /* a sync left rows pending or failed, or could not run */
    /* 5: CLI_EXIT_NO_REMOTE (cli_sync.h) */
    CLI_EXIT_LOCKOUT = 6 /* --fail-on-lockout: an address of the logs would newly be denied */
} cli_exit;

typedef struct cli_ctx {
    config cfg;
    store *st;           /* opened on first use by cli_store(); closed by main */
    FILE *out;
    FILE *err;
    const char *program; /* "rampart" */
    error_info config_error; /* why the configuration is unusable (code ERROR_OK: it is fine) */
    int store_exit;          /* exit status to end with after cli_store() returned NULL */
    int sandbox_pid;         /* the --sandbox server's process, 0 when none */
    bool sandbox_wanted;     /* --sandbox was given: cli_parse starts the server once
                              * the command's line is read (a --db on it counts) */
    /* main's first look at the line, before the configuration is loaded: with
     * `describe`, cli_parse runs getopt over the command's line with its table and
     * notes only the last --profile (scan_profile); nothing is printed or run. */
    bool scan;
    const char *scan_profile;
    /* `__complete options`: cli_parse and cli_find_command print what they take
     * (cli_describe) and stop, so the command runs nothing. */
    bool describe;
    /* `__complete values`: with `describe`, cli_parse prints the values this
     * option ("--NAME" or "-o") accepts instead of the options. */
    const char *describe_option;
} cli_ctx;

/*
 * A command: argv[0] is the command's own name ("rules", or "create" within a
 * group). `path` is the words so far ("rules create"), for messages and --help.
 */
typedef int (*cli_fn)(cli_ctx *ctx, const char *path, int argc, char **argv);

struct cli_command;
/* A group's table: its subcommands, the ones it dispatches through, copied into
 * `out` (room for `cap`); returns how many. */
typedef size_t cli_table_fn(struct cli_command *out, size_t cap);

enum { CLI_GROUP_MAX = 16 }; /* subcommands of a group */

typedef struct cli_command {
    const char *name;
    cli_fn run;
    const char *args;    /* synopsis after the name, e.g. "ID [--json]" */
    const char *summary; /* one line */
    const char *help;    /* the rest of --help: options, notes (may be NULL) */
    int min_operands;    /* operands after the options, checked by cli_parse */
    int max_operands;    /* -1: no limit */
    cli_table_fn *subcommands; /* a group's table, for the overview; NULL: not a group */
    unsigned flags;            /* CLI_CMD_* */
} cli_command;

/* cli_command.flags */
enum {
    CLI_CMD_NO_CONFIG = 1, /* runs with a broken configuration, to help fix it */
};

/* Command groups, each dispatching its own table. `rules` and `creds` are one
 * piece of code over the object kind (src/cli/cli_object.h). */
int cli_rules(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_creds(cli_ctx *ctx, const char *path, int argc, char **argv);
cli_table_fn cli_rules_table, cli_creds_table; /* their subcommands */
int cli_status(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_serve_api(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_sync(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_plan(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_tui(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_check(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_agent(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_apply(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_export(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_doctor(cli_ctx *ctx, const char *path, int argc, char **argv);
int cli_profiles(cli_ctx *ctx, const char *path, int argc, char **argv);

struct sync_report;
/*
 * Run a sync now (push and/or pull) against the configured remote, drawing
 * progress on stderr when it is a terminal and printing the report (JSON with
 * `json`). Returns CLI_EXIT_OK when it converged, CLI_EXIT_NOT_CONVERGED when rows
 * are pending or failed, CLI_EXIT_USAGE when no remote is configured or the key
 * was refused. `report` receives the figures.
 */
int cli_sync_now(cli_ctx *ctx, bool push, bool pull, bool verbose, bool json,
                 struct sync_report *report);

/*
 * --sandbox: start a private serve-api on a loopback port (its files under
 * <data dir>/sandbox/) and point ctx->cfg at it, unpaced. Prints nothing: on
 * failure `e` says why (cli_parse prints it). cli_sandbox_stop ends the server
 * (no-op without one); main calls it on every exit path.
 */
error_code cli_sandbox_start(cli_ctx *ctx, error_info *e);
void cli_sandbox_stop(cli_ctx *ctx);

/* The cache --sandbox works on, found as cli_sandbox_start finds it but starting
 * and creating nothing: the --db given on the command line, else "sandbox/cache.db"
 * beside the configured cache. false when there is no cache path (no HOME). */
bool cli_sandbox_cache_path(const cli_ctx *ctx, char *out, size_t size);

/*
 * `rampart __complete [--sandbox] [--policy ID] WHAT [PREFIX]`, hidden, for the
 * shell completions (assets/): up to 200 values of WHAT (rule-id, cred-id,
 * policy-id, cidr; a cidr of policy ID with --policy) that start with PREFIX, one
 * a line, from the cache opened read-only (store_complete: index ranges, never a
 * full list). Silent whatever goes wrong (no cache, a broken config, a bad word):
 * nothing printed, exit 0, so a TAB never shows an error.
 */
int cli_complete(cli_ctx *ctx, const char *path, int argc, char **argv);

/*
 * `rampart __complete options [COMMAND [SUBCOMMAND]]`, for the shell completions:
 * what the words take, one a line, read from the tables the commands parse with,
 * so the completions hold no list of their own. A group (or no word: the top
 * level) gives its command names; a command gives its options, "--NAME=" for one
 * that takes a value ("-o=" for the output format), "--db=" and "--help" with
 * them. With `option` ("--NAME" or "-o"; NULL for the above), `rampart __complete
 * values COMMAND [SUBCOMMAND] OPTION`: the values that option of the command
 * accepts when they are a fixed set (its cli_opt's choices), else nothing.
 * `table` is the top level's commands (entries with a NULL summary are hidden and
 * left out). Silent and exit 0 whatever the words are.
 */
int cli_describe(cli_ctx *ctx, const cli_command *table, size_t count, const char *option,
                 int argc, char **argv);

/*
 * The entry of `table` named argv[1] (a group's subcommand), for the group to run.
 * NULL after printing the group's overview for no word, "help" or --help
 * (*exit_code CLI_EXIT_USAGE for no word, else CLI_EXIT_OK), or a usage error for
 * an unknown word, with the closest name when there is one (CLI_EXIT_USAGE).
 */
const cli_command *cli_find_command(cli_ctx *ctx, const char *path, const cli_command *table,
                                    size_t count, int argc, char **argv, int *exit_code);

/* The command overview printed by `rampart`, `rampart help` and `rampart --help`. */
void cli_print_main_help(cli_ctx *ctx);

/* Print the group's table: one line per command with its summary. */
void cli_print_overview(cli_ctx *ctx, const char *path, const cli_command *table,
                        size_t count);

/* Option kinds for cli_parse. */
typedef enum cli_opt_kind {
    CLI_OPT_FLAG,   /* bool, no argument */
    CLI_OPT_STRING, /* const char *, the last one given wins */
    CLI_OPT_LIST,   /* cli_list, every occurrence appended */
    CLI_OPT_OUTPUT, /* the output format (--output): a CLI_OPT_CHOICE also given as
                     * -o VALUE or -oVALUE, as kubectl's */
    CLI_OPT_REFUSED, /* a string taken only to be refused with its reason (a field
                      * fixed at creation): `__complete options` does not offer it */
    CLI_OPT_CHOICE   /* a string from a fixed set (cli_choice): the command checks
                      * it; `__complete values` offers the set */
} cli_opt_kind;

typedef struct cli_list {
    const char *items[64];
    size_t count;
} cli_list;

/* Print the words an option accepts, one a line (`arg`: the cli_choice's), for
 * `__complete values`. */
typedef void cli_choices_fn(FILE *out, const void *arg);

/* The target of a CLI_OPT_CHOICE: where the string goes, and its set of values,
 * printed from the table the command checks them with. */
typedef struct cli_choice {
    const char **value;
    cli_choices_fn *print;
    const void *arg;
} cli_choice;

typedef struct cli_opt {
    const char *name; /* long name without "--" */
    cli_opt_kind kind;
    void *target;     /* bool *, const char **, cli_list * or cli_choice * */
} cli_opt;

/* Print "usage: <program> <path> <args>", the summary and help text, and the
 * global options but those `opts` defines itself. */
void cli_print_help(cli_ctx *ctx, const char *path, const cli_command *cmd,
                    const cli_opt *opts, size_t nopts);

/*
 * Parse long options of `opts` (and -o for a CLI_OPT_OUTPUT one) plus --help and
 * the global options (--db PATH, --profile NAME, --sandbox; each unless `opts`
 * defines one of that name) from argv[1..] and check the operand count against
 * `cmd`. Operands (in any position; "--" ends options) end up in
 * argv[*first_operand .. argc-1]. --db is applied; --sandbox (given here or
 * before the command: ctx->sandbox_wanted) starts the server after the whole line
 * is read (cli_sandbox_start), unless `opts` has its own; --profile was read by main
 * before the configuration was loaded (ctx->scan). Returns true to run the
 * command; false when it must return *exit_code now (--help printed: CLI_EXIT_OK;
 * a usage error printed: CLI_EXIT_USAGE; the sandbox did not start: its status).
 */
bool cli_parse(cli_ctx *ctx, const char *path, const cli_command *cmd, const cli_opt *opts,
               size_t nopts, int argc, char **argv, int *first_operand, int *exit_code);

/*
 * The IP policy a command works on: `flag` (its --policy) when given, else the
 * policy setting (config key policy or RAMPART_POLICY, per profile; checked when
 * loaded). NULL after printing a usage error (CLI_EXIT_USAGE) when the flag is no
 * policy id, or when neither gives one (the message names both). With `say`, a
 * policy taken from the setting is named on stderr with where it was set (for
 * human output: a script passing --policy, or reading JSON, sees no change).
 */
const char *cli_policy(cli_ctx *ctx, const char *path, const char *flag, bool say);

/* The rule actions ("allow", "deny"), one a line: --action's choices
 * (cli_choices_fn; `unused` is ignored). */
void cli_action_choices(FILE *out, const void *unused);

/* The store, opened (and created) on first use; NULL after printing why (the
 * command then returns ctx->store_exit). */
store *cli_store(cli_ctx *ctx);

/* The same for a command that only reads (list, get, export, plan, status,
 * check): a missing cache is an error (exit 1, ctx->store_exit) naming the path
 * and how a cache is made, and nothing is created: a mistyped --db must not pass
 * a drift check as an empty cache. */
store *cli_store_existing(cli_ctx *ctx);

/* Print "rampart: <msg>" for `e` (the message through termsafe) and map its code
 * to an exit status. */
int cli_fail(cli_ctx *ctx, const error_info *e);

/* Print "rampart: <path>: <fmt…>" (the formatted message through termsafe: it
 * may echo the user's words) and return CLI_EXIT_USAGE. */
int cli_usage_error(cli_ctx *ctx, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* cli_usage_error for a command that also needs a policy: "<missing> (and
 * --policy, unless the policy setting names one)"; `missing` is the sentence
 * naming its absent required flags ("--action is required"). */
int cli_usage_missing(cli_ctx *ctx, const char *path, const char *missing);

/* Write `text` as termsafe shows it (controls, bidi and zero-width characters,
 * bytes that are not UTF-8: escaped), padded with spaces to `width` display
 * columns (0: no padding), cut with "…" past `max` columns (0: no cut); an escape
 * is never cut in half. */
void cli_put_cell(FILE *out, const char *text, int width, int max);

/* Print one encoded JSON value (heap string from codec, freed here) and a
 * newline; CLI_EXIT_FAILURE when `json` is NULL (out of memory). */
int cli_put_json(cli_ctx *ctx, char *json);

/*
 * Read all of `path` ("-": standard input) into a heap buffer, NUL-terminated;
 * the caller frees *data. Prints the reason and returns false on failure.
 */
bool cli_read_file(cli_ctx *ctx, const char *path, char **data, size_t *len);

/* Opening and closing of a streamed JSON array: "[", elements joined by ",\n",
 * "]". `index` is the 0-based position of the element about to be printed. */
void cli_json_array_sep(cli_ctx *ctx, size_t index);
void cli_json_array_end(cli_ctx *ctx, size_t count);

/* Write `s` as a JSON string literal (quoted, escaped) for the few outputs that are
 * not wire objects (status, import summary). */
void cli_put_json_string(FILE *out, const char *s);

/* Label/value line of a detail view ("cidr         10.0.0.0/8"); skipped when
 * the value is empty. */
void cli_put_field(cli_ctx *ctx, const char *label, const char *value);

/* ---- the output format, and the reports (status, check, doctor): src/cli/report.c ---- */

/*
 * The format asked for by -o `output` (NULL: none) and --json (-o json; both with
 * different formats is refused): *format is CLI_OUTPUT_DEFAULT when neither is
 * given. A `report` has its human form ("table"), json and yaml only. Returns false
 * after printing a usage error naming what is valid (exit CLI_EXIT_USAGE).
 */
bool cli_output_choose(cli_ctx *ctx, const char *path, const char *output, bool json,
                       bool report, cli_output_format *format);

/* A report's -o choices: table, json, yaml, one a line (a cli_choices_fn). */
void cli_report_put_formats(FILE *out, const void *unused);

/* A report command's line once read: where its operands start, and its format. */
typedef struct cli_report_line {
    int first;                /* argv index of the first operand */
    cli_output_format format; /* as cli_output_choose chose it for a report */
    int exit_code;            /* when cli_report_parse returned false */
} cli_report_line;

enum { CLI_REPORT_OWN_OPTS = 6 }; /* the options a report has besides -o and --json */

/*
 * cli_parse for a report command: -o/--output FORMAT and --json, then its own
 * `opts` (at most CLI_REPORT_OWN_OPTS), then cli_output_choose. False when the
 * command must return line->exit_code now (as cli_parse, or CLI_EXIT_USAGE).
 */
bool cli_report_parse(cli_ctx *ctx, const char *path, const cli_command *cmd,
                      const cli_opt *opts, size_t nopts, int argc, char **argv,
                      cli_report_line *line);

/* Whether a report in `format` is its JSON document (json or yaml), not its human
 * form. */
bool cli_report_is_document(cli_output_format format);

/* A report being written: with yaml, its JSON goes to memory first. */
typedef struct cli_report {
    cli_output_format format;
    FILE *out;  /* ctx->out, kept while ctx->out is the memory stream */
    char *json; /* the memory stream's buffer (freed by cli_report_end) */
    size_t len;
} cli_report;

/*
 * Before a report writes its JSON document to ctx->out: for CLI_OUTPUT_YAML,
 * ctx->out becomes a memory stream until cli_report_end. False after printing why
 * (out of memory); nothing to end then.
 */
bool cli_report_begin(cli_ctx *ctx, cli_report *r, cli_output_format format);

/*
 * After it: for yaml, ctx->out is restored and the JSON written to it as YAML.
 * Returns `status`, or CLI_EXIT_FAILURE (when `status` was CLI_EXIT_OK) after
 * printing why the YAML could not be written.
 */
int cli_report_end(cli_ctx *ctx, cli_report *r, int status);

/* ---- long-running servers (serve-api, agent): src/cli/serving.c ---- */

/*
 * Block SIGINT and SIGTERM (the previous mask goes to *old) and ignore SIGPIPE.
 * Call before a server starts its threads: they inherit the mask, so the signal
 * reaches cli_serving_wait instead of killing a thread mid-reply.
 */
void cli_serving_block(sigset_t *stop, sigset_t *old);

/* Wait for SIGINT or SIGTERM; returns which. */
int cli_serving_wait(const sigset_t *stop);

/*
 * --ready-file: write `text` to `file` through a 0600 temporary file renamed into
 * place, so a test polling for the file never reads half of it. Prints the reason
 * and returns false on failure.
 */
bool cli_write_ready(cli_ctx *ctx, const char *file, const char *text);

#endif

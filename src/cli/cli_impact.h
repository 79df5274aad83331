/*
 * cli_impact: `--impact LOG...` of `plan` and `apply --dry-run`, internal to
 * src/cli: the options, reading the logs (rampart/logscan.h), deciding every
 * distinct address before and after (rampart/impact.h), and the report (text,
 * -o json, -o csv). The commands add CLI_IMPACT_OPTS to their tables and call
 * cli_impact_prepare before anything else runs, then cli_impact_run.
 */
#ifndef RAMPART_CLI_IMPACT_H
#define RAMPART_CLI_IMPACT_H

#include <stdbool.h>

#include "rampart/cli.h"
#include "rampart/impact.h"
#include "rampart/logscan.h"

typedef struct cli_impact_args {
    cli_list logs;
    const char *ip_field, *ip_key, *time_key, *log_format, *since, *max_addresses, *output;
    bool fail_on_lockout;
} cli_impact_args;

void cli_impact_put_formats(FILE *out, const void *unused);

/* The options that say what to read (plan adds -o to its own); CLI_IMPACT_OPTS:
 * those and -o (apply). */
#define CLI_IMPACT_INPUT_OPTS(a)                                                             \
    {"impact", CLI_OPT_LIST, &(a)->logs}, {"ip-field", CLI_OPT_STRING, &(a)->ip_field},      \
        {"ip-key", CLI_OPT_STRING, &(a)->ip_key},                                           \
        {"time-key", CLI_OPT_STRING, &(a)->time_key},                                       \
        {"log-format", CLI_OPT_STRING, &(a)->log_format},                                   \
        {"since", CLI_OPT_STRING, &(a)->since},                                             \
        {"max-addresses", CLI_OPT_STRING, &(a)->max_addresses},                             \
        {"fail-on-lockout", CLI_OPT_FLAG, &(a)->fail_on_lockout}
#define CLI_IMPACT_OPTS(a)                                                                   \
    CLI_IMPACT_INPUT_OPTS(a),                                                                \
        {"output", CLI_OPT_OUTPUT, &(cli_choice){&(a)->output, cli_impact_put_formats, NULL}}

/* The options' lines of --help, for both commands. */
#define CLI_IMPACT_HELP                                                                      \
    "Impact (--impact): read access logs and show the client addresses whose\n"             \
    "decision the change flips (allow -> deny, deny -> allow), most requests first,\n"     \
    "the rules that flip them, and how many addresses and requests are newly denied\n"     \
    "and newly allowed. Before: the policy as the remote holds it; after: as it will\n"    \
    "be. Deny wins, as in check; IPv4-mapped addresses are checked as IPv4.\n"             \
    "  --impact LOG        an access log (repeatable; - for standard input; gzip is\n"     \
    "                      read as it is): common or combined (nginx, Apache), JSON\n"     \
    "                      lines, or one address a line, told apart per file\n"            \
    "  --log-format F      auto (the default), combined (or common), json or plain\n"      \
    "  --ip-field N        common/combined: the field holding the client's address\n"      \
    "                      (default 1; \"quoted\" and [bracketed] fields count as one;\n"  \
    "                      a forwarded list \"a, b\" gives its first)\n"                   \
    "  --ip-key PATH       JSON lines: the member holding the address (conn.client_ip)\n"  \
    "  --time-key PATH     JSON lines: the member holding the time (RFC 3339 or\n"         \
    "                      seconds since the epoch)\n"                                     \
    "  --since DURATION    only lines of the last DURATION (90s, 15m, 24h, 7d, 2w)\n"       \
    "  --max-addresses N   distinct addresses kept (default 2000000); past it, lines\n"    \
    "                      are counted, not checked, and the run fails\n"                  \
    "  --fail-on-lockout   exit 6 when some address would newly be denied\n"               \
    "  -o, --output F      table (the default), json or csv (every changed address)\n"

typedef struct cli_impact {
    cli_ctx *ctx;
    const char *path;
    const char *policy;
    logscan_opts scan;
    cli_output_format format;
    bool fail_on_lockout;
    const char *const *logs; /* the --impact values */
    size_t nlogs;
    char **more; /* further logs given as operands (plan) */
    size_t nmore;
} cli_impact;

/* Whether --impact was given (or an impact option without it: prepare says so). */
bool cli_impact_wanted(const cli_impact_args *a);

/*
 * Check the impact options before anything runs: `policy` is the command's own
 * policy option (apply's), or the one given for the impact (plan's --policy);
 * `json`: the command's --json was given (refused with --impact: -o json is the
 * impact's document). CLI_GO_ON, or the exit status after saying why.
 */
int cli_impact_prepare(cli_ctx *ctx, const char *path, const cli_impact_args *a,
                       const char *policy, bool json, cli_impact *out);

/* Whether the impact's output is its document (json or csv): the command then
 * prints nothing of its own on standard output. */
bool cli_impact_document(const cli_impact *im);

/*
 * Read the logs, decide, print. `changes` (n of them) edit the after side (an
 * apply's plan); `what` names the change ("the queued changes"). Returns 0, 1 on
 * an error or when nothing could be checked (no line read, the address cap hit),
 * or CLI_EXIT_LOCKOUT with --fail-on-lockout when an address is newly denied.
 */
int cli_impact_run(cli_impact *im, store *st, const impact_change *changes, size_t n,
                   const char *what);

#endif

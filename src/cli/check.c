/* `rampart check POLICY IP…`: would the cached rules of a policy let these
 * addresses in? The same decision the agent's check route gives. */
#include <stdlib.h>
#include <string.h>

#include "rampart/cli.h"
#include "rampart/policy.h"
#include "rampart/validate.h"
#include "rampart/termsafe.h"

static int check_run(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command check_command = {
    "check", check_run, "[POLICY_ID] IP... [--policy ipp_ID] [-o table|json|yaml] [--json]",
    "Decide, from the cached rules, whether each address is allowed by the IP policy.",
    "The policy: POLICY_ID (the first word, when it starts with ipp_), else --policy,\n"
    "else the policy setting (config file, per profile, or RAMPART_POLICY; named on\n"
    "stderr when used).\n\n"
    "An address is allowed when it lies inside at least one allow rule of the policy\n"
    "and inside no deny rule of it (deny wins, whatever the prefix lengths). The rules\n"
    "in force are every cached rule but those being deleted, deleted remotely or\n"
    "failed; a rule not yet confirmed by the remote shows as \"pending\". An\n"
    "IPv4-mapped IPv6 address (::ffff:10.0.0.1) is checked as IPv4.\n\n"
    "For each address: the decision and the rule that made it (the most specific\n"
    "matching deny rule, else the most specific matching allow rule).\n\n"
    "Options:\n"
    "  --policy ID           the IP policy (ipp_ID), when no POLICY_ID is given\n"
    "  -o, --output FORMAT   table (the default: the form above), json (a JSON array\n"
    "                        of {\"ip\", \"policy\", \"allowed\", \"policy_known\",\n"
    "                        \"action\", \"cidr\", \"synced\", \"rule_id\"}, as the agent's\n"
    "                        check route answers) or yaml (the same as YAML)\n"
    "  --json                -o json\n\n"
    "Exit status: 0 every address is allowed; 1 at least one is denied (or the cache\n"
    "could not be read: either way, not all allowed); 2 bad usage, policy id or\n"
    "address (nothing is decided); 3 the policy has no rules in force here.\n",
    .min_operands = 1, .max_operands = -1};

typedef struct check_columns {
    int ip, cidr, rule;
} check_columns;

static int widest(int w, size_t n)
{
    return (size_t)w > n ? w : (int)n;
}

static check_columns measure(char **ips, const policy_decision *d, size_t n)
{
    check_columns w = {2, 4, 4};
    for (size_t i = 0; i < n; i++) {
        w.ip = widest(w.ip, strlen(ips[i]));
        w.cidr = widest(w.cidr, strlen(d[i].cidr));
        w.rule = widest(w.rule, strlen(d[i].rule_id));
    }
    return w;
}

static void put_human(cli_ctx *ctx, char **ips, const policy_decision *d, size_t n)
{
    check_columns w = measure(ips, d, n);
    fprintf(ctx->out, "%-*s  %-8s  %-6s  %-*s  %-*s  %s\n", w.ip, "IP", "DECISION", "ACTION",
            w.cidr, "CIDR", w.rule, "RULE", "SYNC");
    for (size_t i = 0; i < n; i++) {
        policy_words x;
        policy_decision_words(&d[i], &x);
        /* The address passed the strict parser: printable ASCII only. */
        fprintf(ctx->out, "%-*s  %-8s  %-6s  %-*s  %-*s  %s\n", w.ip, ips[i], x.decision,
                x.action, w.cidr, x.cidr, w.rule, x.rule, x.sync);
    }
}

static void put_json(cli_ctx *ctx, const char *policy, char **ips, const policy_decision *d,
                     size_t n)
{
    buf_t line = {0};
    for (size_t i = 0; i < n; i++) {
        cli_json_array_sep(ctx, i);
        buf_reset(&line);
        policy_decision_json(&line, ips[i], policy, &d[i], POLICY_JSON_SPACED);
        fprintf(ctx->out, "  %s", line.failed ? "null" : line.data);
    }
    buf_free(&line);
    cli_json_array_end(ctx, n);
}

/* Every address is parsed before anything is decided: one bad one, no output. */
static int parse_all(cli_ctx *ctx, const char *path, char **ips, size_t n, policy_addr *out)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        error_info e = {0};
        if (policy_addr_parse(ips[i], &out[i], &e) != ERROR_OK)
            rc = cli_usage_error(ctx, path, "address #%zu: %s", i + 1, e.msg);
    }
    return rc;
}

static int decide(cli_ctx *ctx, const char *policy, char **ips, size_t n,
                  const policy_addr *addrs, cli_output_format format)
{
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    error_info e = {0};
    policy_decision *d = calloc(n, sizeof *d);
    if (!d) {
        error_set(&e, ERROR_NOMEM, "out of memory");
        return cli_fail(ctx, &e);
    }
    bool known = false;
    if (policy_check_cached(st, policy, addrs, n, d, &known, &e) != ERROR_OK) {
        /* A cached rule that cannot be read (or a database failure) decides
         * nothing: status 1 like a denial, never 2 (the arguments were fine). */
        free(d);
        cli_fail(ctx, &e);
        return CLI_EXIT_FAILURE;
    }
    bool all_allowed = true;
    for (size_t i = 0; i < n; i++)
        all_allowed &= d[i].allowed;
    int rc = CLI_EXIT_OK;
    cli_report report;
    if (!cli_report_is_document(format)) {
        put_human(ctx, ips, d, n);
    } else if (cli_report_begin(ctx, &report, format)) {
        put_json(ctx, policy, ips, d, n);
        rc = cli_report_end(ctx, &report, CLI_EXIT_OK);
    } else {
        rc = CLI_EXIT_FAILURE;
    }
    free(d);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!known) {
        termsafe_fprintf(ctx->err, "%s: policy %s has no rules in force in this cache, so "
                         "nothing is allowed (see: %s rules list --policy %s)\n",
                         ctx->program, policy, ctx->program, policy);
        return CLI_EXIT_NOT_FOUND;
    }
    return all_allowed ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/*
 * Whether the first operand names the policy: it does when it starts with ipp_;
 * an address never does. Without --policy and the setting it must be the policy,
 * unless it is an address (then no policy was given at all).
 */
static bool policy_first(const cli_ctx *ctx, const char *flag, const char *word)
{
    if (strncmp(word, "ipp_", 4) == 0)
        return true;
    if (flag || config_get(&ctx->cfg, CONFIG_POLICY)[0])
        return false;
    policy_addr addr;
    return policy_addr_parse(word, &addr, NULL) != ERROR_OK;
}

/* The policy (*first moves past it when it is an operand), or NULL after a usage
 * error. */
static const char *which_policy(cli_ctx *ctx, const char *path, const char *flag, int argc,
                                char **argv, int *first, bool say)
{
    if (!policy_first(ctx, flag, argv[*first]))
        return cli_policy(ctx, path, flag, say);
    const char *word = argv[(*first)++];
    error_info e = {0};
    if (validate_id(word, "ipp", "policy id", &e) != ERROR_OK) {
        cli_usage_error(ctx, path, "%s", e.msg);
        return NULL;
    }
    if (flag && strcmp(flag, word) != 0) {
        cli_usage_error(ctx, path, "two policies: %s and --policy %s (give one)", word, flag);
        return NULL;
    }
    if (*first == argc) {
        cli_usage_error(ctx, path, "missing argument: no address after %s (usage: %s %s %s)",
                        word, ctx->program, path, check_command.args);
        return NULL;
    }
    return word;
}

static int check_run(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    const char *flag = NULL;
    const cli_opt opts[] = {{"policy", CLI_OPT_STRING, &flag}};
    cli_report_line line;
    if (!cli_report_parse(ctx, path, &check_command, opts, 1, argc, argv, &line))
        return line.exit_code;
    const char *policy = which_policy(ctx, path, flag, argc, argv, &line.first,
                                      !cli_report_is_document(line.format));
    if (!policy)
        return CLI_EXIT_USAGE;
    error_info e = {0};
    char **ips = argv + line.first;
    size_t n = (size_t)(argc - line.first);
    policy_addr *addrs = calloc(n, sizeof *addrs);
    if (!addrs) {
        error_set(&e, ERROR_NOMEM, "out of memory");
        return cli_fail(ctx, &e);
    }
    int rc = parse_all(ctx, path, ips, n, addrs);
    if (rc == CLI_EXIT_OK)
        rc = decide(ctx, policy, ips, n, addrs, line.format);
    free(addrs);
    return rc;
}

int cli_check(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return check_run(ctx, path, argc, argv);
}

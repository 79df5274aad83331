/* `--impact LOG...` of plan and apply --dry-run (cli_impact.h): the logs are
 * streamed into their distinct addresses, each decided once on both sides, and
 * the addresses whose decision changes are reported. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_impact.h"
#include "cli_object.h"
#include "rampart/duration.h"
#include "rampart/buf.h"
#include "rampart/termsafe.h"
#include "rampart/validate.h"

enum {
    TEXT_FLIPS_SHOWN = 100, /* the text report's address lines; json/csv list all */
    PRIVATE_PERCENT = 50    /* above this share of requests, warn about a proxy */
};

void cli_impact_put_formats(FILE *out, const void *unused)
{
    (void)unused;
    fputs("table\njson\ncsv\n", out);
}

bool cli_impact_wanted(const cli_impact_args *a)
{
    return a->logs.count > 0;
}

bool cli_impact_document(const cli_impact *im)
{
    return im->format == CLI_OUTPUT_JSON || im->format == CLI_OUTPUT_CSV;
}

/* ---- options ---- */

static bool parse_count(const char *text, unsigned long max, unsigned long *out)
{
    char *end;
    if (!text[0] || text[0] < '0' || text[0] > '9')
        return false;
    unsigned long v = strtoul(text, &end, 10);
    if (*end || v == 0 || v > max)
        return false;
    *out = v;
    return true;
}

/* Any impact option without --impact is a mistake worth naming. */
static const char *stray_option(const cli_impact_args *a)
{
    return a->ip_field        ? "--ip-field"
           : a->ip_key        ? "--ip-key"
           : a->time_key      ? "--time-key"
           : a->log_format    ? "--log-format"
           : a->since         ? "--since"
           : a->max_addresses ? "--max-addresses"
           : a->fail_on_lockout ? "--fail-on-lockout"
           : a->output        ? "-o"
                              : NULL;
}

/*
 * The policy whose decisions are compared: the one call site that resolves it.
 * (A `policy` setting, when there is one, is read here when none is given.)
 */
/* --policy, else the policy setting (cli_policy says which, and refuses none). */
static int impact_policy(cli_ctx *ctx, const char *path, const char *given, bool say,
                         const char **out)
{
    *out = cli_policy(ctx, path, given, say);
    return *out ? CLI_GO_ON : CLI_EXIT_USAGE;
}

static int scan_options(cli_ctx *ctx, const char *path, const cli_impact_args *a,
                        logscan_opts *o)
{
    unsigned long n;
    error_info e = {0};
    if (a->log_format && !logscan_format_parse(a->log_format, &o->format))
        return cli_usage_error(ctx, path, "--log-format: '%s' is not one of auto, combined, "
                               "common, json, plain", a->log_format);
    if (a->ip_field) {
        if (!parse_count(a->ip_field, 64, &n))
            return cli_usage_error(ctx, path, "--ip-field: a field number from 1 to 64");
        o->ip_field = (unsigned)n;
    }
    if (a->max_addresses) {
        if (!parse_count(a->max_addresses, 100000000, &n))
            return cli_usage_error(ctx, path, "--max-addresses: a number from 1 to "
                                   "100000000");
        o->max_addresses = n;
    }
    if (a->since) {
        long long s;
        if (duration_parse(a->since, "--since", &s, &e) != ERROR_OK)
            return cli_usage_error(ctx, path, "%s", e.msg);
        if (s == 0)
            return cli_usage_error(ctx, path, "--since: a duration above 0 (90s, 24h, 7d)");
        o->since = (int64_t)time(NULL) - s;
    }
    o->ip_key = a->ip_key;
    o->time_key = a->time_key;
    return CLI_GO_ON;
}

int cli_impact_prepare(cli_ctx *ctx, const char *path, const cli_impact_args *a,
                       const char *policy, bool json, cli_impact *out)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    out->path = path;
    if (!cli_impact_wanted(a)) {
        const char *stray = stray_option(a);
        if (stray)
            return cli_usage_error(ctx, path, "%s is an option of --impact LOG", stray);
        return CLI_GO_ON;
    }
    if (json)
        return cli_usage_error(ctx, path, "--json with --impact: give -o json for the "
                               "impact's document (or leave --impact out for the plan's)");
    if (a->output && (!cli_output_parse(a->output, &out->format) ||
                      (out->format != CLI_OUTPUT_TABLE && out->format != CLI_OUTPUT_JSON &&
                       out->format != CLI_OUTPUT_CSV)))
        return cli_usage_error(ctx, path, "-o: '%s': --impact prints table, json or csv",
                               a->output);
    int rc = impact_policy(ctx, path, policy, !json, &out->policy);
    if (rc == CLI_GO_ON)
        rc = scan_options(ctx, path, a, &out->scan);
    out->fail_on_lockout = a->fail_on_lockout;
    out->logs = a->logs.items;
    out->nlogs = a->logs.count;
    return rc;
}

/* ---- text helpers ---- */

/* "12,400" */
static const char *grouped(uint64_t v, char *buf, size_t size)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < size; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void addr_text(const policy_addr *a, char out[INET6_ADDRSTRLEN])
{
    if (!inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, out, INET6_ADDRSTRLEN))
        snprintf(out, INET6_ADDRSTRLEN, "?");
}

/* RFC 3339 UTC, to the minute (text) or the second (json, csv); "-" unknown. */
static const char *time_text(int64_t t, bool seconds, char *buf, size_t size)
{
    if (t == INT64_MAX || t == INT64_MIN)
        return "-";
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) ||
        !strftime(buf, size, seconds ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%MZ", &tm))
        return "-";
    return buf;
}

static const char *action_word(model_action a)
{
    return a == MODEL_ACTION_DENY ? "deny" : "allow";
}

/* "deny 203.0.113.0/24 (pending)", or "no rule". */
static void rule_words(const impact_index *ix, uint32_t rule, char *buf, size_t size)
{
    if (rule == IMPACT_NO_RULE) {
        snprintf(buf, size, "no rule");
        return;
    }
    impact_rule_info r;
    impact_rule_get(ix, rule, &r);
    snprintf(buf, size, "%s %s (%s)", action_word(r.action), r.cidr, r.label);
}

/* ---- progress on a terminal ---- */

static void put_progress(void *ctxp, const char *file, uint64_t bytes, uint64_t lines)
{
    cli_ctx *ctx = ctxp;
    fputs("\r\033[K", ctx->err);
    termsafe_fprintf(ctx->err, "reading %s: %.1fM lines, %.0f MB", file, (double)lines / 1e6,
                     (double)bytes / 1e6);
    fflush(ctx->err);
}

/* ---- the report ---- */

typedef struct report {
    cli_impact *im;
    const impact_index *ix;
    const logscan_addr *addrs;
    size_t naddrs;
    const logscan_stats *st;
    const impact_result *res;
    uint64_t requests;
    const char *what;
} report;

static void put_flip_text(const report *r, const impact_flip *f, int ipw, int reqw)
{
    FILE *out = r->im->ctx->out;
    const logscan_addr *a = &r->addrs[f->addr];
    char ip[INET6_ADDRSTRLEN], n[32], first[32], last[32], before[160], after[160];
    addr_text(&a->addr, ip);
    rule_words(r->ix, f->before.rule, before, sizeof before);
    rule_words(r->ix, f->after.rule, after, sizeof after);
    fprintf(out, "%-*s  %*s req  first %s  last %s  %s -> %-5s  by %s -> %s\n", ipw, ip, reqw,
            grouped(a->requests, n, sizeof n), time_text(a->first, false, first, sizeof first),
            time_text(a->last, false, last, sizeof last), f->before.allowed ? "allow" : "deny",
            f->after.allowed ? "allow" : "deny", before, after);
}

static void put_rules_text(const report *r)
{
    FILE *out = r->im->ctx->out;
    if (!r->res->nrules)
        return;
    fprintf(out, "\nRules that flip them:\n");
    for (size_t i = 0; i < r->res->nrules; i++) {
        const impact_rule_count *c = &r->res->rules[i];
        impact_rule_info info;
        impact_rule_get(r->ix, c->rule, &info);
        char a[32], q[32];
        fprintf(out, "  %s %s (%s%s%s)  flips %s address%s, %s request%s\n",
                action_word(info.action), info.cidr, info.label, info.id[0] ? " " : "",
                info.id, grouped(c->addresses, a, sizeof a), plural(c->addresses, "", "es"),
                grouped(c->requests, q, sizeof q), plural(c->requests, "", "s"));
    }
}

static void put_text(const report *r)
{
    FILE *out = r->im->ctx->out;
    const impact_result *res = r->res;
    char a[32], b[32], c[32], d[32];
    /* the policy id passed validate_id: base62 only */
    fprintf(out, "\nImpact of %s on %s, from %s request%s of %s address%s:\n",
                     r->what, r->im->policy, grouped(r->requests, a, sizeof a),
                     plural(r->requests, "", "s"), grouped(r->naddrs, b, sizeof b),
                     plural(r->naddrs, "", "es"));
    if (!res->nflips) {
        fprintf(out, "No address changes its decision%s.\n",
                impact_index_changed(r->ix) ? "" : ": no queued change touches the policy");
        return;
    }
    size_t shown = res->nflips < TEXT_FLIPS_SHOWN ? res->nflips : TEXT_FLIPS_SHOWN;
    int ipw = 2, reqw = 1;
    for (size_t i = 0; i < shown; i++) {
        char ip[INET6_ADDRSTRLEN], n[32];
        addr_text(&r->addrs[res->flips[i].addr].addr, ip);
        ipw = (int)strlen(ip) > ipw ? (int)strlen(ip) : ipw;
        grouped(res->flips[i].requests, n, sizeof n);
        reqw = (int)strlen(n) > reqw ? (int)strlen(n) : reqw;
    }
    for (size_t i = 0; i < shown; i++)
        put_flip_text(r, &res->flips[i], ipw, reqw);
    if (shown < res->nflips)
        fprintf(out, "... and %s more (-o csv lists every one)\n",
                grouped(res->nflips - shown, a, sizeof a));
    put_rules_text(r);
    fprintf(out, "\nNewly denied: %s address%s (%s request%s); newly allowed: %s address%s "
            "(%s request%s).\n",
            grouped(res->denied_addresses, a, sizeof a), plural(res->denied_addresses, "", "es"),
            grouped(res->denied_requests, b, sizeof b), plural(res->denied_requests, "", "s"),
            grouped(res->allowed_addresses, c, sizeof c),
            plural(res->allowed_addresses, "", "es"),
            grouped(res->allowed_requests, d, sizeof d), plural(res->allowed_requests, "", "s"));
}

static void put_side_json(FILE *out, const impact_index *ix, const impact_side *s)
{
    fprintf(out, "{\"allowed\": %s, ", s->allowed ? "true" : "false");
    if (s->rule == IMPACT_NO_RULE) {
        fputs("\"action\": null, \"cidr\": null, \"rule_id\": null, \"state\": null}", out);
        return;
    }
    impact_rule_info info;
    impact_rule_get(ix, s->rule, &info);
    fprintf(out, "\"action\": \"%s\", \"cidr\": \"%s\", \"rule_id\": ", action_word(info.action),
            info.cidr);
    if (info.id[0])
        cli_put_json_string(out, info.id);
    else
        fputs("null", out);
    fprintf(out, ", \"state\": \"%s\"}", info.label);
}

static void put_json(const report *r)
{
    FILE *out = r->im->ctx->out;
    const impact_result *res = r->res;
    const logscan_stats *st = r->st;
    fputs("{\"policy\": ", out);
    cli_put_json_string(out, r->im->policy);
    fprintf(out, ", \"lines\": %llu, \"counted\": %llu, \"bad\": %llu, \"too_long\": %llu, "
                 "\"old\": %llu, \"over_cap\": %llu, \"addresses\": %zu, \"requests\": %llu,\n",
            (unsigned long long)st->lines, (unsigned long long)st->used,
            (unsigned long long)st->bad, (unsigned long long)st->too_long,
            (unsigned long long)st->old, (unsigned long long)st->over_cap, r->naddrs,
            (unsigned long long)r->requests);
    fprintf(out, " \"newly_denied\": {\"addresses\": %zu, \"requests\": %llu}, "
                 "\"newly_allowed\": {\"addresses\": %zu, \"requests\": %llu},\n \"changes\": [",
            res->denied_addresses, (unsigned long long)res->denied_requests,
            res->allowed_addresses, (unsigned long long)res->allowed_requests);
    for (size_t i = 0; i < res->nflips; i++) {
        const impact_flip *f = &res->flips[i];
        const logscan_addr *a = &r->addrs[f->addr];
        char ip[INET6_ADDRSTRLEN], t1[32], t2[32];
        addr_text(&a->addr, ip);
        const char *first = time_text(a->first, true, t1, sizeof t1);
        const char *last = time_text(a->last, true, t2, sizeof t2);
        fprintf(out, "%s\n  {\"ip\": \"%s\", \"requests\": %llu, \"first\": %s%s%s, "
                     "\"last\": %s%s%s, \"before\": ",
                i ? "," : "", ip, (unsigned long long)a->requests, *first == '-' ? "" : "\"",
                *first == '-' ? "null" : first, *first == '-' ? "" : "\"",
                *last == '-' ? "" : "\"", *last == '-' ? "null" : last,
                *last == '-' ? "" : "\"");
        put_side_json(out, r->ix, &f->before);
        fputs(", \"after\": ", out);
        put_side_json(out, r->ix, &f->after);
        fputc('}', out);
    }
    fputs(res->nflips ? "\n ],\n \"rules\": [" : "],\n \"rules\": [", out);
    for (size_t i = 0; i < res->nrules; i++) {
        const impact_rule_count *c = &res->rules[i];
        impact_rule_info info;
        impact_rule_get(r->ix, c->rule, &info);
        fprintf(out, "%s\n  {\"rule_id\": ", i ? "," : "");
        if (info.id[0])
            cli_put_json_string(out, info.id);
        else
            fputs("null", out);
        fprintf(out, ", \"action\": \"%s\", \"cidr\": \"%s\", \"state\": \"%s\", "
                     "\"addresses\": %zu, \"requests\": %llu}",
                action_word(info.action), info.cidr, info.label, c->addresses,
                (unsigned long long)c->requests);
    }
    fputs(res->nrules ? "\n ]}\n" : "]}\n", out);
}

static void csv_side(buf_t *b, const impact_index *ix, const impact_side *s)
{
    impact_rule_info info;
    impact_rule_get(ix, s->rule, &info);
    bool none = s->rule == IMPACT_NO_RULE;
    const char *cells[] = {s->allowed ? "allow" : "deny", none ? "" : action_word(info.action),
                           none ? "" : info.cidr, none ? "" : info.id, none ? "" : info.label};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        buf_puts(b, ",");
        cli_output_csv_field(b, cells[i]);
    }
}

static void put_csv(const report *r)
{
    FILE *out = r->im->ctx->out;
    fputs("ip,requests,first,last,before,before_action,before_cidr,before_rule,before_state,"
          "after,after_action,after_cidr,after_rule,after_state\n", out);
    buf_t b = {0};
    for (size_t i = 0; i < r->res->nflips; i++) {
        const impact_flip *f = &r->res->flips[i];
        const logscan_addr *a = &r->addrs[f->addr];
        char ip[INET6_ADDRSTRLEN], t1[32], t2[32];
        addr_text(&a->addr, ip);
        const char *first = time_text(a->first, true, t1, sizeof t1);
        const char *last = time_text(a->last, true, t2, sizeof t2);
        char head[160];
        snprintf(head, sizeof head, "%s,%llu,%s,%s", ip, (unsigned long long)a->requests,
                 *first == '-' ? "" : first, *last == '-' ? "" : last);
        buf_reset(&b);
        buf_puts(&b, head);
        csv_side(&b, r->ix, &f->before);
        csv_side(&b, r->ix, &f->after);
        if (!b.failed)
            fprintf(out, "%s\n", b.data);
    }
    buf_free(&b);
}

/* ---- what the reading found, on standard error ---- */

static void put_reading(const report *r)
{
    cli_impact *im = r->im;
    cli_ctx *ctx = im->ctx;
    const logscan_stats *st = r->st;
    char a[32], b[32];
    if (st->bad || st->too_long) {
        const char *file = st->bad_file < im->nlogs ? im->logs[st->bad_file]
                           : st->bad_file - im->nlogs < im->nmore
                               ? im->more[st->bad_file - im->nlogs]
                               : "?";
        termsafe_fprintf(ctx->err, "%s: %s of %s lines could not be read (no address%s%s), "
                         "not counted; the first: %s:%llu\n", ctx->program,
                         grouped(st->bad + st->too_long, a, sizeof a),
                         grouped(st->lines, b, sizeof b), im->scan.since ? " or no time" : "",
                         st->too_long ? ", or too long" : "",
                         strcmp(file, "-") == 0 ? "stdin" : file,
                         (unsigned long long)st->bad_line);
    }
    if (st->old)
        fprintf(ctx->err, "%s: %s lines older than --since left out\n", ctx->program,
                grouped(st->old, a, sizeof a));
    uint64_t private_reqs = 0;
    size_t private_addrs = 0;
    for (size_t i = 0; i < r->naddrs; i++) {
        if (logscan_addr_private(&r->addrs[i].addr)) {
            private_addrs++;
            private_reqs += r->addrs[i].requests;
        }
    }
    if (r->requests && (private_addrs * 100 > r->naddrs * PRIVATE_PERCENT ||
                        private_reqs * 100 > r->requests * PRIVATE_PERCENT))
        fprintf(ctx->err, "%s: warning: %zu of %zu addresses (%llu%% of the requests) are "
                "loopback or private: the log is probably written behind a proxy or a "
                "tunnel agent; name the field that holds the client's address with "
                "--ip-field N (or --ip-key for JSON)\n", ctx->program, private_addrs,
                r->naddrs, (unsigned long long)(private_reqs * 100 / r->requests));
}

/* 1 when nothing could be checked, or not everything. */
static int incomplete(const report *r)
{
    cli_ctx *ctx = r->im->ctx;
    char a[32];
    if (r->st->over_cap) {
        fprintf(ctx->err, "%s: more than %zu distinct addresses: %s lines of further "
                "addresses were not checked (raise --max-addresses)\n", ctx->program,
                r->im->scan.max_addresses ? r->im->scan.max_addresses
                                          : (size_t)LOGSCAN_MAX_ADDRESSES_DEFAULT,
                grouped(r->st->over_cap, a, sizeof a));
        return CLI_EXIT_FAILURE;
    }
    if (!r->st->used) {
        fprintf(ctx->err, "%s: no line of the logs was counted, so nothing was checked\n",
                ctx->program);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

static error_code read_logs(cli_impact *im, logscan *ls, error_info *e)
{
    bool tty = isatty(fileno(im->ctx->err)) == 1 && im->ctx->err == stderr;
    error_code rc = ERROR_OK;
    for (size_t i = 0; rc == ERROR_OK && i < im->nlogs + im->nmore; i++)
        rc = logscan_file(ls, i < im->nlogs ? im->logs[i] : im->more[i - im->nlogs], e);
    if (tty)
        fputs("\r\033[K", im->ctx->err);
    return rc;
}

static int report_all(report *r)
{
    cli_impact *im = r->im;
    for (size_t i = 0; i < r->naddrs; i++)
        r->requests += r->addrs[i].requests;
    if (im->format == CLI_OUTPUT_JSON)
        put_json(r);
    else if (im->format == CLI_OUTPUT_CSV)
        put_csv(r);
    else
        put_text(r);
    fflush(im->ctx->out);
    put_reading(r);
    int rc = incomplete(r); /* said whatever the lockout */
    if (im->fail_on_lockout && r->res->denied_addresses)
        return CLI_EXIT_LOCKOUT;
    return rc;
}

int cli_impact_run(cli_impact *im, store *st, const impact_change *changes, size_t n,
                   const char *what)
{
    cli_ctx *ctx = im->ctx;
    error_info e = {0};
    logscan_opts o = im->scan;
    if (isatty(fileno(ctx->err)) == 1 && ctx->err == stderr) {
        o.progress = put_progress;
        o.progress_ctx = ctx;
    }
    logscan *ls = NULL;
    impact_index *ix = NULL;
    impact_result res = {0};
    int rc = CLI_EXIT_FAILURE;
    if (logscan_new(&o, &ls, &e) != ERROR_OK || read_logs(im, ls, &e) != ERROR_OK ||
        impact_index_load(st, im->policy, changes, n, &ix, &e) != ERROR_OK) {
        cli_fail(ctx, &e);
        goto done;
    }
    if (!impact_index_rules(ix)) {
        /* a mistyped id, most likely: every address would be denied on both sides */
        fprintf(ctx->err, "%s: policy %s has no rules in this cache, before or after: "
                "nothing to compare (see: %s rules list --policy %s)\n", ctx->program,
                im->policy, ctx->program, im->policy);
        goto done;
    }
    report r = {.im = im, .ix = ix, .st = logscan_get_stats(ls), .res = &res, .what = what};
    r.addrs = logscan_addrs(ls, &r.naddrs);
    if (impact_eval(ix, r.addrs, r.naddrs, &res, &e) != ERROR_OK) {
        cli_fail(ctx, &e);
        goto done;
    }
    rc = report_all(&r);
done:
    impact_result_free(&res);
    impact_index_free(ix);
    logscan_free(ls);
    return rc;
}

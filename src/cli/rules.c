/* `rampart rules …`: IP policy rules in the local cache, queued for the next sync. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/sync.h"
#include "rampart/validate.h"

enum { PAGE_ROWS = 256, PROGRESS_EVERY = 50000 };

typedef struct rule_columns {
    int id, state, policy, action, cidr;
} rule_columns;

static int max_int(int a, size_t b) { return (size_t)a > b ? a : (int)b; }

/* Widths from the first page: later rows may push a cell, never re-flow the table. */
static rule_columns measure(const model_rule *rows, size_t count)
{
    rule_columns w = {2, 5, 6, 6, 4};
    for (size_t i = 0; i < count; i++) {
        w.id = max_int(w.id, strlen(rows[i].id));
        w.state = max_int(w.state, strlen(model_state_name(rows[i].state)));
        w.policy = max_int(w.policy, strlen(rows[i].policy_id));
        w.cidr = max_int(w.cidr, strlen(rows[i].cidr));
    }
    return w;
}

static void put_header(cli_ctx *ctx, const rule_columns *w)
{
    fprintf(ctx->out, "%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w->id, "ID", w->state, "STATE",
            w->policy, "POLICY", w->action, "ACTION", w->cidr, "CIDR", "DESCRIPTION");
}

static void put_row(cli_ctx *ctx, const rule_columns *w, const model_rule *r)
{
    fprintf(ctx->out, "%-*s  %-*s  %-*s  %-*s  ", w->id, r->id, w->state,
            model_state_name(r->state), w->policy, r->policy_id, w->action,
            model_action_name(r->action));
    cli_put_cell(ctx->out, r->cidr, w->cidr, 0);
    fputs("  ", ctx->out);
    cli_put_cell(ctx->out, r->description, 0, 60);
    fputc('\n', ctx->out);
}

static void put_detail(cli_ctx *ctx, const model_rule *r)
{
    cli_put_field(ctx, "id", r->id);
    cli_put_field(ctx, "state", model_state_name(r->state));
    cli_put_field(ctx, "error", r->error);
    cli_put_field(ctx, "policy", r->policy_id);
    cli_put_field(ctx, "action", model_action_name(r->action));
    cli_put_field(ctx, "cidr", r->cidr);
    cli_put_field(ctx, "description", r->description);
    cli_put_field(ctx, "metadata", r->metadata);
    cli_put_field(ctx, "created_at", r->created_at);
    cli_put_field(ctx, "uri", r->uri);
}

static int put_rule(cli_ctx *ctx, const model_rule *r, bool json)
{
    if (json)
        return cli_put_json(ctx, codec_rule_encode(r, CODEC_WITH_STATE | CODEC_PRETTY));
    put_detail(ctx, r);
    return CLI_EXIT_OK;
}

static int rules_create(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_list(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_get(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_delete(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_import(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_export(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_retry(cli_ctx *ctx, const char *path, int argc, char **argv);
static int rules_discard(cli_ctx *ctx, const char *path, int argc, char **argv);

enum { CMD_CREATE, CMD_LIST, CMD_GET, CMD_DELETE, CMD_IMPORT, CMD_EXPORT, CMD_RETRY,
       CMD_DISCARD };

static const cli_command rules_commands[] = {
    [CMD_CREATE] = {"create", rules_create,
     "--cidr CIDR --policy ipp_ID --action allow|deny [--description S] [--metadata S] "
     "[--sync] [--json]",
     "Queue a new rule for the next sync.",
     "Options:\n"
     "  --cidr CIDR         IPv4 or IPv6 range with its mask, at the network address\n"
     "                      (10.0.0.0/8, 2001:db8::/32; one address: 10.1.2.3/32)\n"
     "  --policy ID         the IP policy (ipp_ID)\n"
     "  --action ACTION     allow or deny\n"
     "  --description TEXT  up to 255 bytes\n"
     "  --metadata TEXT     up to 4096 bytes\n"
     "  --sync              push it (and the rest of the queue) now\n"
     "  --json              print the new rule as JSON\n",
     0, 0},
    [CMD_LIST] = {"list", rules_list, "[--policy ipp_ID] [--filter TEXT] [--json]",
     "List cached rules in id order.",
     "Options:\n"
     "  --policy ID     only the rules of this IP policy\n"
     "  --filter TEXT   only rows whose id, cidr, description or policy contains TEXT\n"
     "                  (case-insensitive)\n"
     "  --json          a JSON array of API objects with their \"state\"\n",
     0, 0},
    [CMD_GET] = {"get", rules_get, "ID [--json]", "Show one rule (a local_ id works too).",
     "Options:\n  --json   the API object with its \"state\"\n", 1, 1},
    [CMD_DELETE] = {"delete", rules_delete, "ID...",
     "Delete rules: never-synced ones go at once, synced ones at the next sync.",
     "All ids are checked first: if one is unknown, nothing is deleted.\n", 1, -1},
    [CMD_IMPORT] = {"import", rules_import, "FILE|- [--json]",
     "Import rules from a JSON array of rules or an API list object (all or nothing).",
     "Rules with a remote id (ipr_ID) are taken as already synced; rules without one\n"
     "(or with another machine's local_ id) are queued for creation. Every rule is\n"
     "validated; one bad rule imports nothing and the message names it and why.\n"
     "Options:\n  --json   print {\"imported\": N, \"new\": N, \"synced\": N}\n", 1, 1},
    [CMD_EXPORT] = {"export", rules_export, "[--json]",
     "Print every cached rule as a JSON array in the API's wire format.",
     "The output can be read back with 'rules import'. Rules marked for deletion\n"
     "or deleted remotely are left out. --json is accepted for symmetry: the\n"
     "output is always JSON.\n", 0, 0},
    [CMD_RETRY] = {"retry", rules_retry, "ID...",
     "Queue failed or remotely deleted rules for the next sync again.", NULL, 1, -1},
    [CMD_DISCARD] = {"discard", rules_discard, "ID...",
     "Drop rules the server refused, never received, or deleted remotely.", NULL, 1, -1},
};

/* ---- create ---- */

/* create --sync: push now (report on stderr), then show the rule as it is now. */
static int push_and_show(cli_ctx *ctx, const char *local_id, bool json)
{
    sync_report report;
    FILE *out = ctx->out;
    ctx->out = ctx->err;
    int rc = cli_sync_now(ctx, true, false, false, false, &report);
    ctx->out = out;
    model_rule rule;
    error_info e = {0};
    if (store_rule_get(ctx->st, local_id, &rule, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    int shown = put_rule(ctx, &rule, json);
    return rc != CLI_EXIT_OK ? rc : shown;
}

static int rules_create(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    const char *cidr = NULL, *policy = NULL, *action = NULL, *desc = "", *meta = "";
    bool json = false, sync_now = false;
    const cli_opt opts[] = {
        {"cidr", CLI_OPT_STRING, &cidr},         {"policy", CLI_OPT_STRING, &policy},
        {"action", CLI_OPT_STRING, &action},     {"description", CLI_OPT_STRING, &desc},
        {"metadata", CLI_OPT_STRING, &meta},     {"json", CLI_OPT_FLAG, &json},
        {"sync", CLI_OPT_FLAG, &sync_now},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_CREATE], opts, sizeof opts / sizeof opts[0],
                   argc, argv, &first, &rc))
        return rc;
    if (!cidr || !policy || !action)
        return cli_usage_error(ctx, path, "--cidr, --policy and --action are required");

    model_rule rule = {.state = MODEL_STATE_NEW};
    error_info e = {0};
    /* Check the full strings before copying, so an over-long value is named exactly. */
    if (validate_cidr(cidr, NULL, rule.cidr, sizeof rule.cidr, &e) != ERROR_OK) {
        error_prefix(&e, "--cidr");
        return cli_fail(ctx, &e);
    }
    if (validate_id(policy, "ipp", "policy id", &e) != ERROR_OK ||
        validate_action(action, &rule.action, &e) != ERROR_OK ||
        validate_description(desc, &e) != ERROR_OK || validate_metadata(meta, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    model_copy_text(rule.policy_id, sizeof rule.policy_id, policy);
    model_copy_text(rule.description, sizeof rule.description, desc);
    model_copy_text(rule.metadata, sizeof rule.metadata, meta);
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    if (store_rule_insert(st, &rule, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (sync_now)
        return push_and_show(ctx, rule.id, json);
    if (json)
        return put_rule(ctx, &rule, true);
    fprintf(ctx->out, "created rule %s (%s %s in %s), queued for the next sync\n", rule.id,
            model_action_name(rule.action), rule.cidr, rule.policy_id);
    return CLI_EXIT_OK;
}

/* ---- list / export ---- */

typedef struct rule_walk {
    cli_ctx *ctx;
    store_query query;
    bool json;
    unsigned codec_flags;
    rule_columns widths;
    size_t seen;
} rule_walk;

static error_code walk_emit(void *wp, model_rule *rows, size_t count, error_info *err)
{
    (void)err;
    rule_walk *w = wp;
    if (!w->json && w->seen == 0) {
        w->widths = measure(rows, count);
        put_header(w->ctx, &w->widths);
    }
    for (size_t i = 0; i < count; i++, w->seen++) {
        if (!w->json) {
            put_row(w->ctx, &w->widths, &rows[i]);
            continue;
        }
        char *text = codec_rule_encode(&rows[i], w->codec_flags);
        cli_json_array_sep(w->ctx, w->seen);
        fputs(text ? text : "null", w->ctx->out);
        free(text);
    }
    return ERROR_OK;
}

/* Every matching row through the store's keyset walk. */
static int walk_rules(rule_walk *w)
{
    store *st = cli_store(w->ctx);
    if (!st)
        return w->ctx->store_exit;
    error_info e = {0};
    if (store_rule_walk(st, &w->query, PAGE_ROWS, walk_emit, w, &e) != ERROR_OK)
        return cli_fail(w->ctx, &e);
    if (w->json)
        cli_json_array_end(w->ctx, w->seen);
    else if (w->seen == 0)
        fprintf(w->ctx->err, "no rules%s\n",
                w->query.filter || w->query.policy_id ? " match" : " in the cache");
    return CLI_EXIT_OK;
}

static int rules_list(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    rule_walk w = {.ctx = ctx, .codec_flags = CODEC_WITH_STATE};
    const cli_opt opts[] = {
        {"policy", CLI_OPT_STRING, &w.query.policy_id},
        {"filter", CLI_OPT_STRING, &w.query.filter},
        {"json", CLI_OPT_FLAG, &w.json},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_LIST], opts, sizeof opts / sizeof opts[0],
                   argc, argv, &first, &rc))
        return rc;
    error_info e = {0};
    if (w.query.policy_id &&
        validate_id(w.query.policy_id, "ipp", "--policy", &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return walk_rules(&w);
}

static int rules_export(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    /* What the cache holds as existing: rows on their way out are left behind, so
     * the file imports back without resurrecting them. */
    rule_walk w = {.ctx = ctx, .json = true, .codec_flags = 0};
    for (int s = 0; s < MODEL_STATE_COUNT; s++) {
        if (s != MODEL_STATE_DELETING && s != MODEL_STATE_REMOTE_DELETED)
            w.query.states |= 1u << s;
    }
    bool json = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_EXPORT], opts, 1, argc, argv, &first, &rc))
        return rc;
    return walk_rules(&w);
}

/* ---- get / delete ---- */

static int rules_get(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool json = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_GET], opts, 1, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    model_rule rule;
    error_info e = {0};
    if (store_rule_get(st, argv[first], &rule, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return put_rule(ctx, &rule, json);
}

static int rules_delete(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_DELETE], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_delete_ids(ctx, store_rule_delete, argc - first, argv + first);
}

/* ---- import ---- */

typedef struct import_state {
    cli_ctx *ctx;
    store *st;
    size_t created, synced;
    bool progress;
} import_state;

static error_code import_one(void *ctxp, const model_rule *in, size_t index, error_info *err)
{
    import_state *imp = ctxp;
    model_rule rule = *in;
    /* A local id names a row of another machine's cache: it is queued anew here. */
    if (!rule.id[0] || validate_is_local_id(rule.id)) {
        rule.id[0] = '\0';
        rule.uri[0] = '\0';
        rule.state = MODEL_STATE_NEW;
    } else {
        if (validate_id(rule.id, "ipr", "rule id", err) != ERROR_OK)
            return error_prefix(err, "rule %zu", index + 1);
        rule.state = MODEL_STATE_SYNCED;
    }
    rule.error[0] = '\0';
    if (validate_uri(rule.uri, "uri", err) != ERROR_OK ||
        validate_uri(rule.policy_uri, "ip_policy.uri", err) != ERROR_OK ||
        (rule.created_at[0] && validate_timestamp(rule.created_at, "created_at", err)) ||
        validate_rule(&rule, err) != ERROR_OK || store_rule_insert(imp->st, &rule, err))
        return error_prefix(err, "rule %zu", index + 1);
    if (rule.state == MODEL_STATE_NEW)
        imp->created++;
    else
        imp->synced++;
    if (imp->progress && (index + 1) % PROGRESS_EVERY == 0)
        fprintf(imp->ctx->err, "\rimporting: %zu rules", index + 1);
    return ERROR_OK;
}

/* The whole import in one transaction: any bad rule rolls everything back. */
static error_code import_all(import_state *imp, const char *data, size_t len,
                             error_info *e)
{
    error_code rc = store_begin(imp->st, e);
    if (rc != ERROR_OK)
        return rc;
    rc = codec_rule_stream(data, len, import_one, imp, e);
    if (rc == ERROR_OK)
        return store_commit(imp->st, e);
    store_rollback(imp->st);
    return rc;
}

static int rules_import(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool json = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_IMPORT], opts, 1, argc, argv, &first, &rc))
        return rc;
    /* The file first: a missing one must not leave a new, empty database behind. */
    char *data;
    size_t len;
    if (!cli_read_file(ctx, argv[first], &data, &len))
        return CLI_EXIT_USAGE;
    import_state imp = {.ctx = ctx, .progress = isatty(fileno(ctx->err)) == 1};
    if (!(imp.st = cli_store(ctx))) {
        free(data);
        return ctx->store_exit;
    }
    error_info e = {0};
    error_code status = import_all(&imp, data, len, &e);
    free(data);
    if (imp.progress)
        fputs("\r\033[K", ctx->err);
    if (status != ERROR_OK) {
        error_prefix(&e, "%s: nothing imported", argv[first]);
        return cli_fail(ctx, &e);
    }
    if (json)
        fprintf(ctx->out, "{\"imported\": %zu, \"new\": %zu, \"synced\": %zu}\n",
                imp.created + imp.synced, imp.created, imp.synced);
    else
        fprintf(ctx->out, "imported %zu rules (%zu queued for creation, %zu already synced)\n",
                imp.created + imp.synced, imp.created, imp.synced);
    return CLI_EXIT_OK;
}

static int rules_retry(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_RETRY], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_retry_ids(ctx, store_rule_retry, argc - first, argv + first);
}

static int rules_discard(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &rules_commands[CMD_DISCARD], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_delete_ids(ctx, store_rule_discard, argc - first, argv + first);
}

int cli_rules(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return cli_dispatch(ctx, path, rules_commands,
                        sizeof rules_commands / sizeof rules_commands[0], argc, argv);
}

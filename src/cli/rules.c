/*
 * `rampart rules …`: what is an IP policy rule's own on the command line: the line
 * a create prints, the fields its table and detail view show, and import. The
 * rest, the group's entry (cli_rules) included, is one piece of code for every
 * kind (objects.c, cli_object.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_object.h"
#include "rampart/codec.h"
#include "rampart/termsafe.h"

enum { PROGRESS_EVERY = 50000 };

/* ---- create ---- */

static void rule_created(cli_ctx *ctx, const model_object *obj)
{
    const model_rule *rule = &obj->rule;
    termsafe_fprintf(ctx->out, "created rule %s (%s %s in %s), queued for the next sync\n",
                     rule->id, model_action_name(rule->action), rule->cidr, rule->policy_id);
}

const cli_object_kind cli_object_rules = {
    .kind = MODEL_KIND_RULE,
    .columns = {{"POLICY", "ip_policy_id", 0}, {"ACTION", "action", 0}, {"CIDR", "cidr", 0},
                {"DESCRIPTION", "description", 0}},
    .details = {{"policy", "ip_policy_id", 0}, {"action", "action", 0}, {"cidr", "cidr", 0},
                {"description", "description", 0}, {"metadata", "metadata", 0}},
    .wide = {{"METADATA", "metadata", 40}, {"CREATED_AT", "created_at", 0}, {"URI", "uri", 0},
             {"POLICY_URI", "policy_uri", 0}, {"ERROR", "error", 0}},
    .policy_prefix = "ipp",
    .put_created = rule_created,
};

/* ---- import ---- */

typedef struct import_state {
    cli_ctx *ctx;
    store_import *bulk;
    size_t count[STORE_IMPORT_UNCHANGED + 1]; /* rows per store_import_result */
    bool progress;
} import_state;

/* No rule object in JSON is shorter than this ({"cidr":"1.0.0.0/8",…} with a
 * policy id and an action), so a file's size / it bounds the rules it can hold:
 * the estimate the store's bulk import weighs against the table's size. */
enum { IMPORT_MIN_RULE_BYTES = 40 };

/* The input, read in chunks (codec_read_fn): the file is never held whole. */
typedef struct import_input {
    FILE *f;
} import_input;

static error_code read_input(void *ctxp, char *buf, size_t size, size_t *got, error_info *err)
{
    import_input *in = ctxp;
    *got = fread(buf, 1, size, in->f);
    if (*got == 0 && ferror(in->f))
        return error_set(err, ERROR_IO, "cannot read: %s", strerror(errno));
    return ERROR_OK;
}

/* The store matches each rule with the cache (store.h: store_import_add). */
static error_code import_one(void *ctxp, const model_rule *in, size_t index, error_info *err)
{
    import_state *imp = ctxp;
    model_object obj;
    obj.kind = MODEL_KIND_RULE;
    obj.rule = *in;
    store_import_result result;
    if (store_import_add(imp->bulk, &obj, &result, err) != ERROR_OK)
        return err->code;
    imp->count[result]++;
    if (imp->progress && (index + 1) % PROGRESS_EVERY == 0)
        fprintf(imp->ctx->err, "\rimporting: %zu rules", index + 1);
    return ERROR_OK;
}

/* The whole import in one transaction: any bad rule rolls everything back. */
static error_code import_all(import_state *imp, store *st, import_input *in,
                             size_t expected_rows, error_info *e)
{
    error_code rc = store_begin(st, e);
    if (rc == ERROR_OK)
        rc = store_import_begin(st, MODEL_KIND_RULE, expected_rows, &imp->bulk, e);
    if (rc == ERROR_OK)
        rc = codec_rule_stream_read(read_input, in, import_one, imp, e);
    if (rc == ERROR_OK) {
        rc = store_import_finish(imp->bulk, e);
        imp->bulk = NULL;
    }
    if (rc == ERROR_OK)
        return store_commit(st, e);
    store_import_free(imp->bulk);
    store_rollback(st);
    return rc;
}

static void put_summary(cli_ctx *ctx, const size_t *count, bool json)
{
    size_t created = count[STORE_IMPORT_CREATED], synced = count[STORE_IMPORT_SYNCED],
           updated = count[STORE_IMPORT_UPDATED], same = count[STORE_IMPORT_UNCHANGED];
    size_t written = created + synced + updated;
    if (json) {
        fprintf(ctx->out,
                "{\"imported\": %zu, \"new\": %zu, \"synced\": %zu, \"updated\": %zu, "
                "\"unchanged\": %zu}\n",
                written, created, synced, updated, same);
    } else if (written == 0) {
        if (same)
            fprintf(ctx->out, "Nothing to import: all %zu rules are already in the cache\n",
                    same);
        else
            fputs("Nothing to import: the file holds no rules\n", ctx->out);
    } else {
        fprintf(ctx->out, "imported %zu rules (%zu queued for creation, %zu already synced",
                written, created, synced);
        if (updated)
            fprintf(ctx->out, ", %zu updated", updated);
        fputc(')', ctx->out);
        if (same)
            fprintf(ctx->out, "; %zu unchanged", same);
        fputc('\n', ctx->out);
    }
}

/* The input, opened before the cache so that a missing file leaves no new, empty
 * database behind; *expected is the most rules its size allows (0: a pipe). */
static bool open_input(cli_ctx *ctx, const char *path, import_input *in, size_t *expected)
{
    bool is_stdin = strcmp(path, "-") == 0;
    in->f = is_stdin ? stdin : fopen(path, "rb");
    if (!in->f) {
        termsafe_fprintf(ctx->err, "%s: cannot open %s: %s\n", ctx->program, path,
                         strerror(errno));
        return false;
    }
    struct stat sb;
    *expected = fstat(fileno(in->f), &sb) == 0 && S_ISREG(sb.st_mode)
                    ? (size_t)sb.st_size / IMPORT_MIN_RULE_BYTES
                    : 0;
    return true;
}

int cli_object_import_rules(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    bool json = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, 1, argc, argv, &first, &rc))
        return rc;
    import_input in;
    size_t expected;
    if (!open_input(ctx, argv[first], &in, &expected))
        return CLI_EXIT_USAGE;
    import_state imp = {.ctx = ctx, .progress = isatty(fileno(ctx->err)) == 1};
    store *st = cli_store(ctx);
    error_info e = {0};
    error_code status = st ? import_all(&imp, st, &in, expected, &e) : ERROR_OK;
    if (in.f != stdin)
        fclose(in.f);
    if (!st)
        return ctx->store_exit;
    if (imp.progress)
        fputs("\r\033[K", ctx->err);
    if (status != ERROR_OK) {
        error_prefix(&e, "%s: nothing imported", argv[first]);
        return cli_fail(ctx, &e);
    }
    put_summary(ctx, imp.count, json);
    return CLI_EXIT_OK;
}

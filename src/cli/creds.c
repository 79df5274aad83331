/* `rampart creds …`: tunnel credentials in the local cache, and their tokens. */
#include <stdlib.h>
#include <string.h>

#include "rampart/cli.h"
#include "rampart/codec.h"
#include "rampart/sync.h"
#include "rampart/validate.h"

enum { PAGE_ROWS = 256 };

static int creds_create(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_list(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_get(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_delete(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_token(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_retry(cli_ctx *ctx, const char *path, int argc, char **argv);
static int creds_discard(cli_ctx *ctx, const char *path, int argc, char **argv);

enum { CMD_CREATE, CMD_LIST, CMD_GET, CMD_DELETE, CMD_TOKEN, CMD_RETRY, CMD_DISCARD };

static const cli_command creds_commands[] = {
    [CMD_CREATE] = {"create", creds_create,
     "[--description S] [--metadata S] [--acl RULE]... [--owner ID] [--sync] [--json]",
     "Queue a new tunnel credential; its token arrives with the sync that creates it.",
     "Options:\n"
     "  --description TEXT  who or what will use it (up to 255 bytes); agents can\n"
     "                      fetch the token by this name\n"
     "  --metadata TEXT     up to 4096 bytes\n"
     "  --acl RULE          a bind rule, repeatable: bind:example.com,\n"
     "                      bind:*.example.com, bind:env=prod, bind:host.example.net:20002,\n"
     "                      bind:*; or '*' alone (no restriction, like no --acl)\n"
     "  --owner ID          owner (usr_ID or bot_ID); default: the API key's owner\n"
     "  --sync              push it now and print its token (shown this once here;\n"
     "                      'creds token ID' prints it again on this machine)\n"
     "  --json              print the new credential as JSON\n",
     0, 0},
    [CMD_LIST] = {"list", creds_list, "[--filter TEXT] [--json]",
     "List cached credentials in id order (tokens are never listed).",
     "Options:\n"
     "  --filter TEXT   only rows whose id, description, owner or ACL contains TEXT\n"
     "  --json          a JSON array of API objects (token null) with their \"state\"\n",
     0, 0},
    [CMD_GET] = {"get", creds_get, "ID [--json]",
     "Show one credential (a local_ id works too); the token is not shown.",
     "Options:\n  --json   the API object (token null) with its \"state\"\n", 1, 1},
    [CMD_DELETE] = {"delete", creds_delete, "ID...",
     "Delete credentials: never-synced ones go at once, synced ones at the next sync.",
     "All ids are checked first: if one is unknown, nothing is deleted.\n", 1, -1},
    [CMD_TOKEN] = {"token", creds_token, "ID",
     "Print the credential's token, if this machine holds it.",
     "The remote API hands a token out once, when the credential is created, so only\n"
     "the machine whose sync created it holds it. Exit status 3 when it is not held.\n",
     1, 1},
    [CMD_RETRY] = {"retry", creds_retry, "ID...",
     "Queue failed, orphaned or remotely deleted credentials for the next sync again.",
     "failed: sent again as it is (fix it first by discarding and recreating if the\n"
     "server's reason says so); remote_deleted: created again, with a new token;\n"
     "orphaned: the next sync deletes the copy whose token was lost and creates a\n"
     "new one.\n", 1, -1},
    [CMD_DISCARD] = {"discard", creds_discard, "ID...",
     "Drop credentials the server refused or never received.",
     "An orphaned credential (its token was lost) is deleted remotely by the next\n"
     "sync and not created again.\n", 1, -1},
};

/* ---- output ---- */

static void put_detail(cli_ctx *ctx, const model_cred *c)
{
    cli_put_field(ctx, "id", c->id);
    cli_put_field(ctx, "state", model_state_name(c->state));
    cli_put_field(ctx, "error", c->error);
    cli_put_field(ctx, "description", c->description);
    cli_put_field(ctx, "metadata", c->metadata);
    cli_put_field(ctx, "owner", c->owner_id);
    if (c->acl.count == 0)
        cli_put_field(ctx, "acl", "(none: no restriction)");
    for (size_t i = 0; i < c->acl.count; i++)
        cli_put_field(ctx, i == 0 ? "acl" : "", c->acl.rules[i]);
    cli_put_field(ctx, "created_at", c->created_at);
    cli_put_field(ctx, "uri", c->uri);
}

static int put_cred(cli_ctx *ctx, const model_cred *c, bool json)
{
    if (json)
        return cli_put_json(ctx, codec_cred_encode(c, CODEC_WITH_STATE | CODEC_PRETTY));
    put_detail(ctx, c);
    return CLI_EXIT_OK;
}

/* ACL rules joined by ", " into `out`, cut to fit. */
static void join_acl(const model_acl *acl, char *out, size_t size)
{
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < acl->count && used + 1 < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", acl->rules[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

typedef struct cred_columns {
    int id, state, owner, description;
} cred_columns;

static int widest(int w, const char *s) { return (int)strlen(s) > w ? (int)strlen(s) : w; }

static cred_columns measure(const model_cred *rows, size_t count)
{
    cred_columns w = {2, 5, 5, 11};
    for (size_t i = 0; i < count; i++) {
        w.id = widest(w.id, rows[i].id);
        w.state = widest(w.state, model_state_name(rows[i].state));
        w.owner = widest(w.owner, rows[i].owner_id);
        w.description = widest(w.description, rows[i].description);
    }
    if (w.description > 40)
        w.description = 40;
    return w;
}

static void put_row(cli_ctx *ctx, const cred_columns *w, const model_cred *c)
{
    char acl[256];
    join_acl(&c->acl, acl, sizeof acl);
    fprintf(ctx->out, "%-*s  %-*s  ", w->id, c->id, w->state, model_state_name(c->state));
    cli_put_cell(ctx->out, c->owner_id, w->owner, 0);
    fputs("  ", ctx->out);
    cli_put_cell(ctx->out, c->description, w->description, w->description);
    fputs("  ", ctx->out);
    cli_put_cell(ctx->out, acl[0] ? acl : "-", 0, 60);
    fputc('\n', ctx->out);
}

/* ---- create ---- */

/*
 * create --sync: push the queue now (the report goes to stderr so stdout keeps the
 * credential), then show the credential as the remote made it, with its token.
 */
static int push_and_show(cli_ctx *ctx, const model_cred *local, bool json)
{
    sync_report report;
    FILE *out = ctx->out;
    ctx->out = ctx->err;
    int rc = cli_sync_now(ctx, true, false, false, false, &report);
    ctx->out = out;
    model_cred cred = {0};
    char *token = NULL;
    error_info e = {0};
    if (store_cred_get(ctx->st, local->id, &cred, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (store_token_get(ctx->st, cred.id, &token, &e) == ERROR_OK)
        model_cred_set_token(&cred, token, &e);
    if (token) {
        model_wipe(token, strlen(token));
        free(token);
    }
    if (json) {
        cli_put_json(ctx, codec_cred_encode(&cred, CODEC_WITH_STATE | CODEC_PRETTY));
    } else {
        fprintf(ctx->out, "credential %s (%s)\n", cred.id, model_state_name(cred.state));
        if (cred.token)
            fprintf(ctx->out, "token: %s\n", cred.token);
    }
    model_cred_clear(&cred);
    return rc;
}


static error_code fill_cred(model_cred *cred, const char *desc, const char *meta,
                            const char *owner, const cli_list *acl, error_info *err)
{
    if (validate_description(desc, err) != ERROR_OK || validate_metadata(meta, err) != ERROR_OK)
        return ERROR_INVALID;
    if (owner && validate_owner_id(owner, err) != ERROR_OK)
        return ERROR_INVALID;
    if (strlen(meta) > SYNC_USER_METADATA_MAX)
        return error_set(err, ERROR_INVALID,
                         "metadata is %zu bytes; a credential's limit is %d (rampart keeps "
                         "the rest of the API's 4096 for its creation marker)",
                         strlen(meta), SYNC_USER_METADATA_MAX);
    model_copy_text(cred->description, sizeof cred->description, desc);
    model_copy_text(cred->metadata, sizeof cred->metadata, meta);
    model_copy_text(cred->owner_id, sizeof cred->owner_id, owner ? owner : "");
    for (size_t i = 0; i < acl->count; i++) {
        if (model_acl_add(&cred->acl, acl->items[i], err) != ERROR_OK)
            return ERROR_NOMEM;
    }
    cred->state = MODEL_STATE_NEW;
    return validate_cred(cred, err);
}

static int creds_create(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    const char *desc = "", *meta = "", *owner = NULL;
    cli_list acl = {0};
    bool json = false, sync_now = false;
    const cli_opt opts[] = {
        {"description", CLI_OPT_STRING, &desc}, {"metadata", CLI_OPT_STRING, &meta},
        {"owner", CLI_OPT_STRING, &owner},      {"acl", CLI_OPT_LIST, &acl},
        {"json", CLI_OPT_FLAG, &json},          {"sync", CLI_OPT_FLAG, &sync_now},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_CREATE], opts, sizeof opts / sizeof opts[0],
                   argc, argv, &first, &rc))
        return rc;
    model_cred cred = {0};
    error_info e = {0};
    store *st = NULL;
    // NOLINTNEXTLINE(bugprone-branch-clone): two failures told alike, steps kept in order
    if (fill_cred(&cred, desc, meta, owner, &acl, &e) != ERROR_OK) {
        rc = cli_fail(ctx, &e);
    } else if (!(st = cli_store(ctx))) {
        rc = ctx->store_exit;
    } else if (store_cred_insert(st, &cred, &e) != ERROR_OK) {
        rc = cli_fail(ctx, &e);
    } else if (sync_now) {
        rc = push_and_show(ctx, &cred, json);
    } else if (json) {
        rc = put_cred(ctx, &cred, true);
    } else {
        fprintf(ctx->out,
                "created credential %s, queued for the next sync (its token arrives then: "
                "%s creds token %s)\n",
                cred.id, ctx->program, cred.id);
        rc = CLI_EXIT_OK;
    }
    model_cred_clear(&cred);
    return rc;
}

/* ---- list ---- */

typedef struct cred_walk {
    cli_ctx *ctx;
    bool json;
    size_t seen;
    cred_columns widths;
} cred_walk;

static error_code emit_page(void *wp, model_cred *rows, size_t count, error_info *err)
{
    (void)err;
    cred_walk *w = wp;
    if (!w->json && w->seen == 0) {
        w->widths = measure(rows, count);
        fprintf(w->ctx->out, "%-*s  %-*s  %-*s  %-*s  %s\n", w->widths.id, "ID",
                w->widths.state, "STATE", w->widths.owner, "OWNER", w->widths.description,
                "DESCRIPTION", "ACL");
    }
    for (size_t i = 0; i < count; i++, w->seen++) {
        if (!w->json) {
            put_row(w->ctx, &w->widths, &rows[i]);
            continue;
        }
        char *text = codec_cred_encode(&rows[i], CODEC_WITH_STATE);
        cli_json_array_sep(w->ctx, w->seen);
        fputs(text ? text : "null", w->ctx->out);
        free(text);
    }
    return ERROR_OK;
}

static int creds_list(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    store_query q = {0};
    cred_walk w = {.ctx = ctx};
    const cli_opt opts[] = {{"filter", CLI_OPT_STRING, &q.filter}, {"json", CLI_OPT_FLAG, &w.json}};
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_LIST], opts, 2, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    error_info e = {0};
    if (store_cred_walk(st, &q, PAGE_ROWS, emit_page, &w, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (w.json)
        cli_json_array_end(ctx, w.seen);
    else if (w.seen == 0)
        fprintf(ctx->err, "no credentials%s\n", q.filter ? " match" : " in the cache");
    return CLI_EXIT_OK;
}

/* ---- get / delete / token ---- */

static int creds_get(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool json = false;
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_GET], opts, 1, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    model_cred cred = {0};
    error_info e = {0};
    if (store_cred_get(st, argv[first], &cred, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    rc = put_cred(ctx, &cred, json);
    model_cred_clear(&cred);
    return rc;
}

static int creds_delete(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_DELETE], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_delete_ids(ctx, store_cred_delete, argc - first, argv + first);
}

static int creds_token(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_TOKEN], NULL, 0, argc, argv, &first, &rc))
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    char *token = NULL;
    error_info e = {0};
    if (store_token_get(st, argv[first], &token, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    fprintf(ctx->out, "%s\n", token);
    fflush(ctx->out);
    model_wipe(token, strlen(token));
    free(token);
    return CLI_EXIT_OK;
}

static int creds_retry(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_RETRY], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_retry_ids(ctx, store_cred_retry, argc - first, argv + first);
}

static int creds_discard(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    int first, rc;
    if (!cli_parse(ctx, path, &creds_commands[CMD_DISCARD], NULL, 0, argc, argv, &first, &rc))
        return rc;
    return cli_delete_ids(ctx, store_cred_discard, argc - first, argv + first);
}

int cli_creds(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return cli_dispatch(ctx, path, creds_commands,
                        sizeof creds_commands / sizeof creds_commands[0], argc, argv);
}

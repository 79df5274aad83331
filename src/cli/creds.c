/*
 * `rampart creds …`: what is a tunnel credential's own on the command line: the
 * line a create prints, the fields its table and detail view show, and its token
 * (printed by `creds token` and after create --sync). The rest, the group's entry
 * (cli_creds) included, is one piece of code for every kind (objects.c,
 * cli_object.h).
 */
#include "cli_object.h"
#include "rampart/termsafe.h"

/* ---- create ---- */

static void cred_created(cli_ctx *ctx, const model_object *obj)
{
    termsafe_fprintf(ctx->out,
                     "created credential %s, queued for the next sync (its token arrives "
                     "then: %s creds token %s)\n",
                     obj->cred.id, ctx->program, obj->cred.id);
}

/* After create --sync: the credential as the remote made it, and its token, shown
 * this once here (`creds token ID` prints it again on this machine). */
static void cred_synced(cli_ctx *ctx, const model_object *obj)
{
    const model_cred *cred = &obj->cred;
    termsafe_fprintf(ctx->out, "credential %s (%s)\n", cred->id,
                     model_state_name(cred->state));
    if (!cred->token) {
        if (cred->error[0]) /* why there is none: a malformed token the store refused */
            termsafe_fprintf(ctx->out, "error: %s\n", cred->error);
        return;
    }
    /* The store keeps only a token's shape; termsafe all the same, so no path
     * prints a token raw. */
    fputs("token: ", ctx->out);
    termsafe_fputs(cred->token, ctx->out);
    fputc('\n', ctx->out);
}

const cli_object_kind cli_object_creds = {
    .kind = MODEL_KIND_CRED,
    .put_created = cred_created,
    .put_synced = cred_synced,
    .columns = {{"OWNER", "owner_id", 0}, {"DESCRIPTION", "description", 40},
                {"ACL", "acl", 0}},
    .details = {{"description", "description", 0}, {"metadata", "metadata", 0},
                {"owner", "owner_id", 0}, {"acl", "acl", 0}},
    .wide = {{"METADATA", "metadata", 40}, {"CREATED_AT", "created_at", 0}, {"URI", "uri", 0},
             {"ERROR", "error", 0}},
};

/* ---- token ---- */

int cli_object_token(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    int first, rc;
    store *st = cli_object_open(ctx, call, NULL, 0, argc, argv, &first, &rc);
    if (!st)
        return rc;
    char *token = NULL;
    error_info e = {0};
    if (store_token_get(st, argv[first], &token, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    termsafe_fputs(token, ctx->out); /* a token's shape (store_token_get): as it is */
    fputc('\n', ctx->out);
    fflush(ctx->out);
    /* Printed: seen, so the console does not offer it again as new. Best effort: a
     * cache it cannot write (read-only file system) still hands the token out. */
    store_token_mark_shown(st, argv[first], NULL, NULL);
    model_free_wiped(token);
    return CLI_EXIT_OK;
}

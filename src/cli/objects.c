/*
 * `rampart rules …` and `rampart creds …`: both groups (cli.h), their command table
 * and the commands whose logic is the same for every kind. See cli_object.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_follower.h"
#include "cli_object.h"
#include "cli_sync.h"
#include "rampart/codec.h"
#include "rampart/sync.h"
#include "rampart/validate.h"
#include "rampart/termsafe.h"

/* ---- create ---- */

/* A kind whose create reply carries a token: the sync that created the row left it
 * in the store, and the row shown after create --sync carries it. */
static void attach_token(store *st, model_object *obj)
{
    char *token = NULL;
    error_info e = {0};
    if (store_token_get(st, model_object_id(obj), &token, &e) == ERROR_OK)
        model_cred_set_token(&obj->cred, token, &e);
    model_free_wiped(token);
}

/* create --sync: push the new row now, then show it as the sync left it. */
static int push_and_show(cli_ctx *ctx, const cli_object_kind *k, const char *local_id,
                         bool json)
{
    int rc = cli_object_push_one(ctx, k->kind, local_id);
    model_object obj;
    model_object_init(&obj, k->kind);
    error_info e = {0};
    if (store_get(ctx->st, k->kind, local_id, &obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    bool token = kind_get(k->kind)->has_token;
    if (token)
        attach_token(ctx->st, &obj);
    int shown = CLI_EXIT_OK;
    if (json || !k->put_synced)
        shown = cli_object_put(ctx, &obj, json);
    else
        k->put_synced(ctx, &obj);
    /* Printed on stdout: seen, so the console does not show it again as new. */
    if (token && obj.cred.token)
        store_token_mark_shown(ctx->st, obj.cred.id, NULL, NULL);
    model_object_clear(&obj);
    return rc != CLI_EXIT_OK ? rc : shown;
}

/* The checked row goes into the store (its one write path, which checks it again),
 * then is pushed or shown. */
static int create_stored(cli_ctx *ctx, const cli_object_kind *k, cli_object_new *c)
{
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    error_info e = {0};
    if (store_insert(st, &c->obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (c->sync)
        return push_and_show(ctx, k, model_object_id(&c->obj), c->json);
    if (c->json)
        return cli_object_put(ctx, &c->obj, true);
    k->put_created(ctx, &c->obj);
    return CLI_EXIT_OK;
}

static int object_create(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    const cli_object_kind *k = cli_object_kind_of(call->kind);
    cli_object_new c = {.json = false};
    model_object_init(&c.obj, call->kind);
    /* The kind checks its options before the store opens: bad input must not leave
     * a new, empty database behind. */
    int rc = cli_object_create_fields(ctx, call, argc, argv, &c);
    if (rc == CLI_GO_ON)
        rc = create_stored(ctx, k, &c);
    model_object_clear(&c.obj);
    return rc;
}

/* ---- list / export / get ---- */

static int object_list(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    const cli_object_kind *k = cli_object_kind_of(call->kind);
    store_query q = {.sort = STORE_SORT_ID};
    cli_object_out_args a = {0};
    const cli_opt opts[] = {
        {"filter", CLI_OPT_STRING, &q.filter},
        CLI_OBJECT_LIST_OPTS(&a, &call->kind),
        {"policy", CLI_OPT_STRING, &q.policy_id}, /* last: kinds kept in a policy only */
    };
    size_t nopts = sizeof opts / sizeof opts[0] - (k->policy_prefix ? 0 : 1);
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, nopts, argc, argv, &first, &rc))
        return rc;
    cli_object_out out;
    if ((rc = cli_object_out_check(ctx, call, &a, &out)) != CLI_GO_ON)
        return rc;
    error_info e = {0};
    if (q.policy_id && validate_id(q.policy_id, k->policy_prefix, "--policy", &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return cli_object_list(ctx, call->kind, &q, &out);
}

static int object_export(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    /* What the cache holds as existing: rows on their way out are left behind, so
     * the file imports back without resurrecting them. */
    store_query q = {.sort = STORE_SORT_ID};
    for (int s = 0; s < MODEL_STATE_COUNT; s++) {
        if (s != MODEL_STATE_DELETING && s != MODEL_STATE_REMOTE_DELETED)
            q.states |= 1u << s;
    }
    bool json = false; /* accepted for symmetry: the output is always JSON */
    const cli_opt opts[] = {{"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, 1, argc, argv, &first, &rc))
        return rc;
    const cli_object_out out = {.format = CLI_OUTPUT_JSON, .sort = STORE_SORT_ID};
    return cli_object_list(ctx, call->kind, &q, &out);
}

static int object_get(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    cli_object_out_args a = {0};
    const cli_opt opts[] = {CLI_OBJECT_OUT_OPTS(&a)};
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    cli_object_out out;
    if ((rc = cli_object_out_check(ctx, call, &a, &out)) != CLI_GO_ON)
        return rc;
    store *st = cli_store_existing(ctx);
    if (!st)
        return ctx->store_exit;
    model_object obj;
    model_object_init(&obj, call->kind);
    error_info e = {0};
    if (store_get(st, call->kind, argv[first], &obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    rc = cli_object_get_as(ctx, st, &obj, &out);
    model_object_clear(&obj);
    return rc;
}

/* ---- delete / discard / retry: a batch of ids ---- */

/* What a batch did to one id: store_delete_result's, a retry's, and a discard's
 * removal of a conflict whose remote side is gone. */
typedef enum batch_result {
    BATCH_REMOVED,
    BATCH_MARKED,
    BATCH_ALREADY,
    BATCH_REVERTED,
    BATCH_QUEUED,
    BATCH_DROPPED
} batch_result;

/* What a batch does to one id (a delete, a discard, a retry). */
typedef error_code (*batch_op)(store *st, model_kind kind, const char *id,
                               batch_result *result, error_info *err);

typedef struct batch {
    batch_op op;
    const char *refused; /* a refusal's message starts so */
    bool can_sync;       /* takes --sync: push these rows now */
} batch;

/* Per result: the line printed for the id, and whether --sync pushes the row. */
static const struct {
    const char *text;
    bool pushed;
} batch_outcomes[] = {
    [BATCH_REMOVED] = {"never synced: removed", false},
    [BATCH_MARKED] = {"marked for deletion: the next sync deletes it remotely", true},
    [BATCH_ALREADY] = {"already marked for deletion", true},
    [BATCH_REVERTED] = {"edit discarded: back to the remote's values (synced)", false},
    [BATCH_QUEUED] = {"queued for the next sync", false},
    [BATCH_DROPPED] = {"conflict dropped: removed here (nothing of it on the remote)", false},
};

static batch_result from_delete(store_delete_result r)
{
    switch (r) {
    case STORE_DELETE_REMOVED:
        return BATCH_REMOVED;
    case STORE_DELETE_MARKED:
        return BATCH_MARKED;
    case STORE_DELETE_REVERTED:
        return BATCH_REVERTED;
    case STORE_DELETE_ALREADY:
    default:
        return BATCH_ALREADY;
    }
}

static error_code delete_one(store *st, model_kind kind, const char *id, batch_result *result,
                             error_info *err)
{
    store_delete_result r = STORE_DELETE_ALREADY;
    error_code rc = store_delete(st, kind, id, &r, err);
    *result = from_delete(r);
    return rc;
}

static error_code retry_one(store *st, model_kind kind, const char *id, batch_result *result,
                            error_info *err)
{
    *result = BATCH_QUEUED;
    return store_retry(st, kind, id, err);
}

/* A discard (the store's): a conflict it removes is said to be one, not a row
 * that was never synced. */
static error_code discard_one(store *st, model_kind kind, const char *id,
                              batch_result *result, error_info *err)
{
    model_object obj;
    model_object_init(&obj, kind);
    error_code rc = store_get(st, kind, id, &obj, err);
    bool conflict = model_object_state(&obj) == MODEL_STATE_CONFLICT;
    model_object_clear(&obj);
    store_delete_result r = STORE_DELETE_ALREADY;
    if (rc == ERROR_OK)
        rc = store_discard(st, kind, id, &r, err);
    *result = conflict && r == STORE_DELETE_REMOVED ? BATCH_DROPPED : from_delete(r);
    return rc;
}

static const batch deletes = {delete_one, "nothing deleted", true};
static const batch discards = {discard_one, "nothing deleted", false};
static const batch retries = {retry_one, "nothing changed", false};

/* Every id in one transaction: one refused id changes nothing. */
static error_code batch_all(store *st, model_kind kind, batch_op op, char **ids, int count,
                            batch_result *results, error_info *e)
{
    if (store_begin(st, e) != ERROR_OK)
        return e->code;
    error_code rc = ERROR_OK;
    for (int i = 0; rc == ERROR_OK && i < count; i++)
        rc = op(st, kind, ids[i], &results[i], e);
    if (rc != ERROR_OK) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st, e);
}

/* --sync of a batch: the rows it marked, pushed now. */
static int push_batch(cli_ctx *ctx, model_kind kind, char **ids, int count,
                      const batch_result *results)
{
    sync_row_ref *refs = calloc((size_t)count, sizeof *refs);
    if (!refs)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    size_t n = 0;
    for (int i = 0; i < count; i++) {
        if (!batch_outcomes[results[i]].pushed)
            continue;
        refs[n].kind = kind;
        model_copy_text(refs[n++].id, sizeof refs[n].id, ids[i]);
    }
    int rc = n ? cli_object_push(ctx, refs, n) : CLI_EXIT_OK;
    free(refs);
    return rc;
}

static int run_batch(cli_ctx *ctx, const cli_object_call *call, const batch *b, int argc,
                     char **argv)
{
    int first, rc;
    bool sync = false;
    const cli_opt opts[] = {{"sync", CLI_OPT_FLAG, &sync}};
    store *st = cli_object_open(ctx, call, b->can_sync ? opts : NULL, b->can_sync ? 1 : 0,
                                argc, argv, &first, &rc);
    if (!st)
        return rc;
    int count = argc - first;
    char **ids = argv + first;
    batch_result *results = calloc((size_t)count, sizeof *results);
    if (!results)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    error_info e = {0};
    error_code status = batch_all(st, call->kind, b->op, ids, count, results, &e);
    for (int i = 0; status == ERROR_OK && i < count; i++)
        termsafe_fprintf(ctx->out, "%s: %s\n", ids[i], batch_outcomes[results[i]].text);
    if (status == ERROR_OK && sync) {
        rc = push_batch(ctx, call->kind, ids, count, results);
        free(results);
        return rc;
    }
    free(results);
    if (status == ERROR_OK)
        return CLI_EXIT_OK;
    error_prefix(&e, "%s", b->refused);
    return cli_fail(ctx, &e);
}

static int object_batch(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    return run_batch(ctx, call, call->data, argc, argv);
}

/* ---- the table ---- */

/* A command's words for one kind: usage, the overview's line, the rest of --help. */
typedef struct object_words {
    const char *args, *summary, *help;
} object_words;

/* A command of the groups: its code, and its words for each kind that has it (a
 * kind without the command has no summary). */
typedef struct object_command {
    const char *name;
    cli_object_fn run;
    const void *data; /* the command's own part, handed over as call->data */
    int min_operands, max_operands;
    object_words words[MODEL_KIND_COUNT];
} object_command;

/* The output options of a list, for the noun its JSON holds. */
#define OUTPUT_HELP(noun)                                                                  \
    "  -o, --output FORMAT\n"                                                              \
    "                     table (the default); wide: every field; json: an array of\n"    \
    "                     the API's " noun " with their \"state\"; yaml: the same as\n"   \
    "                     YAML; name: the ids, one a line; csv: RFC 4180 (CRLF), every\n"  \
    "                     field, a header row\n"                                            \
    "  --json             the same as -o json\n"                                           \
    "  --no-headers       table, wide, csv: no header row\n"

#define ALL_OR_NOTHING "All ids are checked first: if one is unknown, nothing is deleted.\n"

#define DELETE_HELP(noun)                                                                  \
    "Each delete is sent right after a look at the " noun " (a GET): one changed\n"          \
    "remotely since this cache saw it is not deleted but becomes a conflict\n"             \
    "('resolve ID --keep-local' deletes it anyway, '--take-remote' keeps it).\n"            \
    "Options:\n"                                                                           \
    "  --sync   send these deletes now (only these: the rest of the queue waits)\n"

#define RESOLVE_HELP(noun)                                                                 \
    "Options (exactly one of the two):\n"                                                  \
    "  --keep-local    the values here win: the next sync sends them (a " noun " the\n"     \
    "                  remote deleted is created again; a rule whose cidr a remote\n"      \
    "                  rule holds has that rule deleted)\n"                                \
    "  --take-remote   the remote's values win (a " noun " the remote deleted is\n"        \
    "                  removed here; a create the remote already holds adopts it)\n"      \
    "  --sync          send the outcome now (only this " noun ": the rest of the\n"      \
    "                  queue waits)\n"                                                     \
    "  --json          print the " noun " (with its \"edit\") and \"result\"\n"              \
    "'get ID' shows the conflict: each edited field as base -> local, the remote's\n"     \
    "value now, and why.\n"

/* In the order the overviews list them. */
static const object_command commands[] = {
    {"create", object_create, NULL, 0, 0, {
     [MODEL_KIND_RULE] = {
      NULL, /* the fields' options, from the descriptor (create_words) */
      "Queue a new rule for the next sync.",
      "  --sync              push it now (only it: the rest of the queue waits)\n"
      "  --json              print the new rule as JSON\n"},
     [MODEL_KIND_CRED] = {
      NULL, /* the fields' options, from the descriptor (create_words) */
      "Queue a new tunnel credential; its token arrives with the sync that creates it.",
      "  --sync              push it now (only it) and print its token (shown once;\n"
      "                      'creds token ID' prints it again on this machine)\n"
      "  --json              print the new credential as JSON\n"}}},
    {"update", cli_object_update, NULL, 1, 1, {
     [MODEL_KIND_RULE] = {
      "ID [--cidr CIDR] [--description S] [--metadata S] [--sync] [--json]",
      "Edit a rule in place (its policy and action never change).",
      "Options (at least one field):\n"
      "  --cidr CIDR         the new range, checked as create checks it\n"
      "  --description TEXT  up to 255 bytes; \"\" clears it\n"
      "  --metadata TEXT     up to 4096 bytes; \"\" clears it\n"
      "  --sync              push it now (only it: the rest of the queue waits)\n"
      "  --json              print the rule (with its \"edit\") and \"result\"\n"
      "A rule not created remotely yet: its queued create changes. A synced rule\n"
      "becomes edited: the next sync sends the changed fields (PATCH); setting them\n"
      "back to the remote's values makes it synced again, and 'discard' drops the\n"
      "edit. 'get' shows each edited field as base (the remote's) -> local. A\n"
      "conflict stays one until 'resolve'.\n"},
     [MODEL_KIND_CRED] = {
      "ID [--description S] [--metadata S] [--acl RULE]... [--sync] [--json]",
      "Edit a credential in place (its owner never changes; its token stays).",
      "Options (at least one field):\n"
      "  --description TEXT  up to 255 bytes; \"\" clears it\n"
      "  --metadata TEXT     up to 4096 bytes; \"\" clears it\n"
      "  --acl RULE          the new ACL, one rule per --acl (as in create); --acl \"\"\n"
      "                      clears it (no restriction)\n"
      "  --sync              push it now (only it: the rest of the queue waits)\n"
      "  --json              print the credential (with its \"edit\") and \"result\"\n"
      "A credential not created remotely yet: its queued create changes. A synced\n"
      "one becomes edited: the next sync sends the changed fields (PATCH); setting\n"
      "them back to the remote's values makes it synced again, and 'discard' drops\n"
      "the edit. The token is never touched.\n"}}},
    {"resolve", cli_object_resolve, NULL, 1, 1, {
     [MODEL_KIND_RULE] = {"ID --keep-local|--take-remote [--sync] [--json]",
      "Settle a conflict: keep the local values or take the remote's.",
      RESOLVE_HELP("rule")},
     [MODEL_KIND_CRED] = {"ID --keep-local|--take-remote [--sync] [--json]",
      "Settle a conflict: keep the local values or take the remote's.",
      RESOLVE_HELP("credential")}}},
    {"list", object_list, NULL, 0, 0, {
     [MODEL_KIND_RULE] = {"[--policy ipp_ID] [--filter TEXT] [-o FORMAT] [--no-headers] "
      "[--sort FIELD[:desc]] [--limit N] [--json]",
      "List cached rules (in id order unless --sort).",
      "Options:\n"
      "  --policy ID        only the rules of this IP policy\n"
      "  --filter TEXT      only rows whose id, cidr, description or policy contains\n"
      "                     TEXT (case-insensitive); an address: the rules containing it\n"
      OUTPUT_HELP("rules")
      "  --sort FIELD[:desc]\n"
      "                     the order, as the console's: id (the default), policy,\n"
      "                     cidr (address order: IPv4 first, then shorter prefixes\n"
      "                     first), action, state; :desc reverses it\n"
      "  --limit N          the first N rows in that order (read from the cache's\n"
      "                     index: fast on any size)\n"},
     [MODEL_KIND_CRED] = {"[--filter TEXT] [-o FORMAT] [--no-headers] [--sort FIELD[:desc]] "
      "[--limit N] [--json]",
      "List cached credentials (in id order unless --sort; tokens are never listed).",
      "Options:\n"
      "  --filter TEXT      only rows whose id, description, owner or ACL contains TEXT\n"
      OUTPUT_HELP("credentials (token null)")
      "  --sort FIELD[:desc]\n"
      "                     the order, as the console's: id (the default),\n"
      "                     description, state; :desc reverses it\n"
      "  --limit N          the first N rows in that order\n"}}},
    {"get", object_get, NULL, 1, 1, {
     [MODEL_KIND_RULE] = {"ID [-o FORMAT] [--no-headers] [--json]",
      "Show one rule (a local_ id works too).",
      "Options:\n"
      "  -o, --output FORMAT\n"
      "                     the detail view by default; json: the API object with its\n"
      "                     \"state\" (and an edited rule's \"edit\"); yaml: the same as\n"
      "                     YAML; table, wide, csv, name: as 'rules list' writes a row\n"
      "  --json             the same as -o json\n"
      "  --no-headers       table, wide, csv: no header row\n"},
     [MODEL_KIND_CRED] = {"ID [-o FORMAT] [--no-headers] [--json]",
      "Show one credential (a local_ id works too); the token is not shown.",
      "Options:\n"
      "  -o, --output FORMAT\n"
      "                     the detail view by default; json: the API object (token\n"
      "                     null) with its \"state\" (and an edited credential's\n"
      "                     \"edit\"); yaml: the same as YAML; table, wide, csv, name:\n"
      "                     as 'creds list' writes a row\n"
      "  --json             the same as -o json\n"
      "  --no-headers       table, wide, csv: no header row\n"}}},
    {"delete", object_batch, &deletes, 1, -1, {
     [MODEL_KIND_RULE] = {"ID... [--sync]",
      "Delete rules: never-synced ones go at once, synced ones at the next sync.",
      ALL_OR_NOTHING DELETE_HELP("rule")},
     [MODEL_KIND_CRED] = {"ID... [--sync]",
      "Delete credentials: never-synced ones go at once, synced ones at the next sync.",
      ALL_OR_NOTHING DELETE_HELP("credential")}}},
    {"import", cli_object_import_rules, NULL, 1, 1, {
     [MODEL_KIND_RULE] = {"FILE|- [--json]",
      "Import rules from a JSON array of rules or an API list object (all or nothing).",
      "Each rule is matched with the cache (its state is ignored): one whose id the\n"
      "cache holds with the same values is left alone; with another cidr, description\n"
      "or metadata it is queued as an edit, as 'rules update' would. Rules with a\n"
      "remote id (ipr_ID) the cache does not know are taken as already synced; rules\n"
      "without one (or with another machine's local_ id) are queued for creation,\n"
      "unless a rule of their policy has their cidr with the same values already. So\n"
      "an export imports back into the same cache as a no-op. Every rule is validated;\n"
      "one bad rule imports nothing and the message names it, its line and why.\n"
      "Options:\n  --json   print {\"imported\": N, \"new\": N, \"synced\": N, "
      "\"updated\": N,\n           \"unchanged\": N}\n"}}},
    {"export", object_export, NULL, 0, 0, {
     [MODEL_KIND_RULE] = {"[--json]",
      "Print every cached rule as a JSON array in the API's wire format.",
      "The output can be read back with 'rules import'. Rules marked for deletion\n"
      "or deleted remotely are left out. --json is accepted for symmetry: the\n"
      "output is always JSON.\n"}}},
    {"token", cli_object_token, NULL, 1, 1, {
     [MODEL_KIND_CRED] = {"ID", "Print the credential's token, if this machine holds it.",
      "The remote API hands a token out once, when the credential is created, so only\n"
      "the machine whose sync created it holds it. Exit status 3 when it is not held.\n"}}},
    {"rotate", cli_object_rotate, NULL, 0, 1, {
     [MODEL_KIND_CRED] = {
      "ID|NAME [--grace DURATION] [--exec CMD] [--now|--finish|--cancel] [--sync] [--json]\n"
      "       --older-than AGE [--limit N] [--dry-run] [--grace DURATION] [--exec CMD] "
      "[--sync] [--json]",
      "Replace a credential with a new one with no downtime (a rotation).",
      "Queues a successor with the same description, ACL, metadata and owner, linked\n"
      "to the old one. As soon as its token is held here the agent serves it for the\n"
      "name; the old id still gets the old token (with \"superseded_by\") during the\n"
      "grace period. After it, once this machine's agent has not handed out the old\n"
      "token for the quiet period (setting rotate_quiet) and --exec succeeded, a sync\n"
      "deletes the old credential. A running tunnel does not fetch its token again:\n"
      "restart it (--exec). If the successor's create fails the rotation stops and\n"
      "the old one stays.\n"
      "Options:\n"
      "  --grace DURATION   how long both stay valid (90d, 24h, 30m, 2s; default:\n"
      "                     setting rotate_grace, 24h)\n"
      "  --exec CMD         run once the successor's token is held (no shell; its\n"
      "                     environment has RAMPART_ROTATE_OLD_ID and\n"
      "                     RAMPART_ROTATE_NEW_ID, never a token; default: setting\n"
      "                     rotate_exec)\n"
      "  --now              a leaked token: create the successor, run --exec, delete the\n"
      "                     old one in the same sync, no grace period\n"
      "  --finish           retire the old one at once (as soon as the successor is\n"
      "                     held); needed when this machine never held the old token\n"
      "                     or the old one changed since the successor copied it\n"
      "  --cancel           drop the successor instead; the old one stays\n"
      "  --older-than AGE   rotate every credential created more than AGE ago (90d)\n"
      "  --limit N          with --older-than: at most N of them\n"
      "  --dry-run          with --older-than: only list them\n"
      "  --sync             send it now (only these credentials)\n"
      "  --json             print the rotation as JSON\n"}}},
    {"retry", object_batch, &retries, 1, -1, {
     [MODEL_KIND_RULE] = {"ID...",
      "Queue failed or remotely deleted rules for the next sync again.", NULL},
     [MODEL_KIND_CRED] = {"ID...",
      "Queue failed, orphaned or remotely deleted credentials for the next sync again.",
      "failed: sent again as it is (fix it first by discarding and recreating if the\n"
      "server's reason says so); remote_deleted: created again, with a new token;\n"
      "orphaned: the next sync deletes the copy whose token was lost and creates a\n"
      "new one.\n"}}},
    {"discard", object_batch, &discards, 1, -1, {
     [MODEL_KIND_RULE] = {"ID...",
      "Drop rules the server refused, never received, or deleted remotely.",
      "An edited rule's edit is dropped: its fields go back to the remote's values and\n"
      "nothing is sent; so is a conflict's, or, when the remote rule is gone (or the\n"
      "rule was never created there), the rule is removed here.\n"},
     [MODEL_KIND_CRED] = {"ID...", "Drop credentials the server refused or never received.",
      "An orphaned credential (its token was lost) is deleted remotely by the next\n"
      "sync and not created again. An edited credential's edit is dropped: its\n"
      "fields go back to the remote's values and nothing is sent; so is a\n"
      "conflict's, or, when the remote credential is gone, it is removed here.\n"}}},
};

enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

/* The commands that change rows: refused on a follower's cache (cli_follower.h). */
static bool changes_rows(const char *name)
{
    static const char *const changing[] = {"create", "update", "resolve", "delete",
                                           "import", "retry",  "discard", "rotate"};
    for (size_t i = 0; i < sizeof changing / sizeof changing[0]; i++) {
        if (strcmp(name, changing[i]) == 0)
            return true;
    }
    return false;
}

/* --help among the options (before "--"): shown even where the command is refused. */
static bool asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

/* The words of a generic create (cli_object_create_fields; its row's args NULL):
 * an option per field the user sets at creation, with the descriptor's
 * placeholder and help, then --sync and --json (the row's help says those).
 * Made once per kind (help is asked by one thread). */
static object_words create_words(model_kind kind, const object_words *w)
{
    static char args[MODEL_KIND_COUNT][256], help[MODEL_KIND_COUNT][2048];
    if (args[kind][0])
        return (object_words){args[kind], w->summary, help[kind]};
    buf_t a = {0}, h = {0};
    buf_puts(&h, "Options:\n");
    const kind_desc *d = kind_get(kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_CREATE) || !f->arg)
            continue;
        /* A required option stands bare, but the policy, which the setting may give. */
        bool bare = f->flags & KIND_FIELD_REQUIRED && !(f->flags & KIND_FIELD_POLICY);
        char opt[64];
        snprintf(opt, sizeof opt, "--%s %s", cli_object_flag(f), f->arg);
        buf_puts(&a, bare ? "" : "[");
        buf_puts(&a, opt);
        buf_puts(&a, bare ? "" : "]");
        buf_puts(&a, f->type == KIND_FIELD_ACL ? "... " : " ");
        char line[sizeof opt + 4];
        snprintf(line, sizeof line, "  %-19s ", opt);
        buf_puts(&h, line);
        for (const char *p = f->help; *p; p++) {
            buf_append(&h, p, 1);
            if (*p == '\n')
                buf_puts(&h, "                      ");
        }
        buf_puts(&h, "\n");
    }
    buf_puts(&a, "[--sync] [--json]");
    buf_puts(&h, w->help);
    model_copy_text(args[kind], sizeof args[kind], a.data ? a.data : "");
    model_copy_text(help[kind], sizeof help[kind], h.data ? h.data : "");
    buf_free(&a);
    buf_free(&h);
    return (object_words){args[kind], w->summary, help[kind]};
}

/* The kind's view of the table, for the overview, --help and usage lines: its
 * commands into `view`, each one's row into `rows` (NULL: not wanted). */
static size_t kind_view(model_kind kind, cli_command *view, const object_command **rows,
                        size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < COMMAND_COUNT && n < cap; i++) {
        object_words made;
        const object_words *w = &commands[i].words[kind];
        if (!w->summary)
            continue;
        if (!w->args)
            w = (made = create_words(kind, w), &made);
        view[n] = (cli_command){.name = commands[i].name,
                                .args = w->args,
                                .summary = w->summary,
                                .help = w->help,
                                .min_operands = commands[i].min_operands,
                                .max_operands = commands[i].max_operands};
        if (rows)
            rows[n] = &commands[i];
        n++;
    }
    return n;
}

static size_t object_table(model_kind kind, cli_command *out, size_t cap)
{
    return kind_view(kind, out, NULL, cap);
}

/* Run the group of `kind`: argv[1] names the command (no word, "help", --help: the
 * overview; an unknown word: a usage error naming the closest command). */
static int object_group(cli_ctx *ctx, model_kind kind, const char *path, int argc,
                        char **argv)
{
    cli_command view[COMMAND_COUNT];
    const object_command *rows[COMMAND_COUNT];
    size_t n = kind_view(kind, view, rows, COMMAND_COUNT);
    int rc;
    const cli_command *cmd = cli_find_command(ctx, path, view, n, argc, argv, &rc);
    if (!cmd)
        return rc;
    char sub[128];
    snprintf(sub, sizeof sub, "%s %s", path, cmd->name);
    const object_command *row = rows[cmd - view];
    if (changes_rows(row->name) && cli_follower(ctx) && !asks_help(argc, argv) &&
        !ctx->describe)
        return cli_follower_refuse(ctx, sub);
    cli_object_call call = {kind, cmd, sub, row->data};
    return row->run(ctx, &call, argc - 1, argv + 1);
}

/* ---- the groups (cli.h) ---- */

int cli_rules(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return object_group(ctx, MODEL_KIND_RULE, path, argc, argv);
}

size_t cli_rules_table(cli_command *out, size_t cap)
{
    return object_table(MODEL_KIND_RULE, out, cap);
}

int cli_creds(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return object_group(ctx, MODEL_KIND_CRED, path, argc, argv);
}

size_t cli_creds_table(cli_command *out, size_t cap)
{
    return object_table(MODEL_KIND_CRED, out, cap);
}

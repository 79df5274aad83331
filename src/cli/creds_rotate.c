/*
 * `rampart creds rotate`: a credential replaced by a successor with no downtime
 * (store.h, "credential rotation"): start one (or every credential past an age),
 * finish or cancel one. How a rotation reads is rotation_show.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_object.h"
#include "rampart/buf.h"
#include "rampart/termsafe.h"
#include "rampart/duration.h"
#include "rampart/validate.h"
#include "rampart/words.h"

enum { NAME_IDS_MAX = 8 };

/* ---- the command ---- */

typedef struct rotate_args {
    const char *grace, *exec, *older_than, *limit;
    bool dry_run, cancel, finish, now, sync, json;
    /* checked before the store opens (check_values) */
    long long grace_s, age_s, limit_n;
    const char *command; /* --exec, else the setting rotate_exec ("": none) */
} rotate_args;

/* A credential named by id (cr_…, local_…) or by its description. */
static error_code find_target(store *st, const char *text, char id[MODEL_ID_MAX + 1],
                              error_info *err)
{
    if (validate_id(text, "cr", "id", NULL) == ERROR_OK || validate_is_local_id(text)) {
        snprintf(id, MODEL_ID_MAX + 1, "%s", text);
        return ERROR_OK;
    }
    char ids[NAME_IDS_MAX][MODEL_ID_MAX + 1];
    size_t n = 0;
    if (store_cred_find_by_name(st, text, ids, NAME_IDS_MAX, &n, err))
        return err->code;
    if (n == 0)
        return error_set(err, ERROR_NOT_FOUND, "no credential has the id or name '%s'", text);
    if (n > 1)
        return error_set(err, ERROR_INVALID, "%s credentials are named '%s' (%s, %s%s): "
                         "give the id", n > NAME_IDS_MAX ? "more than 8" : "several", text,
                         ids[0], ids[1], n > 2 ? ", …" : "");
    snprintf(id, MODEL_ID_MAX + 1, "%s", ids[0]);
    return ERROR_OK;
}

static int show_rotation(cli_ctx *ctx, store *st, const char *id, bool json, const char *said)
{
    store_rotation r;
    error_info e = {0};
    if (store_rotation_get(st, id, &r, &e) != ERROR_OK) {
        if (!json)
            return CLI_EXIT_OK;
        return cli_fail(ctx, &e);
    }
    long long now = (long long)time(NULL);
    long long quiet = config_number(&ctx->cfg, CONFIG_ROTATE_QUIET);
    if (!json) {
        termsafe_fprintf(ctx->out, "%s\n", said);
        return CLI_EXIT_OK;
    }
    buf_t b = {0};
    cli_rotation_json(&b, &r, now, quiet, "");
    char *text = buf_take(&b);
    if (!text)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    fprintf(ctx->out, "%s\n", text);
    free(text);
    return CLI_EXIT_OK;
}

/* --sync: the rows of these rotations now (both sides: the successor's create,
 * and the old one's delete when it retires in the same sync). */
static int push_pairs(cli_ctx *ctx, store *st, char (*ids)[MODEL_ID_MAX + 1], size_t n)
{
    sync_row_ref *refs = calloc(2 * n + 1, sizeof *refs);
    if (!refs)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        store_rotation r;
        error_info e;
        if (store_rotation_get(st, ids[i], &r, &e) != ERROR_OK)
            continue;
        refs[k].kind = refs[k + 1].kind = MODEL_KIND_CRED;
        snprintf(refs[k++].id, MODEL_ID_MAX + 1, "%s", r.new_id);
        snprintf(refs[k++].id, MODEL_ID_MAX + 1, "%s", r.old_id);
    }
    int rc = k ? cli_object_push(ctx, refs, k) : CLI_EXIT_OK;
    free(refs);
    return rc;
}

static int push_one_pair(cli_ctx *ctx, store *st, const char *id)
{
    char one[1][MODEL_ID_MAX + 1];
    snprintf(one[0], sizeof one[0], "%s", id);
    return push_pairs(ctx, st, one, 1);
}

/* The line said before --sync pushes the pair; the JSON after it, with the ids the
 * sync left. */
static int say_then_push(cli_ctx *ctx, store *st, const char *id, const rotate_args *a,
                         const char *said)
{
    int rc = a->json ? CLI_EXIT_OK : show_rotation(ctx, st, id, false, said);
    if (rc == CLI_EXIT_OK && a->sync)
        rc = push_one_pair(ctx, st, id);
    int shown = a->json ? show_rotation(ctx, st, id, true, said) : CLI_EXIT_OK;
    return rc != CLI_EXIT_OK ? rc : shown;
}

static int cancel(cli_ctx *ctx, store *st, const char *id, const rotate_args *a)
{
    char dropped[MODEL_ID_MAX + 1];
    error_info e = {0};
    if (store_rotation_cancel(st, id, dropped, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    model_object obj;
    model_object_init(&obj, MODEL_KIND_CRED);
    bool marked = store_get(st, MODEL_KIND_CRED, dropped, &obj, &e) == ERROR_OK;
    model_object_clear(&obj);
    if (a->json)
        fprintf(ctx->out, "{\"cancelled\": true, \"successor\": \"%s\", \"successor_state\": "
                "\"%s\"}\n", dropped, marked ? "deleting" : "removed");
    else
        termsafe_fprintf(ctx->out, "rotation of %s cancelled: its successor %s %s\n", id,
                         dropped, marked ? "is deleted by the next sync" : "was removed");
    if (marked && a->sync)
        return cli_object_push_one(ctx, MODEL_KIND_CRED, dropped);
    return CLI_EXIT_OK;
}

static int finish(cli_ctx *ctx, store *st, char id[MODEL_ID_MAX + 1], const rotate_args *a)
{
    bool retired = false;
    error_info e = {0};
    if (store_rotation_finish(st, id, &retired, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    char said[256];
    snprintf(said, sizeof said, retired ? "%s retires now: the next sync deletes it"
                                        : "%s retires as soon as its successor's token is "
                                          "held (the next sync creates it)", id);
    return say_then_push(ctx, st, id, a, said);
}

/* The values of the flags (or the settings), checked before the store opens: bad
 * input must not leave a new, empty cache behind. */
static int check_values(cli_ctx *ctx, const char *path, rotate_args *a)
{
    error_info e = {0};
    a->grace_s = config_number(&ctx->cfg, CONFIG_ROTATE_GRACE);
    if (a->grace && duration_parse(a->grace, "--grace", &a->grace_s, &e) != ERROR_OK)
        return cli_usage_error(ctx, path, "%s", e.msg);
    if (a->older_than &&
        duration_parse(a->older_than, "--older-than", &a->age_s, &e) != ERROR_OK)
        return cli_usage_error(ctx, path, "%s", e.msg);
    char *end = NULL;
    if (a->limit)
        a->limit_n = strtoll(a->limit, &end, 10);
    if (a->limit && (!a->limit[0] || *end || a->limit[0] == '-' || a->limit_n < 1 ||
                     a->limit_n > 1000000))
        return cli_usage_error(ctx, path, "--limit must be a whole number from 1 to "
                               "1000000, not '%.40s'", a->limit);
    a->command = a->exec ? a->exec : config_get(&ctx->cfg, CONFIG_ROTATE_EXEC);
    if (strlen(a->command) > STORE_ROTATION_EXEC_MAX)
        return cli_usage_error(ctx, path, "%s: the command is longer than %d bytes",
                               a->exec ? "--exec" : "setting rotate_exec",
                               STORE_ROTATION_EXEC_MAX);
    words w;
    if (a->command[0] && words_split(a->command, &w, &e) != ERROR_OK)
        return cli_usage_error(ctx, path, "--exec: %s", e.msg);
    if (a->command[0])
        words_free(&w);
    return CLI_GO_ON;
}

static int start_one(cli_ctx *ctx, store *st, char id[MODEL_ID_MAX + 1],
                     const rotate_args *a)
{
    long long grace = a->grace_s;
    const char *exec = a->command;
    char new_id[MODEL_ID_MAX + 1];
    error_info e = {0};
    store_rotation_mode mode = a->now ? STORE_ROTATE_NOW : STORE_ROTATE_GRACE;
    if (store_rotation_start(st, id, grace, mode, exec, (long long)time(NULL), new_id, &e))
        return cli_fail(ctx, &e);
    char said[512], left[32];
    if (a->now)
        snprintf(said, sizeof said, "rotating %s to %s now: the next sync creates it, "
                 "then deletes %s", id, new_id, id);
    else
        snprintf(said, sizeof said, "rotating %s to %s: the next sync creates it; %s "
                 "retires after a grace period of %s, once this machine's agent no longer "
                 "hands its token out", id, new_id, id,
                 duration_age((double)grace, left, sizeof left));
    return say_then_push(ctx, st, id, a, said);
}

/* ---- --older-than ---- */

typedef struct aged {
    long long before; /* created at or before this time */
    size_t limit;     /* 0: all */
    char (*ids)[MODEL_ID_MAX + 1];
    size_t n;
    store *st;
} aged;

static bool is_rotating(store *st, const char *id)
{
    store_rotation r;
    error_info e;
    return store_rotation_get(st, id, &r, &e) == ERROR_OK && r.state != STORE_ROTATION_RETIRED;
}

static error_code visit_aged(void *ctx, model_object *rows, size_t count, error_info *err)
{
    (void)err;
    aged *g = ctx;
    for (size_t i = 0; i < count && (!g->limit || g->n < g->limit); i++) {
        double at = 0;
        const model_cred *c = &rows[i].cred;
        if (!duration_parse_time(c->created_at, &at) || (long long)at > g->before ||
            is_rotating(g->st, c->id))
            continue;
        snprintf(g->ids[g->n++], MODEL_ID_MAX + 1, "%s", c->id);
    }
    return !g->limit || g->n < g->limit ? ERROR_OK : ERROR_STATE; /* ERROR_STATE: full */
}

static int older_than(cli_ctx *ctx, store *st, const rotate_args *a)
{
    long long grace = a->grace_s;
    const char *exec = a->command;
    error_info e = {0};
    size_t total = 0;
    store_query q = {.states = (1u << MODEL_STATE_SYNCED) | (1u << MODEL_STATE_EDITED)};
    if (store_count(st, MODEL_KIND_CRED, &q, &total, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    aged g = {.before = (long long)time(NULL) - a->age_s, .limit = (size_t)a->limit_n,
              .st = st};
    g.ids = calloc(total + 1, sizeof *g.ids);
    if (!g.ids)
        return cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    error_code walked = store_walk(st, MODEL_KIND_CRED, &q, 64, visit_aged, &g, &e);
    if (walked != ERROR_OK && walked != ERROR_STATE) {
        free(g.ids);
        return cli_fail(ctx, &e);
    }
    char (*started)[MODEL_ID_MAX + 1] = calloc(g.n + 1, sizeof *started);
    size_t done = 0;
    int rc = started ? CLI_EXIT_OK : cli_fail(ctx, &(error_info){ERROR_NOMEM, "out of memory"});
    if (a->json && rc == CLI_EXIT_OK)
        fputs("[", ctx->out);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < g.n; i++) {
        char new_id[MODEL_ID_MAX + 1] = "";
        store_rotation_mode mode = a->now ? STORE_ROTATE_NOW : STORE_ROTATE_GRACE;
        if (!a->dry_run && store_rotation_start(st, g.ids[i], grace, mode, exec,
                                                (long long)time(NULL), new_id, &e)) {
            rc = cli_fail(ctx, &e);
            break;
        }
        snprintf(started[done++], MODEL_ID_MAX + 1, "%s", g.ids[i]);
        if (a->json)
            fprintf(ctx->out, "%s{\"old_id\": \"%s\", \"new_id\": %s%s%s}", i ? ",\n " : "",
                    g.ids[i], new_id[0] ? "\"" : "", new_id[0] ? new_id : "null",
                    new_id[0] ? "\"" : "");
        else
            termsafe_fprintf(ctx->out, a->dry_run ? "%s: would rotate\n"
                                                  : "%s: rotating to %s\n", g.ids[i], new_id);
    }
    if (a->json && started)
        fputs("]\n", ctx->out);
    if (!a->json && rc == CLI_EXIT_OK && g.n == 0)
        fprintf(ctx->err, "no credential is older than %s (or each is being rotated)\n",
                a->older_than);
    if (rc == CLI_EXIT_OK && a->sync && !a->dry_run && done)
        rc = push_pairs(ctx, st, started, done);
    free(started);
    free(g.ids);
    return rc;
}

/* Which of the forms was asked for, and whether it holds together. */
static int check_args(cli_ctx *ctx, const cli_object_call *call, const rotate_args *a,
                      int operands)
{
    int modes = a->cancel + a->finish + a->now;
    if (modes > 1)
        return cli_usage_error(ctx, call->path, "give one of --cancel, --finish, --now");
    if (a->older_than && (a->cancel || a->finish))
        return cli_usage_error(ctx, call->path, "--older-than starts rotations: it does not "
                               "go with --cancel or --finish");
    if (a->older_than && operands)
        return cli_usage_error(ctx, call->path, "--older-than picks the credentials itself: "
                               "give no ID or NAME with it");
    if (!a->older_than && operands != 1)
        return cli_usage_error(ctx, call->path, "give the credential's ID or NAME (or "
                               "--older-than AGE)");
    if (!a->older_than && (a->limit || a->dry_run))
        return cli_usage_error(ctx, call->path, "--limit and --dry-run go with --older-than");
    if ((a->cancel || a->finish) && (a->grace || a->exec))
        return cli_usage_error(ctx, call->path, "--grace and --exec are for a new rotation");
    return CLI_GO_ON;
}

int cli_object_rotate(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    rotate_args a = {0};
    const cli_opt opts[] = {
        {"grace", CLI_OPT_STRING, &a.grace},     {"exec", CLI_OPT_STRING, &a.exec},
        {"older-than", CLI_OPT_STRING, &a.older_than}, {"limit", CLI_OPT_STRING, &a.limit},
        {"dry-run", CLI_OPT_FLAG, &a.dry_run},   {"cancel", CLI_OPT_FLAG, &a.cancel},
        {"finish", CLI_OPT_FLAG, &a.finish},     {"now", CLI_OPT_FLAG, &a.now},
        {"sync", CLI_OPT_FLAG, &a.sync},         {"json", CLI_OPT_FLAG, &a.json},
    };
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    if ((rc = check_args(ctx, call, &a, argc - first)) != CLI_GO_ON ||
        (rc = check_values(ctx, call->path, &a)) != CLI_GO_ON)
        return rc;
    store *st = cli_store_existing(ctx); /* no cache: nothing to rotate, none made */
    if (!st)
        return ctx->store_exit;
    if (a.older_than)
        return older_than(ctx, st, &a);
    char id[MODEL_ID_MAX + 1];
    error_info e = {0};
    if (find_target(st, argv[first], id, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if (a.cancel)
        return cancel(ctx, st, id, &a);
    if (a.finish)
        return finish(ctx, st, id, &a);
    return start_one(ctx, st, id, &a);
}

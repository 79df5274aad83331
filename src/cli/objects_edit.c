/*
 * `rampart rules|creds create`, `update` and `resolve`: a new row, edits in place
 * and the user's answer to a conflict, one piece of code over the kind's descriptor
 * (its fields and their flags decide the options), on store_edit and store_resolve.
 * See cli_object.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_object.h"
#include "rampart/validate.h"
#include "rampart/termsafe.h"

enum { FIELDS_MAX = 8 }; /* fields of a kind: the bits of a kind_field_bit set */

/* ---- a kind's fields on the command line ---- */

const char *cli_object_flag(const kind_field *f)
{
    return f->flag ? f->flag : f->name;
}

/* "--cidr, --description or --metadata": the flags of the fields in `set`. */
static const char *flag_list(model_kind kind, unsigned set, char *out, size_t size)
{
    const kind_desc *d = kind_get(kind);
    size_t total = 0, seen = 0, used = 0;
    for (size_t i = 0; i < d->field_count; i++)
        total += (set >> i) & 1u;
    out[0] = '\0';
    for (size_t i = 0; i < d->field_count && used < size; i++) {
        if (!(set & (1u << i)))
            continue;
        const char *sep = seen == 0 ? "" : seen + 1 == total ? " or " : ", ";
        int n = snprintf(out + used, size - used, "%s--%s", sep, cli_object_flag(&d->fields[i]));
        if (n < 0)
            break;
        used += (size_t)n;
        seen++;
    }
    return out;
}

/* ---- setting a field from text ---- */

/* A text field from the flag's full value: checked before it is copied, so an
 * over-long value is named exactly. A message that does not name its field (a
 * CIDR's) starts with the flag, as create's does. */
static error_code set_text(model_object *obj, const kind_field *f, const char *text,
                           error_info *err)
{
    if (f->check && f->check(text, NULL, 0, err) != ERROR_OK) {
        const char *flag = cli_object_flag(f);
        if (strncmp(err->msg, f->name, strlen(f->name)) != 0 &&
            strncmp(err->msg, flag, strlen(flag)) != 0)
            error_prefix(err, "--%s", flag);
        return ERROR_INVALID;
    }
    if (strlen(text) >= f->size)
        return error_set(err, ERROR_INVALID, "%s is %zu bytes; the limit is %zu", f->name,
                         strlen(text), f->size - 1);
    model_copy_text(kind_field_at_mut(obj, f), f->size, text);
    return ERROR_OK;
}

/* An ACL from the --acl values, checked as a create's. An update skips empty
 * ones (so `--acl ""` alone clears it); a create refuses them. */
static error_code set_acl(model_object *obj, const kind_field *f, const char *const *items,
                          size_t count, bool create, error_info *err)
{
    model_acl *acl = kind_field_at_mut(obj, f);
    for (size_t i = 0; i < count; i++) {
        if ((create || items[i][0]) && model_acl_add(acl, items[i], err) != ERROR_OK)
            return err->code;
    }
    return validate_acl(acl, err);
}

/* ---- update ---- */

/* What `update` was given: per field (descriptor index) its value or values. */
typedef struct update_args {
    const char *text[FIELDS_MAX]; /* NULL: not given */
    cli_list list[FIELDS_MAX];    /* an ACL's values */
    cli_choice choice[FIELDS_MAX]; /* an action's option: its set, into text[i] */
    bool json, sync;
    bool create; /* the options of a create (field_opts) */
} update_args;

/* The options of every field the user sets at creation, then --json and --sync.
 * For `update` (`create` false) the ones that never change are taken only to be
 * refused by name after parsing. */
static size_t field_opts(model_kind kind, update_args *a, cli_opt *opts, bool create)
{
    const kind_desc *d = kind_get(kind);
    size_t n = 0;
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_CREATE))
            continue;
        if (f->type == KIND_FIELD_ACL) {
            opts[n++] = (cli_opt){cli_object_flag(f), CLI_OPT_LIST, &a->list[i]};
        } else if (create && f->type == KIND_FIELD_ACTION) {
            a->choice[i] = (cli_choice){&a->text[i], cli_action_choices, NULL};
            opts[n++] = (cli_opt){cli_object_flag(f), CLI_OPT_CHOICE, &a->choice[i]};
        } else
            opts[n++] = (cli_opt){cli_object_flag(f),
                                  create || f->flags & KIND_FIELD_EDIT ? CLI_OPT_STRING
                                                                       : CLI_OPT_REFUSED,
                                  &a->text[i]};
    }
    opts[n++] = (cli_opt){"json", CLI_OPT_FLAG, &a->json};
    opts[n++] = (cli_opt){"sync", CLI_OPT_FLAG, &a->sync};
    return n;
}

/* argv by field_opts' options into `a`, as cli_parse (false: *rc says how it ended). */
static bool parse_fields(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv,
                         update_args *a, bool create, int *first, int *rc)
{
    cli_opt opts[FIELDS_MAX + 2];
    a->create = create;
    size_t nopts = field_opts(call->kind, a, opts, create);
    return cli_parse(ctx, call->path, call->cmd, opts, nopts, argc, argv, first, rc);
}

static bool given(const update_args *a, size_t i)
{
    return a->text[i] != NULL || a->list[i].count > 0;
}

/* The fields given (a kind_field_bit set), after refusing one that never changes
 * and an update with none. CLI_GO_ON or the exit status after printing why. */
static int update_fields(cli_ctx *ctx, const cli_object_call *call, const update_args *a,
                         unsigned *fields)
{
    const kind_desc *d = kind_get(call->kind);
    *fields = 0;
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX; i++) {
        if (!given(a, i))
            continue;
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_EDIT))
            return cli_usage_error(ctx, call->path,
                                   "%s cannot be changed after creation (--%s): delete "
                                   "the %s and create it again",
                                   cli_object_flag(f), cli_object_flag(f), d->noun);
        *fields |= kind_field_bit(call->kind, f);
    }
    if (*fields)
        return CLI_GO_ON;
    char flags[128];
    return cli_usage_error(ctx, call->path, "nothing to change: give %s",
                           flag_list(call->kind, kind_field_set(call->kind, KIND_FIELD_EDIT),
                                     flags, sizeof flags));
}

/* The values of `fields` into `obj`, each checked before it is copied. */
static error_code set_fields(const update_args *a, unsigned fields, model_object *obj,
                             error_info *err)
{
    const kind_desc *d = kind_get(obj->kind);
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX; i++) {
        if (!(fields & (1u << i)))
            continue;
        const kind_field *f = &d->fields[i];
        error_code rc = f->type == KIND_FIELD_ACL
                            ? set_acl(obj, f, a->list[i].items, a->list[i].count, a->create,
                                      err)
                        : f->type == KIND_FIELD_ACTION
                            ? validate_action(a->text[i], kind_field_at_mut(obj, f), err)
                        : a->create && f->flags & KIND_FIELD_CALLER && !a->text[i][0]
                            ? error_set(err, ERROR_INVALID,
                                        "--%s is empty: leave it out for the caller's id",
                                        cli_object_flag(f))
                            : set_text(obj, f, a->text[i], err);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

/* The given fields' values into `obj` (named by `id`), each checked as create
 * checks it. */
static error_code update_values(const update_args *a, unsigned fields, const char *id,
                                model_object *obj, error_info *err)
{
    const kind_desc *d = kind_get(obj->kind);
    if (!model_copy_text(model_object_id_buf(obj), MODEL_ID_MAX + 1, id))
        return error_set(err, ERROR_NOT_FOUND, "no %s %.*s…", d->noun, MODEL_ID_MAX, id);
    return set_fields(a, fields, obj, err);
}

/* ---- create ---- */

/* The required fields not given, but a policy (which the setting may give):
 * "--cidr and --action are required". CLI_GO_ON when none is missing. */
static int create_required(cli_ctx *ctx, const cli_object_call *call, unsigned given_set)
{
    const kind_desc *d = kind_get(call->kind);
    char names[128] = "";
    size_t n = 0, used = 0, count = 0;
    bool missing = false;
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX; i++) {
        unsigned flags = d->fields[i].flags;
        if (flags & KIND_FIELD_REQUIRED && !(flags & KIND_FIELD_POLICY)) {
            count++;
            missing = missing || !(given_set & (1u << i));
        }
    }
    if (!missing)
        return CLI_GO_ON;
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX && used < sizeof names; i++) {
        unsigned flags = d->fields[i].flags;
        if (!(flags & KIND_FIELD_REQUIRED) || flags & KIND_FIELD_POLICY)
            continue;
        int w = snprintf(names + used, sizeof names - used, "%s--%s",
                         n == 0 ? "" : n + 1 == count ? " and " : ", ",
                         cli_object_flag(&d->fields[i]));
        used += w > 0 ? (size_t)w : 0;
        n++;
    }
    char sentence[160];
    snprintf(sentence, sizeof sentence, "%s %s required", names, count > 1 ? "are" : "is");
    if (kind_get(call->kind)->traits & KIND_IN_POLICY)
        return cli_usage_missing(ctx, call->path, sentence);
    return cli_usage_error(ctx, call->path, "%s", sentence);
}

/* The policy field, given or from the setting (KIND_FIELD_POLICY). */
static int create_policy(cli_ctx *ctx, const cli_object_call *call, const update_args *a,
                         model_object *obj)
{
    const kind_desc *d = kind_get(call->kind);
    for (size_t i = 0; i < d->field_count && i < FIELDS_MAX; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_POLICY))
            continue;
        const char *policy = cli_policy(ctx, call->path, a->text[i], !a->json);
        if (!policy)
            return CLI_EXIT_USAGE;
        model_copy_text(kind_field_at_mut(obj, f), f->size, policy);
    }
    return CLI_GO_ON;
}

int cli_object_create_fields(cli_ctx *ctx, const cli_object_call *call, int argc,
                             char **argv, cli_object_new *c)
{
    update_args a = {.json = false};
    int first, rc;
    if (!parse_fields(ctx, call, argc, argv, &a, true, &first, &rc))
        return rc;
    c->json = a.json;
    c->sync = a.sync;
    unsigned fields = 0;
    for (size_t i = 0; i < FIELDS_MAX; i++)
        fields |= given(&a, i) ? 1u << i : 0u;
    if ((rc = create_required(ctx, call, fields)) != CLI_GO_ON)
        return rc;
    error_info e = {0};
    c->obj.head.state = MODEL_STATE_NEW;
    if (set_fields(&a, fields, &c->obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    if ((rc = create_policy(ctx, call, &a, &c->obj)) != CLI_GO_ON)
        return rc;
    if (kind_get(call->kind)->validate(&c->obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    return CLI_GO_ON;
}

/* "result" of update --json, by what store_edit did. */
static const char *edit_result_name(store_edit_result r)
{
    static const char *const names[] = {
        [STORE_EDIT_CREATE] = "create_changed", [STORE_EDIT_EDITED] = "edited",
        [STORE_EDIT_UNCHANGED] = "unchanged", [STORE_EDIT_CONFLICT] = "conflict"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "conflict";
}

/* The line that says what an update did. */
static void put_updated(cli_ctx *ctx, const model_object *obj, unsigned fields,
                        store_edit_result r)
{
    const kind_desc *d = kind_get(obj->kind);
    const char *id = model_object_id(obj);
    char names[128];
    kind_field_names(obj->kind, fields, names, sizeof names);
    switch (r) {
    case STORE_EDIT_CREATE:
        termsafe_fprintf(ctx->out,
                         "%s %s: the queued create changed (%s); sent by the next sync\n",
                         d->noun, id, names);
        break;
    case STORE_EDIT_EDITED:
        termsafe_fprintf(ctx->out,
                         "%s %s edited (%s): the next sync sends it (PATCH pending)\n",
                         d->noun, id, names);
        break;
    case STORE_EDIT_UNCHANGED:
        termsafe_fprintf(ctx->out,
                         "%s %s: back to the remote's values: nothing to send (synced)\n",
                         d->noun, id);
        break;
    case STORE_EDIT_CONFLICT:
    default:
        termsafe_fprintf(ctx->out,
                         "%s %s changed (%s), still a conflict: %s %s resolve %s "
                         "--keep-local|--take-remote\n",
                         d->noun, id, names, ctx->program, d->command, id);
        break;
    }
}

/* The row after an update: the line (and with --sync the row as the sync left
 * it), or with --json the row with its edit and "result". */
static int update_show(cli_ctx *ctx, store *st, model_object *obj, unsigned fields,
                       store_edit_result r, const update_args *a)
{
    if (!a->json)
        put_updated(ctx, obj, fields, r);
    if (!a->sync)
        return a->json ? cli_object_show(ctx, st, obj, true, edit_result_name(r))
                       : CLI_EXIT_OK;
    int rc = cli_object_push_one(ctx, obj->kind, model_object_id(obj));
    model_object after;
    model_object_init(&after, obj->kind);
    error_info e = {0};
    if (store_get(st, obj->kind, model_object_id(obj), &after, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    int shown = cli_object_show(ctx, st, &after, a->json, a->json ? edit_result_name(r) : NULL);
    model_object_clear(&after);
    return rc != CLI_EXIT_OK ? rc : shown;
}

static int update_run(cli_ctx *ctx, const cli_object_call *call, const update_args *a,
                      unsigned fields, const char *id)
{
    model_object obj;
    model_object_init(&obj, call->kind);
    error_info e = {0};
    /* Every value is checked before the store opens: bad input must not leave a
     * new, empty database behind. */
    int rc = CLI_GO_ON;
    if (update_values(a, fields, id, &obj, &e) != ERROR_OK)
        rc = cli_fail(ctx, &e);
    store *st = rc == CLI_GO_ON ? cli_store(ctx) : NULL;
    if (rc == CLI_GO_ON && !st)
        rc = ctx->store_exit;
    store_edit_result r = STORE_EDIT_EDITED;
    if (rc == CLI_GO_ON && store_edit(st, &obj, fields, &r, &e) != ERROR_OK)
        rc = cli_fail(ctx, &e);
    if (rc == CLI_GO_ON)
        rc = update_show(ctx, st, &obj, fields, r, a);
    model_object_clear(&obj);
    return rc;
}

int cli_object_update(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    update_args a = {.json = false};
    int first, rc;
    if (!parse_fields(ctx, call, argc, argv, &a, false, &first, &rc))
        return rc;
    unsigned fields;
    rc = update_fields(ctx, call, &a, &fields);
    if (rc != CLI_GO_ON)
        return rc;
    return update_run(ctx, call, &a, fields, argv[first]);
}

/* ---- resolve ---- */

/* The side asked for: exactly one of the two options. */
static int resolve_side(cli_ctx *ctx, const cli_object_call *call, bool keep, bool take,
                        store_side *side)
{
    if (keep == take)
        return cli_usage_error(ctx, call->path,
                               keep ? "--keep-local and --take-remote exclude each other"
                                    : "give --keep-local or --take-remote");
    *side = keep ? STORE_KEEP_LOCAL : STORE_TAKE_REMOTE;
    return CLI_GO_ON;
}

/* A row that is not a conflict has nothing to resolve: said before the store is
 * asked, in the words of the command. */
static error_code resolve_check(store *st, model_kind kind, const char *id, error_info *err)
{
    model_object obj;
    model_object_init(&obj, kind);
    error_code rc = store_get(st, kind, id, &obj, err);
    model_state state = model_object_state(&obj);
    model_object_clear(&obj);
    if (rc == ERROR_OK && state != MODEL_STATE_CONFLICT)
        rc = error_set(err, ERROR_STATE, "%s %s is %s, not a conflict: nothing to resolve",
                       kind_get(kind)->noun, id, model_state_name(state));
    return rc;
}

/* What the next sync does with a row left in `state`. */
static const char *next_step(model_state state)
{
    static const char *const steps[MODEL_STATE_COUNT] = {
        [MODEL_STATE_EDITED] = ": the next sync sends the edit",
        [MODEL_STATE_NEW] = ": the next sync creates it",
        [MODEL_STATE_SYNCED] = ": nothing to send",
        [MODEL_STATE_DELETING] = ": the next sync deletes it remotely",
    };
    return (unsigned)state < MODEL_STATE_COUNT && steps[state] ? steps[state] : "";
}

static int resolve_removed(cli_ctx *ctx, model_kind kind, const char *id, const char *side,
                           bool json)
{
    if (!json) {
        termsafe_fprintf(ctx->out, "%s %s: conflict resolved (%s): removed here\n",
                         kind_get(kind)->noun, id, side);
        return CLI_EXIT_OK;
    }
    fputs("{\"id\": ", ctx->out);
    cli_put_json_string(ctx->out, id);
    fprintf(ctx->out, ", \"removed\": true, \"result\": \"%s\"}\n", side);
    return CLI_EXIT_OK;
}

static int resolve_show(cli_ctx *ctx, store *st, model_kind kind, const char *id,
                        const char *now_id, const char *side, bool json)
{
    if (!now_id[0])
        return resolve_removed(ctx, kind, id, side, json);
    model_object obj;
    model_object_init(&obj, kind);
    error_info e = {0};
    if (store_get(st, kind, now_id, &obj, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    int rc = CLI_EXIT_OK;
    if (json) {
        rc = cli_object_show(ctx, st, &obj, true, side);
    } else {
        model_state state = model_object_state(&obj);
        termsafe_fprintf(ctx->out, "%s %s: conflict resolved (%s): now %s",
                         kind_get(kind)->noun, id, side, model_state_name(state));
        if (strcmp(id, now_id) != 0)
            termsafe_fprintf(ctx->out, " as %s", now_id);
        fprintf(ctx->out, "%s\n", next_step(state));
    }
    model_object_clear(&obj);
    return rc;
}

int cli_object_resolve(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv)
{
    bool keep = false, take = false, json = false, sync = false;
    const cli_opt opts[] = {{"keep-local", CLI_OPT_FLAG, &keep},
                            {"take-remote", CLI_OPT_FLAG, &take},
                            {"sync", CLI_OPT_FLAG, &sync},
                            {"json", CLI_OPT_FLAG, &json}};
    int first, rc;
    if (!cli_parse(ctx, call->path, call->cmd, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    store_side side = STORE_KEEP_LOCAL;
    rc = resolve_side(ctx, call, keep, take, &side);
    if (rc != CLI_GO_ON)
        return rc;
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    const char *id = argv[first];
    char now_id[MODEL_ID_MAX + 1] = "";
    error_info e = {0};
    /* --sync sends what the answer queued: the row, and for a key conflict kept
     * locally the remote rule it deletes. */
    sync_row_ref refs[2] = {{.kind = call->kind}, {.kind = call->kind}};
    store_edit_info info = {0};
    if (resolve_check(st, call->kind, id, &e) != ERROR_OK ||
        store_edit_get(st, call->kind, id, &info, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    model_copy_text(refs[1].id, sizeof refs[1].id, info.other_id);
    store_edit_info_clear(&info);
    if (store_resolve(st, call->kind, id, side, now_id, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    rc = resolve_show(ctx, st, call->kind, id, now_id,
                      side == STORE_KEEP_LOCAL ? "keep_local" : "take_remote", json);
    if (!sync || rc != CLI_EXIT_OK || !now_id[0])
        return rc;
    model_copy_text(refs[0].id, sizeof refs[0].id, now_id);
    return cli_object_push(ctx, refs, refs[1].id[0] && side == STORE_KEEP_LOCAL ? 2 : 1);
}

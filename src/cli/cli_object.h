/*
 * cli_object: the command groups of the object kinds (`rampart rules …`, `rampart
 * creds …`) as one piece of code over the kind (rampart/kind.h). Internal to src/cli.
 * - objects.c: the groups (cli_rules, cli_creds), their command table (each
 *   command's words for each kind; a kind without a command has none), the
 *   dispatch, and the commands whose logic is the same for every kind: create,
 *   list, get, delete, retry, discard, export.
 * - objects_edit.c: create, update (an edit in place, store_edit) and resolve (the
 *   answer to a conflict, store_resolve), with the options the kind's fields give
 *   (KIND_FIELD_CREATE fields are options, those without KIND_FIELD_EDIT are
 *   refused by update by name; a policy field takes the policy setting).
 * - objects_show.c: how one row of any kind looks: the detail view, JSON (the
 *   API's wire format plus "state"), and an edited or conflicting row's edit.
 * - objects_list.c: lists and the output forms for scripts (-o table, wide, json,
 *   yaml, name, csv; --no-headers, --sort, --limit): the options, the table, and
 *   the walk over the store's keyset pages in the order asked, for every kind.
 * - rules.c and creds.c: what is one kind's own, each in one place: the line a
 *   create prints, the table's and the detail view's fields, rule import, the
 *   credential token command and token printing, told through cli_object_kind.
 * - objects_common.c: what the commands share, below the table: their start
 *   (cli_object_open) and --sync (cli_object_push); it calls none of the above.
 * - What users see is rampart(1)'s; cli.h's contract holds for every command.
 */
#ifndef RAMPART_CLI_OBJECT_H
#define RAMPART_CLI_OBJECT_H

#include <stdbool.h>

#include "rampart/buf.h"
#include "rampart/cli.h"
#include "rampart/cli_output.h"
#include "rampart/kind.h"
#include "rampart/model.h"
#include "rampart/sync.h"

enum {
    CLI_GO_ON = -1,            /* a step went well: the command goes on */
    CLI_OBJECT_FIELDS_MAX = 8  /* fields of a kind's table or detail view */
};

/* The command being run: its kind, its table entry (for --help and usage lines),
 * its words so far ("rules create") and its own part from the table (NULL for
 * most). */
typedef struct cli_object_call {
    model_kind kind;
    const cli_command *cmd;
    const char *path;
    const void *data;
} cli_object_call;

/* A command of an object group; argv[0] is the command's own name. */
typedef int (*cli_object_fn)(cli_ctx *ctx, const cli_object_call *call, int argc,
                             char **argv);

/*
 * A field shown by name: "id", "state", "error", "created_at", "uri", or one of the
 * kind's fields (kind_field_by_name). `label` is the column's header or the detail
 * view's label. `max` (table columns only): the widest the column grows, its cells
 * cut to fit; 0: no limit.
 */
typedef struct cli_object_field {
    const char *label;
    const char *field;
    int max;
} cli_object_field;

/* What `create` builds: the new row, and the flags every kind's create has. */
typedef struct cli_object_new {
    model_object obj;
    bool json, sync;
} cli_object_new;

/* What one kind shows and takes on the command line. */
typedef struct cli_object_kind {
    model_kind kind;
    /* The list's columns after ID and STATE (the last one unpadded, cut at 60
     * columns), and the detail view's rows between id, state, error and
     * created_at, uri; each ends at the first NULL label. */
    cli_object_field columns[CLI_OBJECT_FIELDS_MAX];
    cli_object_field details[CLI_OBJECT_FIELDS_MAX];
    /* What -o wide and -o csv add after `columns`: the rest of the row's fields
     * (the kind's, created_at, uri, error), so they show every field. */
    cli_object_field wide[CLI_OBJECT_FIELDS_MAX];
    /* Kinds kept in an IP policy: `list --policy ID` takes ids "<prefix>_…". NULL:
     * the kind's list has no --policy. */
    const char *policy_prefix;
    /* The line that tells a create was queued (no --sync, no --json). */
    void (*put_created)(cli_ctx *ctx, const model_object *obj);
    /* What create --sync prints without --json, the row as it is after the sync (a
     * token attached for a kind that has one, when this machine holds it). NULL:
     * the detail view. */
    void (*put_synced)(cli_ctx *ctx, const model_object *obj);
} cli_object_kind;

/* create's options, made from the descriptor alone (objects_edit.c): an option
 * per field the user sets at creation (kind_field flags), each value checked
 * before it is copied, a policy field from the setting when not given, then the
 * kind's validate; c->obj (initialised to the kind, cleared by the caller) takes
 * them. CLI_GO_ON, or the exit status after printing why. */
int cli_object_create_fields(cli_ctx *ctx, const cli_object_call *call, int argc,
                             char **argv, cli_object_new *c);

/* The kinds' own parts (rules.c, creds.c). */
extern const cli_object_kind cli_object_rules;
extern const cli_object_kind cli_object_creds;

/* The part of `kind` (the rules' for an out-of-range value). Here, not in
 * objects.c, so that the files objects.c calls need nothing back from it. */
static inline const cli_object_kind *cli_object_kind_of(model_kind kind)
{
    static const cli_object_kind *const kinds[MODEL_KIND_COUNT] = {
        [MODEL_KIND_RULE] = &cli_object_rules,
        [MODEL_KIND_CRED] = &cli_object_creds,
    };
    return (unsigned)kind < MODEL_KIND_COUNT ? kinds[kind] : kinds[MODEL_KIND_RULE];
}

/* One kind's own commands: `rules import` (rules.c) and `creds token` (creds.c). */
int cli_object_import_rules(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv);
int cli_object_token(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv);

/* ---- creds_rotate.c ---- */

/* `creds rotate ID|NAME [--grace D] [--exec CMD] [--now|--finish|--cancel] [--sync]
 * [--json]`, and `creds rotate --older-than AGE [--limit N] [--dry-run]`. */
int cli_object_rotate(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv);

/* ---- rotation_show.c ---- */

/* A credential's rotation in its detail view (`self_id` is the credential shown:
 * the old one or the successor), at `now` with the quiet period `quiet`. */
void cli_rotation_put(cli_ctx *ctx, const store_rotation *r, const char *self_id,
                      long long now, long long quiet);

/*
 * plan's rotations. `due`: each rotation whose old credential the next sync
 * retires, as a '-' line ("retire: rotated to …") or a JSON item (action "-",
 * the old credential), counted in *count; else the other rotations that are not
 * over, as "↻ OLD → NEW" lines (grace left, when each token was last served) or
 * JSON items (action "↻", kind "rotation"), counted in *count too. *index: the
 * JSON array's position, moved on.
 */
error_code cli_rotation_plan(cli_ctx *ctx, store *st, bool json, bool due, size_t *index,
                             size_t *count, error_info *err);

/* The same as a JSON object (pretty, members indented by `indent` plus two). */
void cli_rotation_json(buf_t *b, const store_rotation *r, long long now, long long quiet,
                       const char *indent);

/* ---- objects_common.c ---- */

/*
 * The start of most commands: cli_parse with `opts`, then the store (opened on first
 * use). NULL when the command must return *exit_code now (--help, a usage error, a
 * store that would not open); else operands start at argv[*first].
 */
store *cli_object_open(cli_ctx *ctx, const cli_object_call *call, const cli_opt *opts,
                       size_t nopts, int argc, char **argv, int *first, int *exit_code);

/* Push the `count` rows of `only` now, and nothing else of the queue (a command's
 * --sync: create, update, delete, resolve, apply): each edit and delete with its
 * look; a listing only to settle a create of unknown outcome among them. The
 * report goes to stderr, so stdout keeps the row; its summary and the exit status
 * speak of those rows, and one line says how many other changes wait. Returns
 * the sync's exit status, or CLI_EXIT_NO_REMOTE (cli_sync.h) after saying that
 * the change is saved and queued and how to configure a remote, when none is. */
int cli_object_push(cli_ctx *ctx, const sync_row_ref *only, size_t count);
/* cli_object_push of one row. */
int cli_object_push_one(cli_ctx *ctx, model_kind kind, const char *id);

/* ---- objects_edit.c ---- */

/* The command-line flag of a kind's field, without "--": its descriptor's `flag`,
 * else its wire name. */
const char *cli_object_flag(const kind_field *f);

/* `update ID --FIELD VALUE...` and `resolve ID --keep-local|--take-remote`. */
int cli_object_update(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv);
int cli_object_resolve(cli_ctx *ctx, const cli_object_call *call, int argc, char **argv);

/* ---- objects_show.c ---- */

/* A field by name as one line of text, as tables and the detail view show it:
 * kind_value (an ACL's rules joined by ", ", cut to fit `size`), an empty ACL
 * "-". A pointer into `obj` or `buf`. */
const char *cli_object_text(const model_object *obj, const char *name, char *buf,
                            size_t size);

/* One row: the detail view, or with `json` the API object with its "state"
 * (pretty). CLI_EXIT_FAILURE when out of memory. */
int cli_object_put(cli_ctx *ctx, const model_object *obj, bool json);

/*
 * One row as `get` shows it: cli_object_put, and for an edited or conflicting row
 * its edit: per field base -> local (and the remote's value in a conflict), the
 * conflict and how to resolve it; in JSON an "edit" member ({"fields": {NAME:
 * {"base", "local", "remote"}}, "conflict": NAME|null}, an ACL as an array).
 * `result` (may be NULL): a "result" member added to the JSON. Returns the exit
 * status (the store's error printed when the edit cannot be read).
 */
int cli_object_show(cli_ctx *ctx, store *st, const model_object *obj, bool json,
                    const char *result);

/* ---- objects_list.c ---- */

/* The output options as typed (cli_opt targets), before they are checked. */
typedef struct cli_object_out_args {
    const char *output, *sort, *limit;
    bool json, no_headers;
} cli_object_out_args;

/* The orders `kind` (a const model_kind *) has, one a line, each also as
 * "FIELD:desc": --sort's choices (cli_choices_fn). */
void cli_object_sort_choices(FILE *out, const void *kind);

/* -o/--output FORMAT, --json and --no-headers (every list and get), for a cli_opt
 * array; CLI_OBJECT_LIST_OPTS adds --sort (the orders of *kindp) and --limit
 * (lists). */
#define CLI_OBJECT_OUT_OPTS(a)                                                             \
    {"output", CLI_OPT_OUTPUT, &(cli_choice){&(a)->output, cli_output_put_names, NULL}},  \
        {"json", CLI_OPT_FLAG, &(a)->json},                                                \
        {"no-headers", CLI_OPT_FLAG, &(a)->no_headers}
#define CLI_OBJECT_LIST_OPTS(a, kindp)                                                     \
    CLI_OBJECT_OUT_OPTS(a),                                                                \
        {"sort", CLI_OPT_CHOICE, &(cli_choice){&(a)->sort, cli_object_sort_choices, (kindp)}}, \
        {"limit", CLI_OPT_STRING, &(a)->limit}

/* The output asked for, checked. */
typedef struct cli_object_out {
    cli_output_format format; /* CLI_OUTPUT_DEFAULT: the table, or get's detail view */
    bool no_headers;          /* table, wide, csv: no header row */
    size_t limit;             /* rows at most; 0: all */
    store_sort sort;          /* an order `kind` has */
    bool descending;
    unsigned codec_flags;     /* json, yaml: the rows' encoding (CODEC_WITH_STATE) */
} cli_object_out;

/*
 * Check the output options of a command of `call->kind`: the format's name (--json
 * is -o json; both with different formats is refused), --limit a whole number
 * above 0, --sort one of the kind's orders (store_sort_name) with :asc or :desc.
 * A bad value is a usage error naming the valid ones (CLI_EXIT_USAGE); CLI_GO_ON
 * with *out filled otherwise.
 */
int cli_object_out_check(cli_ctx *ctx, const cli_object_call *call,
                         const cli_object_out_args *a, cli_object_out *out);

/*
 * The rows of `kind` matching `q` (its sort is out->sort's), in that order
 * (descending: the store's pages walked backward), out->limit at most, through
 * keyset pages: never more than a page in memory, so `--limit 20 --sort cidr` on
 * a million rules reads twenty. Written in out->format: the table (widths from
 * the first page; "no <plural> match" / "no <plural> in the cache" on stderr when
 * there is none), wide, a JSON array of rows encoded with out->codec_flags (the
 * bytes --json always printed), YAML, ids, CSV. Returns the exit status.
 */
int cli_object_list(cli_ctx *ctx, model_kind kind, const store_query *q,
                    const cli_object_out *out);

/* One row as `get` writes it in out->format: the detail view and JSON as
 * cli_object_show, YAML from that JSON, or the list's forms with one row. */
int cli_object_get_as(cli_ctx *ctx, store *st, const model_object *obj,
                      const cli_object_out *out);

#endif

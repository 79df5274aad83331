/*
 * codec: the JSON wire format of the remote API <-> model values. The only module
 * that includes jansson (but -o yaml's reader, src/cli/output_yaml.c).
 *
 * - Decoders take a buffer and its length (need not be NUL-terminated), are
 *   tolerant of what the production service omits (absent description/metadata,
 *   absent or null uri/created_at/token, absent acl) and strict about wrong types:
 *   a field of the wrong JSON type, an over-long string, invalid UTF-8, or an
 *   object where an array is due fails with ERROR_FORMAT and a message naming the
 *   field ("cidr: expected a string, got a number"), never a crash. Unknown fields
 *   are ignored; values are not validated (validate.h). Also refused: duplicate
 *   keys, strings holding a NUL (\u0000), data after the document, empty input.
 *   Messages give positions but never quote string values (maybe secrets).
 * - A failing decoder leaves its output zeroed (a credential: cleared).
 * - Encoders return a heap string (NUL-terminated, compact JSON unless
 *   CODEC_PRETTY) that the caller frees with free(); NULL only when out of memory.
 *   Empty description/metadata are omitted, as the service does; so are an empty
 *   id/uri/created_at (a local row the remote has not assigned them to yet) and an
 *   empty ip_policy uri. "acl" is always an array and "token" always present (null
 *   when not held) on credentials. Keys come in the API's order. Text that is not
 *   valid UTF-8 (which validation should have stopped) is written with U+FFFD.
 * - Pages own their items (codec_page_free). All but codec_wipe_freed_memory is
 *   thread-safe. A token's copy inside jansson is wiped before it is freed; the
 *   parser's scratch copies only after codec_wipe_freed_memory.
 */
#ifndef RAMPART_CODEC_H
#define RAMPART_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"

enum codec_flags {
    CODEC_WITH_STATE = 1u << 0, /* add "state" (and "error" when set): local view */
    CODEC_PRETTY = 1u << 1      /* indented output for people */
};

/* One API error body: {"error_code","status_code","msg","details":{"operation_id"}}. */
typedef struct codec_api_error {
    int status_code;        /* 0 when absent */
    char error_code[64];    /* may be empty: the service sometimes omits it */
    char msg[512];
    char operation_id[MODEL_ID_MAX + 1];
} codec_api_error;

/*
 * One page of a listing, of either kind: `items` holds `count` objects of `kind`
 * (each owns what a model_object owns: a credential's ACL and token).
 */
/* A listed object that could not be read as one (a member of the wrong type, an
 * over-long field, an unknown action): its id and why ("rule 2: action: …"). */
typedef struct codec_refusal {
    char id[MODEL_ID_MAX + 1];
    char msg[ERROR_MSG_MAX];
} codec_refusal;

typedef struct codec_page {
    model_kind kind;
    model_object *items;    /* heap array, NULL when the page is empty */
    size_t count;
    codec_refusal *refused; /* heap array of the items left out, NULL when none */
    size_t refused_count;
    char uri[MODEL_URI_MAX + 1];
    char next_page_uri[MODEL_URI_MAX + 1]; /* empty when null: the last page */
} codec_page;

/*
 * One rule object. Requires "cidr", "action" and the policy, given either as the
 * API's "ip_policy": {"id","uri"} or as the create request's "ip_policy_id".
 * "id" is optional (an import of rules still to be created). `state` is set to
 * MODEL_STATE_SYNCED when a non-empty id is present, else MODEL_STATE_NEW; a "state"
 * field (as written with CODEC_WITH_STATE) overrides it and must name a known state.
 * "action" must be exactly "allow" or "deny". When both policy forms are given
 * they must agree. "error" is read when present.
 */
error_code codec_rule_decode(const char *json, size_t len, model_rule *out,
                             error_info *err);

/*
 * One credential object (a create reply carries the token). `out` must be zeroed
 * or cleared; on failure it is left cleared. Caller releases with model_cred_clear.
 * "token" is a string or null, "acl" an array of strings; `state` as for rules.
 */
error_code codec_cred_decode(const char *json, size_t len, model_cred *out,
                             error_info *err);

/*
 * A list page of `kind`: {"<api_plural>": [...], "uri", "next_page_uri"} (the
 * plural of kind.h: "ip_policy_rules", "credentials"). `out` is overwritten (it
 * holds nothing before) and its kind set. The array is required. An item that does
 * not decode but has a string "id" is left out of `items` and put in `refused`
 * with its id and reason, named by the kind's noun from 1 ("rule 3: cidr: …"), so
 * the rest of the page is kept; an item without one fails the page.
 * "next_page_uri" must be present: null on the last page, else a non-empty string
 * (a missing or empty one would make an incomplete listing look complete). On
 * failure the page is left freed. ERROR_INVALID for a kind that does not exist.
 */
error_code codec_page_decode(model_kind kind, const char *json, size_t len, codec_page *out,
                             error_info *err);

/*
 * A PATCH body of `kind` (an edit of an existing object): a JSON object whose
 * members are fields the kind lets change after creation (KIND_FIELD_EDIT in
 * kind.h: a rule's cidr, description, metadata; a credential's description, acl,
 * metadata). Each one present is decoded into `out` (initialised to `kind` by the
 * call) with the types and limits of the create body, and its bit (kind_field_bit)
 * set in *fields_present. A null value counts as absent, as in the other decoders.
 * Values are not validated (the store's gate does that on the merged row).
 * Refused, with the member named and what the kind may change:
 * - ERROR_FORMAT: what every decoder refuses (bad JSON, a wrong type, an over-long
 *   string, duplicate keys, not an object);
 * An "id" member is allowed (the official clients send the object's id in the body
 * as well as in the path): a string, copied into out's id for the caller to
 * compare with the path; absent, out's id is "".
 * - ERROR_INVALID: a member that never changes, whatever its value (a create field
 *   without KIND_FIELD_EDIT, as a rule's action; what the remote
 *   assigns: uri, created_at; the replies' own ip_policy and token):
 *   "action: cannot be changed; a rule may change cidr, description, metadata";
 *   a member the kind does not have ("colour: unknown field; …"): an edit that
 *   silently dropped part of itself would look applied; and a body that changes
 *   nothing (empty, {}, or only nulls).
 * Member names in messages are cut to 40 bytes, control characters shown as '?'.
 * On failure `out` is left cleared and *fields_present 0; on success the caller
 * releases `out` with model_object_clear.
 */
error_code codec_patch_decode(model_kind kind, const char *json, size_t len,
                              model_object *out, unsigned *fields_present,
                              error_info *err);

/*
 * The PATCH body of an edit of `obj` (its kind's descriptor, kind.h): one member
 * for each field in `fields` (a kind_field_bit set) that the kind lets change
 * after creation (KIND_FIELD_EDIT; other bits are left out: the API would refuse
 * them), with obj's value, in descriptor order. Unlike the create bodies, an empty
 * value is written, as "" or [], since an absent member leaves the field as it
 * was: `{"metadata":""}` clears it. `fields` with no editable field gives "{}".
 * The result reads back through codec_patch_decode with the same fields and
 * values. Heap string the caller frees; NULL only when out of memory.
 */
char *codec_patch_body(const model_object *obj, unsigned fields);

/* Release the items (wiping tokens) and zero the page. NULL is a no-op. */
void codec_page_free(codec_page *page);

/* An error body. Missing fields stay empty/0; a body that is not a JSON object
 * fails with ERROR_FORMAT. A "msg" longer than the buffer is cut at a character
 * boundary rather than refused: part of the reason beats none. */
error_code codec_api_error_decode(const char *json, size_t len, codec_api_error *out,
                                  error_info *err);

/* ---- lists of any length, read incrementally (import) ---------------------- */

/*
 * Input for the readers below: fill `buf` with up to `size` bytes and set *got to
 * how many; *got = 0 means the end of input. An error stops the reading and is
 * returned as is (the reader names the file).
 */
typedef error_code (*codec_read_fn)(void *ctx, char *buf, size_t size, size_t *got,
                                    error_info *err);

/* A buffer as input (codec_read_memory's ctx): `pos` starts at 0. */
typedef struct codec_memory_input {
    const char *data;
    size_t len;
    size_t pos;
} codec_memory_input;

error_code codec_read_memory(void *ctx, char *buf, size_t size, size_t *got,
                             error_info *err);

/*
 * The list splitter: a JSON array of `kind`'s objects, or an API list object
 * ({"<api_plural>": [...], "uri": …, "next_page_uri": …}), read through `read`
 * in chunks, each element handed out as its own byte range. Memory is one chunk
 * plus the largest element (at most 1 MiB; a larger one is refused), whatever the
 * length of the input. A leading UTF-8 byte order mark is skipped.
 * What lies between the elements is checked here: brackets, commas, whitespace,
 * nothing after the document, and in a list object the array member present
 * exactly once and the other members valid JSON (then ignored). The elements
 * themselves are not parsed: the caller gives each to jansson or codec_*_decode,
 * so together every byte is checked as a whole-document parse would.
 * Messages name the element by the kind's noun and its place, counting from 1
 * ("rule 3 (line 5): unexpected end of input"), or give a line and column.
 */
typedef struct codec_split codec_split;

typedef struct codec_split_item {
    const char *json;  /* the element's bytes: valid until the next call */
    size_t len;
    size_t index;      /* 0-based position in the array */
    size_t line;       /* 1-based line and byte column of its first byte */
    size_t column;
} codec_split_item;

/* Start reading; nothing is read yet. Free with codec_split_free. */
error_code codec_split_open(model_kind kind, codec_read_fn read, void *read_ctx,
                            codec_split **out, error_info *err);

/*
 * The next element: ERROR_OK with *more true and `item` filled, or with *more
 * false once the document has been read and checked to its last byte (an empty
 * array gives no element). ERROR_FORMAT for a malformed document, ERROR_NOMEM, or
 * the reader's error; after an error the splitter gives nothing more.
 */
error_code codec_split_next(codec_split *sp, codec_split_item *item, bool *more,
                            error_info *err);

/* NULL is a no-op. */
void codec_split_free(codec_split *sp);

/*
 * Called once per rule by the rule streams, with its 0-based index. `rule` is
 * valid only during the call (copy it to keep it). Return ERROR_OK to go on;
 * anything else stops the stream.
 */
typedef error_code (*codec_rule_fn)(void *ctx, const model_rule *rule, size_t index,
                                    error_info *err);

/*
 * Import: the rules of a JSON array of rule objects or of an API list object
 * ({"ip_policy_rules": [...]}), read through `read` by the list splitter, so memory
 * does not grow with the input. Calls `fn` for each rule in order; each element is
 * decoded as by codec_rule_decode. An error about an element, the decoder's or
 * `fn`'s, comes with its place in front ("rule 12 (line 13): cidr: expected a
 * string, got a number"), keeping its code; rules before it have been passed to
 * `fn`. Data after the document is an error.
 */
error_code codec_rule_stream_read(codec_read_fn read, void *read_ctx, codec_rule_fn fn,
                                  void *ctx, error_info *err);

/* The same over a buffer of `len` bytes (NULL or blank: "empty document"). */
error_code codec_rule_stream(const char *json, size_t len, codec_rule_fn fn, void *ctx,
                             error_info *err);

/* Encoders (see the contract at the top for ownership). */
/* Make jansson zero every block it frees (model_free_wiped): its parser and
 * encoder keep scratch copies of tokens we cannot reach. Process-wide: call once
 * at start, before any thread and any other codec call. */
void codec_wipe_freed_memory(void);

char *codec_rule_encode(const model_rule *rule, unsigned flags);
char *codec_cred_encode(const model_cred *cred, unsigned flags);

/* An object of either kind (obj->kind says which), as codec_rule_encode /
 * codec_cred_encode, codec_*_create_body, codec_*_decode; a decode initialises
 * `out` to `kind` (the caller clears it whatever the result). */
char *codec_object_encode(const model_object *obj, unsigned flags);
char *codec_object_create_body(const model_object *obj);
error_code codec_object_decode(model_kind kind, const char *json, size_t len,
                               model_object *out, error_info *err);

/* The keys an encoded object of `kind` holds when every field is set, in order:
 * {"id", "uri", …} (heap text the caller frees; NULL when out of memory). */
char *codec_object_keys(model_kind kind);

/* Create request bodies: only the fields the API accepts, compact, in the order
 * description, metadata, then the kind's own fields (kind.h). Empty optional
 * fields (not KIND_FIELD_REQUIRED; an empty acl) are omitted. */
char *codec_rule_create_body(const model_rule *rule);
char *codec_cred_create_body(const model_cred *cred);

/* An error body as the service writes it; "error_code" omitted when empty. */
char *codec_api_error_encode(const codec_api_error *e);

#endif

/*
 * codec internals shared by codec_decode.c and codec_stream.c. Not part of the
 * public contract (see rampart/codec.h); only codec files include this.
 */
#ifndef RAMPART_CODEC_INTERNAL_H
#define RAMPART_CODEC_INTERNAL_H

#include <jansson.h>

#include "rampart/codec.h"

/*
 * Duplicate keys are refused everywhere: {"action":"allow","action":"deny"} means
 * different things to different parsers, and a rule list guards access.
 */
#define CODEC_LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

/* First index at or after `pos` that is not JSON whitespace (or `len`). */
size_t codec_skip_space(const char *json, size_t len, size_t pos);

/* "a string", "a number", "null"…: the JSON type as a message word; "nothing"
 * for NULL (a missing member). */
const char *codec_type_name(const json_t *value);

/*
 * jansson's message without its " near '…'" excerpt: the excerpt quotes the input,
 * which may be a token, and error messages never carry secrets.
 */
const char *codec_jansson_text(json_error_t *jerr);

/* ERROR_NOMEM when jansson ran out of memory, else ERROR_FORMAT. */
error_code codec_jansson_code(const json_error_t *jerr);

/* Parse one whole document (no trailing data). `*out` is NULL on failure. */
error_code codec_load(const char *json, size_t len, json_t **out, error_info *err);

/* Parse one element the list splitter handed out; a message gives the line and
 * column in the whole input. `*out` is NULL on failure. */
error_code codec_split_parse(const codec_split_item *item, json_t **out, error_info *err);

/* A rule from a parsed value; `out` is partly written on failure. */
error_code codec_rule_from_json(const json_t *value, model_rule *out, error_info *err);
/* A credential from a parsed value; `out` ends cleared on failure. */
error_code codec_cred_from_json(const json_t *value, model_cred *out, error_info *err);

/*
 * The common shape of a rule object, read without jansson. On true `out` holds the
 * rule exactly as codec_rule_from_json would decode it and `*end` is the offset
 * just past its closing brace. False means "not handled here", never "invalid":
 * the caller then parses with jansson. `out` is scratch either way.
 */
bool codec_rule_fast(const char *json, size_t len, size_t *end, model_rule *out);

/*
 * A list page of rules in its common shape, read without jansson: one object with
 * "ip_policy_rules" (an array of rules codec_rule_fast takes), "uri" and
 * "next_page_uri" (strings or null), each once and nothing else. On true `out`
 * holds exactly what codec_page_decode's full path would give (no refusals: an
 * item it cannot take sends the whole page to jansson) and is released with
 * codec_page_free. False means "not handled here": `out` is left empty and the
 * caller decodes with jansson, which gives the one answer and message. Other
 * kinds (credentials: ACL arrays, tokens) always go to jansson.
 */
bool codec_page_fast(model_kind kind, const char *json, size_t len, codec_page *out);

/* codec_page_decode through jansson alone: the one authoritative reading, which
 * codec_page_fast must agree with wherever it accepts (the tests and the fuzzer
 * compare them). */
error_code codec_page_decode_json(model_kind kind, const char *json, size_t len,
                                  codec_page *out, error_info *err);

/* Field readers shared by the create decoders (codec_decode.c) and the edit
 * decoder (codec_patch.c). Each fills its output from `obj`'s member and fails
 * with ERROR_FORMAT naming the member when its type is wrong. */
error_code codec_need_object(const json_t *value, error_info *err);
/* Absent and null read as "" (ERROR_FORMAT when `required`); longer than size-1
 * bytes is ERROR_INVALID naming `field`. */
error_code codec_get_text(const json_t *obj, const char *key, const char *field,
                          char *dst, size_t size, bool required, error_info *err);
error_code codec_get_action(const json_t *obj, model_action *out, error_info *err);
error_code codec_get_acl(const json_t *obj, model_acl *acl, error_info *err);
/* Values for the encoders (codec_encode.c, codec_patch.c); NULL when out of
 * memory. codec_json_text: a JSON string, text that is not UTF-8 written with
 * U+FFFD. codec_json_acl: an array of the ACL's rules (possibly empty). */
json_t *codec_json_text(const char *text);
json_t *codec_json_acl(const model_acl *acl);
/* Zero the string of a "token" member in the tree before jansson frees it. */
void codec_wipe_token(json_t *root);

#endif

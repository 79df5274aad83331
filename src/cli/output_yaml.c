/*
 * -o yaml: the JSON output, read back with jansson and written again as YAML
 * events through libyaml (rampart/cli_output.h). Working from the JSON text rather
 * than from the rows keeps one fact in one place: whatever the json form holds
 * (a row's "edit", a plan's members), the YAML holds too, in the same order.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "rampart/cli_output.h"

struct cli_yaml {
    yaml_emitter_t emitter;
    bool sequence;
};

static error_code emitter_error(cli_yaml *y, error_info *err)
{
    return error_set(err, ERROR_IO, "cannot write YAML: %s",
                     y->emitter.problem ? y->emitter.problem : "write error");
}

static error_code emit(cli_yaml *y, yaml_event_t *event, error_info *err)
{
    /* yaml_emitter_emit takes the event over, even when it fails. */
    if (!yaml_emitter_emit(&y->emitter, event))
        return emitter_error(y, err);
    return ERROR_OK;
}

/* ---- scalars ---- */

/*
 * Whether a string may go out plain: it must read back as the same string, so
 * nothing a YAML 1.1 reader resolves to another type (null, booleans such as
 * "yes" and "off", numbers, times: they start with a digit, a sign or a dot),
 * nothing that starts with an indicator, and nothing plain style cannot hold
 * (": ", " #", a line break or tab, spaces at the ends). The rest is double-quoted,
 * escapes and all, as JSON would.
 */
static bool plain_ok(const char *s, size_t len)
{
    static const char *const words[] = {"y", "n", "yes", "no", "true", "false",
                                        "on", "off", "null"};
    char c = s[0];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '/'))
        return false;
    if (s[len - 1] == ' ' || strlen(s) != len || strpbrk(s, "\n\t\r") ||
        strstr(s, ": ") || strstr(s, " #"))
        return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcasecmp(s, words[i]) == 0)
            return false;
    }
    return true;
}

static error_code emit_scalar(cli_yaml *y, const char *text, size_t len, bool plain,
                              error_info *err)
{
    yaml_event_t event;
    yaml_scalar_style_t style = plain ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    /* Implicit either way: a quoted scalar is a string without a tag. */
    if (!yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
                                      style))
        return error_set(err, ERROR_NOMEM, "out of memory");
    return emit(y, &event, err);
}

static error_code emit_string(cli_yaml *y, const char *s, size_t len, error_info *err)
{
    return emit_scalar(y, s, len, len > 0 && plain_ok(s, len), err);
}

/* A number as the JSON output writes it: 15 significant digits at most (what the
 * JSON writers print), so 1.600 is 1.6, not the 17 digits of its double. */
static error_code emit_number(cli_yaml *y, const json_t *v, error_info *err)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (!text)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = emit_scalar(y, text, strlen(text), true, err);
    free(text);
    return rc;
}

/* ---- the tree ---- */

static error_code emit_value(cli_yaml *y, const json_t *v, error_info *err);

/* An object's members: each key, then its value. */
static error_code emit_members(cli_yaml *y, const json_t *v, error_info *err)
{
    const char *key;
    const json_t *member;
    /* jansson keeps the members' order (insertion order, since 2.8). */
    json_object_foreach ((json_t *)v, key, member) {
        if (emit_string(y, key, strlen(key), err) || emit_value(y, member, err))
            return err->code;
    }
    return ERROR_OK;
}

/* An array's items, in order. */
static error_code emit_items(cli_yaml *y, const json_t *v, error_info *err)
{
    for (size_t i = 0; i < json_array_size(v); i++) {
        if (emit_value(y, json_array_get(v, i), err))
            return err->code;
    }
    return ERROR_OK;
}

/* An object as a block mapping, an array as a block sequence. */
static error_code emit_collection(cli_yaml *y, const json_t *v, error_info *err)
{
    bool mapping = json_is_object(v);
    yaml_event_t event;
    if (!(mapping ? yaml_mapping_start_event_initialize(&event, NULL, NULL, 1,
                                                        YAML_BLOCK_MAPPING_STYLE)
                  : yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                         YAML_BLOCK_SEQUENCE_STYLE)))
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (emit(y, &event, err) || (mapping ? emit_members : emit_items)(y, v, err))
        return err->code;
    if (mapping)
        yaml_mapping_end_event_initialize(&event);
    else
        yaml_sequence_end_event_initialize(&event);
    return emit(y, &event, err);
}

static error_code emit_value(cli_yaml *y, const json_t *v, error_info *err)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        return emit_collection(y, v, err);
    case JSON_STRING:
        return emit_string(y, json_string_value(v), json_string_length(v), err);
    case JSON_INTEGER:
    case JSON_REAL:
        return emit_number(y, v, err);
    case JSON_TRUE:
        return emit_scalar(y, "true", 4, true, err);
    case JSON_FALSE:
        return emit_scalar(y, "false", 5, true, err);
    case JSON_NULL:
    default:
        return emit_scalar(y, "null", 4, true, err);
    }
}

/* ---- the stream ---- */

/* The events before the first value: the stream, the document, a sequence. */
static bool start(cli_yaml *y, error_info *err)
{
    yaml_event_t event;
    if (!yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING) ||
        emit(y, &event, err) != ERROR_OK)
        return false;
    if (!yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1) ||
        emit(y, &event, err) != ERROR_OK)
        return false;
    if (!y->sequence)
        return true;
    return yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                YAML_BLOCK_SEQUENCE_STYLE) &&
           emit(y, &event, err) == ERROR_OK;
}

error_code cli_yaml_open(FILE *out, bool sequence, cli_yaml **yaml, error_info *err)
{
    *yaml = NULL;
    cli_yaml *y = calloc(1, sizeof *y);
    if (!y || !yaml_emitter_initialize(&y->emitter)) {
        free(y);
        error_set(err, ERROR_NOMEM, "out of memory");
        return ERROR_NOMEM;
    }
    y->sequence = sequence;
    yaml_emitter_set_output_file(&y->emitter, out);
    yaml_emitter_set_unicode(&y->emitter, 1); /* UTF-8 as it is, like the JSON */
    yaml_emitter_set_indent(&y->emitter, 2);
    yaml_emitter_set_width(&y->emitter, -1); /* no folding: one value, one line */
    if (!start(y, err)) {
        cli_yaml_free(y);
        if (err && err->code == ERROR_OK) /* an event that could not be made */
            error_set(err, ERROR_NOMEM, "out of memory");
        return err && err->code != ERROR_OK ? err->code : ERROR_NOMEM;
    }
    *yaml = y;
    return ERROR_OK;
}

error_code cli_yaml_add(cli_yaml *yaml, const char *json, size_t len, error_info *err)
{
    json_error_t jerr;
    json_t *v = json_loadb(json, len, JSON_DECODE_ANY, &jerr);
    if (!v)
        return error_set(err, ERROR_FORMAT, "cannot write YAML: the JSON does not read "
                         "back: %s", jerr.text);
    error_code rc = emit_value(yaml, v, err);
    json_decref(v);
    return rc;
}

error_code cli_yaml_finish(cli_yaml *yaml, error_info *err)
{
    yaml_event_t event;
    if (yaml->sequence) {
        yaml_sequence_end_event_initialize(&event);
        if (emit(yaml, &event, err))
            return err->code;
    }
    yaml_document_end_event_initialize(&event, 1);
    if (emit(yaml, &event, err))
        return err->code;
    yaml_stream_end_event_initialize(&event);
    if (emit(yaml, &event, err))
        return err->code;
    return yaml_emitter_flush(&yaml->emitter) ? ERROR_OK : emitter_error(yaml, err);
}

void cli_yaml_free(cli_yaml *yaml)
{
    if (!yaml)
        return;
    yaml_emitter_delete(&yaml->emitter);
    free(yaml);
}

error_code cli_yaml_document(FILE *out, const char *json, size_t len, error_info *err)
{
    cli_yaml *y = NULL;
    error_code rc = cli_yaml_open(out, false, &y, err);
    if (rc != ERROR_OK || !y)
        return rc;
    rc = cli_yaml_add(y, json, len, err);
    if (rc == ERROR_OK)
        rc = cli_yaml_finish(y, err);
    cli_yaml_free(y);
    return rc;
}

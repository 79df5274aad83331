/*
 * cli_output: the forms of the command line's output for scripts (-o FORMAT):
 * their names, the options lists take (--sort, --limit), RFC 4180 CSV fields,
 * and YAML written from the JSON output.
 *
 * - Format names are fixed and documented in rampart(1): table, wide, json, yaml,
 *   name, csv. What each one writes is src/cli's (cli_object.h); this module holds
 *   the parts that are pure text: names, parsing of option values, quoting.
 * - YAML is the JSON document, value for value: cli_yaml_* take the exact JSON
 *   text the json form prints and emit the same tree through libyaml (a mapping
 *   keeps its members' order; strings a YAML 1.1 reader would take for another
 *   type, such as "10", "true", "null" or a time, are quoted; numbers, true,
 *   false and null stay plain). Nothing else in rampart links libyaml.
 * - Functions that take an error_info return the error, never print it.
 */
#ifndef RAMPART_CLI_OUTPUT_H
#define RAMPART_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rampart/buf.h"
#include "rampart/error.h"

typedef enum cli_output_format {
    CLI_OUTPUT_DEFAULT, /* no -o: a list's table, a record's detail view */
    CLI_OUTPUT_TABLE,   /* the aligned table (for one record too) */
    CLI_OUTPUT_WIDE,    /* the table with every field */
    CLI_OUTPUT_JSON,    /* what --json prints, byte for byte */
    CLI_OUTPUT_YAML,    /* the JSON document as YAML */
    CLI_OUTPUT_NAME,    /* one id a line */
    CLI_OUTPUT_CSV,     /* RFC 4180: the wide table's fields, a header row */
    CLI_OUTPUT_COUNT
} cli_output_format;

/* The format named `name` ("table", "wide", "json", "yaml", "name", "csv"; exact,
 * lower-case); false for any other word. */
bool cli_output_parse(const char *name, cli_output_format *out);

/* A format's name ("table" for CLI_OUTPUT_DEFAULT). */
const char *cli_output_name(cli_output_format format);

/* Every name, one a line, to `out` (a cli_choices_fn: `unused` is ignored). */
void cli_output_put_names(FILE *out, const void *unused);

/*
 * --limit N: a whole number of rows above 0, decimal digits only, at most
 * 1,000,000,000. false (and *out untouched) for anything else ("0", "-1", "1e3",
 * "", " 5").
 */
bool cli_output_parse_limit(const char *text, size_t *out);

/*
 * --sort FIELD[:asc|:desc]: `text` split into its field (copied into `field`,
 * `size` bytes) and direction (*descending). false for an empty field, an
 * unknown direction, or a field that does not fit; the caller checks the field
 * against the kind's orders.
 */
bool cli_output_parse_sort(const char *text, char *field, size_t size, bool *descending);

/*
 * Append `text` as one CSV field (RFC 4180): as it is, unless it holds a comma, a
 * double quote, CR or LF, or starts or ends with a space, when it is enclosed in
 * double quotes with each quote doubled. Returns false when out of memory
 * (b->failed).
 */
bool cli_output_csv_field(buf_t *b, const char *text);

/* ---- YAML (output_yaml.c, libyaml) ---- */

typedef struct cli_yaml cli_yaml;

/*
 * A YAML stream on `out` holding one document: with `sequence` a block sequence
 * whose items cli_yaml_add appends one by one (a list, streamed: nothing is kept
 * but the emitter's state), else the one value cli_yaml_add gives. Release with
 * cli_yaml_free, after cli_yaml_finish when everything went well.
 */
error_code cli_yaml_open(FILE *out, bool sequence, cli_yaml **yaml, error_info *err);

/* Emit the JSON value in `json` (`len` bytes, any JSON value) as the document or
 * the sequence's next item. ERROR_FORMAT when `json` is not JSON, ERROR_IO when the
 * emitter or `out` fails. */
error_code cli_yaml_add(cli_yaml *yaml, const char *json, size_t len, error_info *err);

/* End the sequence (an empty one is "[]") and the document, and flush. */
error_code cli_yaml_finish(cli_yaml *yaml, error_info *err);

/* Release (NULL is a no-op); what was not finished is dropped. */
void cli_yaml_free(cli_yaml *yaml);

/* One document: the JSON value in `json` as YAML on `out`. */
error_code cli_yaml_document(FILE *out, const char *json, size_t len, error_info *err);

#endif

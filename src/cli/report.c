/* The output of the report commands (status, check, doctor): their own human
 * form, or one JSON document, or the same as YAML (-o; --json is -o json). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "rampart/cli.h"
#include "rampart/cli_output.h"

/* The formats a report has: its human form is the "table". */
static const cli_output_format report_formats[] = {CLI_OUTPUT_TABLE, CLI_OUTPUT_JSON,
                                                   CLI_OUTPUT_YAML};
enum { REPORT_FORMATS = sizeof report_formats / sizeof report_formats[0] };

static bool report_has(cli_output_format f)
{
    for (size_t i = 0; i < REPORT_FORMATS; i++) {
        if (report_formats[i] == f)
            return true;
    }
    return false;
}

bool cli_report_is_document(cli_output_format format)
{
    return format == CLI_OUTPUT_JSON || format == CLI_OUTPUT_YAML;
}

void cli_report_put_formats(FILE *out, const void *unused)
{
    (void)unused;
    for (size_t i = 0; i < REPORT_FORMATS; i++)
        fprintf(out, "%s\n", cli_output_name(report_formats[i]));
}

/* The names of the formats offered (a report's, or all), "a, b, c", into `buf`. */
static const char *offered_names(bool report, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int f = CLI_OUTPUT_TABLE; f < CLI_OUTPUT_COUNT && len < size; f++) {
        if (!report || report_has((cli_output_format)f))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                                    cli_output_name((cli_output_format)f));
    }
    return buf;
}

bool cli_output_choose(cli_ctx *ctx, const char *path, const char *output, bool json,
                       bool report, cli_output_format *format)
{
    char names[96];
    *format = CLI_OUTPUT_DEFAULT;
    if (output && !cli_output_parse(output, format)) {
        cli_usage_error(ctx, path, "-o: '%s' is not an output format: one of %s", output,
                        offered_names(report, names, sizeof names));
        return false;
    }
    if (report && output && !report_has(*format)) {
        cli_usage_error(ctx, path, "-o %s: %s prints one of %s", output, path,
                        offered_names(true, names, sizeof names));
        return false;
    }
    if (json && output && *format != CLI_OUTPUT_JSON) {
        cli_usage_error(ctx, path, "--json is -o json: give -o %s or --json, not both", output);
        return false;
    }
    if (json)
        *format = CLI_OUTPUT_JSON;
    return true;
}

bool cli_report_parse(cli_ctx *ctx, const char *path, const cli_command *cmd,
                      const cli_opt *opts, size_t nopts, int argc, char **argv,
                      cli_report_line *line)
{
    const char *output = NULL;
    bool json = false;
    cli_opt all[2 + CLI_REPORT_OWN_OPTS] = {
        {"output", CLI_OPT_OUTPUT, &(cli_choice){&output, cli_report_put_formats, NULL}},
        {"json", CLI_OPT_FLAG, &json},
    };
    assert(nopts <= CLI_REPORT_OWN_OPTS); /* a command's own options all fit */
    size_t n = 2;
    for (size_t i = 0; i < nopts && n < sizeof all / sizeof all[0]; i++)
        all[n++] = opts[i];
    if (!cli_parse(ctx, path, cmd, all, n, argc, argv, &line->first, &line->exit_code))
        return false;
    line->exit_code = CLI_EXIT_USAGE;
    return cli_output_choose(ctx, path, output, json, true, &line->format);
}

bool cli_report_begin(cli_ctx *ctx, cli_report *r, cli_output_format format)
{
    *r = (cli_report){.format = format};
    if (format != CLI_OUTPUT_YAML)
        return true;
    FILE *mem = open_memstream(&r->json, &r->len);
    if (!mem) {
        error_info e = {0};
        error_set(&e, ERROR_NOMEM, "out of memory");
        cli_fail(ctx, &e);
        return false;
    }
    r->out = ctx->out;
    ctx->out = mem;
    return true;
}

int cli_report_end(cli_ctx *ctx, cli_report *r, int status)
{
    if (r->format != CLI_OUTPUT_YAML)
        return status;
    FILE *mem = ctx->out;
    ctx->out = r->out;
    bool written = fclose(mem) == 0 && r->json;
    error_info e = {0};
    if (!written)
        error_set(&e, ERROR_NOMEM, "out of memory");
    else
        cli_yaml_document(ctx->out, r->json, r->len, &e);
    free(r->json);
    r->json = NULL;
    if (e.code == ERROR_OK)
        return status;
    cli_fail(ctx, &e);
    return status == CLI_EXIT_OK ? CLI_EXIT_FAILURE : status;
}

/* The forms of the output for scripts: names, option values, CSV fields
 * (rampart/cli_output.h). */
#include <string.h>

#include "rampart/cli_output.h"

enum { LIMIT_MAX_DIGITS = 10 };
#define LIMIT_MAX 1000000000ull

static const char *const names[CLI_OUTPUT_COUNT] = {
    [CLI_OUTPUT_DEFAULT] = "table", [CLI_OUTPUT_TABLE] = "table", [CLI_OUTPUT_WIDE] = "wide",
    [CLI_OUTPUT_JSON] = "json",     [CLI_OUTPUT_YAML] = "yaml",   [CLI_OUTPUT_NAME] = "name",
    [CLI_OUTPUT_CSV] = "csv",
};

bool cli_output_parse(const char *name, cli_output_format *out)
{
    for (int f = CLI_OUTPUT_TABLE; f < CLI_OUTPUT_COUNT; f++) {
        if (strcmp(name, names[f]) == 0) {
            *out = (cli_output_format)f;
            return true;
        }
    }
    return false;
}

const char *cli_output_name(cli_output_format format)
{
    return (unsigned)format < CLI_OUTPUT_COUNT ? names[format] : names[CLI_OUTPUT_TABLE];
}

void cli_output_put_names(FILE *out, const void *unused)
{
    (void)unused;
    for (int f = CLI_OUTPUT_TABLE; f < CLI_OUTPUT_COUNT; f++)
        fprintf(out, "%s\n", names[f]);
}

bool cli_output_parse_limit(const char *text, size_t *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > LIMIT_MAX_DIGITS)
        return false;
    unsigned long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (unsigned long long)(text[i] - '0');
    }
    if (v == 0 || v > LIMIT_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

bool cli_output_parse_sort(const char *text, char *field, size_t size, bool *descending)
{
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= size)
        return false;
    bool desc = false;
    if (colon && strcmp(colon + 1, "desc") == 0)
        desc = true;
    else if (colon && strcmp(colon + 1, "asc") != 0)
        return false;
    for (size_t i = 0; i < len; i++)
        field[i] = text[i];
    field[len] = '\0';
    *descending = desc;
    return true;
}

/* RFC 4180: a field with a comma, a quote or a line break is quoted; so is one
 * with a space at either end, which some readers would trim. */
static bool needs_quotes(const char *text)
{
    size_t len = strlen(text);
    if (len > 0 && (text[0] == ' ' || text[len - 1] == ' '))
        return true;
    return strpbrk(text, ",\"\r\n") != NULL;
}

bool cli_output_csv_field(buf_t *b, const char *text)
{
    if (!needs_quotes(text))
        return buf_puts(b, text);
    buf_puts(b, "\"");
    for (const char *p = text; *p; p++) {
        const char *quote = strchr(p, '"');
        size_t run = quote ? (size_t)(quote - p) : strlen(p);
        buf_append(b, p, run);
        if (!quote)
            break;
        buf_puts(b, "\"\"");
        p = quote;
    }
    return buf_puts(b, "\"");
}

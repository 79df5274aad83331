/*
 * The output forms for scripts (rampart/cli_output.h): format names, --limit and
 * --sort values, CSV fields, YAML read back with libyaml's parser into the same
 * JSON tree it was written from; and the facts the lists take from elsewhere: the
 * console's sort orders are the store's, -o wide shows every field of each kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <yaml.h>

#include "rampart/cli_output.h"
#include "rampart/store.h"
#include "../../src/cli/cli_object.h"
#include "../../ui/views/ui_record.h"

/* ---- names and option values ---- */

static void format_names(void **state)
{
    (void)state;
    static const char *const names[] = {"table", "wide", "json", "yaml", "name", "csv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        cli_output_format f = CLI_OUTPUT_COUNT;
        assert_true(cli_output_parse(names[i], &f));
        assert_string_equal(cli_output_name(f), names[i]);
    }
    cli_output_format f = CLI_OUTPUT_COUNT;
    assert_false(cli_output_parse("JSON", &f));
    assert_false(cli_output_parse("", &f));
    assert_false(cli_output_parse("xml", &f));
    assert_int_equal(f, CLI_OUTPUT_COUNT);
    assert_string_equal(cli_output_name(CLI_OUTPUT_DEFAULT), "table");
}

static void limit_values(void **state)
{
    (void)state;
    size_t n = 7;
    assert_true(cli_output_parse_limit("20", &n));
    assert_int_equal(n, 20);
    assert_true(cli_output_parse_limit("1000000000", &n));
    assert_int_equal(n, 1000000000);
    static const char *const bad[] = {"0", "-1", "", " 5", "5 ", "1e3", "0x10", "1000000001",
                                      "99999999999999999999", "+3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 7;
        if (cli_output_parse_limit(bad[i], &n) || n != 7)
            fail_msg("--limit '%s' was taken", bad[i]);
    }
}

static void sort_values(void **state)
{
    (void)state;
    char field[16];
    bool desc = true;
    assert_true(cli_output_parse_sort("cidr", field, sizeof field, &desc));
    assert_string_equal(field, "cidr");
    assert_false(desc);
    assert_true(cli_output_parse_sort("state:desc", field, sizeof field, &desc));
    assert_string_equal(field, "state");
    assert_true(desc);
    assert_true(cli_output_parse_sort("id:asc", field, sizeof field, &desc));
    assert_false(desc);
    assert_false(cli_output_parse_sort(":desc", field, sizeof field, &desc));
    assert_false(cli_output_parse_sort("id:down", field, sizeof field, &desc));
    assert_false(cli_output_parse_sort("", field, sizeof field, &desc));
    assert_false(cli_output_parse_sort("a-very-long-field-name", field, sizeof field, &desc));
}

/* ---- CSV ---- */

static void csv_fields(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"", ""},
        {"office, main", "\"office, main\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"\"", "\"\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {"cr\r", "\"cr\r\""},
        {" lead", "\" lead\""},
        {"trail ", "\"trail \""},
        {"in side", "in side"},
        {"é, \xe2\x80\xae", "\"é, \xe2\x80\xae\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_t b = {0};
        assert_true(cli_output_csv_field(&b, cases[i].in));
        buf_puts(&b, "");
        assert_string_equal(b.data ? b.data : "", cases[i].out);
        buf_free(&b);
    }
}

/* ---- YAML, read back ---- */

/* A plain scalar as YAML 1.1's core types read it (what a YAML reader would make
 * of it); a quoted one is a string. */
static json_t *resolve(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(v, len);
    if (len == 0 || strcmp(v, "null") == 0 || strcmp(v, "~") == 0)
        return json_null();
    if (strcmp(v, "true") == 0)
        return json_true();
    if (strcmp(v, "false") == 0)
        return json_false();
    if (!strchr("0123456789+-.", v[0])) /* strtod would take "inf" and "nan" */
        return json_stringn(v, len);
    char *end;
    long long n = strtoll(v, &end, 10);
    if (end != v && *end == '\0')
        return json_integer(n);
    double d = strtod(v, &end);
    if (end != v && *end == '\0')
        return json_real(d);
    return json_stringn(v, len);
}

static json_t *node(yaml_parser_t *p, yaml_event_t *ev);

static json_t *next_node(yaml_parser_t *p, bool *end)
{
    yaml_event_t ev;
    assert_true(yaml_parser_parse(p, &ev));
    *end = ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT;
    json_t *v = *end ? NULL : node(p, &ev);
    yaml_event_delete(&ev);
    return v;
}

static json_t *node(yaml_parser_t *p, yaml_event_t *ev)
{
    bool end = false;
    if (ev->type == YAML_SCALAR_EVENT)
        return resolve(ev);
    if (ev->type == YAML_SEQUENCE_START_EVENT) {
        json_t *a = json_array();
        for (json_t *v = next_node(p, &end); !end; v = next_node(p, &end))
            json_array_append_new(a, v);
        return a;
    }
    assert_int_equal(ev->type, YAML_MAPPING_START_EVENT);
    json_t *o = json_object();
    for (json_t *k = next_node(p, &end); !end; k = next_node(p, &end)) {
        assert_true(json_is_string(k));
        json_object_set_new(o, json_string_value(k), next_node(p, &end));
        json_decref(k);
    }
    return o;
}

/* The one document of `text`. */
static json_t *read_yaml(const char *text)
{
    yaml_parser_t p;
    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    yaml_event_t ev;
    json_t *doc = NULL;
    for (;;) {
        assert_true(yaml_parser_parse(&p, &ev));
        yaml_event_type_t t = ev.type;
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT ||
            t == YAML_SCALAR_EVENT) {
            assert_null(doc);
            doc = node(&p, &ev);
        }
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    assert_non_null(doc);
    return doc;
}

/* `json` written as YAML into a heap string. */
static char *to_yaml(const char *json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    error_info err;
    error_code rc = cli_yaml_document(mem, json, strlen(json), &err);
    fclose(mem);
    if (rc != ERROR_OK)
        fail_msg("cli_yaml_document: %s", err.msg);
    return text;
}

/* Same values and the same member order, all the way down. */
static void assert_same_tree(const json_t *a, const json_t *b)
{
    assert_true(json_equal(a, b));
    if (json_is_object(a)) {
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib)) {
            assert_string_equal(json_object_iter_key(ia), json_object_iter_key(ib));
            assert_same_tree(json_object_iter_value(ia), json_object_iter_value(ib));
        }
    } else if (json_is_array(a)) {
        for (size_t i = 0; i < json_array_size(a); i++)
            assert_same_tree(json_array_get(a, i), json_array_get(b, i));
    }
}

static void yaml_is_the_json_document(void **state)
{
    (void)state;
    const char *json =
        "{\"zeta\": \"first\", \"id\": \"ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a\","
        " \"cidr\": \"10.0.0.0/8\", \"v6\": \"2001:db8::/32\","
        " \"created_at\": \"2026-11-28T13:07:37Z\", \"n\": \"10\", \"neg\": \"-5\","
        " \"dot\": \".5\", \"inf\": \".inf\", \"hex\": \"0x1f\", \"yes\": \"yes\","
        " \"off\": \"Off\", \"null_text\": \"null\", \"tilde\": \"~\", \"empty\": \"\","
        " \"true_text\": \"true\", \"colon\": \"a: b\", \"hash\": \"# not a comment\","
        " \"comma\": \"office, \\\"main\\\"\", \"spaces\": \" both \","
        " \"lines\": \"one\\ntwo\\n\", \"esc\": \"\\u001b[31mred\\u0007\","
        " \"bidi\": \"\\u202eevil\", \"utf8\": \"caf\\u00e9 \\u6771\\u4eac\","
        " \"acl\": [\"bind:*.example.com\", \"*\", \"bind:env=prod\"],"
        " \"token\": null, \"on\": true, \"never\": false, \"count\": 42, \"zero\": 0,"
        " \"big\": -9007199254740993, \"ratio\": 0.25, \"nested\": {\"ip_policy\": "
        "{\"id\": \"ipp_x\"}, \"none\": {}, \"list\": []},"
        " \"- dash\": \"-\", \"key with: colon\": \"[x]\", \"amp\": \"&anchor\","
        " \"star\": \"*alias\", \"pct\": \"%TAG\", \"at\": \"@x\", \"tick\": \"`x\"}";
    char *yaml = to_yaml(json);
    json_t *back = read_yaml(yaml);
    json_t *want = json_loads(json, 0, NULL);
    assert_non_null(want);
    if (!json_equal(want, back))
        fail_msg("the YAML does not read back as the JSON:\n%s", yaml);
    assert_same_tree(want, back);
    /* What the lists look like: plain where plain reads back the same. */
    assert_non_null(strstr(yaml, "id: ipr_2VhYfCwqPkX0n4sF5nYfW3eJb1a\n"));
    assert_non_null(strstr(yaml, "cidr: \"10.0.0.0/8\"\n"));
    assert_non_null(strstr(yaml, "token: null\n"));
    assert_non_null(strstr(yaml, "acl:\n  - bind:*.example.com\n") ||
                    strstr(yaml, "acl:\n- bind:*.example.com\n"));
    /* No control character reaches the output: YAML escapes it. */
    assert_null(strchr(yaml, '\x1b'));
    assert_null(strchr(yaml, '\a'));
    json_decref(want);
    json_decref(back);
    free(yaml);
}

static void yaml_lists_stream_item_by_item(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    cli_yaml *y = NULL;
    error_info err;
    assert_int_equal(cli_yaml_open(mem, true, &y, &err), ERROR_OK);
    const char *items[] = {"{\"id\": \"a\", \"n\": 1}", "{\"id\": \"b\", \"acl\": []}",
                           "\"10\""};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(cli_yaml_add(y, items[i], strlen(items[i]), &err), ERROR_OK);
    assert_int_equal(cli_yaml_finish(y, &err), ERROR_OK);
    cli_yaml_free(y);
    fclose(mem);
    json_t *back = read_yaml(text);
    json_t *want = json_loads("[{\"id\": \"a\", \"n\": 1}, {\"id\": \"b\", \"acl\": []}, \"10\"]",
                              0, NULL);
    assert_same_tree(want, back);
    json_decref(want);
    json_decref(back);
    free(text);

    /* An empty list is "[]", as JSON's. */
    mem = open_memstream(&text, &len);
    assert_int_equal(cli_yaml_open(mem, true, &y, &err), ERROR_OK);
    assert_int_equal(cli_yaml_finish(y, &err), ERROR_OK);
    cli_yaml_free(y);
    fclose(mem);
    assert_string_equal(text, "[]\n");
    free(text);

    /* Not JSON: refused, nothing half written is kept. */
    mem = open_memstream(&text, &len);
    assert_int_equal(cli_yaml_open(mem, true, &y, &err), ERROR_OK);
    assert_int_equal(cli_yaml_add(y, "{\"id\":", 6, &err), ERROR_FORMAT);
    cli_yaml_free(y);
    fclose(mem);
    free(text);
}

/* ---- facts taken from elsewhere ---- */

/* `list --sort` offers the console's orders (its columns' sorts) under the
 * console's names. */
static void sort_orders_are_the_consoles(void **state)
{
    (void)state;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const ui_record_kind *rk = ui_record_kind_get((model_kind)k);
        int offered = 0, sorts = 0;
        for (int s = 0; s < STORE_SORT_COUNT; s++)
            offered += store_sort_offered((model_kind)k, (store_sort)s);
        for (int i = 0; i < rk->ncols; i++) {
            if (!rk->cols[i].sort)
                continue;
            sorts++;
            assert_true(store_sort_offered((model_kind)k, rk->cols[i].sort_key));
            assert_string_equal(store_sort_name(rk->cols[i].sort_key), rk->cols[i].sort);
        }
        assert_int_equal(offered, sorts);
    }
    assert_null(store_sort_name(STORE_SORT_COUNT));
}

static bool shows(const cli_object_field *fields, const char *name)
{
    for (size_t i = 0; i < CLI_OBJECT_FIELDS_MAX && fields[i].label; i++) {
        if (strcmp(fields[i].field, name) == 0)
            return true;
    }
    return false;
}

/* -o wide and -o csv (ID, STATE, the table's columns, then `wide`) hold every
 * field of the kind's descriptor and what every row has, each once. */
static void wide_shows_every_field(void **state)
{
    (void)state;
    static const char *const every_row[] = {"created_at", "uri", "error"};
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const cli_object_kind *ok = cli_object_kind_of((model_kind)k);
        const kind_desc *d = kind_get((model_kind)k);
        for (size_t i = 0; i < d->field_count; i++) {
            const char *name = d->fields[i].name;
            if (shows(ok->columns, name) == shows(ok->wide, name))
                fail_msg("%s: field %s is in the wide table %s", d->plural, name,
                         shows(ok->columns, name) ? "twice" : "not at all");
        }
        for (size_t i = 0; i < sizeof every_row / sizeof every_row[0]; i++)
            assert_true(shows(ok->wide, every_row[i]));
    }
    assert_true(shows(cli_object_kind_of(MODEL_KIND_RULE)->wide, "policy_uri"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_names),
        cmocka_unit_test(limit_values),
        cmocka_unit_test(sort_values),
        cmocka_unit_test(csv_fields),
        cmocka_unit_test(yaml_is_the_json_document),
        cmocka_unit_test(yaml_lists_stream_item_by_item),
        cmocka_unit_test(sort_orders_are_the_consoles),
        cmocka_unit_test(wide_shows_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

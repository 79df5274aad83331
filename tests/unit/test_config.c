/* config: defaults, file parsing, precedence, unsafe files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/config.h"
#include "test_support.h"

#include "config_fixture.h"

static void test_defaults_follow_xdg(void **state)
{
    (void)state;
    fake_env env = {{"HOME", "/home/ann", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/home/ann/.local/share/rampart/rampart.db");
    assert_string_equal(cfg.config_path, "/home/ann/.config/rampart/config");
    assert_string_equal(config_get(&cfg, CONFIG_VERSION_HEADER), "Service-Version");
    assert_string_equal(config_get(&cfg, CONFIG_RATE), "120");
    assert_false(config_remote_configured(&cfg));
    assert_false(cfg.config_file_found);

    fake_env xdg = {{"HOME", "/home/ann", "XDG_DATA_HOME", "/data", "XDG_CONFIG_HOME", "/cfg",
                     NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &xdg, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/data/rampart/rampart.db");
    assert_string_equal(cfg.config_path, "/cfg/rampart/config");
}

/* No HOME: no config file, an empty database path that RAMPART_DB or --db fills. */
static void test_no_home(void **state)
{
    (void)state;
    fake_env env = {{NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "");
    assert_false(cfg.config_file_found);
    fake_env with_db = {{"RAMPART_DB", "/srv/rampart.db", NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &with_db, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/srv/rampart.db");
}

/* Whoever can write the file could point api_url elsewhere: refused, key or not. */
static void test_writable_by_others_is_refused(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "api_url = https://x.example\n", 0620);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "chmod go-w"));
    chmod(f->cfg_path, 0602);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    chmod(f->cfg_path, 0644);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
}

static void test_api_urls(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        bool ok;
    } cases[] = {
        {"https://api.example.com", true},   {"https://api.example.com:8443/v", true},
        {"http://127.0.0.1:8080", true},     {"http://localhost:9", true},
        {"http://localhost", true},          {"http://[::1]:80/", true},
        {"http://api.example.com", false},   {"http://localhost.evil.example", false},
        {"ftp://x.example", false},          {"https://user:pw@api.example.com", false},
        {"https://api.example.com/a b", false}, {"api.example.com", false},
        {"http://127.evil.example", false},  {"http://127.0.0.1.evil.example/", false},
        {"http://[::1].evil", false},         {"http://localhostx", false},
        /* The API client's own rule (rampart/url.h): config and client agree. */
        {"https://api.example.com/v?x=1", false}, {"https://api.example.com#f", false},
        {"https://api.example.com\\@evil.example", false}, {"HTTPS://api.example.com", true},
    };
    fake_env env = {{"HOME", "/h", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        error_code rc = config_set(&cfg, CONFIG_API_URL, cases[i].url, CONFIG_SRC_FLAG, &e);
        if ((rc == ERROR_OK) != cases[i].ok)
            fail_msg("%s: expected %s, got '%s'", cases[i].url, cases[i].ok ? "ok" : "refusal",
                     e.msg);
    }
}

/* A NULL error pointer still reports failure with the right code. */
static void test_null_err_still_fails(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "rate = abc\n", 0600);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    assert_int_equal(config_load(&cfg, fake_getenv, &env, NULL), ERROR_INVALID);
}

static void test_precedence(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path,
               "# comment\n\napi_url = https://file.example\n"
               "db = \"/from/file.db\"\nversion_header=X-Brand-Version\nrate = 60\n",
               0600);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_DB", "/from/env.db",
                     NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_true(cfg.config_file_found);
    assert_string_equal(config_get(&cfg, CONFIG_API_URL), "https://file.example");
    assert_int_equal(cfg.sources[CONFIG_API_URL], CONFIG_SRC_FILE);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/from/env.db");
    assert_int_equal(cfg.sources[CONFIG_DB], CONFIG_SRC_ENV);
    assert_string_equal(config_get(&cfg, CONFIG_VERSION_HEADER), "X-Brand-Version");
    assert_string_equal(config_get(&cfg, CONFIG_RATE), "60");
    assert_int_equal(config_set(&cfg, CONFIG_DB, "/from/flag.db", CONFIG_SRC_FLAG, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/from/flag.db");
    assert_int_equal(cfg.sources[CONFIG_DB], CONFIG_SRC_FLAG);
}

static void test_key_file_must_be_private(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "api_key = sk_secret_value\napi_url = https://x.example\n", 0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "chmod 600"));
    assert_null(strstr(e.msg, "sk_secret_value"));

    chmod(f->cfg_path, 0600);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_true(config_remote_configured(&cfg));
    config_clear(&cfg);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "");
}

/* The refusals are fileperm's sentences: the path, what was found, the fix, why;
 * a file of another user is refused, key or not (root's is an admin's, taken). */
static void test_refusals_say_the_fix(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "api_key = sk_secret_value\n", 0640);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    char want[512];
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    snprintf(want, sizeof want,
             "%s is readable by others (mode 0640): run 'chmod 600 %s'; rampart refuses a "
             "config file holding api_key that others can read: it holds the API key",
             f->cfg_path, f->cfg_path);
    assert_string_equal(e.msg, want);
    assert_null(strstr(e.msg, "sk_secret_value"));
    if (geteuid() != 0) {
        print_message("a config file of another user: skipped (needs root)\n");
        return;
    }
    write_file(f->cfg_path, "api_url = https://x.example\n", 0644);
    assert_int_equal(chown(f->cfg_path, 65534, 65534), 0);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "belongs to another user (uid 65534; you are uid 0)"));
    assert_int_equal(chown(f->cfg_path, 0, 0), 0);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
}

static void test_world_readable_file_without_key_is_fine(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "api_url = https://x.example\n", 0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_API_KEY", "k", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_int_equal(cfg.sources[CONFIG_API_KEY], CONFIG_SRC_ENV);
}

/* Each bad file gives ERROR_FORMAT or ERROR_INVALID with the line and a reason. */
static void test_bad_files(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *text;
        const char *needle;
    } cases[] = {
        {"colour = blue\n", "config:1: unknown setting 'colour'"},
        {"\n\njust words\n", "config:3: expected 'key = value'"},
        {"db = \"/unterminated\n", "unterminated"},
        {"rate = fast\n", "config:1: rate must be a whole number"},
        {"rate = -1\n", "rate must be"},
        {"rate = 100001\n", "rate must be"},
        {"api_url = ftp://x\n", "https://"},
        {"version_header = Has Space\n", "not a valid HTTP header name"},
        {"version_header =\n", "must not be empty"},
    };
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(f->cfg_path, cases[i].text, 0600);
        config cfg;
        error_info e = {0};
        assert_int_not_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
        if (!strstr(e.msg, cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].needle);
    }
}

static void test_missing_explicit_file(void **state)
{
    (void)state;
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", "/nonexistent/rampart.conf", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "/nonexistent/rampart.conf"));
}

static void test_key_never_from_flag(void **state)
{
    (void)state;
    fake_env env = {{"HOME", "/h", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_int_equal(config_set(&cfg, CONFIG_API_KEY, "k", CONFIG_SRC_FLAG, &e), ERROR_CONFIG);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "");
}

static void test_env_values_are_checked(void **state)
{
    (void)state;
    fake_env env = {{"HOME", "/h", "RAMPART_RATE", "12x", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_INVALID);
    assert_non_null(strstr(e.msg, "RAMPART_RATE"));
    fake_env zero = {{"HOME", "/h", "RAMPART_RATE", "0", NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &zero, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_RATE), "0");
}

/* The whole-number settings: name, environment variable, default and range. */
static const struct {
    config_key key;
    const char *name, *env, *fallback;
    long min, max;
} numbers[] = {
    {CONFIG_RATE, "rate", "RAMPART_RATE", "120", 0, 100000},
    {CONFIG_WINDOW, "window", "RAMPART_WINDOW", "60", 1, 3600},
    {CONFIG_SHARE, "share", "RAMPART_SHARE", "80", 1, 100},
    {CONFIG_GIVE_UP, "give_up_windows", "RAMPART_GIVE_UP_WINDOWS", "2", 1, 100},
    {CONFIG_TIMEOUT, "timeout", "RAMPART_TIMEOUT", "0", 0, 604800},
    {CONFIG_LOW_SPEED, "low_speed", "RAMPART_LOW_SPEED", "10", 0, 1000000000},
    {CONFIG_LOW_SPEED_TIME, "low_speed_time", "RAMPART_LOW_SPEED_TIME", "20", 1, 3600},
    {CONFIG_MAX_BACKOFF, "max_backoff", "RAMPART_MAX_BACKOFF", "30", 1, 3600},
    {CONFIG_AUTO_PULL, "auto_pull", "RAMPART_AUTO_PULL", "300", 0, 604800},
};

/* Each whole-number setting: its default, both ends of its range taken, one past
 * each end refused with its name and range, the value kept after a refusal. */
static void test_number_ranges(void **state)
{
    (void)state;
    fake_env env = {{"HOME", "/h", NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        config_key k = numbers[i].key;
        assert_string_equal(config_key_name(k), numbers[i].name);
        assert_string_equal(config_env_name(k), numbers[i].env);
        assert_string_equal(config_get(&cfg, k), numbers[i].fallback);
        assert_int_equal(config_number(&cfg, k), strtol(numbers[i].fallback, NULL, 10));
        char range[64], low[32], high[32], past_low[32], past_high[32];
        snprintf(range, sizeof range, "from %ld to %ld", numbers[i].min, numbers[i].max);
        snprintf(low, sizeof low, "%ld", numbers[i].min);
        snprintf(high, sizeof high, "%ld", numbers[i].max);
        snprintf(past_low, sizeof past_low, "%ld", numbers[i].min - 1);
        snprintf(past_high, sizeof past_high, "%ld", numbers[i].max + 1);
        assert_int_equal(config_set(&cfg, k, low, CONFIG_SRC_FLAG, &e), ERROR_OK);
        assert_int_equal(config_number(&cfg, k), numbers[i].min);
        assert_int_equal(config_set(&cfg, k, high, CONFIG_SRC_FLAG, &e), ERROR_OK);
        assert_int_equal(config_number(&cfg, k), numbers[i].max);
        const char *bad[] = {past_low, past_high, "", "12x", " 5", "+5", "1.5", "ten"};
        for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
            error_info be = {0};
            assert_int_equal(config_set(&cfg, k, bad[j], CONFIG_SRC_FLAG, &be), ERROR_INVALID);
            assert_non_null(strstr(be.msg, numbers[i].name));
            assert_non_null(strstr(be.msg, range));
            assert_int_equal(config_number(&cfg, k), numbers[i].max);
        }
    }
}

/* Out of range in the environment or the config file: refused at load, naming
 * the variable, or the file and line. */
static void test_number_sources(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        char past[32], line[96];
        snprintf(past, sizeof past, "%ld", numbers[i].max + 1);
        fake_env env = {{"HOME", "/h", numbers[i].env, past, NULL}};
        config cfg;
        error_info e = {0};
        assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_INVALID);
        assert_non_null(strstr(e.msg, numbers[i].env));
        assert_non_null(strstr(e.msg, "from "));

        snprintf(line, sizeof line, "# budget\n%s = \"%s\"\n", numbers[i].name, past);
        write_file(f->cfg_path, line, 0600);
        fake_env file_env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
        assert_int_not_equal(config_load(&cfg, fake_getenv, &file_env, &e), ERROR_OK);
        assert_non_null(strstr(e.msg, ":2"));
        assert_non_null(strstr(e.msg, numbers[i].name));

        /* In range from the file, then the environment over it. */
        snprintf(line, sizeof line, "%s = %ld\n", numbers[i].name, numbers[i].min);
        write_file(f->cfg_path, line, 0600);
        char high[32];
        snprintf(high, sizeof high, "%ld", numbers[i].max);
        assert_int_equal(config_load(&cfg, fake_getenv, &file_env, &e), ERROR_OK);
        assert_int_equal(config_number(&cfg, numbers[i].key), numbers[i].min);
        fake_env both = {
            {"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, numbers[i].env, high, NULL}};
        assert_int_equal(config_load(&cfg, fake_getenv, &both, &e), ERROR_OK);
        assert_int_equal(config_number(&cfg, numbers[i].key), numbers[i].max);
        assert_int_equal(cfg.sources[numbers[i].key], CONFIG_SRC_ENV);
    }
}

/* policy: an IP policy id per profile, from the file or RAMPART_POLICY; a bad one
 * names its file and line, or the variable. */
static void test_policy_setting(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "policy = ipp_top\n[profile.staging]\npolicy = ipp_staging\n", 0600);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_POLICY), "ipp_top");
    assert_int_equal(cfg.sources[CONFIG_POLICY], CONFIG_SRC_FILE);
    assert_int_equal(config_load_profile(&cfg, "staging", fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_POLICY), "ipp_staging");
    assert_int_equal(cfg.sources[CONFIG_POLICY], CONFIG_SRC_PROFILE);
    fake_env with_env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_POLICY",
                          "ipp_env", NULL}};
    assert_int_equal(config_load_profile(&cfg, "staging", fake_getenv, &with_env, &e),
                     ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_POLICY), "ipp_env");

    write_file(f->cfg_path, "[profile.staging]\npolicy = pol_x\n", 0600);
    assert_int_not_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_non_null(strstr(e.msg, ":2: policy"));
    assert_non_null(strstr(e.msg, "ipp_"));
    write_file(f->cfg_path, "", 0600);
    fake_env bad_env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_POLICY",
                         "ipp_no-dash", NULL}};
    assert_int_not_equal(config_load(&cfg, fake_getenv, &bad_env, &e), ERROR_OK);
    assert_non_null(strstr(e.msg, "RAMPART_POLICY: policy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_follow_xdg),
        cmocka_unit_test(test_no_home),
        cmocka_unit_test_setup_teardown(test_writable_by_others_is_refused, setup, teardown),
        cmocka_unit_test(test_api_urls),
        cmocka_unit_test_setup_teardown(test_null_err_still_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_file_must_be_private, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_say_the_fix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_world_readable_file_without_key_is_fine, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test(test_missing_explicit_file),
        cmocka_unit_test(test_key_never_from_flag),
        cmocka_unit_test(test_env_values_are_checked),
        cmocka_unit_test(test_number_ranges),
        cmocka_unit_test_setup_teardown(test_number_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_setting, setup, teardown),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}

/* config: profiles ([profile.NAME] sections), key sources and key_command. */
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

static const char *profiles_file =
    "api_url = https://top.example\n"
    "rate = 50\n"
    "[profile.staging]\n"
    "api_url = https://staging.example\n"
    "key_command = printf 'k-staging\\n'\n"
    "  [ profile.ci_2 ]  \n"
    "db = /srv/ci.db\n";

/* Top level < the selected section < environment < flags; other sections unused. */
static void test_profile_sections_and_precedence(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, profiles_file, 0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_profile(&cfg), "default");
    assert_string_equal(config_get(&cfg, CONFIG_API_URL), "https://top.example");
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/h/.local/share/rampart/rampart.db");
    assert_int_equal(cfg.nprofiles, 2);
    assert_string_equal(cfg.profiles[0], "staging");
    assert_string_equal(cfg.profiles[1], "ci_2");

    assert_int_equal(config_load_profile(&cfg, "staging", fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_profile(&cfg), "staging");
    assert_string_equal(config_get(&cfg, CONFIG_API_URL), "https://staging.example");
    assert_int_equal(cfg.sources[CONFIG_API_URL], CONFIG_SRC_PROFILE);
    assert_string_equal(config_get(&cfg, CONFIG_RATE), "50"); /* from the top level */
    assert_int_equal(cfg.sources[CONFIG_RATE], CONFIG_SRC_FILE);
    /* Each profile its own cache unless it says `db`. */
    assert_string_equal(config_get(&cfg, CONFIG_DB),
                        "/h/.local/share/rampart/rampart-staging.db");
    assert_true(config_remote_configured(&cfg)); /* a key_command counts */
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), ""); /* not run by loading */

    fake_env by_env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_PROFILE", "ci_2",
                        "RAMPART_API_URL", "https://env.example", NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &by_env, &e), ERROR_OK);
    assert_string_equal(config_profile(&cfg), "ci_2");
    assert_string_equal(config_get(&cfg, CONFIG_DB), "/srv/ci.db");
    assert_string_equal(config_get(&cfg, CONFIG_API_URL), "https://env.example");
    /* The flag wins over RAMPART_PROFILE; "default" is the top level. */
    assert_int_equal(config_load_profile(&cfg, "staging", fake_getenv, &by_env, &e), ERROR_OK);
    assert_string_equal(config_profile(&cfg), "staging");
    assert_string_equal(config_get(&cfg, CONFIG_API_URL), "https://env.example");
    assert_int_equal(config_load_profile(&cfg, "default", fake_getenv, &by_env, &e), ERROR_OK);
    assert_string_equal(config_profile(&cfg), "default");

    /* A profile loaded again keeps the user's flags. */
    config other;
    assert_int_equal(config_set(&cfg, CONFIG_DB, "/flag.db", CONFIG_SRC_FLAG, &e), ERROR_OK);
    assert_int_equal(config_load_profile(&other, "staging", fake_getenv, &env, &e), ERROR_OK);
    assert_int_equal(config_copy_flags(&other, &cfg, &e), ERROR_OK);
    assert_string_equal(config_get(&other, CONFIG_DB), "/flag.db");
    assert_string_equal(config_get(&other, CONFIG_API_URL), "https://staging.example");
}

/* An unknown or malformed name: ERROR_CONFIG, listing the profiles there are. */
static void test_unknown_profile(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, profiles_file, 0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load_profile(&cfg, "prod", fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "unknown profile 'prod'"));
    assert_non_null(strstr(e.msg, "default, staging, ci_2"));
    assert_string_equal(cfg.profile, "prod"); /* `rampart profiles` marks nothing then */
    fake_env by_env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_PROFILE", "prod",
                        NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &by_env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "RAMPART_PROFILE: unknown profile 'prod'"));
    static const char *const bad[] = {"", "a b", "a.b", "x/../y", "é",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}; /* 65 */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(config_load_profile(&cfg, bad[i], fake_getenv, &env, &e), ERROR_CONFIG);
        assert_non_null(strstr(e.msg, "is not a profile name"));
    }
    assert_true(config_profile_name_valid("A-z_09"));
    fake_env no_file = {{"HOME", "/nonexistent-home", NULL}};
    assert_int_equal(config_load_profile(&cfg, "staging", fake_getenv, &no_file, &e),
                     ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "there is no config file"));
}

/* Sections that break a rule: the line and the reason, whether selected or not. */
static void test_bad_sections(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"[profile.default]\n", ":1: [profile.default] is not a section"},
        {"[profile.a]\n[profile.a]\n", ":2: [profile.a] is given twice"},
        {"[staging]\n", ":1: unknown section [staging]"},
        {"[profile.a b]\n", ":1: 'a b' is not a profile name"},
        {"[profile.a\n", ":1: a section line is [profile.NAME]"},
        {"[profile.a]\ncolour = blue\n", ":2: unknown setting 'colour'"},
        {"[profile.a]\nrate = fast\n", ":2: rate must be a whole number"},
        {"[profile.a]\napi_url = http://evil.example\n", ":2: "},
        {"[profile.a]\nkey_command = pass 'show\n", ":2: key_command: a quote is not closed"},
        {"[profile.a]\napi_key = k\nkey_command = pass x\n",
         ":3: api_key and key_command are both set in this profile's section"},
        {"api_key = k\nkey_command = pass x\n", ":2: api_key and key_command are both set"},
    };
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(f->cfg_path, cases[i].text, 0600);
        config cfg;
        error_info e = {0};
        assert_int_not_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
        if (!strstr(e.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].msg);
    }
}

/* api_key in any section, selected or not, makes the file hold a key: 600. */
static void test_key_in_a_section_needs_600(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path, "api_url = https://x.example\n[profile.b]\napi_key = sk_in_b\n",
               0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "chmod 600"));
    assert_null(strstr(e.msg, "sk_in_b"));
    chmod(f->cfg_path, 0600);
    assert_int_equal(config_load(&cfg, fake_getenv, &env, &e), ERROR_OK);
    assert_true(cfg.config_file_holds_key);
    assert_false(config_remote_configured(&cfg)); /* b's key is b's */
    /* A key_command is no secret: 644 is fine. */
    write_file(f->cfg_path, "[profile.b]\napi_url = https://x.example\nkey_command = pass b\n",
               0644);
    assert_int_equal(config_load_profile(&cfg, "b", fake_getenv, &env, &e), ERROR_OK);
    assert_false(cfg.config_file_holds_key);
}

/* The key source set at a higher level replaces the other one from below. */
static void test_key_sources_replace_each_other(void **state)
{
    fixture *f = *state;
    write_file(f->cfg_path,
               "api_url = https://x.example\napi_key = sk_top\n"
               "[profile.cmd]\nkey_command = pass cmd\n[profile.plain]\nrate = 1\n",
               0600);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load_profile(&cfg, "cmd", fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "");
    assert_string_equal(config_get(&cfg, CONFIG_KEY_COMMAND), "pass cmd");
    assert_int_equal(config_load_profile(&cfg, "plain", fake_getenv, &env, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "sk_top");
    fake_env with_key = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_API_KEY",
                          "sk_env", NULL}};
    assert_int_equal(config_load_profile(&cfg, "cmd", fake_getenv, &with_key, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "sk_env");
    assert_string_equal(config_get(&cfg, CONFIG_KEY_COMMAND), "");
    fake_env both = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, "RAMPART_API_KEY", "sk_env",
                      "RAMPART_KEY_COMMAND", "pass x", NULL}};
    assert_int_equal(config_load(&cfg, fake_getenv, &both, &e), ERROR_CONFIG);
    assert_non_null(strstr(e.msg, "unset one"));
    config_clear(&cfg);
}

/* Whether `msg` holds one of the '|'-separated `alternatives`. */
static bool msg_has_one(const char *msg, const char *alternatives)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", alternatives);
    char *save = NULL;
    for (char *a = strtok_r(buf, "|", &save); a; a = strtok_r(NULL, "|", &save)) {
        if (strstr(msg, a))
            return true;
    }
    return false;
}

/* key_command runs only in config_resolve_key: its first line is the key; a
 * failure names the profile and the status, never the output. */
static void test_key_command_resolves(void **state)
{
    fixture *f = *state;
    char text[1024];
    snprintf(text, sizeof text,
             "api_url = https://x.example\n"
             "[profile.ok]\nkey_command = printf 'sk_from_cmd  \\nsecond line\\n'\n"
             "[profile.fails]\nkey_command = sh -c 'printf sk_l; echo eak; exit 3'\n"
             "[profile.empty]\nkey_command = true\n"
             "[profile.spaces]\nkey_command = printf 'two%%swords' ' '\n"
             "[profile.missing]\nkey_command = %s/no-such-command\n"
             "[profile.none]\nrate = 1\n",
             f->dir);
    write_file(f->cfg_path, text, 0644);
    fake_env env = {{"HOME", "/h", "RAMPART_CONFIG", f->cfg_path, NULL}};
    config cfg;
    error_info e = {0};
    assert_int_equal(config_load_profile(&cfg, "ok", fake_getenv, &env, &e), ERROR_OK);
    assert_int_equal(config_resolve_key(&cfg, true, &e), ERROR_OK);
    assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "sk_from_cmd");
    assert_int_equal(cfg.sources[CONFIG_API_KEY], CONFIG_SRC_COMMAND);
    config_clear(&cfg);
    static const struct {
        const char *profile;
        const char *msg;
    } failing[] = {
        {"fails", "exit status 3"},
        {"empty", "printed no key"},
        {"spaces", "not an API key"},
        /* glibc's posix_spawnp says ENOENT itself; under valgrind the child exits 127. */
        {"missing", "cannot run it: No such file|exit status 127: the command was not found"},
    };
    for (size_t i = 0; i < sizeof failing / sizeof failing[0]; i++) {
        assert_int_equal(config_load_profile(&cfg, failing[i].profile, fake_getenv, &env, &e),
                         ERROR_OK);
        assert_int_equal(config_resolve_key(&cfg, true, &e), ERROR_CONFIG);
        char want[96];
        snprintf(want, sizeof want, "profile %s: key_command", failing[i].profile);
        assert_non_null(strstr(e.msg, want));
        if (!msg_has_one(e.msg, failing[i].msg))
            fail_msg("%s: '%s' lacks '%s'", failing[i].profile, e.msg, failing[i].msg);
        assert_null(strstr(e.msg, "sk_leak"));
        assert_null(strstr(e.msg, "two words"));
        assert_string_equal(config_get(&cfg, CONFIG_API_KEY), "");
    }
    /* Nothing to run: a profile without a key source. */
    assert_int_equal(config_load_profile(&cfg, "none", fake_getenv, &env, &e), ERROR_OK);
    assert_int_equal(config_resolve_key(&cfg, true, &e), ERROR_OK);
    assert_false(config_remote_configured(&cfg));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_profile_sections_and_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_sections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_in_a_section_needs_600, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_sources_replace_each_other, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_command_resolves, setup, teardown),
    };
    return cmocka_run_group_tests_name("config_profiles", tests, NULL, NULL);
}

/* url: parsing with libcurl's URL API, the API base rule, resolution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rampart/url.h"

static void test_parts(void **state)
{
    (void)state;
    static const struct {
        const char *url, *scheme, *host;
        unsigned port;
        bool has_query;
    } cases[] = {
        {"https://api.example.com", "https", "api.example.com", 443, false},
        {"HTTPS://API.Example.COM:8443/v", "https", "api.example.com", 8443, false},
        {"http://127.0.0.1:8080/x?y=1", "http", "127.0.0.1", 8080, true},
        {"http://[::1]:9/", "http", "[::1]", 9, false},
        {"http://[0:0::1]/", "http", "[::1]", 80, false},  /* as libcurl reads it */
        {"http://127.1/", "http", "127.0.0.1", 80, false}, /* likewise */
        {"https://a.example/#", "https", "a.example", 443, true},
        {"https://a.example:/x", "https", "a.example", 443, false}, /* empty port */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        url_parts u;
        error_info e = {0};
        if (url_parse(cases[i].url, "u", &u, &e) != ERROR_OK)
            fail_msg("%s: %s", cases[i].url, e.msg);
        assert_string_equal(u.scheme, cases[i].scheme);
        assert_string_equal(u.host, cases[i].host);
        assert_int_equal(u.port, cases[i].port);
        assert_int_equal(u.has_query, cases[i].has_query);
    }
}

static void refused(const char *url, const char *needle)
{
    url_parts u;
    error_info e = {0};
    if (url_parse(url, "api_url", &u, &e) == ERROR_OK)
        fail_msg("accepted '%s'", url);
    assert_int_equal(e.code, ERROR_INVALID);
    if (strncmp(e.msg, "api_url", 7) != 0 || !strstr(e.msg, needle))
        fail_msg("'%s': '%s' lacks '%s'", url, e.msg, needle);
    assert_string_equal(u.host, ""); /* nothing half-filled */
}

static void test_refusals(void **state)
{
    (void)state;
    refused("", "empty");
    refused(NULL, "empty");
    refused("api.example.com", "must start with https://");
    refused("//evil.example/x", "must start with https://");
    refused("ftp://api.example.com", "the scheme must be https://");
    refused("file:///etc/passwd", "not file://");
    refused("https://user:pw@api.example.com", "user name or password");
    refused("https://api.example.com@evil.example/", "user name or password");
    /* libcurl reads the user "api.example.com\": refused before it gets there. */
    refused("https://api.example.com\\@evil.example/", "backslash");
    refused("https://api.example.com /x", "space");
    refused("https://api.example.com/x\r\nHost: evil", "control character");
    refused("https://b\xc3\xbc" "cher.example/", "ASCII letters");
    refused("https://a_b.example/", "ASCII letters");
    refused("http://[fe80::1%25eth0]/", "zone");
    refused("https://api.example.com:0/", "port");
    refused("https://api.example.com:65536/", "not a usable URL");
    refused("https://[::1/x", "not a usable URL");
}

static bool loopback(const char *url)
{
    url_parts u;
    assert_int_equal(url_parse(url, "u", &u, NULL), ERROR_OK);
    return url_is_loopback(&u);
}

static void test_loopback(void **state)
{
    (void)state;
    assert_true(loopback("http://127.0.0.1:1"));
    assert_true(loopback("http://127.1.2.3"));
    assert_true(loopback("http://localhost/x"));
    assert_true(loopback("http://LOCALHOST"));
    assert_true(loopback("http://[::1]:80"));
    assert_true(loopback("http://127.1")); /* libcurl connects to 127.0.0.1 */
    assert_false(loopback("http://127.evil.example"));
    assert_false(loopback("http://127.0.0.1.nip.io"));
    assert_false(loopback("http://128.0.0.1"));
    assert_false(loopback("http://localhost.evil.example"));
    assert_false(loopback("http://localhostx"));
    assert_false(loopback("http://[::2]"));
}

static void test_same_origin(void **state)
{
    (void)state;
    url_parts a, b;
    assert_int_equal(url_parse("https://api.example.com/v", "a", &a, NULL), ERROR_OK);
    assert_int_equal(url_parse("https://API.example.com:443/other?x", "b", &b, NULL), ERROR_OK);
    assert_true(url_same_origin(&a, &b));
    assert_int_equal(url_parse("http://api.example.com:443/", "b", &b, NULL), ERROR_OK);
    assert_false(url_same_origin(&a, &b)); /* another scheme */
    assert_int_equal(url_parse("https://api.example.com:8443/", "b", &b, NULL), ERROR_OK);
    assert_false(url_same_origin(&a, &b)); /* another port */
    assert_int_equal(url_parse("https://api.example.com.evil.example/", "b", &b, NULL),
                     ERROR_OK);
    assert_false(url_same_origin(&a, &b));
}

/* The rule config.c and the API client both apply. */
static void test_api_base(void **state)
{
    (void)state;
    static const char *const good[] = {
        "https://api.example.com",  "https://api.example.com:8443/v", "http://127.0.0.1:8080",
        "http://localhost:9",       "http://[::1]:80/",               "HTTPS://x.example",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        error_info e = {0};
        if (url_check_api_base(good[i], "api_url", &e) != ERROR_OK)
            fail_msg("%s: %s", good[i], e.msg);
    }
    static const struct {
        const char *url, *needle;
    } bad[] = {
        {"http://api.example.com", "http:// only for a server on this machine"},
        {"http://127.evil.example", "http:// only for a server on this machine"},
        {"https://api.example.com/v?x=1", "query or fragment"},
        {"https://api.example.com/v#top", "query or fragment"},
        {"https://api.example.com/v?", "query or fragment"},
        {"ftp://api.example.com", "https://"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error_info e = {0};
        if (url_check_api_base(bad[i].url, "api_url", &e) != ERROR_INVALID ||
            !strstr(e.msg, bad[i].needle))
            fail_msg("%s: '%s' lacks '%s'", bad[i].url, e.msg, bad[i].needle);
    }
}

static void test_resolve(void **state)
{
    (void)state;
    char out[256];
    url_parts p;
    error_info e = {0};
    assert_int_equal(url_resolve("https://api.example.com/v", "/ip_policy_rules?limit=1", "n",
                                 out, sizeof out, &p, &e), ERROR_OK);
    assert_string_equal(out, "https://api.example.com/ip_policy_rules?limit=1");
    assert_string_equal(p.host, "api.example.com");
    assert_true(p.has_query);
    /* An absolute reference replaces the base, host and all: the caller checks. */
    assert_int_equal(url_resolve("https://api.example.com", "https://evil.example/x", "n", out,
                                 sizeof out, &p, &e), ERROR_OK);
    assert_string_equal(p.host, "evil.example");
    assert_int_equal(url_resolve("https://api.example.com", "//evil.example/x", "n", out,
                                 sizeof out, &p, &e), ERROR_OK);
    assert_string_equal(p.host, "evil.example");
    /* The result follows url_parse's rules. */
    assert_int_equal(url_resolve("https://api.example.com", "ftp://api.example.com/", "n",
                                 out, sizeof out, &p, &e), ERROR_INVALID);
    assert_int_equal(url_resolve("https://api.example.com", "/a b", "n", out, sizeof out, &p,
                                 &e), ERROR_INVALID);
    /* And it must fit. */
    char small[16];
    assert_int_equal(url_resolve("https://api.example.com", "/ip_policy_rules", "n", small,
                                 sizeof small, &p, &e), ERROR_INVALID);
    assert_non_null(strstr(e.msg, "longer than 15 bytes"));
    assert_string_equal(p.host, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_same_origin),
        cmocka_unit_test(test_api_base),
        cmocka_unit_test(test_resolve),
    };
    return cmocka_run_group_tests_name("url", tests, NULL, NULL);
}

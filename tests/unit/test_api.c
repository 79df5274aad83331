/* The API client's pure parts: outcome classification, Retry-After, messages from
 * error bodies, operation id headers, URL checks, configuration checks. The
 * libcurl codes are named from curl's own header so the table is checked by the
 * names the documentation uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../../sync/api_internal.h"
#include "rampart/api.h"

#define OP_ID "op_2Cs8Yb1cD2eF3gH4iJ5kL6mN7oP"
#define HDR_OP "op_2Cs8HeaderHeaderHeaderHead"
#define KEY "sk_live_2Cs8SecretSecretSecret"
#define BASE "https://api.example.com"

/* ---- libcurl codes -------------------------------------------------------- */

static void test_curl_before_sending(void **state)
{
    (void)state;
    static const int codes[] = {
        CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT,
        CURLE_SSL_CONNECT_ERROR,    CURLE_PEER_FAILED_VERIFICATION, CURLE_URL_MALFORMAT,
        CURLE_UNSUPPORTED_PROTOCOL, CURLE_SSL_CACERT_BADFILE,
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        /* Whatever the timers say: these fail before a request exists. */
        assert_int_equal(api_curl_net(codes[i], false), API_NET_NOT_SENT);
        assert_int_equal(api_curl_net(codes[i], true), API_NET_NOT_SENT);
    }
}

static void test_curl_after_sending(void **state)
{
    (void)state;
    static const int codes[] = {CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE,
                                CURLE_WRITE_ERROR, CURLE_FILESIZE_EXCEEDED,
                                CURLE_WEIRD_SERVER_REPLY};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        assert_int_equal(api_curl_net(codes[i], true), API_NET_LOST);
        assert_int_equal(api_curl_net(codes[i], false), API_NET_LOST);
    }
}

static void test_curl_depends_on_sending(void **state)
{
    (void)state;
    static const int codes[] = {CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR,
                                CURLE_OUT_OF_MEMORY, CURLE_AGAIN};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        assert_int_equal(api_curl_net(codes[i], false), API_NET_NOT_SENT);
        assert_int_equal(api_curl_net(codes[i], true), API_NET_LOST);
    }
    assert_int_equal(api_curl_net(CURLE_OK, false), API_NET_REPLY);
}

/* ---- classification ------------------------------------------------------- */

static api_exchange reply(long status, const char *body, bool decoded)
{
    api_exchange x;
    memset(&x, 0, sizeof x);
    x.net = API_NET_REPLY;
    x.status = status;
    x.body = body;
    x.body_len = body ? strlen(body) : 0;
    x.decoded = decoded;
    x.now = 1700000000;
    x.secret = KEY;
    return x;
}

typedef struct classify_case {
    api_net net;
    long status;
    bool decoded;
    sync_outcome want;
    sync_failure_kind failure;
} classify_case;

static void test_classify_table(void **state)
{
    (void)state;
    static const classify_case cases[] = {
        {API_NET_REPLY, 201, true, SYNC_OK, SYNC_FAILURE_NONE},
        {API_NET_REPLY, 200, true, SYNC_OK, SYNC_FAILURE_NONE},
        {API_NET_REPLY, 204, true, SYNC_OK, SYNC_FAILURE_NONE},
        /* a create may have happened */
        {API_NET_REPLY, 201, false, SYNC_AMBIGUOUS, SYNC_FAILURE_BAD_REPLY},
        {API_NET_REPLY, 200, false, SYNC_AMBIGUOUS, SYNC_FAILURE_BAD_REPLY},
        {API_NET_REPLY, 301, false, SYNC_REJECTED, SYNC_FAILURE_REJECTED},
        {API_NET_REPLY, 400, false, SYNC_REJECTED, SYNC_FAILURE_REJECTED},
        {API_NET_REPLY, 401, false, SYNC_AUTH, SYNC_FAILURE_AUTH},
        {API_NET_REPLY, 403, false, SYNC_AUTH, SYNC_FAILURE_AUTH},
        {API_NET_REPLY, 404, false, SYNC_NOT_FOUND, SYNC_FAILURE_NOT_FOUND},
        {API_NET_REPLY, 405, false, SYNC_REJECTED, SYNC_FAILURE_REJECTED},
        {API_NET_REPLY, 409, false, SYNC_REJECTED, SYNC_FAILURE_REJECTED},
        {API_NET_REPLY, 429, false, SYNC_RATE_LIMITED, SYNC_FAILURE_RATE_LIMITED},
        {API_NET_REPLY, 500, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_REPLY, 502, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_REPLY, 503, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_REPLY, 504, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_REPLY, 0, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_REPLY, 600, false, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR},
        {API_NET_NOT_SENT, 0, false, SYNC_NOT_SENT, SYNC_FAILURE_UNREACHABLE},
        {API_NET_LOST, 0, false, SYNC_AMBIGUOUS, SYNC_FAILURE_CONNECTION_LOST},
        /* 201 then the body was cut */
        {API_NET_LOST, 201, false, SYNC_AMBIGUOUS, SYNC_FAILURE_CONNECTION_LOST},
        {API_NET_LOST, 500, false, SYNC_AMBIGUOUS, SYNC_FAILURE_CONNECTION_LOST},
        /* the status line was definite */
        {API_NET_LOST, 400, false, SYNC_REJECTED, SYNC_FAILURE_REJECTED},
        {API_NET_LOST, 429, false, SYNC_RATE_LIMITED, SYNC_FAILURE_RATE_LIMITED},
        {API_NET_LOST, 401, false, SYNC_AUTH, SYNC_FAILURE_AUTH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_exchange x = reply(cases[i].status, NULL, cases[i].decoded);
        x.net = cases[i].net;
        x.transport_msg = "connection reset after the request was sent";
        sync_result res;
        sync_outcome got = api_classify(&x, &res);
        if (got != cases[i].want)
            fail_msg("case %zu (net %d, HTTP %ld): got outcome %d, want %d", i,
                     (int)cases[i].net, cases[i].status, (int)got, (int)cases[i].want);
        assert_int_equal(res.outcome, got);
        if (res.failure != cases[i].failure)
            fail_msg("case %zu (net %d, HTTP %ld): got failure %s, want %s", i,
                     (int)cases[i].net, cases[i].status, sync_failure_name(res.failure),
                     sync_failure_name(cases[i].failure));
        assert_true(res.retry_after_s < 0);
        if (got == SYNC_OK)
            assert_string_equal(res.message, "");
        else
            assert_true(res.message[0] != '\0');
    }
}

static void test_classify_statuses_kept(void **state)
{
    (void)state;
    api_exchange x = reply(502, "<html>bad gateway</html>", false);
    sync_result res;
    assert_int_equal(api_classify(&x, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.http_status, 502);
    assert_string_equal(res.message, "HTTP 502 from the server");

    x = reply(0, NULL, false);
    x.net = API_NET_NOT_SENT;
    x.transport_msg = "could not reach the server: Failed to connect";
    assert_int_equal(api_classify(&x, &res), SYNC_NOT_SENT);
    assert_int_equal(res.http_status, 0);
    assert_string_equal(res.message, "could not reach the server: Failed to connect");
}

/* A timeout after sending is told apart from a connection that failed; before
 * sending it is the remote that could not be reached. */
static void test_classify_timed_out(void **state)
{
    (void)state;
    api_exchange x = reply(0, NULL, false);
    x.net = API_NET_LOST;
    x.timed_out = true;
    x.transport_msg = "timed out waiting for the reply";
    sync_result res;
    assert_int_equal(api_classify(&x, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.failure, SYNC_FAILURE_TIMED_OUT);
    x.net = API_NET_NOT_SENT;
    assert_int_equal(api_classify(&x, &res), SYNC_NOT_SENT);
    assert_int_equal(res.failure, SYNC_FAILURE_UNREACHABLE);
}

static void test_classify_undecodable_2xx(void **state)
{
    (void)state;
    api_exchange x = reply(201, "{\"id\":", false);
    x.decode_msg = "JSON ended early at byte 6";
    sync_result res;
    assert_int_equal(api_classify(&x, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.http_status, 201);
    assert_non_null(strstr(res.message, "HTTP 201"));
    assert_non_null(strstr(res.message, "JSON ended early at byte 6"));
    assert_null(strstr(res.message, "{\"id\""));
}

static void test_classify_rate_limited(void **state)
{
    (void)state;
    api_exchange x = reply(429, NULL, false);
    sync_result res;
    assert_int_equal(api_classify(&x, &res), SYNC_RATE_LIMITED);
    assert_true(res.retry_after_s < 0); /* the production service sends none */
    x.retry_after = "7";
    assert_int_equal(api_classify(&x, &res), SYNC_RATE_LIMITED);
    assert_true(res.retry_after_s == 7.0);
    x.retry_after = "-3";
    api_classify(&x, &res);
    assert_true(res.retry_after_s == 0.0);
    /* 503 carries it too; other statuses ignore it. */
    x = reply(503, NULL, false);
    x.retry_after = "12";
    api_classify(&x, &res);
    assert_true(res.retry_after_s == 12.0);
    x = reply(500, NULL, false);
    x.retry_after = "12";
    api_classify(&x, &res);
    assert_true(res.retry_after_s < 0);
}

static void test_classify_operation_id_from_header(void **state)
{
    (void)state;
    api_exchange x = reply(201, "{}", true);
    x.header_op_id = HDR_OP;
    sync_result res;
    assert_int_equal(api_classify(&x, &res), SYNC_OK);
    assert_string_equal(res.operation_id, HDR_OP);
    x.header_op_id = "op_1\x1b[31m";
    api_classify(&x, &res);
    assert_string_equal(res.operation_id, ""); /* not an id: dropped */
}

/* ---- messages --------------------------------------------------------------- */

static void classify_body(long status, const char *body, const char *header_op,
                          sync_result *res)
{
    api_exchange x = reply(status, body, false);
    x.header_op_id = header_op;
    api_classify(&x, res);
}

static void test_message_from_error_body(void **state)
{
    (void)state;
    sync_result res;
    classify_body(400,
                  "{\"error_code\":\"ERR_1\",\"status_code\":400,\"msg\":\"host bits set: "
                  "did you mean 10.0.0.0/8?\",\"details\":{\"operation_id\":\"" OP_ID "\"}}",
                  HDR_OP, &res);
    assert_int_equal(res.outcome, SYNC_REJECTED);
    assert_string_equal(res.message,
                        "host bits set: did you mean 10.0.0.0/8? (operation " OP_ID ")");
    assert_string_equal(res.operation_id, OP_ID); /* the body wins over the header */
    /* The server's fields apart, for the typed report. */
    assert_int_equal(res.http_status, 400);
    assert_string_equal(res.error_code, "ERR_1");
    assert_string_equal(res.server_msg, "host bits set: did you mean 10.0.0.0/8?");

    classify_body(404, "{\"status_code\":404,\"msg\":\"no such rule\"}", HDR_OP, &res);
    assert_int_equal(res.outcome, SYNC_NOT_FOUND);
    assert_string_equal(res.message, "no such rule (operation " HDR_OP ")");
    assert_string_equal(res.operation_id, HDR_OP);

    classify_body(400, "{\"msg\":\"bad\"}", NULL, &res);
    assert_string_equal(res.message, "bad");
    assert_string_equal(res.operation_id, "");
    assert_string_equal(res.error_code, ""); /* the service sometimes omits it */
}

static void test_message_fallbacks(void **state)
{
    (void)state;
    sync_result res;
    /* Not JSON: never shown raw. */
    classify_body(502, "<html><body>upstream " KEY " failed</body></html>", NULL, &res);
    assert_string_equal(res.message, "HTTP 502 from the server");
    classify_body(401, "Unauthorized", HDR_OP, &res);
    assert_int_equal(res.outcome, SYNC_AUTH);
    assert_string_equal(res.message,
                        "HTTP 401 from the server: the API key was not accepted (operation " HDR_OP
                        ")");
    /* JSON without msg: the fallback, with the body's operation id. */
    classify_body(400, "{\"details\":{\"operation_id\":\"" OP_ID "\"}}", NULL, &res);
    assert_string_equal(res.message, "HTTP 400 from the server (operation " OP_ID ")");
    /* JSON that is not an error object. */
    classify_body(500, "[1,2,3]", NULL, &res);
    assert_string_equal(res.message, "HTTP 500 from the server");
    classify_body(400, "", NULL, &res);
    assert_string_equal(res.message, "HTTP 400 from the server");
    classify_body(429, NULL, NULL, &res);
    assert_string_equal(res.message, "HTTP 429 from the server: too many requests");
}

static void test_message_hides_secrets(void **state)
{
    (void)state;
    sync_result res;
    classify_body(401, "{\"msg\":\"key " KEY " is revoked\"}", NULL, &res);
    assert_null(strstr(res.message, KEY));
    assert_null(strstr(res.server_msg, KEY));
    assert_non_null(strstr(res.message, "is revoked"));
    /* Control characters (terminal escapes) and broken UTF-8 are neutralised. */
    classify_body(400, "{\"msg\":\"a\\u001b[2Jb\\nc\"}", NULL, &res);
    assert_null(strchr(res.message, '\x1b'));
    assert_null(strchr(res.message, '\n'));
    assert_string_equal(res.message, "a [2Jb c");
    /* The transport text is scrubbed as well. */
    api_exchange x = reply(0, NULL, false);
    x.net = API_NET_LOST;
    x.transport_msg = "reset while sending " KEY;
    api_classify(&x, &res);
    assert_null(strstr(res.message, KEY));
}

static void test_message_long_msg_keeps_operation(void **state)
{
    (void)state;
    char body[2048];
    char msg[1200];
    memset(msg, 'x', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    snprintf(body, sizeof body, "{\"msg\":\"%s\",\"details\":{\"operation_id\":\"" OP_ID "\"}}",
             msg);
    sync_result res;
    classify_body(400, body, NULL, &res);
    size_t len = strlen(res.message);
    assert_true(len < sizeof res.message);
    const char *tail = " (operation " OP_ID ")";
    assert_string_equal(res.message + len - strlen(tail), tail);
}

static void test_scrub(void **state)
{
    (void)state;
    char text[64] = "abc\x01\x7f" "d\xff\xc3\xa9 KEYKEY KEYKEY";
    api_scrub(text, "KEYKEY");
    assert_string_equal(text, "abc  d?\xc3\xa9 ****** ******");
    char short_secret[16] = "a b a";
    api_scrub(short_secret, "a"); /* too short to be a key: left alone */
    assert_string_equal(short_secret, "a b a");
    /* A message cut to fit ends with the start of an echoed key: masked too. */
    char cut[64] = "bad key: Ak2Zz1lqOxDd";
    api_scrub(cut, "Ak2Zz1lqOxDdQyVpYcQQQQ");
    assert_string_equal(cut, "bad key: ************");
    char three[32] = "ends with Ak2";
    api_scrub(three, "Ak2Zz1lqOxDdQyVpYcQQQQ"); /* three bytes say next to nothing */
    assert_string_equal(three, "ends with Ak2");
}

/* ---- Retry-After ------------------------------------------------------------ */

static void test_retry_after_seconds(void **state)
{
    (void)state;
    time_t now = 1700000000;
    assert_true(api_retry_after("120", now) == 120.0);
    assert_true(api_retry_after("0", now) == 0.0);
    assert_true(api_retry_after("  5 ", now) == 5.0);
    assert_true(api_retry_after("1.5", now) == 1.5);
    assert_true(api_retry_after("-4", now) == 0.0);
    assert_true(api_retry_after("99999999999999999999", now) == API_RETRY_AFTER_MAX);
    assert_true(api_retry_after(NULL, now) < 0);
    assert_true(api_retry_after("", now) < 0);
    assert_true(api_retry_after("   ", now) < 0);
    assert_true(api_retry_after("soon", now) < 0);
    assert_true(api_retry_after("5s", now) < 0);
    assert_true(api_retry_after("- 5", now) < 0);
}

static void test_retry_after_dates(void **state)
{
    (void)state;
    /* 1994-11-06T08:49:37Z */
    time_t date = 784111777;
    assert_true(api_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", date - 30) == 30.0);
    assert_true(api_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", date - 30) == 30.0);
    assert_true(api_retry_after("Sun Nov  6 08:49:37 1994", date - 30) == 30.0);
    /* In the past: no wait rather than a negative one. */
    assert_true(api_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", date + 100) == 0.0);
    /* Far future: capped. */
    assert_true(api_retry_after("Sun, 06 Nov 2094 08:49:37 GMT", date) ==
                API_RETRY_AFTER_MAX);
    /* curl_getdate is lenient where the server's intent is still clear. */
    assert_true(api_retry_after("Sun, 06 nov 1994 08:49:37", date - 30) == 30.0);
    static const char *const bad[] = {
        "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun Nov  6 08:49:37", "Sun,", "soon",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (api_retry_after(bad[i], date) >= 0)
            fail_msg("accepted '%s'", bad[i]);
    }
}

/* ---- operation id header ---------------------------------------------------- */

static void test_operation_id_header(void **state)
{
    (void)state;
    static const char *const yes[] = {"Operation-Id", "operation-id", "X-Operation-Id",
                                      "Service-Operation-ID"};
    static const char *const no[] = {"Operation", "Operation-Ids", "Content-Type",
                                     "operation_id", ""};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(api_is_operation_id_header(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(api_is_operation_id_header(no[i], strlen(no[i])));
    /* Not NUL-terminated: "Operation-Id: x" with the name's length. */
    assert_true(api_is_operation_id_header("Operation-Id: x", 12));

    char out[MODEL_ID_MAX + 1];
    const char *v = " " OP_ID "\r\n";
    api_take_operation_id(v, strlen(v), out, sizeof out);
    assert_string_equal(out, OP_ID);
    v = " op 1\r\n";
    api_take_operation_id(v, strlen(v), out, sizeof out);
    assert_string_equal(out, "");
    char big[200];
    memset(big, 'a', sizeof big);
    api_take_operation_id(big, sizeof big, out, sizeof out);
    assert_string_equal(out, "");

    /* Header values are trimmed, and dropped when they do not fit. */
    char ra[8];
    v = " \t120 \r\n";
    assert_true(api_take_header_value(v, strlen(v), ra, sizeof ra));
    assert_string_equal(ra, "120");
    v = " 12345678\r\n";
    assert_false(api_take_header_value(v, strlen(v), ra, sizeof ra));
    assert_string_equal(ra, "");
    assert_false(api_take_header_value(" \r\n", 3, ra, sizeof ra));
}

/* ---- URLs ------------------------------------------------------------------- */

static void page_ok(const char *base, const char *url, const char *want)
{
    char out[MODEL_URI_MAX + 64];
    error_info err = {0};
    if (api_page_url(base, "/ip_policy_rules", url, out, sizeof out, &err) != ERROR_OK)
        fail_msg("refused '%s' against '%s': %s", url ? url : "(first)", base, err.msg);
    assert_string_equal(out, want);
}

static void page_refused(const char *base, const char *url)
{
    char out[MODEL_URI_MAX + 64] = "";
    error_info err = {0};
    if (api_page_url(base, "/ip_policy_rules", url, out, sizeof out, &err) == ERROR_OK)
        fail_msg("accepted '%s' against '%s'", url, base);
    assert_int_equal(err.code, ERROR_INVALID);
    assert_true(err.msg[0] != '\0');
}

static void test_page_url_same_origin(void **state)
{
    (void)state;
    page_ok(BASE, NULL, BASE "/ip_policy_rules");
    page_ok("https://api.example.com/v", NULL, "https://api.example.com/v/ip_policy_rules");
    page_ok(BASE, BASE "/ip_policy_rules?before_id=ipr_1&limit=100",
            BASE "/ip_policy_rules?before_id=ipr_1&limit=100");
    /* Default ports and case do not make another server. */
    page_ok(BASE, "https://API.Example.COM:443/ip_policy_rules?limit=7",
            "https://API.Example.COM:443/ip_policy_rules?limit=7");
    page_ok("http://127.0.0.1:8080", "http://127.0.0.1:8080/ip_policy_rules?limit=1",
            "http://127.0.0.1:8080/ip_policy_rules?limit=1");
    page_ok("http://[::1]:9", "http://[::1]:9/x", "http://[::1]:9/x");
    /* An empty port is the default one, as libcurl reads it (and so fetches it). */
    page_ok(BASE, "https://api.example.com:/x", BASE "/x");
    /* A path alone is relative to the base's origin. */
    page_ok("https://api.example.com/v", "/ip_policy_rules?before_id=ipr_1",
            BASE "/ip_policy_rules?before_id=ipr_1");
}

static void test_page_url_elsewhere(void **state)
{
    (void)state;
    page_refused(BASE, "https://evil.example.com/ip_policy_rules");
    page_refused(BASE, "http://api.example.com/ip_policy_rules");       /* downgrade */
    page_refused(BASE, "https://api.example.com:8443/ip_policy_rules"); /* other port */
    page_refused(BASE, "https://api.example.com@evil.example.com/x");   /* user info */
    page_refused(BASE, "https://api.example.com\\@evil.example.com/x");
    page_refused(BASE, "https://api.example.com.evil.example.com/x");
    page_refused(BASE, "https://api.example.com%2eevil.example.com/x");
    page_refused(BASE, "https://api.example.com /x");
    page_refused(BASE, "https://api.example.com/x\r\nHost: evil");
    page_refused(BASE, "//evil.example.com/x"); /* scheme-relative */
    page_refused(BASE, "ftp://api.example.com/x");
    page_refused(BASE, "file:///etc/passwd");
    page_refused(BASE, "ip_policy_rules?limit=1");
    page_refused(BASE, "");
    page_refused(BASE, "https://api.example.com:0/x");
    page_refused(BASE, "https://api.example.com:65536/x");
    page_refused(BASE, "https://[::1/x");
    page_refused("http://127.0.0.1:8080", "http://127.0.0.1:8081/x");
    page_refused("http://127.0.0.1:8080", "http://localhost:8080/x");
}

static void test_page_url_message_names_hosts(void **state)
{
    (void)state;
    char out[MODEL_URI_MAX + 64];
    error_info err = {0};
    api_page_url(BASE, "/credentials", "https://evil.example.com/credentials?x=" KEY, out,
                 sizeof out, &err);
    assert_non_null(strstr(err.msg, "evil.example.com"));
    assert_non_null(strstr(err.msg, "api.example.com"));
    assert_null(strstr(err.msg, KEY)); /* the query is not quoted */
}

/* ---- configuration ---------------------------------------------------------- */

static error_code check(const char *url, const char *key, const char *vh)
{
    api_config cfg = {.base_url = url, .api_key = key, .version_header = vh};
    error_info err = {0};
    error_code rc = api_check_config(&cfg, &err);
    if (rc != ERROR_OK) {
        assert_int_equal(rc, ERROR_CONFIG);
        if (key && key[0])
            assert_null(strstr(err.msg, key));
    }
    return rc;
}

static void test_config_checks(void **state)
{
    (void)state;
    assert_int_equal(check(BASE, KEY, NULL), ERROR_OK);
    assert_int_equal(check(BASE "/", KEY, ""), ERROR_OK);
    assert_int_equal(check("http://127.0.0.1:8080/", KEY, "X-Api-Version"), ERROR_OK);
    assert_int_equal(check("http://localhost", KEY, NULL), ERROR_OK);
    assert_int_equal(check("http://api.example.com", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check("http://127.evil.example", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check("https://user:pw@api.example.com", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE "?x=1", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check("ftp://api.example.com", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check("", KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check(NULL, KEY, NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE, "", NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE, NULL, NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE, KEY "\r\nX-Evil: 1", NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE, "two words", NULL), ERROR_CONFIG);
    assert_int_equal(check(BASE, KEY, "Bad Header"), ERROR_CONFIG);
    assert_int_equal(check(BASE, KEY, "X-V:\r\n"), ERROR_CONFIG);
    assert_int_equal(api_base_len(BASE "///"), strlen(BASE));
    assert_string_equal(api_version_header(&(api_config){.version_header = NULL}),
                        API_DEFAULT_VERSION_HEADER);
}

static void test_client_new_refuses(void **state)
{
    (void)state;
    api_client *client = (api_client *)1;
    error_info err = {0};
    api_config cfg = {.base_url = "http://api.example.com", .api_key = KEY};
    assert_int_equal(api_client_new(&cfg, &client, &err), ERROR_CONFIG);
    assert_null(client);
    cfg.base_url = BASE;
    cfg.total_timeout_ms = -1;
    assert_int_equal(api_client_new(&cfg, &client, NULL), ERROR_CONFIG);
    cfg.total_timeout_ms = 0;
    assert_int_equal(api_client_new(&cfg, &client, &err), ERROR_OK);
    assert_non_null(client);
    assert_non_null(api_ops()->create);
    assert_non_null(api_ops()->remove);
    assert_non_null(api_ops()->list_page);
    api_client_free(client);
    api_client_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curl_before_sending),
        cmocka_unit_test(test_curl_after_sending),
        cmocka_unit_test(test_curl_depends_on_sending),
        cmocka_unit_test(test_classify_table),
        cmocka_unit_test(test_classify_statuses_kept),
        cmocka_unit_test(test_classify_timed_out),
        cmocka_unit_test(test_classify_undecodable_2xx),
        cmocka_unit_test(test_classify_rate_limited),
        cmocka_unit_test(test_classify_operation_id_from_header),
        cmocka_unit_test(test_message_from_error_body),
        cmocka_unit_test(test_message_fallbacks),
        cmocka_unit_test(test_message_hides_secrets),
        cmocka_unit_test(test_message_long_msg_keeps_operation),
        cmocka_unit_test(test_scrub),
        cmocka_unit_test(test_retry_after_seconds),
        cmocka_unit_test(test_retry_after_dates),
        cmocka_unit_test(test_operation_id_header),
        cmocka_unit_test(test_page_url_same_origin),
        cmocka_unit_test(test_page_url_elsewhere),
        cmocka_unit_test(test_page_url_message_names_hosts),
        cmocka_unit_test(test_config_checks),
        cmocka_unit_test(test_client_new_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

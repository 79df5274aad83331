/*
 * Fuzz target: serve-api's request handling (gate, routing, the eight
 * operations, list parameters, create bodies) through the real http layer's
 * dispatch, against a real emulator with its own SQLite store in a temp
 * directory, seeded with a few rules and credentials made by real requests.
 * Input: an HTTP request as described in fuzz_http.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emulator_internal.h"
#include "fuzz_http.h"
#include "rampart/emulator.h"

#define FUZZ_KEY "fuzz-api-key"

static emulator *em;

static void stop(void)
{
    emulator_stop(em);
    em = NULL;
}

/* One well-formed request, to seed the store through the same path. */
static void seed(const char *method, const char *path, const char *body)
{
    http_param h[] = {{"Authorization", "Bearer " FUZZ_KEY}, {"Service-Version", "2"}};
    http_inject in = {.method = method, .path = path, .headers = h, .nheaders = 2,
                      .body = body, .body_len = body ? strlen(body) : 0,
                      .peer = {.family = AF_UNIX, .uid = -1, .pid = -1}};
    http_response resp = {0};
    http_server_dispatch(em->http, &in, &resp);
    if (resp.status != 201) {
        fprintf(stderr, "seed %s %s: %d %s\n", method, path, resp.status,
                resp.body ? resp.body : "");
        exit(1);
    }
    http_response_set(&resp, 0, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_temp_dir(fuzz_dir, sizeof fuzz_dir, "serve-api");
    char listen[300], db[300];
    snprintf(listen, sizeof listen, "unix:%s/s.sock", fuzz_dir);
    snprintf(db, sizeof db, "%s/server.db", fuzz_dir);
    emulator_config cfg = {.listen = listen, .db_path = db, .api_key = FUZZ_KEY,
                           .base_url = "http://127.0.0.1:8080"};
    error_info err = {0};
    if (emulator_start(&cfg, &em, &err) != ERROR_OK)
        fuzz_fail("emulator_start", &err);
    fuzz_cleanup_at_exit(stop);
    static const char *const rules[] = {
        "{\"ip_policy_id\":\"ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a\",\"cidr\":\"10.0.0.0/8\","
        "\"action\":\"allow\",\"description\":\"office\"}",
        "{\"ip_policy_id\":\"ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a\",\"cidr\":\"2001:db8::/32\","
        "\"action\":\"deny\",\"metadata\":\"{\\\"k\\\":1}\"}",
        "{\"ip_policy_id\":\"ipp_3Other0Policy000000000000\",\"cidr\":\"192.168.1.1/32\","
        "\"action\":\"allow\"}",
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        seed("POST", "/ip_policy_rules", rules[i]);
    seed("POST", "/credentials", "{\"description\":\"web agent\",\"acl\":[\"bind:*.example.com\"]}");
    seed("POST", "/credentials", "{\"description\":\"ci\",\"metadata\":\"m\",\"acl\":[]}");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_request r;
    if (!fuzz_request_parse(data, size, &r))
        return 0;
    r.in.peer = (http_peer){.family = AF_UNIX, .uid = -1, .pid = -1};
    fuzz_dispatch(em->http, &r);
    return 0;
}

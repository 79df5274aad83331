/*
 * Fuzz target: the agent endpoint's request handling (the gate: relayed headers,
 * peer uid, Host, key, rate; then tokens, policy checks, health and the mirror's
 * list parameters) through the real http layer's dispatch, against a real agent
 * reading a temp SQLite cache seeded with rules and credentials in several states.
 * Input: an optional peer line, then an HTTP request as described in fuzz_http.h:
 *   "u\n" a unix peer of our uid (the default), "o\n" a unix peer of another uid,
 *   "t\n" a TCP peer on the loopback listener (Host and key checked).
 * Beyond not crashing, every reply keeps the agent's request rules (issue 14),
 * checked here against the request itself: a relayed or browser header, a Host or
 * Authorization sent twice, or a control character in the decoded path is
 * refused (400, 401 or 403), never answered with a token.
 */
#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"
#include "fuzz_http.h"
#include "rampart/agent.h"
#include "rampart/store.h"

/* The local key the seeds send (agent.key holds it). */
#define FUZZ_AGENT_KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static agent *ag;

static void stop(void)
{
    agent_stop(ag);
    ag = NULL;
}

static void add_rule(store *st, const char *id, const char *policy, const char *cidr,
                     model_action action, model_state state)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    model_rule *r = &o.rule;
    r->action = action;
    r->state = state;
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->policy_id, sizeof r->policy_id, "%s", policy);
    snprintf(r->cidr, sizeof r->cidr, "%s", cidr);
    snprintf(r->description, sizeof r->description, "rule %s", cidr);
    error_info err = {0};
    if (store_insert(st, &o, &err) != ERROR_OK)
        fuzz_fail("store_insert (rule)", &err);
}

static void add_cred(store *st, const char *id, const char *name, const char *token,
                     model_state state)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    model_cred *c = &o.cred;
    c->state = state;
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->description, sizeof c->description, "%s", name);
    error_info err = {0};
    if (model_acl_add(&c->acl, "bind:*.example.com", &err) != ERROR_OK ||
        (token && model_cred_set_token(c, token, &err) != ERROR_OK) ||
        store_insert(st, &o, &err) != ERROR_OK)
        fuzz_fail("store_insert (credential)", &err);
    model_object_clear(&o);
}

static void seed_cache(const char *db)
{
    store *st;
    error_info err = {0};
    if (store_open(db, 0, &st, &err) != ERROR_OK)
        fuzz_fail("store_open", &err);
    const char *p1 = "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a", *p2 = "ipp_3Other0Policy000000000000";
    add_rule(st, "ipr_2Fuzz0Rule0000000000000001", p1, "10.0.0.0/8", MODEL_ACTION_ALLOW,
             MODEL_STATE_SYNCED);
    add_rule(st, "ipr_2Fuzz0Rule0000000000000002", p1, "10.1.0.0/16", MODEL_ACTION_DENY,
             MODEL_STATE_SYNCED);
    add_rule(st, "ipr_2Fuzz0Rule0000000000000003", p1, "2001:db8::/32", MODEL_ACTION_ALLOW,
             MODEL_STATE_DELETING);
    add_rule(st, "", p2, "0.0.0.0/0", MODEL_ACTION_ALLOW, MODEL_STATE_NEW);
    add_rule(st, "ipr_2Fuzz0Rule0000000000000004", p2, "192.168.1.1/32", MODEL_ACTION_DENY,
             MODEL_STATE_REMOTE_DELETED);
    add_cred(st, "cr_2Fuzz0Cred0000000000000001", "web", "2Fuzz0Cred0000000000000001_tok",
             MODEL_STATE_SYNCED);
    add_cred(st, "cr_2Fuzz0Cred0000000000000002", "web", NULL, MODEL_STATE_SYNCED);
    add_cred(st, "cr_2Fuzz0Cred0000000000000003", "ci", "tok3", MODEL_STATE_DELETING);
    add_cred(st, "cr_2Fuzz0Cred0000000000000004", "orphan", NULL, MODEL_STATE_ORPHANED);
    add_cred(st, "", "local one", "tok5", MODEL_STATE_NEW);
    store_close(st);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_temp_dir(fuzz_dir, sizeof fuzz_dir, "agent");
    char db[300], unix_spec[300], key[300];
    snprintf(db, sizeof db, "%s/cache.db", fuzz_dir);
    snprintf(unix_spec, sizeof unix_spec, "unix:%s/run/agent.sock", fuzz_dir);
    snprintf(key, sizeof key, "%s/agent.key", fuzz_dir);
    seed_cache(db);
    FILE *kf = fopen(key, "w");
    if (!kf || fputs(FUZZ_AGENT_KEY "\n", kf) < 0 || fclose(kf) != 0 || chmod(key, 0600)) {
        perror(key);
        exit(1);
    }
    agent_options o = {.db_path = db, .nlisten = 2, .key_path = key,
                       .rate_per_s = AGENT_RATE_UNLIMITED};
    o.listen[0] = unix_spec;
    o.listen[1] = "tcp:127.0.0.1:0";
    error_info err = {0};
    if (agent_start(&o, &ag, &err) != ERROR_OK)
        fuzz_fail("agent_start", &err);
    fuzz_cleanup_at_exit(stop);
    return 0;
}

/* ---- the rules every reply keeps (the specification, not the agent's table) ---- */

static const char *const never_headers[] = {
    "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP",
    "X-Client-IP",     "True-Client-IP",   "Forwarded",         "Via",
    "Origin",          "Sec-Fetch-Site",   "Sec-Fetch-Mode",
};
static const char *const once_headers[] = {"Host", "Authorization"};

static size_t count_header(const fuzz_request *r, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < r->in.nheaders; i++)
        n += strcasecmp(r->headers[i].name, name) == 0;
    return n;
}

static bool path_has_control(const fuzz_request *r)
{
    for (size_t i = 0; i < r->in.path_len; i++) {
        unsigned char c = (unsigned char)r->in.path[i];
        if (c < 0x20 || c == 0x7F)
            return true;
    }
    return false;
}

static bool must_refuse(const fuzz_request *r)
{
    for (size_t i = 0; i < sizeof never_headers / sizeof never_headers[0]; i++) {
        if (count_header(r, never_headers[i]) > 0)
            return true;
    }
    for (size_t i = 0; i < sizeof once_headers / sizeof once_headers[0]; i++) {
        if (count_header(r, once_headers[i]) > 1)
            return true;
    }
    return path_has_control(r);
}

static void check_rules(const fuzz_request *r, const http_response *resp)
{
    if (!must_refuse(r))
        return;
    bool refused = resp->status == 400 || resp->status == 401 || resp->status == 403;
    if (!refused || (resp->body && strstr(resp->body, "\"token\":\"")))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    http_peer peer = {.family = AF_UNIX, .uid = (long)getuid(), .pid = (long)getpid()};
    size_t listener = 0;
    if (size >= 2 && data[1] == '\n' && (data[0] == 'u' || data[0] == 'o' || data[0] == 't')) {
        if (data[0] == 'o')
            peer.uid += 1;
        if (data[0] == 't') {
            peer = (http_peer){.family = AF_INET, .addr = "127.0.0.1", .uid = -1, .pid = -1};
            listener = 1;
        }
        data += 2;
        size -= 2;
    }
    fuzz_request r;
    if (!fuzz_request_parse(data, size, &r))
        return 0;
    r.in.peer = peer;
    fuzz_dispatch_checked(ag->lis[listener].http, &r, check_rules);
    return 0;
}

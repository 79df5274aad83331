/* The API client against the real reference server: `rampart serve-api` started
 * as a process on a loopback port (the binary next to this test's build dir, or
 * $RAMPART), on a private database, stopped at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rampart/api.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "test_support.h"

#define KEY "k2Cs8SecretSecretSecretSecret"
#define POLICY_ID "ipp_2Cs8Vd0ZqL4eTf1gKx9RmB3nHwA"
#define READY_WAIT_MS 10000
#define POLL_MS 20

typedef struct server {
    char dir[PATH_MAX];
    char base[128];
    pid_t pid;
} server;

static void find_binary(char *out, size_t size)
{
    const char *env = getenv("RAMPART");
    if (env && env[0]) {
        snprintf(out, size, "%s", env);
        return;
    }
    char self[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
    assert_true(n > 0);
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    assert_non_null(slash);
    strcpy(slash, "/../rampart"); /* <build>/tests/../rampart */
    assert_true(strlen(self) < size);
    strcpy(out, self);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void show_log(const server *s)
{
    char path[PATH_MAX + 16], line[512];
    snprintf(path, sizeof path, "%s/log", s->dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        print_error("serve-api: %s", line);
    if (f)
        fclose(f);
}

/* Start serve-api (with `faults` when not NULL); false when it never got ready. */
static bool spawn(server *s, const char *faults)
{
    snprintf(s->dir, sizeof s->dir, "%s/rampart-api-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(s->dir));
    char bin[PATH_MAX], db[PATH_MAX + 16], ready[PATH_MAX + 16], log[PATH_MAX + 16];
    find_binary(bin, sizeof bin);
    snprintf(db, sizeof db, "%s/remote.db", s->dir);
    snprintf(ready, sizeof ready, "%s/ready", s->dir);
    snprintf(log, sizeof log, "%s/log", s->dir);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        setenv("RAMPART_SERVE_API_KEY", KEY, 1);
        execl(bin, "rampart", "serve-api", "--listen", "tcp:127.0.0.1:0", "--db", db,
              "--ready-file", ready, faults ? "--faults" : (char *)NULL, faults,
              (char *)NULL);
        _exit(127);
    }
    for (long waited = 0; waited < READY_WAIT_MS; waited += POLL_MS) {
        FILE *f = fopen(ready, "r");
        char addr[96] = "";
        if (f) {
            bool got = fgets(addr, sizeof addr, f) != NULL;
            fclose(f);
            addr[strcspn(addr, "\r\n")] = '\0';
            if (got && addr[0]) {
                snprintf(s->base, sizeof s->base, "http://%s", addr);
                return true;
            }
        }
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            show_log(s);
            break;
        }
        pause_ms(POLL_MS);
    }
    print_error("serve-api (%s) did not become ready\n", bin);
    return false;
}

static void reap(server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (ts_remove_tree(s->dir) != 0)
        print_error("could not remove %s\n", s->dir);
}

static int server_start(void **state)
{
    server *s = calloc(1, sizeof *s);
    assert_non_null(s);
    *state = s;
    return spawn(s, NULL) ? 0 : -1;
}

static int server_stop(void **state)
{
    server *s = *state;
    if (s)
        reap(s);
    free(s);
    return 0;
}

static api_client *client_ms(const server *s, const char *key, const char *version_header,
                             long total_ms)
{
    return ts_api_client(s->base, key, version_header, total_ms);
}

static api_client *client(const server *s, const char *key, const char *version_header)
{
    return client_ms(s, key, version_header, 0);
}

static void rule_in(model_object *o, unsigned n, model_action action)
{
    model_object_init(o, MODEL_KIND_RULE);
    model_rule *r = &o->rule;
    snprintf(r->cidr, sizeof r->cidr, "10.%u.%u.0/24", n / 256, n % 256);
    strcpy(r->policy_id, POLICY_ID);
    r->action = action;
}

static void create_rule(api_client *c, unsigned n, char *id_out)
{
    model_object in, out;
    rule_in(&in, n, MODEL_ACTION_ALLOW);
    sync_result res;
    if (api_ops()->create(c, &in, &out, &res) != SYNC_OK)
        fail_msg("create %u: %s", n, res.message);
    assert_int_equal(res.http_status, 201);
    assert_string_equal(out.rule.cidr, in.rule.cidr);
    assert_string_equal(out.rule.policy_id, POLICY_ID);
    assert_true(strncmp(out.rule.uri, "http://", 7) == 0);
    strcpy(id_out, out.rule.id);
}

/* Walk every page from `first` (NULL: the collection), collecting ids. */
static size_t list_all(api_client *c, const char *first, char (*ids)[MODEL_ID_MAX + 1],
                       size_t max, size_t *pages)
{
    char url[MODEL_URI_MAX + 1];
    const char *next = first;
    size_t n = 0;
    *pages = 0;
    for (;;) {
        codec_page page;
        sync_result res;
        if (api_ops()->list_page(c, MODEL_KIND_RULE, next, &page, &res) != SYNC_OK)
            fail_msg("page %zu: %s", *pages + 1, res.message);
        (*pages)++;
        for (size_t i = 0; i < page.count && n < max; i++)
            strcpy(ids[n++], page.items[i].rule.id);
        snprintf(url, sizeof url, "%s", page.next_page_uri);
        bool last = page.count == 0 || !url[0];
        codec_page_free(&page);
        if (last)
            return n;
        next = url;
    }
}

enum { MANY = 215 };

static void test_create_and_list_pages(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    static char made[MANY][MODEL_ID_MAX + 1], seen[MANY + 8][MODEL_ID_MAX + 1];
    for (unsigned i = 0; i < MANY; i++)
        create_rule(c, i, made[i]);
    size_t pages;
    size_t n = list_all(c, NULL, seen, MANY + 8, &pages);
    assert_int_equal(n, MANY);
    assert_int_equal(pages, 3); /* 100 + 100 + 15 with the server's default limit */
    /* Newest first, and every created rule exactly once. */
    for (size_t i = 0; i < n; i++)
        assert_string_equal(seen[i], made[MANY - 1 - i]);
    /* A smaller page size, given the way the engine would pass a URL back. */
    char url[256];
    snprintf(url, sizeof url, "%s/ip_policy_rules?limit=7", s->base);
    n = list_all(c, url, seen, MANY + 8, &pages);
    assert_int_equal(n, MANY);
    assert_int_equal(pages, (MANY + 6) / 7);
    api_client_free(c);
}

static void test_delete_then_not_found(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    char id[MODEL_ID_MAX + 1];
    create_rule(c, 4000, id);
    sync_result res;
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, id, &res), SYNC_OK);
    assert_int_equal(res.http_status, 204);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, id, &res), SYNC_NOT_FOUND);
    assert_int_equal(res.http_status, 404);
    assert_true(res.operation_id[0] != '\0');
    api_client_free(c);
}

static void test_rejections_carry_operation_id(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    model_object in, out;
    rule_in(&in, 5000, MODEL_ACTION_DENY);
    strcpy(in.rule.cidr, "10.0.0.1/8"); /* host bits set */
    sync_result res;
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_REJECTED);
    assert_int_equal(res.http_status, 400);
    assert_true(strncmp(res.operation_id, "op_", 3) == 0);
    char tail[MODEL_ID_MAX + 16];
    snprintf(tail, sizeof tail, " (operation %s)", res.operation_id);
    assert_non_null(strstr(res.message, tail));
    assert_null(strstr(res.message, "{"));
    /* The same CIDR twice in one policy. */
    char id[MODEL_ID_MAX + 1];
    create_rule(c, 5001, id);
    rule_in(&in, 5001, MODEL_ACTION_ALLOW);
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_REJECTED);
    assert_int_equal(res.http_status, 400);
    api_client_free(c);
}

static void test_credentials(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    model_object in, out;
    ts_cred_init(&in, "ci runner", "team=net\nrampart-create=local_1", "bind:*.example.com");
    sync_result res;
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_OK);
    assert_non_null(out.cred.token);
    assert_true(strlen(out.cred.token) > 20);
    char id[MODEL_ID_MAX + 1];
    strcpy(id, out.cred.id);
    model_object_clear(&out);
    model_object_clear(&in);
    codec_page page;
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_CRED, NULL, &page, &res), SYNC_OK);
    bool found = false;
    for (size_t i = 0; i < page.count; i++) {
        const model_cred *item = &page.items[i].cred;
        if (strcmp(item->id, id) != 0)
            continue;
        found = true;
        assert_null(item->token); /* the token only in the create reply */
        assert_string_equal(item->metadata, "team=net\nrampart-create=local_1");
        assert_int_equal(item->acl.count, 1);
    }
    codec_page_free(&page);
    assert_true(found);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_CRED, id, &res), SYNC_OK);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_CRED, id, &res), SYNC_NOT_FOUND);
    api_client_free(c);
}

static void test_bad_key_and_version(void **state)
{
    server *s = *state;
    api_client *c = client(s, "wrong-key-123", NULL);
    codec_page page;
    sync_result res;
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res), SYNC_AUTH);
    assert_int_equal(res.http_status, 401);
    assert_null(strstr(res.message, "wrong-key-123"));
    api_client_free(c);
    /* The right key but the version under another header name: the server
     * misses its header and refuses. */
    c = client(s, KEY, "Other-Version");
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res),
                     SYNC_REJECTED);
    assert_int_equal(res.http_status, 400);
    assert_int_equal(page.count, 0);
    api_client_free(c);
}

typedef struct fault_case {
    sync_outcome want;
    int status;
    bool committed;      /* the server did the create before losing the reply */
    const char *message; /* part of the message */
} fault_case;

/* Each create meets the fault of its number in SPEC; afterwards the server holds
 * exactly the creates it committed, each once. */
static void test_faults(void **state)
{
    (void)state;
    static const char spec[] = "create_rule:drop@1,create_rule:reset@2,"
                               "create_rule:truncate@3,create_rule:429@4:retry-after=2,"
                               "create_rule:429@5,create_rule:500@6,create_rule:502@7,"
                               "create_rule:delay=3000@8,list_rules:truncate@1,"
                               "delete_rule:drop@1";
    static const fault_case cases[] = {
        {SYNC_AMBIGUOUS, 0, true, "after the request was sent"},
        {SYNC_AMBIGUOUS, 0, true, "after the request was sent"},
        {SYNC_AMBIGUOUS, 201, true, "cut short"},
        {SYNC_RATE_LIMITED, 429, false, "(operation op_"},
        {SYNC_RATE_LIMITED, 429, false, "(operation op_"},
        {SYNC_AMBIGUOUS, 500, false, "(operation op_"},
        {SYNC_AMBIGUOUS, 502, false, "(operation op_"},
        {SYNC_AMBIGUOUS, 0, true, "timed out"},
        {SYNC_OK, 201, true, ""},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    server s = {0};
    assert_true(spawn(&s, spec));
    api_client *c = client(&s, KEY, NULL);
    /* Create 8 only: 500 ms is far below its 3000 ms delay, and the other
     * requests keep the default timeout however slow the machine. */
    api_client *quick = client_ms(&s, KEY, NULL, 500);
    for (unsigned i = 0; i < N; i++) {
        model_object in, out;
        rule_in(&in, 6000 + i, MODEL_ACTION_ALLOW);
        sync_result res;
        sync_outcome got = api_ops()->create(i == 7 ? quick : c, &in, &out, &res);
        if (got != cases[i].want || res.http_status != cases[i].status ||
            !strstr(res.message, cases[i].message))
            fail_msg("create %u: outcome %d, HTTP %d, '%s'", i + 1, (int)got, res.http_status,
                     res.message);
        if (i == 3)
            assert_true(res.retry_after_s == 2.0);
        if (i == 4)
            assert_true(res.retry_after_s < 0);
    }
    codec_page page;
    sync_result res;
    assert_int_equal(api_ops()->list_page(c, MODEL_KIND_RULE, NULL, &page, &res),
                     SYNC_AMBIGUOUS);
    assert_null(page.items);
    static char seen[N + 4][MODEL_ID_MAX + 1];
    size_t pages;
    size_t n = list_all(c, NULL, seen, N + 4, &pages);
    size_t committed = 0;
    for (unsigned i = 0; i < N; i++)
        committed += cases[i].committed;
    assert_int_equal(n, committed);
    /* A delete whose reply was lost was done. On the kept-alive connection libcurl
     * resends it by itself and meets a 404 (fine for a delete); either way the
     * next one finds nothing. */
    sync_outcome got = api_ops()->remove(c, MODEL_KIND_RULE, seen[0], &res);
    assert_true(got == SYNC_AMBIGUOUS || got == SYNC_NOT_FOUND);
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, seen[0], &res), SYNC_NOT_FOUND);
    api_client_free(quick);
    api_client_free(c);
    reap(&s);
}

/* ---- edits and gets ------------------------------------------------------- */

static unsigned bit_of(model_kind kind, const char *name)
{
    return kind_field_bit(kind, kind_field_by_name(kind, name));
}

/* GET of `id`, which must succeed; release `out` with model_object_clear. */
static void get_ok(api_client *c, model_kind kind, const char *id, model_object *out)
{
    sync_result res;
    if (api_ops()->get(c, kind, id, out, &res) != SYNC_OK)
        fail_msg("get %s: %s", id, res.message);
    assert_int_equal(res.http_status, 200);
    assert_string_equal(model_object_id(out), id);
}

static void test_update_and_get_rule(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    char id[MODEL_ID_MAX + 1];
    create_rule(c, 7000, id);
    model_object in, out;
    rule_in(&in, 7001, MODEL_ACTION_DENY); /* the action is not sent: never changes */
    strcpy(in.rule.id, id);
    strcpy(in.rule.description, "edited");
    sync_result res;
    unsigned fields = bit_of(MODEL_KIND_RULE, "cidr") | bit_of(MODEL_KIND_RULE, "description");
    assert_int_equal(api_ops()->update(c, &in, fields, &out, &res), SYNC_OK);
    assert_int_equal(res.http_status, 200);
    assert_string_equal(out.rule.id, id);
    assert_string_equal(out.rule.cidr, in.rule.cidr);
    assert_string_equal(out.rule.description, "edited");
    assert_int_equal(out.rule.action, MODEL_ACTION_ALLOW);
    model_object_clear(&out);
    get_ok(c, MODEL_KIND_RULE, id, &out);
    assert_string_equal(out.rule.cidr, in.rule.cidr);
    assert_string_equal(out.rule.description, "edited");
    model_object_clear(&out);
    /* "" clears a field. */
    in.rule.description[0] = '\0';
    assert_int_equal(api_ops()->update(c, &in, bit_of(MODEL_KIND_RULE, "description"), &out,
                                       &res),
                     SYNC_OK);
    assert_string_equal(out.rule.description, "");
    model_object_clear(&out);
    /* The server's gate: a refusal with its message and operation id. */
    strcpy(in.rule.cidr, "10.0.0.1/8");
    assert_int_equal(api_ops()->update(c, &in, bit_of(MODEL_KIND_RULE, "cidr"), &out, &res),
                     SYNC_REJECTED);
    assert_int_equal(res.http_status, 400);
    assert_int_equal(res.failure, SYNC_FAILURE_REJECTED);
    assert_non_null(strstr(res.message, "host bits set"));
    assert_true(strncmp(res.operation_id, "op_", 3) == 0);
    assert_null(strstr(res.message, "{"));
    model_object_clear(&out);
    /* Nothing that could not be right is sent. */
    assert_int_equal(api_ops()->update(c, &in, 0, &out, &res), SYNC_REJECTED);
    assert_int_equal(res.http_status, 0);
    assert_int_equal(api_ops()->update(c, &in, bit_of(MODEL_KIND_RULE, "action"), &out, &res),
                     SYNC_REJECTED);
    assert_non_null(strstr(res.message, "action cannot be changed"));
    strcpy(in.rule.id, "local_abc");
    assert_int_equal(api_ops()->update(c, &in, bit_of(MODEL_KIND_RULE, "description"), &out,
                                       &res),
                     SYNC_REJECTED);
    assert_int_equal(res.http_status, 0);
    /* Gone: 404 for both. */
    assert_int_equal(api_ops()->remove(c, MODEL_KIND_RULE, id, &res), SYNC_OK);
    strcpy(in.rule.id, id);
    assert_int_equal(api_ops()->update(c, &in, bit_of(MODEL_KIND_RULE, "description"), &out,
                                       &res),
                     SYNC_NOT_FOUND);
    assert_int_equal(res.http_status, 404);
    assert_int_equal(res.failure, SYNC_FAILURE_NOT_FOUND);
    assert_int_equal(api_ops()->get(c, MODEL_KIND_RULE, id, &out, &res), SYNC_NOT_FOUND);
    assert_int_equal(res.http_status, 404);
    api_client_free(c);
}

/* The creation marker PATCHed away, an ACL cleared; the token is never in an edit's
 * or a get's reply. */
static void test_update_and_get_cred(void **state)
{
    server *s = *state;
    api_client *c = client(s, KEY, NULL);
    model_object in, out;
    ts_cred_init(&in, "edit me", "team=net\nrampart-create=local_7", "bind:*.example.com");
    sync_result res;
    assert_int_equal(api_ops()->create(c, &in, &out, &res), SYNC_OK);
    char id[MODEL_ID_MAX + 1];
    strcpy(id, out.cred.id);
    model_object_clear(&out);
    model_cred_clear(&in.cred); /* the ACL goes: [] */
    strcpy(in.cred.id, id);
    strcpy(in.cred.metadata, "team=net");
    unsigned fields = bit_of(MODEL_KIND_CRED, "metadata") | bit_of(MODEL_KIND_CRED, "acl");
    assert_int_equal(api_ops()->update(c, &in, fields, &out, &res), SYNC_OK);
    assert_string_equal(out.cred.metadata, "team=net");
    assert_int_equal(out.cred.acl.count, 0);
    assert_string_equal(out.cred.description, "edit me"); /* not sent: kept */
    assert_null(out.cred.token);
    model_object_clear(&out);
    get_ok(c, MODEL_KIND_CRED, id, &out);
    assert_string_equal(out.cred.metadata, "team=net");
    assert_null(out.cred.token);
    model_object_clear(&out);
    model_object_clear(&in);
    api_client_free(c);
}

/* PATCH and GET meet the server's faults: a lost reply is ambiguous (and the edit
 * was made), 429 carries its wait, a 500 is a server error. */
static void test_update_faults(void **state)
{
    (void)state;
    server s = {0};
    assert_true(spawn(&s, "patch_rule:reset@1,patch_rule:429@2:retry-after=3,"
                          "patch_rule:truncate@3,get_rule:500@1"));
    api_client *c = client(&s, KEY, NULL);
    char id[MODEL_ID_MAX + 1];
    create_rule(c, 8000, id);
    model_object in, out;
    rule_in(&in, 8001, MODEL_ACTION_ALLOW);
    strcpy(in.rule.id, id);
    unsigned cidr = bit_of(MODEL_KIND_RULE, "cidr");
    sync_result res;
    assert_int_equal(api_ops()->update(c, &in, cidr, &out, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.failure, SYNC_FAILURE_CONNECTION_LOST);
    assert_int_equal(out.kind, MODEL_KIND_RULE);
    assert_int_equal(api_ops()->update(c, &in, cidr, &out, &res), SYNC_RATE_LIMITED);
    assert_true(res.retry_after_s == 3.0);
    assert_int_equal(api_ops()->update(c, &in, cidr, &out, &res), SYNC_AMBIGUOUS);
    assert_int_equal(api_ops()->get(c, MODEL_KIND_RULE, id, &out, &res), SYNC_AMBIGUOUS);
    assert_int_equal(res.http_status, 500);
    assert_int_equal(res.failure, SYNC_FAILURE_SERVER_ERROR);
    /* The edit whose reply was lost was made. */
    get_ok(c, MODEL_KIND_RULE, id, &out);
    assert_string_equal(out.rule.cidr, in.rule.cidr);
    model_object_clear(&out);
    api_client_free(c);
    reap(&s);
}

/* Lines of the server's request log that start with `prefix`. */
static int log_count(const server *s, const char *prefix)
{
    char path[PATH_MAX + 16], line[512];
    snprintf(path, sizeof path, "%s/log", s->dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strncmp(line, prefix, strlen(prefix)) == 0;
    if (f)
        fclose(f);
    return n;
}

/* The log is written as each request ends: poll until it holds `want` lines. */
static int log_settles(const server *s, const char *prefix, int want)
{
    int n = log_count(s, prefix);
    for (long waited = 0; n < want && waited < READY_WAIT_MS; waited += POLL_MS) {
        pause_ms(POLL_MS);
        n = log_count(s, prefix);
    }
    return n;
}

/* A page requested ahead is the one the next list_page of its URL returns, sent
 * once; a list_page of another URL, or another operation, drops it and goes on
 * on a sound connection; a URL of another origin is never requested. */
static void test_list_ahead(void **state)
{
    (void)state;
    server s;
    if (!spawn(&s, NULL))
        fail_msg("serve-api did not start");
    api_client *c = client(&s, KEY, NULL);
    const sync_api_ops *ops = api_ops();
    char id[MODEL_ID_MAX + 1];
    for (unsigned i = 0; i < 20; i++)
        create_rule(c, 9000 + i, id);
    static char plain[32][MODEL_ID_MAX + 1], ahead[32][MODEL_ID_MAX + 1];
    char first[256];
    snprintf(first, sizeof first, "%s/ip_policy_rules?limit=7", s.base);
    size_t pages;
    assert_int_equal(list_all(c, first, plain, 32, &pages), 20);
    int before = log_settles(&s, "GET /ip_policy_rules", 3);
    assert_int_equal(before, 3);
    /* The same walk, each next page asked for ahead before the page is read. */
    char url[MODEL_URI_MAX + 1];
    snprintf(url, sizeof url, "%s", first);
    size_t n = 0;
    for (int p = 0; p < 8; p++) {
        codec_page page;
        sync_result res;
        if (ops->list_page(c, MODEL_KIND_RULE, url, &page, &res) != SYNC_OK)
            fail_msg("page %d: %s", p + 1, res.message);
        bool last = page.count == 0 || !page.next_page_uri[0];
        if (!last)
            assert_true(ops->list_ahead(c, MODEL_KIND_RULE, page.next_page_uri));
        for (size_t i = 0; i < page.count; i++)
            strcpy(ahead[n++], page.items[i].rule.id);
        snprintf(url, sizeof url, "%s", page.next_page_uri);
        codec_page_free(&page);
        if (last)
            break;
    }
    assert_int_equal(n, 20);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(ahead[i], plain[i]);
    assert_int_equal(log_settles(&s, "GET /ip_policy_rules", before + 3), before + 3);
    /* Asked ahead, then another page: that one comes, whole. */
    codec_page page;
    sync_result res;
    char second[MODEL_URI_MAX + 1];
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, first, &page, &res), SYNC_OK);
    snprintf(second, sizeof second, "%s", page.next_page_uri);
    codec_page_free(&page);
    assert_true(ops->list_ahead(c, MODEL_KIND_RULE, second));
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, first, &page, &res), SYNC_OK);
    assert_int_equal(page.count, 7);
    assert_string_equal(page.items[0].rule.id, plain[0]);
    codec_page_free(&page);
    /* Asked ahead, then a create: it goes out and is answered as always. */
    assert_true(ops->list_ahead(c, MODEL_KIND_RULE, second));
    create_rule(c, 9100, id);
    assert_int_equal(ops->list_page(c, MODEL_KIND_RULE, second, &page, &res), SYNC_OK);
    assert_int_equal(page.count, 7);
    codec_page_free(&page);
    /* Another origin is refused, never requested (the key would go there). */
    assert_false(ops->list_ahead(c, MODEL_KIND_RULE, "http://198.51.100.7/ip_policy_rules"));
    api_client_free(c);
    reap(&s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_list_pages),
        cmocka_unit_test(test_delete_then_not_found),
        cmocka_unit_test(test_rejections_carry_operation_id),
        cmocka_unit_test(test_credentials),
        cmocka_unit_test(test_bad_key_and_version),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_update_and_get_rule),
        cmocka_unit_test(test_update_and_get_cred),
        cmocka_unit_test(test_update_faults),
        cmocka_unit_test(test_list_ahead),
    };
    return cmocka_run_group_tests(tests, server_start, server_stop);
}

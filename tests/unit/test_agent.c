/* agent: the in-process API the console uses (agent_start with on_log, stats,
 * addresses, agent_stop), the key file, default paths and start-up refusals, over
 * a real database file and a real unix socket. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rampart/agent.h"
#include "rampart/store.h"

#define TOKEN "2SecretTokenBodyBodyBodyBod_abcdefghijklmnopqrstu"

typedef struct fixture {
    char dir[64];
    char db[128];
    char sock[128];
    char cred_id[MODEL_ID_MAX + 1];
    pthread_mutex_t lock;
    char log[8192];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/rampart-agent.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/cache.db", f->dir);
    snprintf(f->sock, sizeof f->sock, "%s/run/a.sock", f->dir);
    pthread_mutex_init(&f->lock, NULL);
    store *st;
    error_info err;
    assert_int_equal(store_open(f->db, 0, &st, &err), ERROR_OK);
    model_cred c = {0};
    strcpy(c.description, "web");
    c.state = MODEL_STATE_SYNCED;
    strcpy(c.id, "cr_2AgentUnitTest000000000001");
    assert_int_equal(model_cred_set_token(&c, TOKEN, &err), ERROR_OK);
    assert_int_equal(store_cred_insert(st, &c, &err), ERROR_OK);
    strcpy(f->cred_id, c.id);
    model_cred_clear(&c);
    store_close(st);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    pthread_mutex_destroy(&f->lock);
    free(f);
    return 0;
}

static void collect(void *ctx, const char *line)
{
    fixture *f = ctx;
    pthread_mutex_lock(&f->lock);
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof f->log - n, "%s\n", line);
    pthread_mutex_unlock(&f->lock);
}

/* One request over the unix socket ("Connection: close"); the whole reply. */
static void get(const char *sock, const char *path, char *reply, size_t size)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, sock);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < size && (r = read(fd, reply + got, size - 1 - got)) > 0)
        got += (size_t)r;
    reply[got] = '\0';
    close(fd);
}

static agent_options options(fixture *f)
{
    agent_options o = {.db_path = f->db, .nlisten = 1, .on_log = collect, .log_ctx = f};
    static char spec[160];
    snprintf(spec, sizeof spec, "unix:%s", f->sock);
    o.listen[0] = spec;
    return o;
}

static void serves_counts_and_stops(void **state)
{
    fixture *f = *state;
    agent_options o = options(f);
    agent *ag = NULL;
    error_info err = {0};
    assert_int_equal(agent_start(&o, &ag, &err), ERROR_OK);
    assert_non_null(ag);
    char want[160];
    snprintf(want, sizeof want, "unix:%s", f->sock);
    assert_string_equal(agent_address(ag, 0), want);
    assert_null(agent_address(ag, 1));
    struct stat st;
    assert_int_equal(stat(f->sock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char dir[160];
    snprintf(dir, sizeof dir, "%s/run", f->dir);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    char reply[4096], path[128];
    snprintf(path, sizeof path, "/v1/credentials/%s/token", f->cred_id);
    get(f->sock, path, reply, sizeof reply);
    assert_non_null(strstr(reply, "HTTP/1.1 200"));
    assert_non_null(strstr(reply, "Cache-Control: no-store"));
    assert_non_null(strstr(reply, "\"token\":\"" TOKEN "\""));
    get(f->sock, "/v1/tokens/nobody", reply, sizeof reply);
    assert_non_null(strstr(reply, "HTTP/1.1 404"));
    get(f->sock, "/healthz", reply, sizeof reply);
    assert_non_null(strstr(reply, "HTTP/1.1 200"));

    agent_stats s;
    agent_stats_get(ag, &s);
    assert_int_equal(s.requests, 3);
    assert_int_equal(s.lookups, 2);
    assert_int_equal(s.refused, 0);
    assert_string_equal(s.address[0], want);
    assert_string_equal(s.address[1], "");
    agent_stop(ag);
    assert_int_not_equal(stat(f->sock, &st), 0); /* socket file removed */

    assert_non_null(strstr(f->log, "listening on unix:"));
    assert_non_null(strstr(f->log, "by=id"));
    assert_non_null(strstr(f->log, "result=ok"));
    assert_non_null(strstr(f->log, "name=\"nobody\" cred=- result=not_found"));
    assert_null(strstr(f->log, TOKEN));
}

static void refuses_other_uids(void **state)
{
    fixture *f = *state;
    agent_options o = options(f);
    o.allow_uids[0] = (long)getuid() + 1;
    o.nuids = 1;
    agent *ag;
    assert_int_equal(agent_start(&o, &ag, NULL), ERROR_OK);
    char reply[4096], path[128];
    snprintf(path, sizeof path, "/v1/credentials/%s/token", f->cred_id);
    get(f->sock, path, reply, sizeof reply);
    assert_non_null(strstr(reply, "HTTP/1.1 403"));
    assert_null(strstr(reply, TOKEN));
    agent_stats s;
    agent_stats_get(ag, &s);
    assert_int_equal(s.refused, 1);
    assert_int_equal(s.lookups, 0);
    agent_stop(ag);
    assert_non_null(strstr(f->log, "refused peer=uid:"));
}

static void start_refusals(void **state)
{
    fixture *f = *state;
    agent *ag = (agent *)1;
    error_info err = {0};
    agent_options o = options(f);
    o.listen[0] = "tcp:0.0.0.0:0";
    assert_int_equal(agent_start(&o, &ag, &err), ERROR_INVALID);
    assert_null(ag);
    assert_non_null(strstr(err.msg, "loopback"));

    o = options(f);
    o.nlisten = AGENT_LISTEN_MAX + 1;
    assert_int_equal(agent_start(&o, &ag, &err), ERROR_INVALID);

    o = options(f);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.db", f->dir);
    o.db_path = missing;
    assert_int_not_equal(agent_start(&o, &ag, &err), ERROR_OK);
    assert_null(ag);

    o = options(f);
    o.allow_uids[0] = -1;
    o.nuids = 1;
    assert_int_equal(agent_start(&o, &ag, &err), ERROR_INVALID);

    /* A second agent on a live socket: refused, and the first one keeps it. */
    o = options(f);
    agent *first;
    assert_int_equal(agent_start(&o, &first, &err), ERROR_OK);
    assert_int_equal(agent_start(&o, &ag, &err), ERROR_IO);
    char reply[1024];
    get(f->sock, "/healthz", reply, sizeof reply);
    assert_non_null(strstr(reply, "HTTP/1.1 200"));
    agent_stop(first);

    agent_stop(NULL);
    agent_stats s;
    agent_stats_get(NULL, &s);
    assert_int_equal(s.requests, 0);
}

static void key_file(void **state)
{
    fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/conf/rampart/agent.key", f->dir);
    error_info err = {0};
    assert_int_equal(agent_key_ensure(path, &err), ERROR_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 65);
    FILE *fp = fopen(path, "r");
    char first[80] = "", again[80] = "";
    assert_non_null(fgets(first, sizeof first, fp));
    fclose(fp);
    assert_int_equal(strspn(first, "0123456789abcdef"), 64);
    assert_int_equal(agent_key_ensure(path, &err), ERROR_OK); /* kept, not replaced */
    fp = fopen(path, "r");
    assert_non_null(fgets(again, sizeof again, fp));
    fclose(fp);
    assert_string_equal(first, again);

    chmod(path, 0640);
    assert_int_equal(agent_key_ensure(path, &err), ERROR_CONFIG);
    assert_non_null(strstr(err.msg, "chmod 600"));
    chmod(path, 0600);

    char link_path[180];
    snprintf(link_path, sizeof link_path, "%s/link.key", f->dir);
    assert_int_equal(symlink(path, link_path), 0);
    assert_int_equal(agent_key_ensure(link_path, &err), ERROR_CONFIG);

    char short_path[180];
    snprintf(short_path, sizeof short_path, "%s/short.key", f->dir);
    fp = fopen(short_path, "w");
    fputs("tooshort\n", fp);
    fclose(fp);
    chmod(short_path, 0600);
    assert_int_equal(agent_key_ensure(short_path, &err), ERROR_CONFIG);
    assert_int_equal(agent_key_ensure("", &err), ERROR_INVALID);
}

static void default_paths(void **state)
{
    (void)state;
    char buf[256];
    error_info err = {0};
    setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
    assert_int_equal(agent_default_socket(buf, sizeof buf, &err), ERROR_OK);
    assert_string_equal(buf, "/run/user/1234/rampart/agent.sock");
    setenv("XDG_RUNTIME_DIR", "relative", 1); /* not absolute: ignored, as XDG says */
    assert_int_equal(agent_default_socket(buf, sizeof buf, &err), ERROR_OK);
    char want[64];
    snprintf(want, sizeof want, "/tmp/rampart-%ld/agent.sock", (long)geteuid());
    assert_string_equal(buf, want);
    assert_int_equal(agent_default_socket(buf, 8, &err), ERROR_INVALID);

    setenv("XDG_CONFIG_HOME", "/home/u/.cfg", 1);
    assert_int_equal(agent_default_key_path(buf, sizeof buf, &err), ERROR_OK);
    assert_string_equal(buf, "/home/u/.cfg/rampart/agent.key");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    assert_int_equal(agent_default_key_path(buf, sizeof buf, &err), ERROR_OK);
    assert_string_equal(buf, "/home/u/.config/rampart/agent.key");
    unsetenv("HOME");
    assert_int_equal(agent_default_key_path(buf, sizeof buf, &err), ERROR_CONFIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(serves_counts_and_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_other_uids, setup, teardown),
        cmocka_unit_test_setup_teardown(start_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(key_file, setup, teardown),
        cmocka_unit_test(default_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * `rampart --sandbox …`: a private reference server (serve-api) on a loopback port,
 * so rampart can be tried with no account. The sandbox keeps its own cache and its
 * own remote in <data dir>/sandbox/, so trying things never mixes with a real
 * remote's cache, and a second run finds the sandbox as the first left it.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rampart/cli.h"
#include "rampart/ids.h"
#include "rampart/model.h"

enum { READY_WAIT_MS = 10000, POLL_MS = 20, KEY_CHARS = 32 };

typedef struct sandbox_paths {
    char dir[CONFIG_PATH_MAX];
    char remote[CONFIG_PATH_MAX + 16];
    char ready[CONFIG_PATH_MAX + 32];
    char log[CONFIG_PATH_MAX + 16];
} sandbox_paths;

/* The sandbox's directory beside the cache `db`: "<db's directory>/sandbox". */
static void sandbox_dir(const char *db, char *out, size_t size)
{
    const char *slash = strrchr(db, '/');
    size_t len = slash ? (size_t)(slash - db) : 1;
    snprintf(out, size, "%.*s/sandbox", (int)len, slash ? db : ".");
}

bool cli_sandbox_cache_path(const cli_ctx *ctx, char *out, size_t size)
{
    const char *db = config_get(&ctx->cfg, CONFIG_DB);
    if (!db[0])
        return false;
    /* Only an explicit --db keeps its cache: one from RAMPART_DB or the config file
     * is the real remote's, and sandbox ids must never land in it. */
    if (ctx->cfg.sources[CONFIG_DB] == CONFIG_SRC_FLAG) {
        snprintf(out, size, "%s", db);
        return true;
    }
    char dir[CONFIG_PATH_MAX];
    sandbox_dir(db, dir, sizeof dir);
    snprintf(out, size, "%s/cache.db", dir);
    return true;
}

static error_code make_paths(cli_ctx *ctx, sandbox_paths *p, error_info *e)
{
    const char *db = config_get(&ctx->cfg, CONFIG_DB);
    if (!db[0])
        return error_set(e, ERROR_CONFIG, "no data directory: set HOME or pass --db PATH");
    sandbox_dir(db, p->dir, sizeof p->dir);
    snprintf(p->remote, sizeof p->remote, "%s/remote.db", p->dir);
    /* This run's own: another run's server, stopping, unlinks its ready file. */
    snprintf(p->ready, sizeof p->ready, "%s/ready.%ld", p->dir, (long)getpid());
    snprintf(p->log, sizeof p->log, "%s/serve-api.log", p->dir);
    if (store_make_parent_dirs(p->remote, e) != ERROR_OK)
        return e->code;
    char cache[CONFIG_PATH_MAX + 16];
    if (ctx->cfg.sources[CONFIG_DB] == CONFIG_SRC_FLAG ||
        !cli_sandbox_cache_path(ctx, cache, sizeof cache))
        return ERROR_OK;
    return config_set(&ctx->cfg, CONFIG_DB, cache, CONFIG_SRC_SANDBOX, e);
}

/*
 * The server's whole environment, built here rather than inherited: the real
 * RAMPART_API_KEY, RAMPART_API_URL and every other RAMPART_* setting stay out of
 * it (the server needs none of them, and its memory and environ are no place for
 * the real key), and so do HOME and XDG_*, so it reads no config file (which may
 * hold api_key). What it gets: the variables below that describe the machine,
 * and its own generated key.
 */
static const char *const env_kept[] = {"PATH=", "LANG=", "LC_", "TZ=", "TMPDIR="};

enum { ENV_MAX = 64, KEY_VAR_MAX = 64 };

typedef struct sandbox_env {
    char *vars[ENV_MAX + 2]; /* pointers into environ, then key_var, then NULL */
    char key_var[KEY_VAR_MAX];
} sandbox_env;

static bool env_is_kept(const char *var)
{
    for (size_t i = 0; i < sizeof env_kept / sizeof env_kept[0]; i++) {
        if (strncmp(var, env_kept[i], strlen(env_kept[i])) == 0)
            return true;
    }
    return false;
}

static void build_env(sandbox_env *env, const char *key)
{
    size_t n = 0;
    for (char **v = environ; *v && n < ENV_MAX; v++) {
        if (env_is_kept(*v))
            env->vars[n++] = *v;
    }
    snprintf(env->key_var, sizeof env->key_var, "RAMPART_SERVE_API_KEY=%s", key);
    env->vars[n++] = env->key_var;
    env->vars[n] = NULL;
}

/* Child: the server, its log in a private file, the key in its environment. */
static void exec_server(const sandbox_paths *p, char *const *envp)
{
    int log = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log >= 0) {
        dup2(log, STDERR_FILENO);
        dup2(log, STDOUT_FILENO);
    }
    char *const argv[] = {"rampart", "serve-api", "--listen", "tcp:127.0.0.1:0", "--db",
                          (char *)p->remote, "--ready-file", (char *)p->ready, NULL};
    execve("/proc/self/exe", argv, envp);
    _exit(127);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll for the ready file the server writes once it listens ("host:port"). */
static error_code wait_ready(cli_ctx *ctx, const sandbox_paths *p, char *addr, size_t size,
                             error_info *e)
{
    for (long waited = 0; waited < READY_WAIT_MS; waited += POLL_MS) {
        FILE *f = fopen(p->ready, "r");
        if (f) {
            bool ok = fgets(addr, (int)size, f) != NULL;
            fclose(f);
            addr[strcspn(addr, "\r\n")] = '\0';
            if (ok && addr[0])
                return ERROR_OK;
        }
        int status;
        if (waitpid(ctx->sandbox_pid, &status, WNOHANG) == ctx->sandbox_pid) {
            ctx->sandbox_pid = 0;
            return error_set(e, ERROR_IO, "the sandbox server stopped at start: see %s",
                             p->log);
        }
        pause_ms(POLL_MS);
    }
    return error_set(e, ERROR_IO, "the sandbox server did not start within %d s: see %s",
                     READY_WAIT_MS / 1000, p->log);
}

static error_code point_at(cli_ctx *ctx, const char *addr, const char *key, error_info *e)
{
    char url[CONFIG_VALUE_MAX];
    snprintf(url, sizeof url, "http://%s", addr);
    if (config_set(&ctx->cfg, CONFIG_API_URL, url, CONFIG_SRC_SANDBOX, e) != ERROR_OK ||
        config_set(&ctx->cfg, CONFIG_API_KEY, key, CONFIG_SRC_SANDBOX, e) != ERROR_OK ||
        config_set(&ctx->cfg, CONFIG_RATE, "0", CONFIG_SRC_SANDBOX, e) != ERROR_OK)
        return e->code;
    return ERROR_OK;
}

error_code cli_sandbox_start(cli_ctx *ctx, error_info *e)
{
    sandbox_paths p;
    char key[KEY_CHARS + 1], addr[128];
    if (make_paths(ctx, &p, e) != ERROR_OK || ids_random_base62(key, KEY_CHARS, e))
        return e->code;
    unlink(p.ready);
    sandbox_env env;
    build_env(&env, key);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        exec_server(&p, env.vars);
    model_wipe(env.key_var, sizeof env.key_var);
    if (pid < 0) {
        model_wipe(key, sizeof key);
        return error_set(e, ERROR_IO, "cannot start the sandbox server: %s", strerror(errno));
    }
    ctx->sandbox_pid = pid;
    error_code rc = wait_ready(ctx, &p, addr, sizeof addr, e);
    unlink(p.ready);
    if (rc == ERROR_OK)
        rc = point_at(ctx, addr, key, e);
    model_wipe(key, sizeof key);
    if (rc != ERROR_OK)
        cli_sandbox_stop(ctx);
    return rc;
}

void cli_sandbox_stop(cli_ctx *ctx)
{
    if (ctx->sandbox_pid <= 0)
        return;
    kill(ctx->sandbox_pid, SIGTERM);
    int status;
    while (waitpid(ctx->sandbox_pid, &status, 0) < 0 && errno == EINTR)
        ;
    ctx->sandbox_pid = 0;
}

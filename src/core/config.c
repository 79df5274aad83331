#include "rampart/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rampart/fileperm.h"
#include "rampart/model.h"
#include "rampart/url.h"

/* One row per setting: file key, environment variable, default value, and for a
 * whole number its range and what it counts (`unit` NULL: a text setting). */
static const struct {
    const char *file_key;
    const char *env;
    const char *fallback;
    long min, max;
    const char *unit;
} settings[CONFIG_KEY_COUNT] = {
    [CONFIG_DB] = {"db", "RAMPART_DB", "", 0, 0, NULL},
    [CONFIG_API_URL] = {"api_url", "RAMPART_API_URL", "", 0, 0, NULL},
    [CONFIG_API_KEY] = {"api_key", "RAMPART_API_KEY", "", 0, 0, NULL},
    [CONFIG_VERSION_HEADER] = {"version_header", "RAMPART_VERSION_HEADER", "Service-Version",
                               0, 0, NULL},
    [CONFIG_RATE] = {"rate", "RAMPART_RATE", "120", 0, 100000,
                     "requests per window (0: unpaced)"},
    [CONFIG_WINDOW] = {"window", "RAMPART_WINDOW", "60", 1, 3600, "seconds"},
    [CONFIG_SHARE] = {"share", "RAMPART_SHARE", "80", 1, 100, "percent of the budget"},
    [CONFIG_GIVE_UP] = {"give_up_windows", "RAMPART_GIVE_UP_WINDOWS", "2", 1, 100,
                        "windows"},
    [CONFIG_TIMEOUT] = {"timeout", "RAMPART_TIMEOUT", "0", 0, 604800,
                        "seconds (0: no deadline)"},
    [CONFIG_LOW_SPEED] = {"low_speed", "RAMPART_LOW_SPEED", "10", 0, 1000000000,
                          "bytes per second (0: no limit)"},
    [CONFIG_LOW_SPEED_TIME] = {"low_speed_time", "RAMPART_LOW_SPEED_TIME", "20", 1, 3600,
                               "seconds"},
    [CONFIG_MAX_BACKOFF] = {"max_backoff", "RAMPART_MAX_BACKOFF", "30", 1, 3600, "seconds"},
    [CONFIG_AUTO_PULL] = {"auto_pull", "RAMPART_AUTO_PULL", "300", 0, 604800,
                          "seconds (0: off)"},
    [CONFIG_READ_ONLY] = {"read_only", "RAMPART_READ_ONLY", "false", 0, 0, NULL},
    [CONFIG_MIRROR_MAX_AGE] = {"mirror_max_age", "RAMPART_MIRROR_MAX_AGE", "30", 0, 86400,
                               "seconds (0: caches revalidate every time)"},
};

/* Biggest config file read: a hand-written settings file is a few hundred bytes. */
enum { CONFIG_FILE_MAX = 64 * 1024 };

const char *config_key_name(config_key key) { return settings[key].file_key; }
const char *config_env_name(config_key key) { return settings[key].env; }

const char *config_source_name(config_source source)
{
    static const char *const names[] = {
        [CONFIG_SRC_DEFAULT] = "default",
        [CONFIG_SRC_FILE] = "config file",
        [CONFIG_SRC_ENV] = "environment",
        [CONFIG_SRC_FLAG] = "flag",
        [CONFIG_SRC_SANDBOX] = "sandbox",
    };
    return names[source];
}

const char *config_get(const config *cfg, config_key key) { return cfg->values[key]; }

bool config_remote_configured(const config *cfg)
{
    return cfg->values[CONFIG_API_URL][0] && cfg->values[CONFIG_API_KEY][0];
}

void config_clear(config *cfg)
{
    model_wipe(cfg->values[CONFIG_API_KEY], sizeof cfg->values[CONFIG_API_KEY]);
}

/* A whole-number setting within its row's range. */
static error_code check_number(config_key key, const char *value, error_info *err)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (!*value || *end || errno || n < settings[key].min || n > settings[key].max ||
        !isdigit((unsigned char)*value))
        return error_set(err, ERROR_INVALID,
                         "%s must be a whole number of %s from %ld to %ld, not '%.40s'",
                         settings[key].file_key, settings[key].unit, settings[key].min,
                         settings[key].max, value);
    return ERROR_OK;
}

long config_number(const config *cfg, config_key key)
{
    long n = strtol(cfg->values[key], NULL, 10);
    return n < settings[key].min ? settings[key].min : n;
}

bool config_flag(const config *cfg, config_key key)
{
    return strcmp(cfg->values[key], "true") == 0;
}

/* A switch: its words for true and false, kept as "true" or "false". */
static error_code check_flag(config_key key, const char *value, const char **canon,
                             error_info *err)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
            *canon = strcasecmp(value, yes[i]) == 0 ? "true" : "false";
            return ERROR_OK;
        }
    }
    return error_set(err, ERROR_INVALID, "%s must be true or false (yes/no, on/off, 1/0), "
                     "not '%.40s'", settings[key].file_key, value);
}

static error_code check_url(const char *value, error_info *err)
{
    /* Empty: no remote configured, which is fine until a sync needs one. */
    return *value ? url_check_api_base(value, "api_url", err) : ERROR_OK;
}

static error_code check_value(config_key key, const char *value, error_info *err)
{
    if (settings[key].unit)
        return check_number(key, value, err);
    if (key == CONFIG_API_URL)
        return check_url(value, err);
    if (key == CONFIG_VERSION_HEADER) {
        if (!*value)
            return error_set(err, ERROR_INVALID, "version_header must not be empty");
        /* An HTTP header name is a token: no spaces, colons or controls. */
        for (const char *p = value; *p; p++) {
            if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
                return error_set(err, ERROR_INVALID,
                                 "version_header '%.60s' is not a valid HTTP header name",
                                 value);
        }
    }
    return ERROR_OK;
}

error_code config_set(config *cfg, config_key key, const char *value,
                      config_source source, error_info *err)
{
    if (key == CONFIG_API_KEY && source == CONFIG_SRC_FLAG)
        return error_set(err, ERROR_CONFIG,
                         "the API key is never taken from the command line (every user "
                         "can read it there): set RAMPART_API_KEY or api_key in the "
                         "config file");
    if (key == CONFIG_READ_ONLY && check_flag(key, value, &value, err) != ERROR_OK)
        return ERROR_INVALID;
    if (check_value(key, value, err) != ERROR_OK)
        return ERROR_INVALID;
    if (!model_copy_text(cfg->values[key], sizeof cfg->values[key], value))
        return error_set(err, ERROR_INVALID, "%s is longer than %zu bytes",
                         settings[key].file_key, sizeof cfg->values[key] - 1);
    cfg->sources[key] = source;
    return ERROR_OK;
}

static const char *env(config_getenv_fn fn, void *ctx, const char *name)
{
    const char *v = fn ? fn(ctx, name) : NULL;
    return v && *v ? v : NULL;
}

/* $XDG_<kind>_HOME/rampart/<leaf>, or ~/<fallback>/rampart/<leaf>. */
static error_code xdg_path(config_getenv_fn fn, void *ctx, const char *xdg_var,
                           const char *home_fallback, const char *leaf, char *out,
                           size_t size, error_info *err)
{
    const char *base = env(fn, ctx, xdg_var);
    const char *home = env(fn, ctx, "HOME");
    int n;
    if (base && base[0] == '/')
        n = snprintf(out, size, "%s/rampart/%s", base, leaf);
    else if (home)
        n = snprintf(out, size, "%s/%s/rampart/%s", home, home_fallback, leaf);
    else
        return error_set(err, ERROR_CONFIG,
                         "neither %s nor HOME is set: set RAMPART_DB to choose where the "
                         "database lives",
                         xdg_var);
    if (n < 0 || (size_t)n >= size)
        return error_set(err, ERROR_CONFIG, "%s path is too long", leaf);
    return ERROR_OK;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
    return s;
}

/* "db, api_url, …": every setting's file key, for the message of an unknown one. */
static const char *known_keys(void)
{
    static char list[512];
    if (!list[0]) {
        size_t n = 0;
        for (int k = 0; k < CONFIG_KEY_COUNT; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                  settings[k].file_key);
    }
    return list;
}

static bool lookup_key(const char *name, config_key *out)
{
    for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
        if (strcmp(name, settings[k].file_key) == 0) {
            *out = (config_key)k;
            return true;
        }
    }
    return false;
}

/* Strip one pair of double quotes around a value. */
static error_code unquote(char **value, const char *path, int line, error_info *err)
{
    char *v = *value;
    size_t len = strlen(v);
    if (v[0] != '"')
        return ERROR_OK;
    if (len < 2 || v[len - 1] != '"')
        return error_set(err, ERROR_FORMAT, "%s:%d: unterminated quoted value", path, line);
    v[len - 1] = '\0';
    *value = v + 1;
    return ERROR_OK;
}

static error_code parse_line(config *cfg, char *text, const char *path, int line,
                             error_info *err)
{
    char *s = trim(text);
    if (!*s || *s == '#')
        return ERROR_OK;
    char *eq = strchr(s, '=');
    if (!eq)
        return error_set(err, ERROR_FORMAT, "%s:%d: expected 'key = value'", path, line);
    *eq = '\0';
    char *name = trim(s);
    char *value = trim(eq + 1);
    config_key key;
    if (!lookup_key(name, &key))
        return error_set(err, ERROR_FORMAT,
                         "%s:%d: unknown setting '%.40s' (known: %s)", path, line, name,
                         known_keys());
    if (unquote(&value, path, line, err) != ERROR_OK)
        return ERROR_FORMAT;
    if (config_set(cfg, key, value, CONFIG_SRC_FILE, err) != ERROR_OK) {
        error_prefix(err, "%s:%d", path, line);
        return err->code;
    }
    return ERROR_OK;
}

/*
 * Whoever can write the config file can point api_url elsewhere and collect the
 * key from the environment: refuse a file others may write, whatever it holds.
 * A file holding the key must also be unreadable by others. The rules are
 * fileperm's, the same as for the cache and the agent's key.
 */
static error_code check_file_safety(int fd, const config *cfg, error_info *err)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return error_set(err, ERROR_IO, "cannot stat %s: %s", cfg->config_path,
                         strerror(errno));
    bool holds_key =
        cfg->values[CONFIG_API_KEY][0] && cfg->sources[CONFIG_API_KEY] == CONFIG_SRC_FILE;
    return fileperm_check_stat(cfg->config_path, &sb,
                               holds_key ? FILEPERM_CONFIG_KEY : FILEPERM_CONFIG, err);
}

static error_code read_all(int fd, char *buf, size_t cap, size_t *len, const char *path,
                           error_info *err)
{
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return error_set(err, ERROR_IO, "cannot read %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        used += (size_t)n;
        if (used == cap)
            return error_set(err, ERROR_FORMAT, "%s is larger than %zu bytes", path,
                             cap - 1);
    }
    buf[used] = '\0';
    *len = used;
    return ERROR_OK;
}

static error_code parse_text(config *cfg, char *text, size_t len, error_info *err)
{
    if (strlen(text) != len)
        return error_set(err, ERROR_FORMAT, "%s contains a NUL byte", cfg->config_path);
    int line = 1;
    for (char *s = text; s && *s; line++) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        if (parse_line(cfg, s, cfg->config_path, line, err) != ERROR_OK)
            return err->code;
        s = nl ? nl + 1 : NULL;
    }
    return ERROR_OK;
}

static error_code load_file(config *cfg, bool must_exist, error_info *err)
{
    /* Symlinks are followed (dotfile setups): the checks apply to the file itself. */
    int fd = open(cfg->config_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && !must_exist)
        return ERROR_OK;
    if (fd < 0 && errno == ENOENT)
        return error_set(err, ERROR_CONFIG, "RAMPART_CONFIG names %s, which does not exist",
                         cfg->config_path);
    if (fd < 0)
        return error_set(err, ERROR_IO, "cannot open %s: %s", cfg->config_path,
                         strerror(errno));
    cfg->config_file_found = true;
    char *text = malloc(CONFIG_FILE_MAX);
    if (!text) {
        close(fd);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    size_t len = 0;
    error_code rc = read_all(fd, text, CONFIG_FILE_MAX, &len, cfg->config_path, err);
    if (rc == ERROR_OK)
        rc = parse_text(cfg, text, len, err);
    if (rc == ERROR_OK)
        rc = check_file_safety(fd, cfg, err);
    model_wipe(text, CONFIG_FILE_MAX);
    free(text);
    close(fd);
    return rc;
}

static error_code apply_env(config *cfg, config_getenv_fn fn, void *ctx, error_info *err)
{
    for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
        const char *v = env(fn, ctx, settings[k].env);
        if (v && config_set(cfg, (config_key)k, v, CONFIG_SRC_ENV, err) != ERROR_OK) {
            error_prefix(err, "%s", settings[k].env);
            return err->code;
        }
    }
    return ERROR_OK;
}

error_code config_load(config *cfg, config_getenv_fn getenv_fn, void *ctx,
                       error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch; /* error_prefix needs somewhere to keep the code */
    memset(cfg, 0, sizeof *cfg);
    for (int k = 0; k < CONFIG_KEY_COUNT; k++)
        model_copy_text(cfg->values[k], sizeof cfg->values[k], settings[k].fallback);

    const char *explicit_path = env(getenv_fn, ctx, "RAMPART_CONFIG");
    if (explicit_path) {
        if (!model_copy_text(cfg->config_path, sizeof cfg->config_path, explicit_path))
            return error_set(err, ERROR_CONFIG, "RAMPART_CONFIG path is too long");
    } else if (xdg_path(getenv_fn, ctx, "XDG_CONFIG_HOME", ".config", "config",
                        cfg->config_path, sizeof cfg->config_path, NULL) != ERROR_OK) {
        cfg->config_path[0] = '\0'; /* no HOME: no config file, which is allowed */
    }
    if (cfg->config_path[0] && load_file(cfg, explicit_path != NULL, err) != ERROR_OK)
        return err->code;
    if (apply_env(cfg, getenv_fn, ctx, err) != ERROR_OK)
        return err->code;
    /* No HOME and no RAMPART_DB: left empty, so a --db flag can still supply it. */
    if (!cfg->values[CONFIG_DB][0])
        xdg_path(getenv_fn, ctx, "XDG_DATA_HOME", ".local/share", "rampart.db",
                 cfg->values[CONFIG_DB], sizeof cfg->values[CONFIG_DB], NULL);
    return ERROR_OK;
}

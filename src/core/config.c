/* config: the table of settings, their checks and values, and the key; see
 * rampart/config.h. Loading a profile (file, environment) is config_load.c's. */
#include "rampart/duration.h"
#include "rampart/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_internal.h"
#include "rampart/keycmd.h"
#include "rampart/model.h"
#include "rampart/url.h"
#include "rampart/validate.h"
#include "rampart/words.h"

/* One row per setting: file key, environment variable, default value, and for a
 * whole number its range and what it counts (`unit` NULL: a text setting). Every
 * row may appear at the top of the config file and in any profile's section. */
static const struct {
    const char *file_key;
    const char *env;
    const char *fallback;
    long min, max;
    const char *unit;
    bool duration; /* a whole number with `unit`, or a duration ("24h", "30d") */
} settings[CONFIG_KEY_COUNT] = {
    [CONFIG_DB] = {"db", "RAMPART_DB", "", 0, 0, NULL, false},
    [CONFIG_API_URL] = {"api_url", "RAMPART_API_URL", "", 0, 0, NULL, false},
    [CONFIG_API_KEY] = {"api_key", "RAMPART_API_KEY", "", 0, 0, NULL, false},
    [CONFIG_KEY_COMMAND] = {"key_command", "RAMPART_KEY_COMMAND", "", 0, 0, NULL, false},
    [CONFIG_KEY_COMMAND_TIMEOUT] = {"key_command_timeout", "RAMPART_KEY_COMMAND_TIMEOUT", "10",
                                    1, 3600, "seconds", false},
    [CONFIG_VERSION_HEADER] = {"version_header", "RAMPART_VERSION_HEADER", "Service-Version",
                               0, 0, NULL, false},
    [CONFIG_RATE] = {"rate", "RAMPART_RATE", "120", 0, 100000,
                     "requests per window (0: unpaced)", false},
    [CONFIG_WINDOW] = {"window", "RAMPART_WINDOW", "60", 1, 3600, "seconds", false},
    [CONFIG_SHARE] = {"share", "RAMPART_SHARE", "80", 1, 100, "percent of the budget", false},
    [CONFIG_GIVE_UP] = {"give_up_windows", "RAMPART_GIVE_UP_WINDOWS", "2", 1, 100,
                        "windows", false},
    [CONFIG_TIMEOUT] = {"timeout", "RAMPART_TIMEOUT", "0", 0, 604800,
                        "seconds (0: no deadline)", false},
    [CONFIG_LOW_SPEED] = {"low_speed", "RAMPART_LOW_SPEED", "10", 0, 1000000000,
                          "bytes per second (0: no limit)", false},
    [CONFIG_LOW_SPEED_TIME] = {"low_speed_time", "RAMPART_LOW_SPEED_TIME", "20", 1, 3600,
                               "seconds", false},
    [CONFIG_MAX_BACKOFF] = {"max_backoff", "RAMPART_MAX_BACKOFF", "30", 1, 3600, "seconds", false},
    [CONFIG_LISTING_MAX] = {"listing_max", "RAMPART_LISTING_MAX", "10000000", 1000,
                            1000000000, "objects", false},
    [CONFIG_AUTO_PULL] = {"auto_pull", "RAMPART_AUTO_PULL", "300", 0, 604800,
                          "seconds (0: off)", false},
    [CONFIG_PROFILE_COLOR] = {"profile_color", "RAMPART_PROFILE_COLOR", "none", 0, 0, NULL, false},
    [CONFIG_READ_ONLY] = {"read_only", "RAMPART_READ_ONLY", "false", 0, 0, NULL, false},
    [CONFIG_IMPACT_LOG] = {"impact_log", "RAMPART_IMPACT_LOG", "", 0, 0, NULL, false},
    [CONFIG_MIRROR_MAX_AGE] = {"mirror_max_age", "RAMPART_MIRROR_MAX_AGE", "30", 0, 86400,
                               "seconds (0: caches revalidate every time)", false},
    [CONFIG_POLICY] = {"policy", "RAMPART_POLICY", "", 0, 0, NULL, false},
    [CONFIG_ROTATE_GRACE] = {"rotate_grace", "RAMPART_ROTATE_GRACE", "24h", 0, DURATION_MAX,
                             "seconds", true},
    [CONFIG_ROTATE_QUIET] = {"rotate_quiet", "RAMPART_ROTATE_QUIET", "1h", 1, DURATION_MAX,
                             "seconds", true},
    [CONFIG_ROTATE_KEEP] = {"rotate_keep", "RAMPART_ROTATE_KEEP", "30d", 1, DURATION_MAX,
                            "seconds", true},
    [CONFIG_ROTATE_EXEC] = {"rotate_exec", "RAMPART_ROTATE_EXEC", "", 0, 0, NULL, false},
};

const char *config_key_name(config_key key) { return settings[key].file_key; }
const char *config_env_name(config_key key) { return settings[key].env; }

const char *config_source_name(config_source source)
{
    static const char *const names[] = {
        [CONFIG_SRC_DEFAULT] = "default",
        [CONFIG_SRC_FILE] = "config file",
        [CONFIG_SRC_PROFILE] = "profile section",
        [CONFIG_SRC_ENV] = "environment",
        [CONFIG_SRC_FLAG] = "flag",
        [CONFIG_SRC_SANDBOX] = "sandbox",
        [CONFIG_SRC_COMMAND] = "key_command",
    };
    return names[source];
}

const char *config_get(const config *cfg, config_key key) { return cfg->values[key]; }

const char *config_profile(const config *cfg)
{
    return cfg->profile[0] ? cfg->profile : CONFIG_DEFAULT_PROFILE;
}

bool config_remote_configured(const config *cfg)
{
    return cfg->values[CONFIG_API_URL][0] &&
           (cfg->values[CONFIG_API_KEY][0] || cfg->values[CONFIG_KEY_COMMAND][0]);
}

void config_clear(config *cfg)
{
    model_wipe(cfg->values[CONFIG_API_KEY], sizeof cfg->values[CONFIG_API_KEY]);
}

void config_defaults(config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (int k = 0; k < CONFIG_KEY_COUNT; k++)
        model_copy_text(cfg->values[k], sizeof cfg->values[k], settings[k].fallback);
}

bool config_profile_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > CONFIG_PROFILE_NAME_MAX)
        return false;
    for (const char *p = name; *p; p++) {
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return false;
    }
    return true;
}

/* A duration setting ("24h", or seconds) within its row's range. */
static error_code check_duration(config_key key, const char *value, long long *out,
                                 error_info *err)
{
    long long n = 0;
    if (duration_parse(value, settings[key].file_key, &n, err) != ERROR_OK)
        return ERROR_INVALID;
    if (n < settings[key].min || n > settings[key].max)
        return error_set(err, ERROR_INVALID, "%s must be from %ld to %ld %s, not '%.40s'",
                         settings[key].file_key, settings[key].min, settings[key].max,
                         settings[key].unit, value);
    *out = n;
    return ERROR_OK;
}

/* A whole-number setting within its row's range. */
static error_code check_number(config_key key, const char *value, error_info *err)
{
    long long ignored;
    if (settings[key].duration)
        return check_duration(key, value, &ignored, err);
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
    long long d = 0;
    if (settings[key].duration)
        return check_duration(key, cfg->values[key], &d, NULL) == ERROR_OK ? (long)d
                                                                          : settings[key].min;
    long n = strtol(cfg->values[key], NULL, 10);
    return n < settings[key].min ? settings[key].min : n;
}

bool config_flag(const config *cfg, config_key key)
{
    return strcmp(cfg->values[key], "true") == 0;
}

static const char *const color_names[CONFIG_COLORS] = {"none", "red", "green", "yellow",
                                                        "blue", "magenta", "cyan"};

int config_color(const config *cfg, config_key key)
{
    for (int i = 0; i < CONFIG_COLORS; i++) {
        if (strcmp(cfg->values[key], color_names[i]) == 0)
            return i;
    }
    return 0;
}

/* A colour's name, any case, kept in lower case (*canon: the table's own text). */
static error_code check_color(config_key key, const char *value, const char **canon,
                              error_info *err)
{
    for (int i = 0; i < CONFIG_COLORS; i++) {
        if (strcasecmp(value, color_names[i]) == 0) {
            *canon = color_names[i];
            return ERROR_OK;
        }
    }
    return error_set(err, ERROR_INVALID, "%s must be one of none, red, green, yellow, blue, "
                     "magenta, cyan, not '%.40s'", settings[key].file_key, value);
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

static error_code check_header_name(const char *value, error_info *err)
{
    if (!*value)
        return error_set(err, ERROR_INVALID, "version_header must not be empty");
    /* An HTTP header name is a token: no spaces, colons or controls. */
    for (const char *p = value; *p; p++) {
        if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
            return error_set(err, ERROR_INVALID,
                             "version_header '%.60s' is not a valid HTTP header name", value);
    }
    return ERROR_OK;
}

/* A command must split into words (closed quotes) now, not when it runs. */
static error_code check_command(config_key key, const char *value, error_info *err)
{
    if (!*value)
        return ERROR_OK;
    words w;
    if (words_split(value, &w, err) != ERROR_OK)
        return error_prefix(err, "%s", settings[key].file_key);
    words_free(&w);
    return ERROR_OK;
}

error_code config_check_value(config_key key, const char *value, error_info *err)
{
    if (settings[key].unit)
        return check_number(key, value, err);
    switch (key) {
    case CONFIG_API_URL: return check_url(value, err);
    case CONFIG_VERSION_HEADER: return check_header_name(value, err);
    case CONFIG_KEY_COMMAND:
    case CONFIG_ROTATE_EXEC: return check_command(key, value, err);
    case CONFIG_POLICY: /* empty: no default policy */
        return *value ? validate_id(value, "ipp", "policy (an IP policy id)", err) : ERROR_OK;
    case CONFIG_READ_ONLY: {
        const char *canon;
        return check_flag(key, value, &canon, err);
    }
    case CONFIG_PROFILE_COLOR: {
        const char *canon;
        return check_color(key, value, &canon, err);
    }
    default: return ERROR_OK;
    }
}

/* api_key and key_command are two answers to one question: the one set last (the
 * higher level) takes the other's place. */
static void drop_rival(config *cfg, config_key key, const char *value)
{
    config_key rival = key == CONFIG_API_KEY ? CONFIG_KEY_COMMAND : CONFIG_API_KEY;
    if ((key != CONFIG_API_KEY && key != CONFIG_KEY_COMMAND) || !*value)
        return;
    model_wipe(cfg->values[rival], sizeof cfg->values[rival]);
    cfg->sources[rival] = CONFIG_SRC_DEFAULT;
}

error_code config_set(config *cfg, config_key key, const char *value,
                      config_source source, error_info *err)
{
    if (key == CONFIG_API_KEY && source == CONFIG_SRC_FLAG)
        return error_set(err, ERROR_CONFIG,
                         "the API key is never taken from the command line (every user "
                         "can read it there): set RAMPART_API_KEY, or api_key or "
                         "key_command in the config file");
    if (key == CONFIG_READ_ONLY && check_flag(key, value, &value, err) != ERROR_OK)
        return ERROR_INVALID;
    if (key == CONFIG_PROFILE_COLOR && check_color(key, value, &value, err) != ERROR_OK)
        return ERROR_INVALID;
    if (config_check_value(key, value, err) != ERROR_OK)
        return ERROR_INVALID;
    if (!model_copy_text(cfg->values[key], sizeof cfg->values[key], value))
        return error_set(err, ERROR_INVALID, "%s is longer than %zu bytes",
                         settings[key].file_key, sizeof cfg->values[key] - 1);
    cfg->sources[key] = source;
    drop_rival(cfg, key, value);
    return ERROR_OK;
}

const char *config_known_keys(void)
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

bool config_lookup_key(const char *name, config_key *out)
{
    for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
        if (strcmp(name, settings[k].file_key) == 0) {
            *out = (config_key)k;
            return true;
        }
    }
    return false;
}

error_code config_copy_flags(config *dst, const config *src, error_info *err)
{
    for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
        if (src->sources[k] == CONFIG_SRC_FLAG &&
            config_set(dst, (config_key)k, src->values[k], CONFIG_SRC_FLAG, err) != ERROR_OK)
            return err ? err->code : ERROR_INVALID;
    }
    return ERROR_OK;
}

error_code config_resolve_key(config *cfg, bool quiet, error_info *err)
{
    if (cfg->values[CONFIG_API_KEY][0] || !cfg->values[CONFIG_KEY_COMMAND][0] ||
        !cfg->values[CONFIG_API_URL][0])
        return ERROR_OK;
    error_info e = {0};
    double deadline = (double)config_number(cfg, CONFIG_KEY_COMMAND_TIMEOUT);
    if (keycmd_run(cfg->values[CONFIG_KEY_COMMAND], quiet, deadline,
                   cfg->values[CONFIG_API_KEY], sizeof cfg->values[CONFIG_API_KEY],
                   &e) != ERROR_OK)
        return error_set(err, ERROR_CONFIG,
                         "profile %s: key_command '%.200s' gave no API key: %s%s",
                         config_profile(cfg), cfg->values[CONFIG_KEY_COMMAND], e.msg,
                         quiet ? " (run it in a shell to see why)" : "");
    cfg->sources[CONFIG_API_KEY] = CONFIG_SRC_COMMAND;
    return ERROR_OK;
}

bool config_secret_env_entry(const char *entry)
{
    const char *names[] = {settings[CONFIG_API_KEY].env, CONFIG_SERVE_KEY_ENV};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(entry, names[i], n) == 0 && entry[n] == '=')
            return true;
    }
    return false;
}

void config_scrub_secret_env(void)
{
    unsetenv(settings[CONFIG_API_KEY].env);
    unsetenv(CONFIG_SERVE_KEY_ENV);
}

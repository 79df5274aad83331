/*
 * config: where rampart keeps its data and how it reaches the remote API.
 *
 * Contract:
 * - Precedence, lowest first: built-in defaults < config file < environment
 *   variables < command-line flags. config_load applies the first three; the
 *   caller applies flags afterwards with config_set (source CONFIG_SRC_FLAG).
 * - Paths follow XDG: database $XDG_DATA_HOME/rampart/rampart.db (default
 *   ~/.local/share/...), config file $XDG_CONFIG_HOME/rampart/config (default
 *   ~/.config/...). RAMPART_CONFIG names another config file.
 * - The config file is lines of `key = value`; `#` starts a comment line; values
 *   may be wrapped in double quotes. Unknown keys and malformed lines are
 *   ERROR_FORMAT with the file and line number. Keys: db, api_url, api_key,
 *   version_header, and the whole numbers rate, window, share, give_up_windows,
 *   timeout, low_speed, low_speed_time, max_backoff, auto_pull, mirror_max_age
 *   (config_key says what each is; config_set checks each against its range),
 *   and the switch read_only (true/false, yes/no, on/off, 1/0, any case; kept as
 *   "true" or "false": config_flag reads it).
 * - A config file that other users can write (or that belongs to another user
 *   than the caller or root) is refused: whoever can change api_url can collect
 *   the key. One that holds api_key must also be unreadable by group and others.
 *   Both refusals are ERROR_CONFIG and say which chmod fixes it (fileperm.h: the
 *   same rules and messages as for the cache and the agent's key).
 * - api_url must pass url_check_api_base (rampart/url.h), the same check the
 *   API client makes: https://, or http:// to a loopback host (127.x, localhost,
 *   [::1]) so a local test server works; never with a user:password part, a
 *   query or a fragment.
 * - Without HOME (and XDG_*_HOME) there is no config file, and the database path
 *   stays empty unless RAMPART_DB or a flag gives one. The API key is accepted from the file or RAMPART_API_KEY only, never from
 *   argv (argv is visible to every user of the machine).
 * - Environment is read through a caller-supplied lookup (getenv in the program,
 *   a table in tests), so loading has no hidden inputs.
 * - config values are plain data; config_clear wipes the API key.
 */
#ifndef RAMPART_CONFIG_H
#define RAMPART_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

#define CONFIG_PATH_MAX 4096
#define CONFIG_VALUE_MAX 1024

typedef enum config_source {
    CONFIG_SRC_DEFAULT,
    CONFIG_SRC_FILE,
    CONFIG_SRC_ENV,
    CONFIG_SRC_FLAG,
    CONFIG_SRC_SANDBOX /* set by --sandbox for its private server (may hold the key) */
} config_source;

typedef enum config_key {
    CONFIG_DB,
    CONFIG_API_URL,
    CONFIG_API_KEY,
    CONFIG_VERSION_HEADER,
    CONFIG_RATE,          /* the account's budget: requests per window */
    CONFIG_WINDOW,        /* the budget's rolling window, seconds */
    CONFIG_SHARE,         /* percent of the budget a sync uses (the rest: other clients) */
    CONFIG_GIVE_UP,       /* 429s with no progress for this many windows stop a sync */
    CONFIG_TIMEOUT,       /* a whole sync's deadline, seconds; 0: none */
    CONFIG_LOW_SPEED,     /* a reply slower than this many bytes/s ... */
    CONFIG_LOW_SPEED_TIME, /* ... for this many seconds is a timeout */
    CONFIG_MAX_BACKOFF,   /* the longest pause after a failure, seconds */
    CONFIG_AUTO_PULL,     /* an idle console pulls this often, seconds; 0: never */
    CONFIG_READ_ONLY,     /* "true": the remote is a hub's mirror: pull only, no
                             local change (a follower of a fleet) */
    CONFIG_MIRROR_MAX_AGE, /* how long caches may reuse the agent's mirror replies,
                              seconds; 0: revalidate every time */
    CONFIG_KEY_COUNT
} config_key;

typedef struct config {
    char values[CONFIG_KEY_COUNT][CONFIG_VALUE_MAX];
    config_source sources[CONFIG_KEY_COUNT];
    char config_path[CONFIG_PATH_MAX]; /* the file consulted (may not exist) */
    bool config_file_found;
} config;

/* Returns the value of environment variable `name`, or NULL. */
typedef const char *(*config_getenv_fn)(void *ctx, const char *name);

/*
 * Fill `cfg` from defaults, the config file and the environment. A missing config
 * file is fine; an unreadable, malformed or unsafe one is an error.
 */
error_code config_load(config *cfg, config_getenv_fn getenv_fn, void *ctx,
                       error_info *err);

/* Set a value from `source` (flags). ERROR_INVALID for a bad value, e.g. a rate
 * that is not a whole number 0..100000 (the message names the setting, its unit
 * and range); ERROR_CONFIG for CONFIG_API_KEY from a flag. */
error_code config_set(config *cfg, config_key key, const char *value,
                      config_source source, error_info *err);

/* The value of `key` ("" when unset). */
const char *config_get(const config *cfg, config_key key);

/* A whole-number setting's value (checked when set; its minimum if unset). */
long config_number(const config *cfg, config_key key);

/* A switch's value (read_only): true when set to one of the words for true. */
bool config_flag(const config *cfg, config_key key);

/* Settings-file/env-var names of a key ("api_url", "RAMPART_API_URL"). */
const char *config_key_name(config_key key);
const char *config_env_name(config_key key);

/* "default", "config file", "environment", "flag", "sandbox". */
const char *config_source_name(config_source source);

/* True when both an API URL and an API key are set. */
bool config_remote_configured(const config *cfg);

/* Wipe the API key. */
void config_clear(config *cfg);

#endif

/*
 * config: where rampart keeps its data and how it reaches the remote API, per
 * profile (a named account: its own remote, key source and cache).
 *
 * - Precedence, lowest first: built-in defaults < the config file's top level <
 *   the selected profile's section < environment < flags. config_load_profile
 *   applies the first four; the caller applies flags with config_set.
 * - Paths follow XDG: the database $XDG_DATA_HOME/rampart/rampart.db (a named
 *   profile's: rampart-NAME.db beside it), the file $XDG_CONFIG_HOME/rampart/config
 *   (RAMPART_CONFIG names another). Without HOME there is no file and no database
 *   unless RAMPART_DB or a flag names one.
 * - The file is lines of `key = value` (`#` comment lines, values may be in double
 *   quotes) and `[profile.NAME]` sections; the keys are config_key's, one table
 *   valid at the top level and in every section, each value checked against its
 *   range whether its section is selected or not. Unknown keys and malformed lines
 *   are ERROR_FORMAT with the file and line.
 * - The key comes from api_key, RAMPART_API_KEY or key_command (rampart/keycmd.h,
 *   run only by config_resolve_key), never from argv. A file others can write, or
 *   that holds api_key and others can read, is ERROR_CONFIG naming the chmod that
 *   fixes it (fileperm.h). api_url must pass url_check_api_base (rampart/url.h).
 * - The environment is read through the caller's lookup (no hidden inputs);
 *   config values are plain data; config_clear wipes the API key.
 */
#ifndef RAMPART_CONFIG_H
#define RAMPART_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

#define CONFIG_PATH_MAX 4096
#define CONFIG_VALUE_MAX 1024
#define CONFIG_PROFILE_NAME_MAX 64
#define CONFIG_PROFILES_MAX 64

typedef enum config_source {
    CONFIG_SRC_DEFAULT,
    CONFIG_SRC_FILE,    /* the config file's top-level settings */
    CONFIG_SRC_PROFILE, /* the selected profile's section of the config file */
    CONFIG_SRC_ENV,
    CONFIG_SRC_FLAG,
    CONFIG_SRC_SANDBOX, /* set by --sandbox for its private server (may hold the key) */
    CONFIG_SRC_COMMAND  /* the API key, printed by key_command (config_resolve_key) */
} config_source;

typedef enum config_key {
    CONFIG_DB,
    CONFIG_API_URL,
    CONFIG_API_KEY,
    CONFIG_KEY_COMMAND,   /* a command that prints the API key (rampart/keycmd.h) */
    CONFIG_KEY_COMMAND_TIMEOUT, /* its deadline, seconds */
    CONFIG_VERSION_HEADER,
    CONFIG_RATE,          /* the account's budget: requests per window */
    CONFIG_WINDOW,        /* the budget's rolling window, seconds */
    CONFIG_SHARE,         /* percent of the budget a sync uses (the rest: other clients) */
    CONFIG_GIVE_UP,       /* 429s with no progress for this many windows stop a sync */
    CONFIG_TIMEOUT,       /* a whole sync's deadline, seconds; 0: none */
    CONFIG_LOW_SPEED,     /* a reply slower than this many bytes/s ... */
    CONFIG_LOW_SPEED_TIME, /* ... for this many seconds is a timeout */
    CONFIG_MAX_BACKOFF,   /* the longest pause after a failure, seconds */
    CONFIG_LISTING_MAX,   /* objects one listing may hold */
    CONFIG_AUTO_PULL,     /* an idle console pulls this often, seconds; 0: never */
    CONFIG_PROFILE_COLOR, /* the colour of the profile's name in the console's header:
                             one of config_color's names (config_color) */
    CONFIG_READ_ONLY,     /* "true": the remote is a hub's mirror: pull only, no
                             local change (a follower of a fleet) */
    CONFIG_IMPACT_LOG,    /* access logs (words: paths) the console's pending view
                             reads to say whom the queue would flip; "": none */
    CONFIG_MIRROR_MAX_AGE, /* how long caches may reuse the agent's mirror replies,
                              seconds; 0: revalidate every time */
    CONFIG_POLICY,        /* the IP policy (ipp_…) a rule command works on without
                             --policy ("": none); never a listing's filter */
    CONFIG_ROTATE_GRACE,  /* a rotation's default grace period (a duration) */
    CONFIG_ROTATE_QUIET,  /* how long the old token must not be handed out before it
                             retires (a duration) */
    CONFIG_ROTATE_KEEP,   /* how long a retired rotation's link is kept (a duration) */
    CONFIG_ROTATE_EXEC,   /* the default command run once a successor is held */
    CONFIG_KEY_COUNT
} config_key;

typedef struct config {
    char values[CONFIG_KEY_COUNT][CONFIG_VALUE_MAX];
    config_source sources[CONFIG_KEY_COUNT];
    char config_path[CONFIG_PATH_MAX]; /* the file consulted (may not exist) */
    bool config_file_found;
    bool config_file_holds_key; /* api_key in some section of it (mode 600 then) */
    char profile[CONFIG_PROFILE_NAME_MAX + 1]; /* the selected one; "" the default */
    bool profile_from_flag;     /* named by the caller (--profile), not RAMPART_PROFILE */
    /* The named profiles the file defines, in file order ("default" not among them). */
    char profiles[CONFIG_PROFILES_MAX][CONFIG_PROFILE_NAME_MAX + 1];
    int nprofiles;
    bool key_withheld;   /* the selected profile names its own api_url, and a key
                            from the top level or the environment was not given
                            to it (a profile's remote gets only its own key) */
} config;

/* Returns the value of environment variable `name`, or NULL. */
typedef const char *(*config_getenv_fn)(void *ctx, const char *name);

/*
 * Fill `cfg` from defaults, the config file (its top level, then the section of
 * `profile`) and the environment. `profile` NULL: RAMPART_PROFILE, else the
 * default profile; "default" is the top level. A missing config file is fine
 * (for the default profile); an unreadable, malformed or unsafe one, a bad
 * profile name or one the file does not define (ERROR_CONFIG naming those it
 * does) is an error. cfg->profile holds the name asked for even then.
 * A section runs to the next one or the end; `[profile.default]` or a section
 * given twice is ERROR_FORMAT. api_key and key_command in one section is
 * ERROR_FORMAT, both in the environment ERROR_CONFIG; the one set at a higher
 * level replaces the other from lower ones (a profile's key_command overrides a
 * top-level api_key, RAMPART_API_KEY any profile's key_command). Never runs
 * key_command.
 */
error_code config_load_profile(config *cfg, const char *profile, config_getenv_fn getenv_fn,
                               void *ctx, error_info *err);

/* config_load_profile with `profile` NULL. */
error_code config_load(config *cfg, config_getenv_fn getenv_fn, void *ctx,
                       error_info *err);

/* Whether `name` may name a profile: 1 to CONFIG_PROFILE_NAME_MAX of [A-Za-z0-9_-]. */
bool config_profile_name_valid(const char *name);

/* The selected profile's name: "default" for the top level. */
const char *config_profile(const config *cfg);

/* Apply to `dst` every value `src` took from a flag (source CONFIG_SRC_FLAG), as
 * the command line would: a profile loaded again keeps the user's --db. */
error_code config_copy_flags(config *dst, const config *src, error_info *err);

/*
 * The API key, now that a command needs it: with no key but a key_command, run it
 * (keycmd_run; `quiet`: its standard error to /dev/null) and keep what it printed
 * as the key (source CONFIG_SRC_COMMAND). ERROR_OK when a key is set afterwards
 * or no remote is configured; ERROR_CONFIG naming the profile, the command and
 * its exit status when it fails (never its output).
 */
error_code config_resolve_key(config *cfg, bool quiet, error_info *err);

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

/* The colours a profile may take (profile_color), in this order: "none", "red",
 * "green", "yellow", "blue", "magenta", "cyan". config_color gives the index of
 * the one set (0: none); a value is one of the names, any case (checked when set,
 * kept in lower case). */
enum { CONFIG_COLORS = 7 };
int config_color(const config *cfg, config_key key);

/* Settings-file/env-var names of a key ("api_url", "RAMPART_API_URL"). */
const char *config_key_name(config_key key);
const char *config_env_name(config_key key);

/* "default", "config file", "profile section", "environment", "flag", "sandbox",
 * "key_command". */
const char *config_source_name(config_source source);

/* True when an API URL is set and an API key or a key_command to print one. */
bool config_remote_configured(const config *cfg);

/* Wipe the API key. */
void config_clear(config *cfg);

/* The variable that gives serve-api its API key (never argv). */
#define CONFIG_SERVE_KEY_ENV "RAMPART_SERVE_API_KEY"

/* Unset the environment variables that may hold a secret (the API key's, the
 * reference server's key), in a child process that is to run a command that
 * needs none of them (export --exec). */
void config_scrub_secret_env(void);

/* Whether the environment entry "NAME=value" is one of those variables. */
bool config_secret_env_entry(const char *entry);

#endif

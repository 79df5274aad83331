/*
 * config_load: a profile's settings (config_load_profile, rampart/config.h):
 * defaults, the config file, the environment, through the table of config.c
 * (config_internal.h). The file is `key = value` lines, the settings before the
 * first section for every profile, then `[profile.NAME]` sections. Every line of
 * every section is checked, but only the top level and the section of the
 * selected profile are applied, in file order, so a section's value replaces
 * the top level's. Whether any section holds api_key decides the mode the file
 * must have.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_internal.h"
#include "rampart/fileperm.h"
#include "rampart/model.h"

/* ---- the config file ----------------------------------------------------- */

/* Biggest config file read: a hand-written settings file is a few kilobytes. */
enum { CONFIG_FILE_MAX = 64 * 1024 };

#define SECTION_PREFIX "profile."

/* Where the parser is: which section, and which key sources it set. */
typedef struct parse_state {
    config *cfg;
    const char *path;
    int line;
    bool in_section;  /* past the first [profile.NAME] line */
    bool applied;     /* the current section is the top level or the selected one */
    bool has_key, has_command; /* api_key, key_command in the current section */
} parse_state;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
    return s;
}

/* Strip one pair of double quotes around a value. */
static error_code unquote(char **value, const parse_state *ps, error_info *err)
{
    char *v = *value;
    size_t len = strlen(v);
    if (v[0] != '"')
        return ERROR_OK;
    if (len < 2 || v[len - 1] != '"')
        return error_set(err, ERROR_FORMAT, "%s:%d: unterminated quoted value", ps->path,
                         ps->line);
    v[len - 1] = '\0';
    *value = v + 1;
    return ERROR_OK;
}

static bool known_profile(const config *cfg, const char *name)
{
    for (int i = 0; i < cfg->nprofiles; i++) {
        if (strcmp(cfg->profiles[i], name) == 0)
            return true;
    }
    return false;
}

/* A `[profile.NAME]` line (`s` trimmed, starting with '['). */
static error_code section(parse_state *ps, char *s, error_info *err)
{
    size_t len = strlen(s);
    config *cfg = ps->cfg;
    if (s[len - 1] != ']')
        return error_set(err, ERROR_FORMAT, "%s:%d: a section line is [profile.NAME]",
                         ps->path, ps->line);
    s[len - 1] = '\0';
    char *inner = trim(s + 1);
    if (strncmp(inner, SECTION_PREFIX, strlen(SECTION_PREFIX)) != 0)
        return error_set(err, ERROR_FORMAT,
                         "%s:%d: unknown section [%.40s]: the only sections are "
                         "[profile.NAME]",
                         ps->path, ps->line, inner);
    const char *name = inner + strlen(SECTION_PREFIX);
    if (!config_profile_name_valid(name))
        return error_set(err, ERROR_FORMAT,
                         "%s:%d: '%.80s' is not a profile name: 1 to %d letters, digits, '-' "
                         "or '_'",
                         ps->path, ps->line, name, CONFIG_PROFILE_NAME_MAX);
    if (strcmp(name, "default") == 0)
        return error_set(err, ERROR_FORMAT,
                         "%s:%d: [profile.default] is not a section: the settings before "
                         "the first section are the default profile",
                         ps->path, ps->line);
    if (known_profile(cfg, name))
        return error_set(err, ERROR_FORMAT, "%s:%d: [profile.%s] is given twice", ps->path,
                         ps->line, name);
    if (cfg->nprofiles == CONFIG_PROFILES_MAX)
        return error_set(err, ERROR_FORMAT, "%s:%d: more than %d profiles", ps->path,
                         ps->line, CONFIG_PROFILES_MAX);
    model_copy_text(cfg->profiles[cfg->nprofiles++], sizeof cfg->profiles[0], name);
    ps->in_section = true;
    ps->applied = strcmp(name, cfg->profile) == 0;
    ps->has_key = ps->has_command = false;
    return ERROR_OK;
}

/* api_key and key_command are two answers to one question: one per section. */
static error_code note_key_source(parse_state *ps, config_key key, const char *value,
                                  error_info *err)
{
    if (key == CONFIG_API_KEY && *value) {
        ps->has_key = true;
        ps->cfg->config_file_holds_key = true;
    }
    if (key == CONFIG_KEY_COMMAND && *value)
        ps->has_command = true;
    if (ps->has_key && ps->has_command)
        return error_set(err, ERROR_FORMAT,
                         "%s:%d: api_key and key_command are both set in %s: keep one",
                         ps->path, ps->line, ps->in_section ? "this profile's section"
                                                            : "the top-level settings");
    return ERROR_OK;
}

static error_code setting(parse_state *ps, char *s, error_info *err)
{
    char *eq = strchr(s, '=');
    if (!eq)
        return error_set(err, ERROR_FORMAT, "%s:%d: expected 'key = value'", ps->path,
                         ps->line);
    *eq = '\0';
    char *name = trim(s);
    char *value = trim(eq + 1);
    config_key key;
    if (!config_lookup_key(name, &key))
        return error_set(err, ERROR_FORMAT, "%s:%d: unknown setting '%.40s' (known: %s)",
                         ps->path, ps->line, name, config_known_keys());
    if (unquote(&value, ps, err) != ERROR_OK || note_key_source(ps, key, value, err) != ERROR_OK)
        return ERROR_FORMAT;
    error_code rc = ps->applied ? config_set(ps->cfg, key, value,
                                             ps->in_section ? CONFIG_SRC_PROFILE
                                                            : CONFIG_SRC_FILE,
                                             err)
                                : config_check_value(key, value, err);
    if (rc != ERROR_OK)
        return error_prefix(err, "%s:%d", ps->path, ps->line);
    return ERROR_OK;
}

static error_code parse_line(parse_state *ps, char *text, error_info *err)
{
    char *s = trim(text);
    if (!*s || *s == '#')
        return ERROR_OK;
    return *s == '[' ? section(ps, s, err) : setting(ps, s, err);
}

/*
 * Whoever can write the config file can point api_url elsewhere and collect the
 * key from the environment: refuse a file others may write, whatever it holds.
 * A file holding a key (in any profile's section) must also be unreadable by
 * others. The rules are fileperm's, the same as for the cache and the agent's key.
 */
static error_code check_file_safety(int fd, const config *cfg, error_info *err)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return error_set(err, ERROR_IO, "cannot stat %s: %s", cfg->config_path,
                         strerror(errno));
    return fileperm_check_stat(cfg->config_path, &sb,
                               cfg->config_file_holds_key ? FILEPERM_CONFIG_KEY
                                                          : FILEPERM_CONFIG,
                               err);
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
    parse_state ps = {.cfg = cfg, .path = cfg->config_path, .applied = true};
    for (char *s = text; s && *s;) {
        ps.line++;
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        if (parse_line(&ps, s, err) != ERROR_OK)
            return err->code;
        s = nl ? nl + 1 : NULL;
    }
    return ERROR_OK;
}

/*
 * Read cfg->config_path: every line checked; the top-level settings set with
 * source CONFIG_SRC_FILE, then those of the section of cfg->profile ("" none)
 * with CONFIG_SRC_PROFILE; cfg->profiles, cfg->config_file_found and
 * cfg->config_file_holds_key filled; then the file's owner and mode judged
 * (fileperm). A missing file is ERROR_OK unless `must_exist`.
 */
static error_code file_load(config *cfg, bool must_exist, error_info *err)
{
    /* Symlinks are followed (dotfile setups): the checks apply to the file itself.
     * O_NONBLOCK: a FIFO given as the config must not block the open; it is
     * refused at once as not a regular file (reading a regular file never blocks). */
    int fd = open(cfg->config_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT && !must_exist)
        return ERROR_OK;
    if (fd < 0 && errno == ENOENT)
        return error_set(err, ERROR_CONFIG, "RAMPART_CONFIG names %s, which does not exist",
                         cfg->config_path);
    if (fd < 0)
        return error_set(err, ERROR_IO, "cannot open %s: %s", cfg->config_path,
                         strerror(errno));
    cfg->config_file_found = true;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        close(fd);
        return fileperm_check_stat(cfg->config_path, &sb, FILEPERM_CONFIG, err);
    }
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

/* ---- a profile: defaults, the file, the environment ---------------------- */

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

static error_code apply_env(config *cfg, config_getenv_fn fn, void *ctx, error_info *err)
{
    if (env(fn, ctx, config_env_name(CONFIG_API_KEY)) &&
        env(fn, ctx, config_env_name(CONFIG_KEY_COMMAND)))
        return error_set(err, ERROR_CONFIG,
                         "both RAMPART_API_KEY and RAMPART_KEY_COMMAND are set: unset one");
    for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
        const char *v = env(fn, ctx, config_env_name((config_key)k));
        if (v && config_set(cfg, (config_key)k, v, CONFIG_SRC_ENV, err) != ERROR_OK) {
            error_prefix(err, "%s", config_env_name((config_key)k));
            return err->code;
        }
    }
    return ERROR_OK;
}

/* A profile that names its own remote sends it only its own key: the top
 * level's api_key or key_command (or one from the environment) is meant for the
 * top level's remote, and is withheld (cfg->key_withheld says so). */
static void own_key_only(config *cfg)
{
    if (cfg->sources[CONFIG_API_URL] != CONFIG_SRC_PROFILE)
        return;
    const config_key keys[] = {CONFIG_API_KEY, CONFIG_KEY_COMMAND};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        config_key k = keys[i];
        if (!cfg->values[k][0] || cfg->sources[k] == CONFIG_SRC_PROFILE ||
            cfg->sources[k] == CONFIG_SRC_FLAG)
            continue;
        model_wipe(cfg->values[k], sizeof cfg->values[k]);
        cfg->sources[k] = CONFIG_SRC_DEFAULT;
        cfg->key_withheld = true;
    }
}

/* The profile asked for, checked; "default" is the top level (""). */
static error_code select_profile(config *cfg, const char *profile, config_getenv_fn fn,
                                 void *ctx, error_info *err)
{
    cfg->profile_from_flag = profile != NULL;
    const char *name = profile ? profile : env(fn, ctx, "RAMPART_PROFILE");
    if (!name || strcmp(name, CONFIG_DEFAULT_PROFILE) == 0)
        return ERROR_OK;
    if (!config_profile_name_valid(name))
        return error_set(err, ERROR_CONFIG,
                         "%s'%.80s' is not a profile name: 1 to %d letters, digits, '-' or "
                         "'_'",
                         profile ? "" : "RAMPART_PROFILE: ", name, CONFIG_PROFILE_NAME_MAX);
    model_copy_text(cfg->profile, sizeof cfg->profile, name);
    return ERROR_OK;
}

/* "default, staging, prod": the profiles there are, for an unknown one's message. */
static void profile_list(const config *cfg, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "%s", CONFIG_DEFAULT_PROFILE);
    for (int i = 0; i < cfg->nprofiles && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, ", %s", cfg->profiles[i]);
}

static error_code check_profile_known(const config *cfg, error_info *err)
{
    if (!cfg->profile[0])
        return ERROR_OK;
    for (int i = 0; i < cfg->nprofiles; i++) {
        if (strcmp(cfg->profiles[i], cfg->profile) == 0)
            return ERROR_OK;
    }
    /* The environment is easy to forget: say so when the name came from there. */
    const char *from = cfg->profile_from_flag ? "" : "RAMPART_PROFILE: ";
    if (!cfg->config_file_found)
        return error_set(err, ERROR_CONFIG,
                         "%sunknown profile '%s': there is no config file (%s) to define it; "
                         "add a [profile.%s] section there (rampart(1), CONFIGURATION)",
                         from, cfg->profile, cfg->config_path[0] ? cfg->config_path : "no HOME",
                         cfg->profile);
    char names[CONFIG_PROFILES_MAX * (CONFIG_PROFILE_NAME_MAX + 2) + 16];
    profile_list(cfg, names, sizeof names);
    return error_set(err, ERROR_CONFIG, "%sunknown profile '%s' (profiles in %s: %s)", from,
                     cfg->profile, cfg->config_path, names);
}

/* The default cache: rampart.db, or rampart-NAME.db for a named profile, so two
 * accounts never share one. */
static void default_db(config *cfg, config_getenv_fn fn, void *ctx)
{
    char leaf[CONFIG_PROFILE_NAME_MAX + 16];
    if (cfg->profile[0])
        snprintf(leaf, sizeof leaf, "rampart-%s.db", cfg->profile);
    else
        snprintf(leaf, sizeof leaf, "rampart.db");
    xdg_path(fn, ctx, "XDG_DATA_HOME", ".local/share", leaf, cfg->values[CONFIG_DB],
             sizeof cfg->values[CONFIG_DB], NULL);
}

error_code config_load_profile(config *cfg, const char *profile, config_getenv_fn getenv_fn,
                               void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err); /* error_prefix needs somewhere to keep the code */
    config_defaults(cfg);
    if (select_profile(cfg, profile, getenv_fn, ctx, err) != ERROR_OK)
        return err->code;

    const char *explicit_path = env(getenv_fn, ctx, "RAMPART_CONFIG");
    if (explicit_path) {
        if (!model_copy_text(cfg->config_path, sizeof cfg->config_path, explicit_path))
            return error_set(err, ERROR_CONFIG, "RAMPART_CONFIG path is too long");
    } else if (xdg_path(getenv_fn, ctx, "XDG_CONFIG_HOME", ".config", "config",
                        cfg->config_path, sizeof cfg->config_path, NULL) != ERROR_OK) {
        cfg->config_path[0] = '\0'; /* no HOME: no config file, which is allowed */
    }
    if (cfg->config_path[0] && file_load(cfg, explicit_path != NULL, err) != ERROR_OK)
        return err->code;
    if (check_profile_known(cfg, err) != ERROR_OK)
        return err->code;
    if (apply_env(cfg, getenv_fn, ctx, err) != ERROR_OK)
        return err->code;
    own_key_only(cfg);
    /* No HOME and no RAMPART_DB: left empty, so a --db flag can still supply it. */
    if (!cfg->values[CONFIG_DB][0])
        default_db(cfg, getenv_fn, ctx);
    return ERROR_OK;
}

error_code config_load(config *cfg, config_getenv_fn getenv_fn, void *ctx,
                       error_info *err)
{
    return config_load_profile(cfg, NULL, getenv_fn, ctx, err);
}

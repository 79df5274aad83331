/*
 * config_internal: what config.c (the table of settings, precedence, the key)
 * and config_file.c (reading the file, its profile sections) share. Private to
 * src/core.
 */
#ifndef RAMPART_CONFIG_INTERNAL_H
#define RAMPART_CONFIG_INTERNAL_H

#include <stdbool.h>

#include "rampart/config.h"

/* The key whose file name is `name`; false when there is none. */
bool config_lookup_key(const char *name, config_key *out);

/* "db, api_url, …": every setting's file key, for the message of an unknown one. */
const char *config_known_keys(void);

/* Check `value` for `key` as config_set does, without setting it (the sections
 * of profiles that are not selected). */
error_code config_check_value(config_key key, const char *value, error_info *err);

/*
 * Read cfg->config_path: every line checked; the top-level settings set with
 * source CONFIG_SRC_FILE, then those of the section of cfg->profile ("" none)
 * with CONFIG_SRC_PROFILE; cfg->profiles, cfg->config_file_found and
 * cfg->config_file_holds_key filled; then the file's owner and mode judged
 * (fileperm). A missing file is ERROR_OK unless `must_exist`.
 */
error_code config_file_load(config *cfg, bool must_exist, error_info *err);

#endif

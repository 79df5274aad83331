/*
 * config_internal: what the loader (config_load.c: the file, the environment,
 * precedence) takes from the table of settings (config.c). Calls run one way:
 * config.c never calls the loader. Private to src/core.
 */
#ifndef RAMPART_CONFIG_INTERNAL_H
#define RAMPART_CONFIG_INTERNAL_H

#include <stdbool.h>

#include "rampart/config.h"

/* The top level's name as a profile. */
#define CONFIG_DEFAULT_PROFILE "default"

/* Zero `cfg`, then every value its default (source CONFIG_SRC_DEFAULT). */
void config_defaults(config *cfg);

/* The key whose file name is `name`; false when there is none. */
bool config_lookup_key(const char *name, config_key *out);

/* "db, api_url, …": every setting's file key, for the message of an unknown one. */
const char *config_known_keys(void);

/* Check `value` for `key` as config_set does, without setting it (the sections
 * of profiles that are not selected). */
error_code config_check_value(config_key key, const char *value, error_info *err);

#endif

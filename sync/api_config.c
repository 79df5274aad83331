/* Checks of an api_config before a client is made (no transport here): whatever
 * reaches a request header or decides where the key goes is refused early. */
#include <string.h>

#include "api_internal.h"
#include "rampart/model.h"
#include "rampart/url.h"

static bool is_tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

const char *api_version_header(const api_config *cfg)
{
    return cfg->version_header && cfg->version_header[0] ? cfg->version_header
                                                         : API_DEFAULT_VERSION_HEADER;
}

size_t api_base_len(const char *url)
{
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        len--;
    return len;
}

/* A key with CR/LF would inject headers; spaces and non-ASCII are paste accidents. */
static error_code check_key(const char *key, error_info *err)
{
    if (!key || !key[0])
        return error_set(err, ERROR_CONFIG, "no API key is configured (api_key)");
    size_t len = strlen(key);
    if (len > API_KEY_MAX)
        return error_set(err, ERROR_CONFIG, "the API key is longer than %d bytes", API_KEY_MAX);
    if (!model_key_chars_ok(key, len))
        return error_set(err, ERROR_CONFIG,
                         "the API key holds a space, control or non-ASCII character: "
                         "check how it was pasted");
    return ERROR_OK;
}

static error_code check_version_header(const char *vh, error_info *err)
{
    if (strlen(vh) > 64)
        return error_set(err, ERROR_CONFIG, "version_header is longer than 64 bytes");
    for (const char *p = vh; *p; p++) {
        if (!is_tchar((unsigned char)*p))
            return error_set(err, ERROR_CONFIG,
                             "version_header must be an HTTP header name (letters, digits, "
                             "'-'), not '%.64s'",
                             vh);
    }
    return ERROR_OK;
}

/* http:// only to this machine: elsewhere the key would cross the network in
 * clear. The same rule as config.c's, from the same function. */
static error_code check_base(const char *url, error_info *err)
{
    if (!url || !url[0])
        return error_set(err, ERROR_CONFIG, "no API URL is configured (api_url)");
    size_t len = api_base_len(url);
    if (len > MODEL_URI_MAX - 64)
        return error_set(err, ERROR_CONFIG, "api_url is longer than %d bytes",
                         MODEL_URI_MAX - 64);
    char base[MODEL_URI_MAX + 1];
    memcpy(base, url, len);
    base[len] = '\0';
    if (url_check_api_base(base, "api_url", err) != ERROR_OK)
        return err ? (err->code = ERROR_CONFIG) : ERROR_CONFIG;
    return ERROR_OK;
}

error_code api_check_config(const api_config *cfg, error_info *err)
{
    if (!cfg)
        return error_set(err, ERROR_CONFIG, "no API configuration");
    error_code rc = check_base(cfg->base_url, err);
    if (rc == ERROR_OK)
        rc = check_key(cfg->api_key, err);
    if (rc == ERROR_OK)
        rc = check_version_header(api_version_header(cfg), err);
    if (rc == ERROR_OK && (cfg->connect_timeout_ms < 0 || cfg->total_timeout_ms < 0))
        rc = error_set(err, ERROR_CONFIG, "timeouts cannot be negative");
    if (rc == ERROR_OK && (cfg->low_speed_bps < 0 || cfg->low_speed_s < 0))
        rc = error_set(err, ERROR_CONFIG, "the low-speed limit cannot be negative");
    return rc;
}

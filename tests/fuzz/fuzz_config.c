/*
 * Fuzz target: the config file parser, through config_load reading a real file
 * (named by RAMPART_CONFIG, mode 0600 in a private temp directory), and
 * config_set as flags reach it. The first byte picks: config_set of one key
 * (byte % 8 < CONFIG_KEY_COUNT) with the rest as the value, else the rest is the
 * file. A successful load must leave every value terminated and, when an API URL
 * is set, one config_set accepts again.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rampart/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];
static char path[300];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/rampart-fuzz-config.XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(path, sizeof path, "%s/config", dir);
    atexit(cleanup);
    return 0;
}

/* The environment of the load: only the config file's name. */
static const char *lookup(void *ctx, const char *name)
{
    (void)ctx;
    return strcmp(name, "RAMPART_CONFIG") == 0 ? path : NULL;
}

static void write_file(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n <= 0) {
            perror(path);
            abort();
        }
        data += n;
        size -= (size_t)n;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static config cfg; /* large: off the stack */
    error_info err = {0};
    unsigned pick = data[0] % 8;
    if (pick < CONFIG_KEY_COUNT) {
        char *value = malloc(size);
        if (!value)
            return 0;
        memcpy(value, data + 1, size - 1);
        value[size - 1] = '\0';
        memset(&cfg, 0, sizeof cfg);
        config_set(&cfg, (config_key)pick, value, CONFIG_SRC_FLAG, &err);
        free(value);
        return 0;
    }
    write_file(data + 1, size - 1);
    if (config_load(&cfg, lookup, NULL, &err) == ERROR_OK) {
        for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
            if (!memchr(cfg.values[k], '\0', sizeof cfg.values[k]))
                abort();
        }
        if (config_get(&cfg, CONFIG_API_URL)[0]) {
            char url[CONFIG_VALUE_MAX];
            memcpy(url, config_get(&cfg, CONFIG_API_URL), sizeof url);
            if (config_set(&cfg, CONFIG_API_URL, url, CONFIG_SRC_FLAG, &err) != ERROR_OK)
                abort();
        }
        config_remote_configured(&cfg);
    }
    config_clear(&cfg);
    if (!memchr(err.msg, '\0', sizeof err.msg))
        abort();
    return 0;
}

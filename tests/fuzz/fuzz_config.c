/*
 * Fuzz target: the config file parser, through config_load reading a real file
 * (named by RAMPART_CONFIG, mode 0600 in a private temp directory), and
 * config_set as flags reach it. The first byte b picks: b % 8 below 5, config_set
 * of one key (spread over every key by b / 8) with the rest as the value; 5, the
 * rest is the file, loaded for the default profile; 6, the same with
 * RAMPART_PROFILE=a; 7, with the profile "b" asked for as --profile does. A
 * successful load must leave every value terminated and, when an API URL is set,
 * one config_set accepts again. key_command is never run (config_load does not).
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

/* The environment of the load: the config file's name, and RAMPART_PROFILE when
 * `ctx` is not NULL. */
static const char *lookup(void *ctx, const char *name)
{
    if (strcmp(name, "RAMPART_PROFILE") == 0)
        return ctx;
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
    if (pick < 5) {
        pick = (pick + 5u * (data[0] / 8u)) % CONFIG_KEY_COUNT;
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
    static char env_profile[] = "a";
    if (config_load_profile(&cfg, pick == 7 ? "b" : NULL, lookup,
                            pick == 6 ? env_profile : NULL, &err) == ERROR_OK) {
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

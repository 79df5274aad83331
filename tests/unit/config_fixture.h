/* The config tests' shared fixture (test_config.c, test_config_profiles.c): a fake
 * environment, a temporary directory with a config path in it, and a file writer.
 * Included after cmocka.h and test_support.h. */
#ifndef RAMPART_TEST_CONFIG_FIXTURE_H
#define RAMPART_TEST_CONFIG_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A fake environment: NULL-terminated name/value pairs. */
typedef struct fake_env {
    const char *pairs[16];
} fake_env;

static const char *fake_getenv(void *ctx, const char *name)
{
    fake_env *env = ctx;
    for (size_t i = 0; env->pairs[i]; i += 2) {
        if (strcmp(env->pairs[i], name) == 0)
            return env->pairs[i + 1];
    }
    return NULL;
}

typedef struct fixture {
    char dir[64];
    char cfg_path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = ts_zalloc(sizeof *f);
    ts_temp_dir_path(f->dir, sizeof f->dir, "/tmp/rampart-config-XXXXXX", f->cfg_path,
                     sizeof f->cfg_path, "config");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    ts_remove_tree(((fixture *)*state)->dir);
    free(*state);
    return 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    chmod(path, mode);
}

#endif

/*
 * Helpers several unit tests share: temp directories, a store in one, rows put in
 * through the store's gate. Every tests/unit/test_*.c is its own binary, so all of
 * it is static inline. Include after <cmocka.h>.
 */
#ifndef RAMPART_TEST_SUPPORT_H
#define RAMPART_TEST_SUPPORT_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rampart/api.h"
#include "rampart/store.h"

/* calloc of one zeroed object, which must succeed. */
static inline void *ts_zalloc(size_t size)
{
    void *p = calloc(1, size);
    assert_non_null(p);
    return p;
}

/* A new private directory made from `tmpl` (ending in XXXXXX) into dir[size]. */
static inline void ts_temp_dir(char *dir, size_t size, const char *tmpl)
{
    assert_true(strlen(tmpl) < size);
    strcpy(dir, tmpl);
    assert_non_null(mkdtemp(dir));
}

/* The same, and the path of `name` in it into path[path_size]. */
static inline void ts_temp_dir_path(char *dir, size_t size, const char *tmpl, char *path,
                                    size_t path_size, const char *name)
{
    ts_temp_dir(dir, size, tmpl);
    assert_true((size_t)snprintf(path, path_size, "%s/%s", dir, name) < path_size);
}

static inline int ts_remove_entry(const char *path, const struct stat *sb, int flag,
                                  struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* rm -rf `dir`: 0 when every entry went. */
static inline int ts_remove_tree(const char *dir)
{
    return nftw(dir, ts_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* store_open with no flags, which must succeed. */
static inline store *ts_store_open(const char *path)
{
    store *st = NULL;
    error_info err;
    if (store_open(path, 0, &st, &err) != ERROR_OK)
        fail_msg("store_open %s: %s", path, err.msg);
    return st;
}

/* A store over a database file `name` in a temp directory of its own. */
typedef struct ts_store_dir {
    char dir[64];
    char path[128];
    store *st;
} ts_store_dir;

static inline void ts_store_dir_open(ts_store_dir *d, const char *tmpl, const char *name)
{
    ts_temp_dir_path(d->dir, sizeof d->dir, tmpl, d->path, sizeof d->path, name);
    d->st = ts_store_open(d->path);
}

/* Close the store (it may be NULL) and remove the directory with all in it: 0 when
 * every entry went. */
static inline int ts_store_dir_close(ts_store_dir *d)
{
    store_close(d->st);
    d->st = NULL;
    return ts_remove_tree(d->dir);
}

/* cmocka setup/teardown halves for a fixture that is a ts_store_dir. */
static inline int ts_store_dir_setup(void **state, const char *tmpl, const char *name)
{
    ts_store_dir *d = ts_zalloc(sizeof *d);
    ts_store_dir_open(d, tmpl, name);
    *state = d;
    return 0;
}

static inline int ts_store_dir_teardown(void **state)
{
    ts_store_dir_close(*state);
    free(*state);
    return 0;
}

/* store_insert, which must succeed; the new row's id into id_out (may be NULL).
 * Releases `o`. */
static inline void ts_insert(store *st, model_object *o, char *id_out)
{
    error_info err;
    if (store_insert(st, o, &err) != ERROR_OK)
        fail_msg("store_insert: %s", err.msg);
    if (id_out)
        strcpy(id_out, model_object_id(o));
    model_object_clear(o);
}

static inline model_object ts_rule(const char *policy, const char *cidr, model_action action,
                                   model_state state)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.policy_id, policy);
    strcpy(o.rule.cidr, cidr);
    o.rule.action = action;
    o.rule.state = state;
    return o;
}

static inline void ts_insert_rule(store *st, const char *policy, const char *cidr,
                                  model_action action, model_state state, char *id_out)
{
    model_object o = ts_rule(policy, cidr, action, state);
    ts_insert(st, &o, id_out);
}

/* A credential as a client fills one in: a description, metadata and at most one
 * ACL rule (NULL: none). Release with model_object_clear. */
static inline void ts_cred_init(model_object *o, const char *description, const char *metadata,
                                const char *acl_rule)
{
    model_object_init(o, MODEL_KIND_CRED);
    strcpy(o->cred.description, description);
    strcpy(o->cred.metadata, metadata);
    if (acl_rule)
        assert_int_equal(model_acl_add(&o->cred.acl, acl_rule, NULL), ERROR_OK);
}

/* An API client, which must be made. */
static inline api_client *ts_api_client(const char *base_url, const char *key,
                                        const char *version_header, long total_ms)
{
    api_config cfg = {.base_url = base_url, .api_key = key, .version_header = version_header,
                      .total_timeout_ms = total_ms};
    api_client *c = NULL;
    error_info err = {0};
    if (api_client_new(&cfg, &c, &err) != ERROR_OK)
        fail_msg("api_client_new: %s", err.msg);
    return c;
}

#endif

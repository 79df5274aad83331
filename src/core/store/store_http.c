/*
 * store: what a fleet needs from a cache (migration 9). On the hub, the change
 * counter and the cache's id, from which the mirror makes its entity tags; on a
 * follower, the pages it pulled with their entity tags (http_cache), so that a
 * page the remote answers 304 for is read from here.
 */
#include "store_internal.h"
#include "store_stmt.h"

#include <stdlib.h>
#include <string.h>

/* The kind's name in `changes` (the same as in edits and aliases): its noun. */
static const char *kind_name(model_kind kind)
{
    return kind_get(kind)->noun;
}

error_code store_change_tag_get(store *st, model_kind kind, store_change_tag *out,
                                error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    memset(out, 0, sizeof *out);
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    sqlite3_stmt *s = store_stmt(st, STMT_CHANGE_TAG, err);
    const char *name = kind_name(kind);
    bool row;
    if (store_stmt_first(st, s, &name, 1, &row, err))
        return err->code;
    if (row) {
        out->counter = sqlite3_column_int64(s, 0);
        store_col_copy(s, 1, out->cache_id, sizeof out->cache_id);
    }
    store_reset(s);
    if (!row || !out->cache_id[0])
        return error_set(err, ERROR_IO, "database: the change counter is missing (schema 9)");
    return ERROR_OK;
}

error_code store_change_bump(store *st, model_kind kind, error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, STMT_CHANGE_BUMP, err);
    const char *name = kind_name(kind);
    if (!s || store_bind_texts(st, s, &name, 1, err))
        return err->code;
    return store_exec(st, s, err);
}

/* ---- a follower's pages ---- */

error_code store_http_page_get(store *st, const char *url, char *etag, size_t etag_size,
                               char **body, size_t *len, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *body = NULL;
    *len = 0;
    sqlite3_stmt *s = store_stmt(st, STMT_HTTP_GET, err);
    bool row;
    if (store_stmt_text(st, s, url, etag, etag_size, &row, err))
        return err->code;
    error_code rc = ERROR_OK;
    if (!row) {
        rc = error_set(err, ERROR_NOT_FOUND, "no page kept for that URL");
    } else {
        const void *blob = sqlite3_column_blob(s, 1);
        size_t n = (size_t)sqlite3_column_bytes(s, 1);
        *body = malloc(n + 1);
        if (!*body) {
            rc = error_set(err, ERROR_NOMEM, "out of memory");
        } else {
            if (n)
                memcpy(*body, blob, n);
            (*body)[n] = '\0';
            *len = n;
        }
    }
    store_reset(s);
    return rc;
}

/* One statement of the http_cache in its own short transaction (or the caller's). */
static error_code write_one(store *st, sqlite3_stmt *s, error_info *err)
{
    store_op op;
    if (store_op_begin(st, false, &op, err)) {
        store_reset(s);
        return err->code;
    }
    return store_op_end(st, op, store_exec(st, s, err), err);
}

/* write_one of statement `id` with a text ?1 and a time ?2 (milliseconds). */
static error_code write_text_time(store *st, store_stmt_id id, const char *text,
                                  long long ms, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    sqlite3_stmt *s = store_stmt(st, id, err);
    if (!s || store_bind_texts(st, s, &text, 1, err))
        return err->code;
    sqlite3_bind_int64(s, 2, ms);
    return write_one(st, s, err);
}

error_code store_http_page_reused(store *st, const char *url, long long now_ms,
                                  error_info *err)
{
    return write_text_time(st, STMT_HTTP_TOUCH, url, now_ms, err);
}

error_code store_http_page_put(store *st, const char *url, const char *collection,
                               const char *etag, const char *body, size_t len,
                               long long now_ms, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (!url || !*url || !collection || !etag || !*etag || strlen(etag) > STORE_ETAG_MAX ||
        !body || len > (size_t)0x7fffffff)
        return error_set(err, ERROR_INVALID, "a kept page needs a URL, an entity tag of at "
                         "most %d bytes and a body", STORE_ETAG_MAX);
    sqlite3_stmt *s = store_stmt(st, STMT_HTTP_PUT, err);
    const char *texts[] = {url, collection, etag};
    if (!s || store_bind_texts(st, s, texts, 3, err))
        return err->code;
    sqlite3_bind_blob(s, 4, body, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, now_ms);
    return write_one(st, s, err);
}

error_code store_http_page_prune(store *st, const char *collection, long long before_ms,
                                 error_info *err)
{
    return write_text_time(st, STMT_HTTP_PRUNE, collection, before_ms, err);
}

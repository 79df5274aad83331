/*
 * store: one statement (store_stmt, store_kind_stmt) run once with texts bound
 * to ?1..?n. A NULL statement stands for one that could not be had: err says
 * why, and the call returns its code.
 */
#ifndef RAMPART_STORE_STMT_H
#define RAMPART_STORE_STMT_H

#include "store_internal.h"

/* Bind, then step once: *row says whether a row came back (the caller reads it,
 * then store_reset). */
error_code store_stmt_first(store *st, sqlite3_stmt *s, const char *const *args, int n,
                            bool *row, error_info *err);
/* store_stmt_first with ?1 `key`, the row's first column copied into `out`
 * (`size` bytes; "" when no row came back). */
error_code store_stmt_text(store *st, sqlite3_stmt *s, const char *key, char *out, size_t size,
                           bool *row, error_info *err);
/* The first column of the first row as an integer (0: no row), reset. */
error_code store_stmt_int(store *st, sqlite3_stmt *s, long long *out, error_info *err);
/* Bind, then run a statement that returns no rows; *changes (NULL: not wanted)
 * gets the rows it changed. */
error_code store_stmt_run(store *st, sqlite3_stmt *s, const char *const *args, int n,
                          size_t *changes, error_info *err);

#endif

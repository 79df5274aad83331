/*
 * store: keyset pages and counts. Each query shape (sort, direction, cursor,
 * policy, filter, states) is built once per handle and cached. In id order every
 * page is one index range scan, the same cost at any depth; other orders compare
 * the row value (key, id) with the cursor row's, looked up by its id.
 */
#include "store_internal.h"

#include "rampart/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SQL_MAX = 4096,
    /* SQLite refuses LIKE patterns above 50000 bytes; nobody types this much. */
    FILTER_MAX = 1024
};

static bool has_text(const char *s)
{
    return s && *s;
}

/* Append a clause to the WHERE being built in `buf`. */
static void add_where(char *buf, size_t size, int *nwhere, const char *clause)
{
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%s", (*nwhere)++ ? " AND " : " WHERE ", clause);
}

/* The key column of `sort` for `kind`; NULL when the kind has no such order. */
static const char *sort_column(model_kind kind, store_sort sort)
{
    static const char *const cols[MODEL_KIND_COUNT][STORE_SORT_COUNT] = {
        [MODEL_KIND_RULE] = {[STORE_SORT_ID] = "id", [STORE_SORT_POLICY] = "policy_id",
                             [STORE_SORT_CIDR] = "cidr_key", [STORE_SORT_ACTION] = "action",
                             [STORE_SORT_STATE] = "state"},
        [MODEL_KIND_CRED] = {[STORE_SORT_ID] = "id", [STORE_SORT_STATE] = "state",
                             [STORE_SORT_DESCRIPTION] = "description"},
    };
    if ((unsigned)kind >= MODEL_KIND_COUNT || (unsigned)sort >= STORE_SORT_COUNT)
        return NULL;
    return cols[kind][sort];
}

const char *store_sort_name(store_sort sort)
{
    static const char *const names[STORE_SORT_COUNT] = {
        [STORE_SORT_ID] = "id",         [STORE_SORT_POLICY] = "policy",
        [STORE_SORT_CIDR] = "cidr",     [STORE_SORT_ACTION] = "action",
        [STORE_SORT_STATE] = "state",   [STORE_SORT_DESCRIPTION] = "description",
    };
    return (unsigned)sort < STORE_SORT_COUNT ? names[sort] : NULL;
}

bool store_sort_offered(model_kind kind, store_sort sort)
{
    return sort_column(kind, sort) != NULL;
}

/* "(key, id) > ((SELECT key FROM t WHERE id = ?1), ?1)": after the cursor row. */
static void cursor_clause(model_kind kind, const char *col, bool backward,
                          char *buf, size_t size)
{
    const char *op = backward ? "<" : ">";
    if (strcmp(col, "id") == 0)
        snprintf(buf, size, "id %s ?1", op);
    else
        snprintf(buf, size, "(%s, id) %s ((SELECT %s FROM %s WHERE id = ?1), ?1)", col, op,
                 col, kind_get(kind)->table);
}

/*
 * A rule filter that is an address also matches the rules whose cidr contains it:
 * the keys of its prefixes of every length (/0 to /32 or /128, cidr_sort_key's
 * form) are bound to ?15… (NULL when the filter is no address), so the lookup is
 * an IN over the cidr_key index's values, no SQL function needed.
 */
enum { ADDR_PARAM = 15, ADDR_KEYS = 129, ADDR_KEY_MAX = 18 };
/* Bound to 1 when the states asked for include STORE_STATES_HELD. */
enum { HELD_PARAM = ADDR_PARAM + ADDR_KEYS };

static void addr_filter(const char *text_clause, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "(%s OR cidr_key IN (", text_clause);
    for (int i = 0; i < ADDR_KEYS && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s?%d", i ? ", " : "",
                                ADDR_PARAM + i);
    if (len < size)
        snprintf(buf + len, size - len, "))");
}

static int bind_addr_keys(sqlite3_stmt *s, const char *filter)
{
    return store_bind_addr_keys(s, ADDR_PARAM, filter);
}

int store_bind_addr_keys(sqlite3_stmt *s, int first, const char *filter)
{
    validate_prefix ip;
    if (validate_ip(filter, &ip, NULL) != ERROR_OK)
        return SQLITE_OK; /* no address: every key stays NULL */
    unsigned bytes = ip.family == 4 ? 4 : 16;
    int rc = SQLITE_OK;
    for (unsigned bits = 0; rc == SQLITE_OK && bits <= bytes * 8; bits++) {
        unsigned char key[ADDR_KEY_MAX];
        key[0] = (unsigned char)ip.family;
        for (unsigned b = 0; b < bytes; b++) { /* the address masked to `bits` */
            unsigned keep = bits > b * 8 ? bits - b * 8 : 0;
            unsigned mask = keep >= 8 ? 0xffu : (0xffu << (8 - keep)) & 0xffu;
            key[1 + b] = (unsigned char)(ip.addr[b] & mask);
        }
        key[1 + bytes] = (unsigned char)bits;
        rc = sqlite3_bind_blob(s, first + (int)bits, key, (int)bytes + 2, SQLITE_TRANSIENT);
    }
    return rc;
}

static void build_sql(model_kind kind, unsigned variant, bool count, char *buf,
                      size_t size)
{
    char cols[SQL_MAX / 4], filter[SQL_MAX / 4];
    if (!store_kind_sql(kind, KSQL_COLS, cols, sizeof cols) ||
        !store_kind_sql(kind, KSQL_FILTER, filter, sizeof filter)) {
        buf[0] = '\0'; /* prepares to "empty statement" */
        return;
    }
    bool backward = (variant & STORE_PAGE_BACKWARD) != 0;
    const char *col = sort_column(kind, (store_sort)(variant >> STORE_PAGE_SORT_SHIFT));
    if (!col)
        col = "id";
    int nwhere = 0;
    snprintf(buf, size, "SELECT %s FROM %s", count ? "count(*)" : cols, kind_get(kind)->table);
    if (variant & STORE_PAGE_CURSOR) {
        char clause[256];
        cursor_clause(kind, col, backward, clause, sizeof clause);
        add_where(buf, size, &nwhere, clause);
    }
    if (variant & STORE_PAGE_POLICY)
        add_where(buf, size, &nwhere, "policy_id = ?2");
    if (variant & STORE_PAGE_FILTER && kind == MODEL_KIND_RULE) {
        char clause[SQL_MAX / 2];
        addr_filter(filter, clause, sizeof clause);
        add_where(buf, size, &nwhere, clause);
    } else if (variant & STORE_PAGE_FILTER) {
        add_where(buf, size, &nwhere, filter);
    }
    /* One slot per state: wanted ones get its name, the others NULL (never equal).
     * "+state": the (state, id) index is for the state order; as a lookup it would
     * make every other order sort all the matching rows for each page. */
    if (variant & STORE_PAGE_STATES) {
        char clause[512];
        snprintf(clause, sizeof clause,
                 "(+state IN (?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) OR (?%d = 1 AND"
                 " state = 'conflict' AND id IN (SELECT id FROM conflicts WHERE kind = '%s'"
                 " AND reason IN ('changed', 'crossed'))))",
                 HELD_PARAM, kind_get(kind)->noun);
        add_where(buf, size, &nwhere, clause);
    }
    if (count)
        return;
    size_t len = strlen(buf);
    const char *dir = backward ? " DESC" : "";
    if (strcmp(col, "id") == 0)
        snprintf(buf + len, size - len, " ORDER BY id%s LIMIT ?4", dir);
    else
        snprintf(buf + len, size - len, " ORDER BY %s%s, id%s LIMIT ?4", col, dir, dir);
}

static sqlite3_stmt *cached(store *st, model_kind kind, unsigned variant, bool count,
                            error_info *err)
{
    sqlite3_stmt **slot = count ? &st->counts[kind][variant >> 2]
                                : &st->pages[kind][variant];
    if (*slot)
        return *slot;
    char sql[SQL_MAX];
    build_sql(kind, variant, count, sql, sizeof sql);
    if (store_prepare(st, sql, slot, err))
        return NULL;
    return *slot;
}

/* "%" + text with LIKE's metacharacters escaped by '\' + "%": a literal substring. */
static error_code like_pattern(const char *text, char **out, error_info *err)
{
    size_t len = strlen(text);
    if (len > FILTER_MAX)
        return error_set(err, ERROR_INVALID, "filter is too long (at most %d bytes)",
                         FILTER_MAX);
    char *p = malloc(2 * len + 3);
    if (!p)
        return error_set(err, ERROR_NOMEM, "out of memory");
    *out = p;
    *p++ = '%';
    for (; *text; text++) {
        if (*text == '%' || *text == '_' || *text == '\\')
            *p++ = '\\';
        *p++ = *text;
    }
    *p++ = '%';
    *p = '\0';
    return ERROR_OK;
}

static unsigned query_variant(model_kind kind, const store_query *q)
{
    unsigned v = 0;
    if (q && kind_get(kind)->traits & KIND_IN_POLICY && has_text(q->policy_id))
        v |= STORE_PAGE_POLICY;
    if (q && has_text(q->filter))
        v |= STORE_PAGE_FILTER;
    if (q && q->states)
        v |= STORE_PAGE_STATES;
    return v;
}

enum { STATE_PARAM = 5 };
_Static_assert(MODEL_STATE_COUNT == 10, "one state slot per state in the page SQL");

static int bind_states(sqlite3_stmt *s, unsigned states)
{
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < MODEL_STATE_COUNT; i++) {
        if (states & (1u << i))
            rc = sqlite3_bind_text(s, STATE_PARAM + i, model_state_name((model_state)i), -1,
                                   SQLITE_STATIC);
    }
    if (rc == SQLITE_OK && (states & STORE_STATES_HELD))
        rc = sqlite3_bind_int(s, HELD_PARAM, 1);
    return rc;
}

/* Bind policy (?2) and filter (?3) as the variant asks. */
static error_code bind_query(store *st, sqlite3_stmt *s, unsigned variant,
                             const store_query *q, error_info *err)
{
    int rc = SQLITE_OK;
    if (variant & STORE_PAGE_POLICY)
        rc = sqlite3_bind_text(s, 2, q->policy_id, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && (variant & STORE_PAGE_FILTER)) {
        char *pattern = NULL;
        if (like_pattern(q->filter, &pattern, err)) {
            store_reset(s);
            return err->code;
        }
        rc = sqlite3_bind_text(s, 3, pattern, -1, free);
        if (rc == SQLITE_OK && sqlite3_bind_parameter_count(s) >= ADDR_PARAM)
            rc = bind_addr_keys(s, q->filter);
    }
    if (rc == SQLITE_OK && (variant & STORE_PAGE_STATES))
        rc = bind_states(s, q->states);
    if (rc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, rc, err);
    }
    return ERROR_OK;
}

static error_code check_query(model_kind kind, const store_query *q, error_info *err)
{
    if (q && !sort_column(kind, q->sort))
        return error_set(err, ERROR_INVALID, "invalid sort order %d for %ss", (int)q->sort,
                         kind_get(kind)->noun);
    if (q && (q->states & ~(STORE_STATES_HELD | ((1u << MODEL_STATE_COUNT) - 1))) != 0)
        return error_set(err, ERROR_INVALID, "invalid state set 0x%x", q->states);
    return ERROR_OK;
}

error_code store_page_stmt(store *st, model_kind kind, const store_query *q,
                           const char *cursor, store_dir dir, size_t limit,
                           sqlite3_stmt **out, error_info *err)
{
    if (check_query(kind, q, err))
        return err->code;
    unsigned variant = query_variant(kind, q);
    if (q)
        variant |= (unsigned)q->sort << STORE_PAGE_SORT_SHIFT;
    if (dir == STORE_BACKWARD)
        variant |= STORE_PAGE_BACKWARD;
    if (has_text(cursor))
        variant |= STORE_PAGE_CURSOR;
    sqlite3_stmt *s = cached(st, kind, variant, false, err);
    if (!s)
        return err->code;
    if (bind_query(st, s, variant, q, err))
        return err->code;
    int rc = sqlite3_bind_int64(s, 4, limit > INT64_MAX ? INT64_MAX : (sqlite3_int64)limit);
    if (rc == SQLITE_OK && (variant & STORE_PAGE_CURSOR))
        rc = sqlite3_bind_text(s, 1, cursor, -1, SQLITE_STATIC);
    if (rc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, rc, err);
    }
    *out = s;
    return ERROR_OK;
}

error_code store_count_rows(store *st, model_kind kind, const store_query *q,
                            size_t *out, error_info *err)
{
    *out = 0;
    if (check_query(kind, q, err))
        return err->code;
    unsigned variant = query_variant(kind, q);
    sqlite3_stmt *s = cached(st, kind, variant, true, err);
    if (!s || bind_query(st, s, variant, q, err))
        return err->code;
    bool row;
    if (store_step(st, s, &row, err))
        return err->code;
    if (row)
        *out = (size_t)sqlite3_column_int64(s, 0);
    store_reset(s);
    return ERROR_OK;
}

error_code store_page_plan(store *st, model_kind kind, unsigned variant, char *out,
                           size_t size, error_info *err)
{
    char sql[SQL_MAX];
    build_sql(kind, variant, false, sql, sizeof sql);
    return store_plan(st, sql, out, size, err);
}

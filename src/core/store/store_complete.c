/*
 * store: values for shell completion (store_complete): the ids, policy ids and
 * cidrs that start with what is typed so far. Each answer is a few index range
 * scans with a LIMIT, never a walk of a whole table, so a completion is instant
 * on a million rules.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

enum {
    SQL_MAX = 512,
    /* Rows read per cidr key range at most: a range is a superset when "::" or a
     * prefix length was typed, and the rows that do not match are skipped. */
    CIDR_SCAN_MAX = 5000,
    RANGES_MAX = 8,          /* IPv4's three and IPv6's four, for digits alone */
    KEY_V4 = 1 + 4 + 1,      /* cidr_key: family, address, prefix length */
    KEY_V6 = 1 + 16 + 1,
    TYPED_MAX = MODEL_CIDR_MAX + MODEL_ID_MAX /* longer than any value: no match */
};

/* Hands each value to the caller; counts them and stops at `max`. */
typedef struct sink {
    store_complete_fn fn;
    void *ctx;
    size_t max, count;
    char last[TYPED_MAX + 1]; /* the value handed over last, for adjacent duplicates */
} sink;

static error_code put(sink *k, const char *value, error_info *err)
{
    if (k->count > 0 && strcmp(value, k->last) == 0)
        return ERROR_OK;
    snprintf(k->last, sizeof k->last, "%s", value);
    k->count++;
    return k->fn(k->ctx, value, err);
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The least string above every string that starts with `prefix` (its last byte
 * below 0xff incremented, the bytes after it dropped) into `out`; false when there
 * is none ("" or only 0xff bytes): no upper bound. */
static bool prefix_upper(const char *prefix, char *out, size_t size)
{
    snprintf(out, size, "%s", prefix);
    size_t n = strlen(out);
    while (n > 0 && (unsigned char)out[n - 1] == 0xff)
        n--;
    if (n == 0)
        return false;
    out[n - 1] = (char)((unsigned char)out[n - 1] + 1);
    out[n] = '\0';
    return true;
}

/* Prepare `sql` (a one-shot statement: a completion runs one query and exits),
 * bind `texts` to ?1.. (NULL leaves one unbound) and the LIMIT `limit` after them,
 * then hand every row's first column to `each`. */
typedef error_code (*row_fn)(void *ctx, const char *value, error_info *err);

static error_code run_query(store *st, const char *sql, const char *const *texts, int n,
                            size_t limit, row_fn each, void *ctx, error_info *err)
{
    sqlite3_stmt *s;
    if (store_prepare(st, sql, &s, err))
        return err->code;
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        if (texts[i])
            rc = sqlite3_bind_text(s, i + 1, texts[i], -1, SQLITE_STATIC);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, n + 1, (sqlite3_int64)limit);
    error_code status = rc == SQLITE_OK ? ERROR_OK : store_db_error(st, rc, err);
    bool row = status == ERROR_OK;
    while (status == ERROR_OK && row) {
        status = store_step(st, s, &row, err);
        if (status == ERROR_OK && row && sqlite3_column_type(s, 0) != SQLITE_NULL)
            status = each(ctx, (const char *)sqlite3_column_text(s, 0), err);
    }
    sqlite3_finalize(s);
    return status;
}

static error_code put_row(void *ctx, const char *value, error_info *err)
{
    return put(ctx, value, err);
}

/* ---- ids: one range of the primary key ---- */

/*
 * The SQL of each completion (one per shape: `bounded` when the prefix has an
 * upper bound, `inclusive` for the first policy seek), in one place for the
 * queries and their plans (store_complete_plan).
 */
static void complete_sql(store_complete_what what, bool bounded, bool inclusive,
                         char *sql, size_t size)
{
    switch (what) {
    case STORE_COMPLETE_RULE_ID:
    case STORE_COMPLETE_CRED_ID:
        snprintf(sql, size, "SELECT id FROM %s WHERE id >= ?1%s ORDER BY id LIMIT ?%d",
                 kind_get(what == STORE_COMPLETE_RULE_ID ? MODEL_KIND_RULE : MODEL_KIND_CRED)
                     ->table,
                 bounded ? " AND id < ?2" : "", bounded ? 3 : 2);
        return;
    case STORE_COMPLETE_POLICY_ID:
        /* min() over rules_policy_id is one seek; DISTINCT would read every rule. */
        snprintf(sql, size, "SELECT min(policy_id) FROM rules WHERE policy_id %s ?1 LIMIT ?2",
                 inclusive ? ">=" : ">");
        return;
    case STORE_COMPLETE_CIDR:
    default:
        if (!inclusive) { /* every policy's: a range of cidr_key */
            snprintf(sql, size, "SELECT cidr FROM rules WHERE cidr_key >= ?1 AND"
                                " cidr_key <= ?2 ORDER BY cidr_key LIMIT ?3");
            return;
        }
        /* One policy's: the state term is rules_live_key's own WHERE, so the partial
         * index serves. */
        snprintf(sql, size,
                 "SELECT cidr FROM rules WHERE policy_id = ?1 AND cidr >= ?2%s"
                 " AND state NOT IN ('deleting', 'remote_deleted', 'conflict')"
                 " ORDER BY cidr LIMIT ?%d",
                 bounded ? " AND cidr < ?3" : "", bounded ? 4 : 3);
        return;
    }
}

error_code store_complete_plan(store *st, store_complete_what what, bool bounded,
                               bool inclusive, char *out, size_t size, error_info *err)
{
    char sql[SQL_MAX];
    complete_sql(what, bounded, inclusive, sql, sizeof sql);
    return store_plan(st, sql, out, size, err);
}

static error_code complete_ids(store *st, store_complete_what what, const char *prefix,
                               sink *k, error_info *err)
{
    char upper[TYPED_MAX + 2], sql[SQL_MAX];
    bool bounded = prefix_upper(prefix, upper, sizeof upper);
    complete_sql(what, bounded, false, sql, sizeof sql);
    const char *texts[] = {prefix, upper};
    return run_query(st, sql, texts, bounded ? 2 : 1, k->max, put_row, k, err);
}

/* ---- policy ids: one index seek per policy ---- */

/* The least policy id a seek found, "" when none. */
typedef struct seek {
    char found[MODEL_ID_MAX + 1];
} seek;

static error_code seek_row(void *ctx, const char *value, error_info *err)
{
    (void)err;
    seek *s = ctx;
    snprintf(s->found, sizeof s->found, "%s", value);
    return ERROR_OK;
}

static error_code complete_policies(store *st, const char *prefix, sink *k, error_info *err)
{
    char from[MODEL_ID_MAX + 1];
    snprintf(from, sizeof from, "%s", prefix);
    bool inclusive = true; /* the prefix itself may be a policy id */
    while (k->count < k->max) {
        char sql[SQL_MAX];
        complete_sql(STORE_COMPLETE_POLICY_ID, false, inclusive, sql, sizeof sql);
        seek s = {""};
        const char *texts[] = {from};
        if (run_query(st, sql, texts, 1, 1, seek_row, &s, err))
            return err->code;
        if (!s.found[0] || !starts_with(s.found, prefix))
            return ERROR_OK;
        if (put(k, s.found, err))
            return err->code;
        memcpy(from, s.found, sizeof from);
        inclusive = false;
    }
    return ERROR_OK;
}

/* ---- cidrs of one policy: its natural key's index ---- */

static error_code complete_policy_cidrs(store *st, const char *prefix, const char *policy,
                                        sink *k, error_info *err)
{
    char upper[TYPED_MAX + 2], sql[SQL_MAX];
    bool bounded = prefix_upper(prefix, upper, sizeof upper);
    complete_sql(STORE_COMPLETE_CIDR, bounded, true, sql, sizeof sql);
    const char *texts[] = {policy, prefix, upper};
    return run_query(st, sql, texts, bounded ? 3 : 2, k->max, put_row, k, err);
}

/* ---- cidrs of every policy: ranges of cidr_key ---- */

/*
 * A range of cidr_key (store_schema.c: family, address bytes, prefix length) that
 * holds every cidr whose text can start with what was typed: the address bytes read
 * so far fixed, the next octet (IPv4) or group (IPv6) between two values, the rest
 * any. Blobs compare as memcmp then length, so `lo` may be short and `hi` is padded
 * with 0xff to a whole key.
 */
typedef struct key_range {
    unsigned char lo[KEY_V6], hi[KEY_V6];
    size_t lo_len, hi_len;
} key_range;

typedef struct ranges {
    key_range r[RANGES_MAX];
    size_t n;
} ranges;

/* Family `family`, `fixed` address bytes, then a unit of `unit` bytes (0: none)
 * between `from` and `to`. */
static void add_range(ranges *rs, int family, const unsigned char *fixed, size_t n,
                      unsigned from, unsigned to, size_t unit)
{
    if (rs->n == RANGES_MAX)
        return;
    key_range *k = &rs->r[rs->n++];
    size_t total = family == 4 ? KEY_V4 : KEY_V6;
    k->lo[0] = k->hi[0] = (unsigned char)family;
    for (size_t i = 0; i < n; i++)
        k->lo[1 + i] = k->hi[1 + i] = fixed[i];
    for (size_t i = 0; i < unit; i++) { /* big-endian, as the address bytes */
        unsigned shift = (unsigned)(8 * (unit - 1 - i));
        k->lo[1 + n + i] = (unsigned char)((from >> shift) & 0xffu);
        k->hi[1 + n + i] = (unsigned char)((to >> shift) & 0xffu);
    }
    k->lo_len = 1 + n + unit;
    for (size_t i = 1 + n + unit; i < total; i++)
        k->hi[i] = 0xff;
    k->hi_len = total;
}

/* The values whose text starts with the `len` digits (base `base`) of value `v`,
 * up to `digits` digits and `max`: v itself, then v followed by one, two… more
 * digits. A unit's text has no leading zero, so "0" stands for 0 alone. */
static void add_unit_ranges(ranges *rs, int family, const unsigned char *fixed, size_t n,
                            unsigned v, size_t len, unsigned base, size_t digits,
                            unsigned max, size_t unit)
{
    if (len == 0) {
        add_range(rs, family, fixed, n, 0, max, unit);
        return;
    }
    add_range(rs, family, fixed, n, v, v, unit);
    unsigned span = 1;
    for (size_t extra = 1; v != 0 && len + extra <= digits; extra++) {
        span *= base;
        unsigned lo = v * span;
        if (lo > max)
            break;
        unsigned hi = lo + span - 1 > max ? max : lo + span - 1;
        add_range(rs, family, fixed, n, lo, hi, unit);
    }
}

/* Up to `max_len` digits of `base` at *p: their value and count. */
static size_t read_digits(const char **p, unsigned base, size_t max_len, unsigned *value)
{
    size_t len = 0;
    *value = 0;
    for (;;) {
        int c = (unsigned char)**p;
        int d = isdigit(c) ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0 || len == max_len)
            return len;
        *value = *value * base + (unsigned)d;
        (*p)++;
        len++;
    }
}

/* A unit as canonical text writes it: not empty, no leading zero. */
static bool canonical_unit(const char *start, size_t len)
{
    return len > 0 && (len == 1 || start[0] != '0');
}

static void v4_ranges(const char *t, ranges *rs)
{
    unsigned char fixed[4];
    size_t n = 0;
    const char *p = t;
    for (;;) {
        const char *start = p;
        unsigned v;
        size_t len = read_digits(&p, 10, 3, &v);
        bool whole = *p == '.' || *p == '/';
        if (whole && (!canonical_unit(start, len) || v > 255 || (*p == '.') == (n == 3)))
            return;
        if (*p == '.') {
            fixed[n++] = (unsigned char)v;
            p++;
            continue;
        }
        if (*p == '/') { /* the whole address: any prefix length */
            fixed[n++] = (unsigned char)v;
            add_range(rs, 4, fixed, n, 0, 0, 0);
            return;
        }
        if (*p != '\0' || (len > 0 && (!canonical_unit(start, len) || v > 255)))
            return;
        add_unit_ranges(rs, 4, fixed, n, v, len, 10, 3, 255, 1);
        return;
    }
}

static void v6_ranges(const char *t, ranges *rs)
{
    unsigned char fixed[16] = {0};
    size_t n = 0;
    const char *p = t;
    if (*p == ':') { /* "::" first: groups 0 and 1 are zero (RFC 5952: never one) */
        add_range(rs, 6, fixed, 4, 0, 0, 0);
        return;
    }
    for (;;) {
        const char *start = p;
        unsigned v;
        size_t len = read_digits(&p, 16, 4, &v);
        if (*p == ':' || *p == '/') {
            if (!canonical_unit(start, len) || n == 16 || (*p == ':' && n == 14))
                return;
            fixed[n++] = (unsigned char)(v >> 8);
            fixed[n++] = (unsigned char)(v & 0xffu);
            if (*p == '/' || p[1] == ':') { /* "::": at least two zero groups follow */
                n = *p == ':' && n + 4 <= 16 ? n + 4 : n;
                add_range(rs, 6, fixed, n, 0, 0, 0);
                return;
            }
            p++;
            continue;
        }
        if (*p == '.' && n > 0) { /* an embedded IPv4 address: the groups before it */
            add_range(rs, 6, fixed, n, 0, 0, 0);
            return;
        }
        if (*p != '\0' || n == 16 || (len > 0 && !canonical_unit(start, len)))
            return;
        add_unit_ranges(rs, 6, fixed, n, v, len, 16, 4, 0xffff, 2);
        return;
    }
}

typedef struct cidr_scan {
    sink *k;
    const char *prefix;
} cidr_scan;

static error_code cidr_row(void *ctx, const char *value, error_info *err)
{
    cidr_scan *c = ctx;
    if (c->k->count >= c->k->max || !starts_with(value, c->prefix))
        return ERROR_OK;
    return put(c->k, value, err);
}

static error_code complete_cidrs(store *st, const char *prefix, sink *k, error_info *err)
{
    ranges rs = {.n = 0};
    v4_ranges(prefix, &rs);
    v6_ranges(prefix, &rs);
    cidr_scan c = {k, prefix};
    char sql[SQL_MAX];
    complete_sql(STORE_COMPLETE_CIDR, false, false, sql, sizeof sql);
    for (size_t i = 0; i < rs.n && k->count < k->max; i++) {
        sqlite3_stmt *s;
        if (store_prepare(st, sql, &s, err))
            return err->code;
        const key_range *r = &rs.r[i];
        int rc = sqlite3_bind_blob(s, 1, r->lo, (int)r->lo_len, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_blob(s, 2, r->hi, (int)r->hi_len, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int(s, 3, CIDR_SCAN_MAX);
        error_code status = rc == SQLITE_OK ? ERROR_OK : store_db_error(st, rc, err);
        bool row = status == ERROR_OK;
        while (status == ERROR_OK && row && k->count < k->max) {
            status = store_step(st, s, &row, err);
            if (status == ERROR_OK && row && sqlite3_column_type(s, 0) == SQLITE_TEXT)
                status = cidr_row(&c, (const char *)sqlite3_column_text(s, 0), err);
        }
        sqlite3_finalize(s);
        if (status != ERROR_OK)
            return status;
    }
    return ERROR_OK;
}

/* ---- the entry ---- */

error_code store_complete(store *st, store_complete_what what, const char *prefix,
                          const char *policy_id, size_t max, store_complete_fn fn, void *ctx,
                          error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    prefix = prefix ? prefix : "";
    if (strlen(prefix) > TYPED_MAX || max == 0)
        return ERROR_OK; /* longer than any value: nothing starts with it */
    sink k = {.fn = fn, .ctx = ctx, .max = max};
    switch (what) {
    case STORE_COMPLETE_RULE_ID:
    case STORE_COMPLETE_CRED_ID:
        return complete_ids(st, what, prefix, &k, err);
    case STORE_COMPLETE_POLICY_ID:
        return complete_policies(st, prefix, &k, err);
    case STORE_COMPLETE_CIDR: {
        /* Canonical cidrs are lower-case (RFC 5952). */
        char lower[TYPED_MAX + 1];
        size_t i = 0;
        for (; prefix[i]; i++)
            lower[i] = (char)tolower((unsigned char)prefix[i]);
        lower[i] = '\0';
        if (policy_id && *policy_id)
            return complete_policy_cidrs(st, lower, policy_id, &k, err);
        return complete_cidrs(st, lower, &k, err);
    }
    default:
        return error_set(err, ERROR_INVALID, "no completion of kind %d", (int)what);
    }
}

/*
 * bench_store: figures of the store, printed as "figure value" lines.
 *
 *   bench_store store ROWS DBPATH     insert ROWS rules through store_insert, then
 *                                     time pages (below); DBPATH is replaced
 *   bench_store baseline ROWS DBPATH  the same rows inserted with plain SQLite calls
 *                                     into rampart's schema: the ceiling the store's
 *                                     insert rate is compared with
 *   bench_store pages DBPATH          time pages of an existing database (e.g. one
 *                                     filled by `rampart rules import`)
 *
 *   insert_rows_per_s / baseline_rows_per_s  rows per second, one transaction, commit included
 *   page_first_us      median time of the first page (20 rows)
 *   page_deep_us       median time of a page at 90% depth
 *   page_ratio         page_deep_us / page_first_us (about 1 when paging is keyset)
 *   state_counts_ms    median time of store_state_counts (a full scan)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rampart/ids.h"
#include "rampart/store.h"

enum { POLICIES = 100, PAGE_ROWS = 20, REPS = 1000 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, const error_info *err)
{
    fprintf(stderr, "bench_store: %s: %s\n", what, err->msg);
    return 1;
}

static void remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%s%s", path, suffixes[i]);
        unlink(name);
    }
}

typedef char policy_ids[POLICIES][MODEL_ID_MAX + 1];

static int make_policies(policy_ids policies)
{
    ids_gen gen = {0};
    error_info err;
    for (int i = 0; i < POLICIES; i++) {
        if (ids_generate(&gen, "ipp", policies[i], sizeof policies[i], &err))
            return fail("policy id", &err);
    }
    return 0;
}

/* Row i: a distinct /32 and one of POLICIES policies; local id and time are new. */
static void next_rule(model_rule *rule, policy_ids policies, size_t i)
{
    rule->id[0] = '\0';
    rule->created_at[0] = '\0';
    snprintf(rule->cidr, sizeof rule->cidr, "%zu.%zu.%zu.%zu/32", 10 + (i >> 24) % 200,
             (i >> 16) & 255, (i >> 8) & 255, i & 255);
    memcpy(rule->policy_id, policies[i % POLICIES], sizeof rule->policy_id);
    rule->action = i % 7 ? MODEL_ACTION_ALLOW : MODEL_ACTION_DENY;
}

static int insert_rows(store *st, size_t rows, size_t depth, char *deep_cursor,
                       double *rate)
{
    error_info err;
    policy_ids policies;
    if (make_policies(policies))
        return 1;
    model_object *obj = calloc(1, sizeof *obj);
    if (!obj)
        return 1;
    obj->kind = MODEL_KIND_RULE;
    model_rule *rule = &obj->rule;
    rule->state = MODEL_STATE_SYNCED;
    double t0 = now_s();
    int rc = store_begin(st, &err) ? fail("begin", &err) : 0;
    for (size_t i = 0; rc == 0 && i < rows; i++) {
        next_rule(rule, policies, i);
        if (store_insert(st, obj, &err))
            rc = fail("insert", &err);
        else if (i + 1 == depth)
            memcpy(deep_cursor, rule->id, sizeof rule->id);
    }
    if (rc == 0 && store_commit(st, &err))
        rc = fail("commit", &err);
    *rate = (double)rows / (now_s() - t0);
    free(obj);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median microseconds of REPS forward pages after `cursor`. */
static int time_pages(store *st, const char *cursor, model_object *rows, double *median)
{
    double samples[REPS];
    error_info err;
    for (int i = 0; i < REPS; i++) {
        size_t count;
        double t0 = now_s();
        if (store_page(st, MODEL_KIND_RULE, NULL, cursor, STORE_FORWARD, PAGE_ROWS, rows, &count,
                       &err))
            return fail("page", &err);
        samples[i] = (now_s() - t0) * 1e6;
        if (count == 0) {
            fprintf(stderr, "bench_store: empty page\n");
            return 1;
        }
    }
    qsort(samples, REPS, sizeof samples[0], cmp_double);
    *median = samples[REPS / 2];
    return 0;
}

enum { COUNT_REPS = 5 };

static int time_state_counts(store *st, double *median)
{
    double samples[COUNT_REPS];
    size_t counts[MODEL_STATE_COUNT];
    error_info err;
    for (int i = 0; i < COUNT_REPS; i++) {
        double t0 = now_s();
        if (store_state_counts(st, MODEL_KIND_RULE, counts, &err))
            return fail("state counts", &err);
        samples[i] = (now_s() - t0) * 1e3;
    }
    qsort(samples, COUNT_REPS, sizeof samples[0], cmp_double);
    *median = samples[COUNT_REPS / 2];
    return 0;
}

static int print_pages(store *st, const char *deep_cursor)
{
    double first, deep, counts;
    model_object *page = calloc(PAGE_ROWS, sizeof *page);
    if (!page)
        return 1;
    int rc = time_pages(st, NULL, page, &first);
    if (rc == 0)
        rc = time_pages(st, deep_cursor, page, &deep);
    free(page);
    if (rc == 0)
        rc = time_state_counts(st, &counts);
    if (rc)
        return rc;
    printf("page_first_us %.1f\n", first);
    printf("page_deep_us %.1f\n", deep);
    printf("page_ratio %.2f\n", deep / first);
    printf("state_counts_ms %.1f\n", counts);
    return 0;
}

static int run_store(store *st, size_t rows)
{
    char deep_cursor[MODEL_ID_MAX + 1] = "";
    double rate;
    if (insert_rows(st, rows, rows / 10 * 9, deep_cursor, &rate))
        return 1;
    printf("insert_rows_per_s %.0f\n", rate);
    return print_pages(st, deep_cursor);
}

/* Walk to 90% depth with big pages to find the cursor of a deep page. */
static int run_pages(store *st)
{
    enum { WALK = 1000 };
    size_t total, seen = 0, count;
    error_info err;
    if (store_count(st, MODEL_KIND_RULE, NULL, &total, &err))
        return fail("count", &err);
    model_object *rows = calloc(WALK, sizeof *rows);
    if (!rows)
        return 1;
    char cursor[MODEL_ID_MAX + 1] = "";
    size_t depth = total / 10 * 9;
    while (seen < depth) {
        size_t want = depth - seen < WALK ? depth - seen : WALK;
        if (store_page(st, MODEL_KIND_RULE, NULL, cursor, STORE_FORWARD, want, rows, &count,
                       &err)) {
            free(rows);
            return fail("walk", &err);
        }
        if (count == 0)
            break;
        memcpy(cursor, rows[count - 1].rule.id, sizeof cursor);
        seen += count;
    }
    free(rows);
    printf("rows %zu\n", total);
    return print_pages(st, cursor);
}

/*
 * Plain SQLite: one prepared INSERT of the columns an import writes, the same
 * pragmas as the store, rampart's schema (created by store_open). No validation,
 * no id generation beyond a counter: what SQLite alone costs for these rows.
 */
static int run_baseline(const char *path, size_t rows)
{
    store *st;
    error_info err;
    if (store_open(path, 0, &st, &err))
        return fail("open", &err);
    store_close(st);
    sqlite3 *db;
    sqlite3_stmt *ins = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return 1;
    sqlite3_exec(db, "PRAGMA synchronous = FULL; PRAGMA cache_size = -16384", 0, 0, 0);
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO rules (id, created_at, description, cidr,"
                                " policy_id, action, state, updated_at)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'new', '')",
                                -1, &ins, NULL);
    double t0 = now_s();
    sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0);
    for (size_t i = 0; rc == SQLITE_OK && i < rows; i++) {
        char id[40], cidr[40], policy[40], desc[40];
        snprintf(id, sizeof id, "local_%027zu", i);
        snprintf(cidr, sizeof cidr, "10.%zu.%zu.%zu/32", (i >> 16) & 255, (i >> 8) & 255,
                 i & 255);
        snprintf(policy, sizeof policy, "ipp_bench%05zu", i % POLICIES);
        snprintf(desc, sizeof desc, "rule %zu", i);
        const char *texts[] = {id, "2026-01-01T00:00:00Z", desc, cidr, policy,
                               i % 2 ? "allow" : "deny"};
        for (int k = 0; k < 6; k++)
            sqlite3_bind_text(ins, k + 1, texts[k], -1, SQLITE_STATIC);
        rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(ins);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", 0, 0, 0);
    double elapsed = now_s() - t0;
    if (rc != SQLITE_OK)
        fprintf(stderr, "bench_store: baseline: %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(ins);
    sqlite3_close(db);
    if (rc != SQLITE_OK)
        return 1;
    printf("baseline_rows_per_s %.0f\n", (double)rows / elapsed);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_store store|baseline ROWS DBPATH | bench_store pages DBPATH\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "pages") == 0) {
        store *st;
        error_info err;
        if (store_open(argv[2], 0, &st, &err))
            return fail("open", &err);
        int rc = run_pages(st);
        store_close(st);
        return rc;
    }
    if (argc != 4 || atol(argv[2]) < 10)
        return usage();
    size_t rows = (size_t)atol(argv[2]);
    remove_db(argv[3]);
    if (strcmp(argv[1], "baseline") == 0)
        return run_baseline(argv[3], rows);
    if (strcmp(argv[1], "store") != 0)
        return usage();
    store *st;
    error_info err;
    if (store_open(argv[3], 0, &st, &err))
        return fail("open", &err);
    int rc = run_store(st, rows);
    store_close(st);
    return rc;
}

/* Import: the list splitter (codec_split_*) over input read in chunks, and the
 * store's bulk import (store_import_*): rows matched with the cache (unchanged,
 * updated, created, synced), the same gate and messages as store_insert, the
 * rules' browsing indexes dropped and built again for a large import, the
 * transaction rules around it, and the round trip of what export writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/store.h"
#include "test_support.h"
#include "../../src/core/store/store_internal.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

static int setup(void **state)
{
    return ts_store_dir_setup(state, "/tmp/rampart-import-XXXXXX", "rampart.db");
}

static int teardown(void **state)
{
    return ts_store_dir_teardown(state);
}

/* How many of the rules table's two secondary indexes the file has (another
 * connection: what a reader would see once committed). */
static int rule_indexes(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*) FROM sqlite_master WHERE type = "
                                        "'index' AND name IN ('rules_policy_id', "
                                        "'rules_live_key')",
                                        -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

static size_t rule_count(store *st)
{
    size_t n = 0;
    error_info err;
    assert_int_equal(store_count(st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    return n;
}

static error_code add_as(store_import *imp, const char *cidr, model_action action,
                         store_import_result *result, error_info *err)
{
    model_object o = ts_rule(POLICY, cidr, action, MODEL_STATE_NEW);
    return store_import_add(imp, &o, result, err);
}

static error_code add(store_import *imp, const char *cidr, error_info *err)
{
    return add_as(imp, cidr, MODEL_ACTION_ALLOW, NULL, err);
}

/* Large enough for the browsing indexes to be dropped from the start. */
enum { BIG = 100000 };

/* The rebuilding path: into an empty table, keys checked in memory, refusals as
 * store_insert gives them, the indexes back at finish. */
static void test_import_rebuilds_indexes(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, BIG, &imp, &err), ERROR_OK);
    char cidr[32];
    for (int i = 0; i < 300; i++) {
        snprintf(cidr, sizeof cidr, "10.0.%d.%d/32", i / 256, i % 256);
        assert_int_equal(add(imp, cidr, &err), ERROR_OK);
    }
    /* The key of a row of this import, in another spelling: the same rule again is
     * left alone; another action for it is refused by the natural key's index. */
    store_import_result result;
    assert_int_equal(add(imp, "2001:DB8::/32", &err), ERROR_OK);
    assert_int_equal(add_as(imp, "2001:db8::/32", MODEL_ACTION_ALLOW, &result, &err), ERROR_OK);
    assert_int_equal(result, STORE_IMPORT_UNCHANGED);
    assert_int_equal(add_as(imp, "2001:db8::/32", MODEL_ACTION_DENY, &result, &err),
                     ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, "already has a rule for 2001:db8::/32"));
    /* A bad row: the gate's message, nothing stored, the import goes on. */
    assert_int_equal(add(imp, "10.0.0.1/8", &err), ERROR_INVALID);
    assert_non_null(strstr(err.msg, "did you mean 10.0.0.0/8"));
    assert_int_equal(add(imp, "10.9.0.0/16", &err), ERROR_OK);
    /* The table has no secondary index now: no commit until the import is done. */
    assert_int_equal(store_commit(d->st, &err), ERROR_STATE);
    assert_int_equal(store_begin(d->st, &err), ERROR_STATE);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 302);
    assert_int_equal(rule_indexes(d->path), 2);
    model_rule found;
    assert_int_equal(store_rule_find(d->st, POLICY, "2001:DB8::/32", &found, &err), ERROR_OK);
}

/* A rollback brings the dropped indexes back and keeps nothing of the import. */
static void test_import_rollback_restores(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_OK);
    assert_int_equal(add(imp, "10.0.0.0/8", &err), ERROR_OK);
    store_import_free(imp);
    store_rollback(d->st);
    assert_int_equal(rule_count(d->st), 0);
    assert_int_equal(rule_indexes(d->path), 2);
    /* And the handle takes a new import and a plain insert after it. */
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_OK);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
}

/* A table larger than the import keeps its indexes: the unique key refuses, with
 * the same message, a key a row already in the table holds. */
static void test_import_into_larger_table(void **state)
{
    ts_store_dir *d = *state;
    char first[MODEL_ID_MAX + 1];
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_SYNCED, first);
    ts_insert_rule(d->st, POLICY, "10.1.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 1, &imp, &err), ERROR_OK);
    assert_int_equal(add_as(imp, "10.0.0.0/8", MODEL_ACTION_DENY, NULL, &err), ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, first));
    assert_int_equal(add(imp, "10.2.0.0/16", &err), ERROR_OK);
    /* Nothing dropped: the commit is not held back. */
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 3);
}

/* The same conflict with the table's rows when the browsing indexes were dropped:
 * the natural key's index stays. */
static void test_import_keeps_natural_key(void **state)
{
    ts_store_dir *d = *state;
    char first[MODEL_ID_MAX + 1];
    ts_insert_rule(d->st, POLICY, "10.0.0.0/8", MODEL_ACTION_DENY, MODEL_STATE_SYNCED, first);
    error_info err;
    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, BIG, &imp, &err), ERROR_OK);
    assert_int_equal(add(imp, "10.0.0.0/8", &err), ERROR_CONFLICT);
    assert_non_null(strstr(err.msg, first));
    store_import_result result;
    assert_int_equal(add_as(imp, "10.0.0.0/8", MODEL_ACTION_DENY, &result, &err), ERROR_OK);
    assert_int_equal(result, STORE_IMPORT_UNCHANGED);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
    assert_int_equal(rule_count(d->st), 1);
}

static void pragma(store *st, const char *name, char *out, size_t size)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s", name);
    error_info err;
    assert_int_equal(store_query_text(st, sql, out, size, &err), ERROR_OK);
}

/* Memory: the page cache is held small during an import, and a temporary store in
 * memory (where SQLite would sort whole indexes in memory) moves to files while
 * the indexes are built; both come back, committed or rolled back. */
static void test_import_memory_settings(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    char before[24], during[24], after[24], temp[8];
    assert_int_equal(store_exec_sql(d->st, "PRAGMA temp_store = MEMORY", &err), ERROR_OK);
    pragma(d->st, "cache_size", before, sizeof before);
    for (int commit = 0; commit < 2; commit++) {
        store_import *imp;
        assert_int_equal(store_begin(d->st, &err), ERROR_OK);
        assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, BIG, &imp, &err), ERROR_OK);
        pragma(d->st, "cache_size", during, sizeof during);
        assert_string_equal(during, "-4096");
        pragma(d->st, "temp_store", temp, sizeof temp);
        assert_string_equal(temp, "1");
        assert_int_equal(add(imp, commit ? "10.1.0.0/16" : "10.0.0.0/16", &err), ERROR_OK);
        if (commit) {
            assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
            assert_int_equal(store_commit(d->st, &err), ERROR_OK);
        } else {
            store_import_free(imp);
            store_rollback(d->st);
        }
        pragma(d->st, "cache_size", after, sizeof after);
        assert_string_equal(after, before);
        pragma(d->st, "temp_store", temp, sizeof temp);
        assert_string_equal(temp, "2");
    }
    assert_int_equal(rule_count(d->st), 1);
    assert_int_equal(rule_indexes(d->path), 2);
}

static void test_import_needs_transaction(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    store_import *imp = NULL;
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 10, &imp, &err), ERROR_STATE);
    assert_null(imp);
    assert_non_null(strstr(err.msg, "transaction"));
    /* A credential in a rules import is refused. */
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 0, &imp, &err), ERROR_OK);
    model_object c;
    ts_cred_init(&c, "web", "", NULL);
    assert_int_equal(store_import_add(imp, &c, NULL, &err), ERROR_INVALID);
    model_object_clear(&c);
    store_import *second;
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 0, &second, &err),
                     ERROR_STATE);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);
}


/* ---- the list splitter --------------------------------------------------------- */

/* Input handed out `chunk` bytes at a time (1: every element crosses reads). */
typedef struct chunked {
    const char *data;
    size_t len, pos, chunk;
    bool fail; /* the reader's own error once the data is out */
} chunked;

static error_code read_chunked(void *ctx, char *buf, size_t size, size_t *got, error_info *err)
{
    chunked *in = ctx;
    size_t n = in->len - in->pos;
    if (n > in->chunk)
        n = in->chunk;
    if (n > size)
        n = size;
    if (n == 0 && in->fail)
        return error_set(err, ERROR_IO, "cannot read: disk on fire");
    memcpy(buf, in->data + in->pos, n);
    in->pos += n;
    *got = n;
    return ERROR_OK;
}

enum { SPLIT_MAX_ITEMS = 8 };

typedef struct split_result {
    error_code rc;
    char msg[ERROR_MSG_MAX];
    size_t count;
    char item[SPLIT_MAX_ITEMS][128];
    size_t line[SPLIT_MAX_ITEMS];
} split_result;

static void split_chunked(const char *doc, size_t len, size_t chunk, split_result *out)
{
    memset(out, 0, sizeof *out);
    chunked in = {doc, len, 0, chunk, false};
    codec_split *sp;
    error_info err = {0};
    assert_int_equal(codec_split_open(MODEL_KIND_RULE, read_chunked, &in, &sp, &err), ERROR_OK);
    codec_split_item item;
    bool more = true;
    while ((out->rc = codec_split_next(sp, &item, &more, &err)) == ERROR_OK && more) {
        assert_true(out->count < SPLIT_MAX_ITEMS);
        assert_true(item.len < sizeof out->item[0]);
        assert_int_equal(item.index, out->count);
        memcpy(out->item[out->count], item.json, item.len);
        out->line[out->count++] = item.line;
    }
    strcpy(out->msg, err.msg);
    codec_split_free(sp);
}

/* The same answer whatever the reads: whole, and one byte at a time. */
static void split(const char *doc, split_result *out)
{
    split_result bytewise;
    split_chunked(doc, strlen(doc), 1, &bytewise);
    split_chunked(doc, strlen(doc), 1 << 20, out);
    assert_int_equal(bytewise.rc, out->rc);
    assert_string_equal(bytewise.msg, out->msg);
    assert_int_equal(bytewise.count, out->count);
    for (size_t i = 0; i < out->count; i++) {
        assert_string_equal(bytewise.item[i], out->item[i]);
        assert_int_equal(bytewise.line[i], out->line[i]);
    }
}

static void test_split_elements(void **state)
{
    (void)state;
    split_result r;
    /* Brackets, braces, commas and escaped quotes inside strings are not structure. */
    split("\xEF\xBB\xBF \r\n[ {\"a\":\"]},[{\\\"\\\\\"} ,\n\t{\"b\":[1,{\"c\":\"}\"}]}\n,"
          "\"x\\\"]\" , 12 ,null]\n\n",
          &r);
    assert_int_equal(r.rc, ERROR_OK);
    assert_int_equal(r.count, 5);
    assert_string_equal(r.item[4], "null");
    assert_string_equal(r.item[0], "{\"a\":\"]},[{\\\"\\\\\"}");
    assert_string_equal(r.item[1], "{\"b\":[1,{\"c\":\"}\"}]}");
    assert_string_equal(r.item[2], "\"x\\\"]\"");
    assert_string_equal(r.item[3], "12");
    assert_int_equal(r.line[0], 2);
    assert_int_equal(r.line[1], 3);
    /* A number ends at the newline after it, which is counted once. */
    split("[1\n,\n2]", &r);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.line[1], 3);
    split("[]", &r);
    assert_int_equal(r.rc, ERROR_OK);
    assert_int_equal(r.count, 0);
    split(" [ \n ] \n", &r);
    assert_int_equal(r.rc, ERROR_OK);
    assert_int_equal(r.count, 0);
    /* The API's list object: the other members are checked and left out. */
    split("{\"uri\":\"/ip_policy_rules\",\"ip_policy_rules\":[{\"id\":\"a\"},{\"id\":\"b\"}],"
          "\"next_page_uri\":null,\"extra\":{\"ip_policy_rules\":[[]]}}",
          &r);
    assert_int_equal(r.rc, ERROR_OK);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.item[1], "{\"id\":\"b\"}");
    /* The member's name may be spelled with escapes: it is decoded, not compared. */
    split("{\"ip_policy_\\u0072ules\":[{}]}", &r);
    assert_int_equal(r.count, 1);
    split("{\"ip_policy_rules\":[]}", &r);
    assert_int_equal(r.rc, ERROR_OK);
    assert_int_equal(r.count, 0);
}

static void test_split_errors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"", "empty document"},
        {" \n ", "empty document"},
        {"\xEF\xBB\xBF", "empty document"},
        {"\xEF\xBB[]", "expected a JSON array or object of rules"},
        {"42", "expected a JSON array or object of rules"},
        {"[", "rule 1 (line 1): unexpected end of input"},
        {"[{\"a\":\"]\"", "rule 1 (line 1): unexpected end of input"},
        {"[{}", "unexpected end of input after rule 1: expected ',' or ']'"},
        {"[{},\n", "rule 2 (line 2): unexpected end of input"},
        {"[{} {}]", "expected ',' or ']' after rule 1 at line 1, column 5"},
        {"[{}]\nx", "unexpected data after the array at line 2, column 1"},
        {"[{}]]", "unexpected data after the array"},
        {"{\"uri\":\"u\"}", "ip_policy_rules: missing"},
        {"{}", "ip_policy_rules: missing"},
        {"{\"ip_policy_rules\":{}}", "ip_policy_rules: expected an array, got an object"},
        {"{\"ip_policy_rules\":null}", "ip_policy_rules: expected an array, got null"},
        {"{\"ip_policy_rules\":[],\"ip_policy_rules\":[]}", "ip_policy_rules: duplicate member"},
        {"{\"ip_policy_rules\":[]} x", "unexpected data after the list object"},
        {"{\"ip_policy_rules\":[]", "unexpected end of input in the list object"},
        {"{\"uri\":tru,\"ip_policy_rules\":[]}", "invalid JSON at line 1, column"},
        {"{\"uri\" 1}", "expected ':' at line 1, column 8"},
        {"{1:[]}", "expected a member name at line 1, column 2"},
        {"{\"ip_policy_rules\":[],}", "expected a member name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        split_result r;
        split(cases[i][0], &r);
        if (r.rc != ERROR_FORMAT || !strstr(r.msg, cases[i][1]))
            fail_msg("case %zu: %d \"%s\" lacks \"%s\"", i, r.rc, r.msg, cases[i][1]);
    }
    /* Every cut of a valid document is refused. */
    const char *doc = "{\"ip_policy_rules\":[{\"id\":\"a\"},{\"s\":\"]\\\"\"}],\"uri\":\"u\"}";
    for (size_t cut = 0; cut < strlen(doc); cut++) {
        split_result r;
        split_chunked(doc, cut, 3, &r);
        if (r.rc == ERROR_OK)
            fail_msg("cut at %zu accepted", cut);
    }
}

/* The reader's error stops the split as it is; an element past the limit is
 * refused, never buffered without bound. */
static void test_split_limits(void **state)
{
    (void)state;
    chunked in = {"[{}, {\"a\":", 10, 0, 4, true};
    codec_split *sp;
    error_info err;
    assert_int_equal(codec_split_open(MODEL_KIND_RULE, read_chunked, &in, &sp, &err), ERROR_OK);
    codec_split_item item;
    bool more;
    assert_int_equal(codec_split_next(sp, &item, &more, &err), ERROR_OK);
    assert_true(more);
    assert_int_equal(codec_split_next(sp, &item, &more, &err), ERROR_IO);
    assert_string_equal(err.msg, "rule 2 (line 1): cannot read: disk on fire");
    assert_false(more);
    codec_split_free(sp);

    size_t big = (2u << 20) + 16;
    char *doc = malloc(big);
    assert_non_null(doc);
    memset(doc, ' ', big);
    memcpy(doc, "[\"", 2);
    memcpy(doc + big - 2, "\"]", 2);
    split_result r;
    split_chunked(doc, big, 1 << 16, &r);
    free(doc);
    assert_int_equal(r.rc, ERROR_FORMAT);
    assert_string_equal(r.msg, "rule 1 (line 1): larger than 1024 KiB");
}

/* ---- matching with the cache ---------------------------------------------------- */

static const char REMOTE[] = "ipr_2Zz1lqOxDdQyVpYcRRRRRRRRRRR";

static model_object rule_with(const char *id, const char *cidr, model_action action,
                              const char *description)
{
    model_object o = ts_rule(POLICY, cidr, action, MODEL_STATE_FAILED); /* not taken */
    strcpy(o.rule.id, id);
    strcpy(o.rule.description, description);
    strcpy(o.rule.error, "from the file");
    return o;
}

static store_import_result import_one_row(store_import *imp, model_object o, error_code want,
                                          error_info *err)
{
    store_import_result result = (store_import_result)-1;
    error_code rc = store_import_add(imp, &o, &result, err);
    if (rc != want)
        fail_msg("import_add: %d (%s), wanted %d", rc, err->msg, want);
    return result;
}

static void test_import_matches_cache(void **state)
{
    ts_store_dir *d = *state;
    error_info err;
    char queued[MODEL_ID_MAX + 1], confirmed_local[MODEL_ID_MAX + 1];
    model_object o = rule_with("", "10.0.0.0/8", MODEL_ACTION_ALLOW, "office");
    o.rule.state = MODEL_STATE_NEW;
    o.rule.error[0] = '\0';
    ts_insert(d->st, &o, queued);
    o = rule_with(REMOTE, "2001:db8::/32", MODEL_ACTION_DENY, "");
    o.rule.state = MODEL_STATE_SYNCED;
    o.rule.error[0] = '\0';
    ts_insert(d->st, &o, NULL);
    /* A create confirmed since the file was written: its local id is an alias. */
    ts_insert_rule(d->st, POLICY, "10.9.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_CREATING,
                   confirmed_local);
    model_object remote = ts_rule(POLICY, "10.9.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_SYNCED);
    strcpy(remote.rule.id, "ipr_2Zz1lqOxDdQyVpYcCCCCCCCCCCC");
    assert_int_equal(store_confirm_create(d->st, confirmed_local, &remote, &err), ERROR_OK);

    store_import *imp;
    assert_int_equal(store_begin(d->st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(d->st, MODEL_KIND_RULE, 0, &imp, &err), ERROR_OK);
    /* Equal rows, whatever the spelling of the CIDR or the file's state: left alone. */
    assert_int_equal(import_one_row(imp, rule_with(queued, "10.0.0.0/8", MODEL_ACTION_ALLOW,
                                                   "office"), ERROR_OK, &err),
                     STORE_IMPORT_UNCHANGED);
    assert_int_equal(import_one_row(imp, rule_with(REMOTE, "2001:DB8::/32", MODEL_ACTION_DENY, ""),
                                    ERROR_OK, &err),
                     STORE_IMPORT_UNCHANGED);
    assert_int_equal(import_one_row(imp, rule_with(confirmed_local, "10.9.0.0/16",
                                                   MODEL_ACTION_ALLOW, ""), ERROR_OK, &err),
                     STORE_IMPORT_UNCHANGED);
    /* No id, the key of a rule with the same values: the same rule. */
    assert_int_equal(import_one_row(imp, rule_with("", "10.0.0.0/8", MODEL_ACTION_ALLOW,
                                                   "office"), ERROR_OK, &err),
                     STORE_IMPORT_UNCHANGED);
    /* ... with other values: the natural key refuses it, naming the rule. */
    import_one_row(imp, rule_with("", "10.0.0.0/8", MODEL_ACTION_ALLOW, "other"),
                   ERROR_CONFLICT, &err);
    assert_non_null(strstr(err.msg, queued));
    /* A field an edit may change: the user's edit. */
    assert_int_equal(import_one_row(imp, rule_with(REMOTE, "2001:db8::/32", MODEL_ACTION_DENY,
                                                   "lab"), ERROR_OK, &err),
                     STORE_IMPORT_UPDATED);
    assert_int_equal(import_one_row(imp, rule_with(queued, "10.0.0.0/16", MODEL_ACTION_ALLOW,
                                                   "office"), ERROR_OK, &err),
                     STORE_IMPORT_UPDATED);
    /* One that never changes: refused, named. */
    import_one_row(imp, rule_with(REMOTE, "2001:db8::/32", MODEL_ACTION_ALLOW, "lab"),
                   ERROR_INVALID, &err);
    assert_non_null(strstr(err.msg, "action differs from the cached rule and cannot be changed"));
    /* Ids the cache does not know: a remote one is the remote's rule; a local one
     * (another cache's) a create here under a new id. */
    assert_int_equal(import_one_row(imp, rule_with("ipr_2Zz1lqOxDdQyVpYcNNNNNNNNNNN", "10.5.0.0/16",
                                                   MODEL_ACTION_DENY, ""), ERROR_OK, &err),
                     STORE_IMPORT_SYNCED);
    assert_int_equal(import_one_row(imp, rule_with("local_00000000000000000000000000", "10.6.0.0/16",
                                                   MODEL_ACTION_DENY, ""), ERROR_OK, &err),
                     STORE_IMPORT_CREATED);
    import_one_row(imp, rule_with("cr_2Zz1lqOxDdQyVpYcNNNNNNNNNNN", "10.7.0.0/16",
                                  MODEL_ACTION_DENY, ""), ERROR_INVALID, &err);
    assert_int_equal(store_import_finish(imp, &err), ERROR_OK);
    assert_int_equal(store_commit(d->st, &err), ERROR_OK);

    model_object row;
    assert_int_equal(store_get(d->st, MODEL_KIND_RULE, REMOTE, &row, &err), ERROR_OK);
    assert_int_equal(row.rule.state, MODEL_STATE_EDITED);
    assert_string_equal(row.rule.description, "lab");
    assert_int_equal(store_get(d->st, MODEL_KIND_RULE, queued, &row, &err), ERROR_OK);
    assert_int_equal(row.rule.state, MODEL_STATE_NEW);
    assert_string_equal(row.rule.cidr, "10.0.0.0/16");
    assert_int_equal(store_get(d->st, MODEL_KIND_RULE, "ipr_2Zz1lqOxDdQyVpYcNNNNNNNNNNN", &row,
                               &err),
                     ERROR_OK);
    assert_int_equal(row.rule.state, MODEL_STATE_SYNCED);
    assert_string_equal(row.rule.error, "");
    model_rule found;
    assert_int_equal(store_rule_find(d->st, POLICY, "10.6.0.0/16", &found, &err), ERROR_OK);
    assert_string_not_equal(found.id, "local_00000000000000000000000000");
    assert_int_equal(found.state, MODEL_STATE_NEW);
    assert_int_equal(rule_count(d->st), 5);
}

/* ---- the round trip -------------------------------------------------------------- */

typedef struct trip {
    store_import *imp;
    size_t count[STORE_IMPORT_UNCHANGED + 1];
} trip;

static error_code trip_rule(void *ctx, const model_rule *rule, size_t index, error_info *err)
{
    (void)index;
    trip *t = ctx;
    model_object o;
    o.kind = MODEL_KIND_RULE;
    o.rule = *rule;
    store_import_result result;
    if (store_import_add(t->imp, &o, &result, err))
        return err->code;
    t->count[result]++;
    return ERROR_OK;
}

/* What export writes (each row's wire object, one a line) into `out`. */
static error_code collect_export(void *ctx, model_object *rows, size_t count, error_info *err)
{
    (void)err;
    char *out = ctx;
    for (size_t i = 0; i < count; i++) {
        char *json = codec_object_encode(&rows[i], 0);
        assert_non_null(json);
        strcat(out, strlen(out) > 2 ? ",\n" : "");
        strcat(out, json);
        free(json);
    }
    return ERROR_OK;
}

static void import_text(store *st, const char *doc, trip *t, error_code want)
{
    error_info err;
    memset(t, 0, sizeof *t);
    assert_int_equal(store_begin(st, &err), ERROR_OK);
    assert_int_equal(store_import_begin(st, MODEL_KIND_RULE, 0, &t->imp, &err), ERROR_OK);
    chunked in = {doc, strlen(doc), 0, 7, false};
    error_code rc = codec_rule_stream_read(read_chunked, &in, trip_rule, t, &err);
    if (rc == ERROR_OK)
        rc = store_import_finish(t->imp, &err);
    else
        store_import_free(t->imp);
    if (rc != want)
        fail_msg("import: %d (%s), wanted %d", rc, err.msg, want);
    if (rc == ERROR_OK)
        assert_int_equal(store_commit(st, &err), ERROR_OK);
    else
        store_rollback(st);
}

static void test_import_round_trip(void **state)
{
    ts_store_dir *d = *state;
    for (int i = 0; i < 20; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        ts_insert_rule(d->st, POLICY, cidr, i % 2 ? MODEL_ACTION_ALLOW : MODEL_ACTION_DENY,
                       i % 3 ? MODEL_STATE_NEW : MODEL_STATE_FAILED, NULL);
    }
    char *doc = calloc(1, 64 << 10);
    assert_non_null(doc);
    strcpy(doc, "[\n");
    error_info err;
    store_query q = {.sort = STORE_SORT_ID};
    assert_int_equal(store_walk(d->st, MODEL_KIND_RULE, &q, 7, collect_export, doc, &err),
                     ERROR_OK);
    strcat(doc, "\n]\n");
    trip t;
    import_text(d->st, doc, &t, ERROR_OK);
    assert_int_equal(t.count[STORE_IMPORT_UNCHANGED], 20);
    assert_int_equal(t.count[STORE_IMPORT_CREATED] + t.count[STORE_IMPORT_UPDATED], 0);

    /* Edited in the file: one edit, the rest unchanged, still 20 rows. */
    char *at = strstr(doc, "10.4.0.0/16");
    assert_non_null(at);
    memcpy(at, "10.4.0.0/24", 11);
    import_text(d->st, doc, &t, ERROR_OK);
    assert_int_equal(t.count[STORE_IMPORT_UPDATED], 1);
    assert_int_equal(t.count[STORE_IMPORT_UNCHANGED], 19);
    assert_int_equal(rule_count(d->st), 20);
    model_rule found;
    assert_int_equal(store_rule_find(d->st, POLICY, "10.4.0.0/24", &found, &err), ERROR_OK);

    /* A bad element anywhere: nothing of the import stays, the message names it. */
    memcpy(at, "10.4.0.1/16", 11);
    import_text(d->st, doc, &t, ERROR_INVALID);
    assert_int_equal(store_rule_find(d->st, POLICY, "10.4.0.0/24", &found, &err), ERROR_OK);
    free(doc);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_import_rebuilds_indexes),
        T(test_import_rollback_restores),
        T(test_import_into_larger_table),
        T(test_import_keeps_natural_key),
        T(test_import_needs_transaction),
        T(test_import_memory_settings),
        T(test_import_matches_cache),
        T(test_import_round_trip),
        cmocka_unit_test(test_split_elements),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_split_limits),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* impact and logscan: generated logs of every format (a few thousand lines whose
 * counts are known by construction), and the flips of queued creates, edits and
 * deletes (and an apply's changes) over a real store. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "rampart/duration.h"
#include "rampart/buf.h"
#include "rampart/cidrset.h"
#include "rampart/impact.h"
#include "rampart/kind.h"
#include "rampart/logscan.h"
#include "test_support.h"

#define P "ipp_2VhYfCwqPkX0n4sF5nYfW3eJb1a"
#define A MODEL_ACTION_ALLOW
#define D MODEL_ACTION_DENY

/* 2026-11-28T10:00:00Z; line i of a generated log is i seconds later. */
#define T0 INT64_C(1795860000)
enum { LINES = 3000 };

/* Line i's address: five of them in turn; every 100th line (i % 100 == 99, always
 * the fifth address's turn) is garbage. So the first four get 600 lines each,
 * the fifth 570; address k is first seen at line k, last at 2995 + k (the fifth:
 * 2994, since 2999 is garbage). */
static const char *const addr_text[5] = {"203.0.113.9", "198.51.100.7", "2001:db8::1",
                                         "::ffff:192.0.2.10", "10.0.0.1"};
/* How each reads back (the mapped one as IPv4). */
static const char *const addr_back[5] = {"203.0.113.9", "198.51.100.7", "2001:db8::1",
                                         "192.0.2.10", "10.0.0.1"};
static const uint64_t want_requests[5] = {600, 600, 600, 600, 570};

static bool garbage(int i)
{
    return i % 100 == 99;
}

static void clf_time(int i, char *out, size_t size)
{
    time_t t = (time_t)(T0 + i);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%d/%b/%Y:%H:%M:%S +0000", &tm);
}

static void rfc3339(int i, char *out, size_t size)
{
    time_t t = (time_t)(T0 + i);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

typedef enum gen_kind { GEN_COMMON, GEN_COMBINED, GEN_FORWARDED, GEN_JSON, GEN_PLAIN } gen_kind;

/* The generated log of `kind` as one heap string. */
static char *generate(gen_kind kind)
{
    buf_t b = {0};
    for (int i = 0; i < LINES; i++) {
        const char *a = addr_text[i % 5];
        char t[64], line[512];
        if (kind == GEN_JSON)
            rfc3339(i, t, sizeof t);
        else
            clf_time(i, t, sizeof t);
        if (garbage(i)) {
            snprintf(line, sizeof line, "%s\n",
                     kind == GEN_JSON ? "{\"conn\": {\"port\": 443}, \"msg\": \"no address\"}"
                                      : "not a log line at all");
        } else if (kind == GEN_COMMON) {
            snprintf(line, sizeof line, "%s - - [%s] \"GET /x HTTP/1.1\" 200 512\n", a, t);
        } else if (kind == GEN_COMBINED) {
            snprintf(line, sizeof line, "%s - bob [%s] \"GET /a b HTTP/1.1\" 200 512 \"-\" "
                     "\"Mozilla/5.0 (X11; Linux)\"\r\n", a, t);
        } else if (kind == GEN_FORWARDED) { /* the proxy's address first, the client's last */
            snprintf(line, sizeof line, "127.0.0.1 - - [%s] \"GET / HTTP/1.1\" 200 1 \"-\" "
                     "\"curl/8 (x y)\" \"%s, 10.9.9.9\"\n", t, a);
        } else if (kind == GEN_JSON) {
            snprintf(line, sizeof line, "{\"ts\": \"%s\", \"req\": {\"path\": \"/{x}\", "
                     "\"q\": [1, {\"a\": \"]\"}]}, \"conn\": {\"port\": 443, \"client_ip\": "
                     "\"%s\"}}\n", t, a);
        } else {
            snprintf(line, sizeof line, "%s\n", a);
        }
        assert_true(buf_puts(&b, line));
    }
    char *s = strdup(b.data);
    buf_free(&b);
    return s;
}

static logscan *scan_text(const logscan_opts *o, const char *text)
{
    logscan *ls = NULL;
    error_info e = {0};
    assert_int_equal(logscan_new(o, &ls, &e), ERROR_OK);
    if (logscan_text(ls, "gen.log", text, strlen(text), &e) != ERROR_OK)
        fail_msg("logscan_text: %s", e.msg);
    return ls;
}

static const logscan_addr *find(const logscan *ls, const char *text)
{
    policy_addr want;
    error_info e;
    assert_int_equal(policy_addr_parse(text, &want, &e), ERROR_OK);
    size_t n;
    const logscan_addr *a = logscan_addrs(ls, &n);
    for (size_t i = 0; i < n; i++)
        if (a[i].addr.family == want.family && memcmp(a[i].addr.bytes, want.bytes, 16) == 0)
            return &a[i];
    return NULL;
}

/* The five addresses with their counts and times, the garbage counted. */
static void expect_generated(const logscan *ls, bool timed)
{
    const logscan_stats *st = logscan_get_stats(ls);
    assert_int_equal(st->lines, LINES);
    assert_int_equal(st->bad, 30);
    assert_int_equal(st->used, LINES - 30);
    assert_int_equal(st->bad_line, 100);
    size_t n;
    logscan_addrs(ls, &n);
    assert_int_equal(n, 5);
    for (int k = 0; k < 5; k++) {
        const logscan_addr *a = find(ls, addr_back[k]);
        assert_non_null(a);
        assert_int_equal(a->requests, want_requests[k]);
        if (!timed) {
            assert_true(a->first == INT64_MAX && a->last == INT64_MIN);
            continue;
        }
        assert_int_equal(a->first, T0 + k);
        assert_int_equal(a->last, T0 + (k == 4 ? 2994 : 2995 + k));
    }
}

static void test_formats(void **state)
{
    (void)state;
    static const struct {
        gen_kind kind;
        logscan_opts o;
        bool timed;
    } cases[] = {
        {GEN_COMMON, {0}, true},
        {GEN_COMBINED, {0}, true},
        {GEN_COMBINED, {.format = LOGSCAN_CLF}, true},
        {GEN_FORWARDED, {.ip_field = 10}, true},
        {GEN_JSON, {.ip_key = "conn.client_ip", .time_key = "ts"}, true},
        {GEN_JSON, {.ip_key = "conn.client_ip"}, false},
        {GEN_PLAIN, {0}, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = generate(cases[i].kind);
        logscan *ls = scan_text(&cases[i].o, text);
        expect_generated(ls, cases[i].timed);
        logscan_free(ls);
        free(text);
    }
}

/* The forwarded log read by its first field: every request is the proxy's. */
static void test_proxy_field(void **state)
{
    (void)state;
    char *text = generate(GEN_FORWARDED);
    logscan *ls = scan_text(&(logscan_opts){0}, text);
    size_t n;
    const logscan_addr *a = logscan_addrs(ls, &n);
    assert_int_equal(n, 1);
    assert_true(logscan_addr_private(&a[0].addr));
    assert_int_equal(a[0].requests, LINES - 30);
    logscan_free(ls);
    free(text);
}

static void test_since_and_cap(void **state)
{
    (void)state;
    char *text = generate(GEN_COMMON);
    /* since line 1500: lines 1500.. are kept (15 of their garbage lines too are bad) */
    logscan *ls = scan_text(&(logscan_opts){.since = T0 + 1500}, text);
    const logscan_stats *st = logscan_get_stats(ls);
    assert_int_equal(st->old, 1500 - 15);
    assert_int_equal(st->bad, 30);
    assert_int_equal(find(ls, "203.0.113.9")->requests, 300);
    assert_int_equal(find(ls, "203.0.113.9")->first, T0 + 1500);
    logscan_free(ls);
    /* a plain list has no time: with since, every line is bad */
    char *plain = generate(GEN_PLAIN);
    ls = scan_text(&(logscan_opts){.since = T0}, plain);
    assert_int_equal(logscan_get_stats(ls)->bad, LINES);
    assert_int_equal(logscan_get_stats(ls)->used, 0);
    logscan_free(ls);
    /* three addresses kept: the lines of the other two are counted over the cap */
    ls = scan_text(&(logscan_opts){.max_addresses = 3}, text);
    size_t n;
    logscan_addrs(ls, &n);
    assert_int_equal(n, 3);
    assert_int_equal(logscan_get_stats(ls)->over_cap, 600 + 570);
    logscan_free(ls);
    free(plain);
    free(text);
}

static void test_bad_lines(void **state)
{
    (void)state;
    buf_t b = {0};
    assert_true(buf_puts(&b, "[2001:db8::5]:443 - - [28/Nov/2026:10:00:00 +0100] x\n"));
    assert_true(buf_puts(&b, "10.0.0.1:8080 - - [28/Nov/2026:10:00:00 -0130] x\n"));
    assert_true(buf_puts(&b, "010.0.0.1 - - x\n"));   /* a leading zero: refused */
    assert_true(buf_puts(&b, "10.0.0.256 - - x\n"));
    assert_true(buf_puts(&b, "fe80::1%eth0 - - x\n")); /* a zone: refused */
    assert_true(buf_puts(&b, "unix: - - x\n"));
    assert_true(buf_puts(&b, "\n  \n"));
    for (int i = 0; i < 70000; i++) /* one line past LOGSCAN_LINE_MAX */
        assert_true(buf_puts(&b, "9"));
    assert_true(buf_puts(&b, "\n192.0.2.1 - - [bad time] x")); /* no newline at the end */
    logscan *ls = scan_text(&(logscan_opts){.format = LOGSCAN_CLF}, b.data);
    const logscan_stats *st = logscan_get_stats(ls);
    assert_int_equal(st->lines, 10);
    assert_int_equal(st->blank, 2);
    assert_int_equal(st->bad, 4);
    assert_int_equal(st->too_long, 1);
    assert_int_equal(st->bad_line, 3);
    assert_int_equal(st->used, 3);
    assert_int_equal(find(ls, "2001:db8::5")->first, T0 - 3600);
    assert_int_equal(find(ls, "10.0.0.1")->first, T0 + 5400);
    assert_true(find(ls, "192.0.2.1")->first == INT64_MAX); /* its time unreadable */
    logscan_free(ls);
    buf_free(&b);
    /* JSON lines without --ip-key: an error naming the option */
    ls = NULL;
    error_info e = {0};
    assert_int_equal(logscan_new(&(logscan_opts){0}, &ls, &e), ERROR_OK);
    assert_int_equal(logscan_text(ls, "j.log", "{\"ip\": \"10.0.0.1\"}\n", 19, &e),
                     ERROR_INVALID);
    assert_non_null(strstr(e.msg, "--ip-key"));
    logscan_free(ls);
    assert_int_equal(logscan_new(&(logscan_opts){.ip_key = "a..b"}, &ls, &e), ERROR_INVALID);
}

/* Hostile bytes: a NUL inside an address ends no text early; a first line of
 * carriage returns is blank, so the next line decides the format. */
static void test_hostile_lines(void **state)
{
    (void)state;
    static const char text[] = "\r\r\n2001:db8::1\0zz - - x\n192.0.2.1 - - x\n";
    logscan *ls = NULL;
    error_info e = {0};
    assert_int_equal(logscan_new(&(logscan_opts){0}, &ls, &e), ERROR_OK);
    assert_int_equal(logscan_text(ls, "h.log", text, sizeof text - 1, &e), ERROR_OK);
    const logscan_stats *st = logscan_get_stats(ls);
    assert_int_equal(st->lines, 3);
    assert_int_equal(st->blank, 1); /* the line of \r: not a plain list's word */
    assert_int_equal(st->bad, 1);
    assert_int_equal(st->used, 1);
    assert_null(find(ls, "2001:db8::1"));
    assert_non_null(find(ls, "192.0.2.1"));
    logscan_free(ls);
    /* a bracketed IPv6 address's port is digits, as an IPv4 address's is */
    ls = scan_text(&(logscan_opts){.format = LOGSCAN_PLAIN},
                   "[2001:db8::1]:\n[2001:db8::2]:http\n[2001:db8::3]:443\n[2001:db8::4]\n"
                   "192.0.2.5:\n192.0.2.6:443\n");
    assert_int_equal(logscan_get_stats(ls)->bad, 3);
    assert_null(find(ls, "2001:db8::1"));
    assert_null(find(ls, "2001:db8::2"));
    assert_non_null(find(ls, "2001:db8::3"));
    assert_non_null(find(ls, "2001:db8::4"));
    assert_non_null(find(ls, "192.0.2.6"));
    logscan_free(ls);
    /* days a month does not have: no time (not the 1st of the next month) */
    ls = scan_text(&(logscan_opts){0},
                   "192.0.2.1 - - [31/Apr/2026:00:00:00 +0000] x\n"
                   "192.0.2.2 - - [29/Feb/2027:00:00:00 +0000] x\n"
                   "192.0.2.3 - - [29/Feb/2028:00:00:00 +0000] x\n");
    assert_true(find(ls, "192.0.2.1")->first == INT64_MAX);
    assert_true(find(ls, "192.0.2.2")->first == INT64_MAX);
    assert_int_equal(find(ls, "192.0.2.3")->first, INT64_C(1835395200));
    logscan_free(ls);
    /* past the year 9999 (an offset, a huge epoch number): no time, since it
     * could not be printed back as RFC 3339 */
    ls = scan_text(&(logscan_opts){.format = LOGSCAN_JSON, .ip_key = "ip", .time_key = "t"},
                   "{\"ip\": \"192.0.2.1\", \"t\": \"9999-12-31T23:59:59-01:00\"}\n"
                   "{\"ip\": \"192.0.2.2\", \"t\": 9999999999999999}\n"
                   "{\"ip\": \"192.0.2.3\", \"t\": \"9999-12-31T23:59:59Z\"}\n");
    assert_true(find(ls, "192.0.2.1")->first == INT64_MAX);
    assert_true(find(ls, "192.0.2.2")->first == INT64_MAX);
    assert_int_equal(find(ls, "192.0.2.3")->first, INT64_C(253402300799));
    logscan_free(ls);
}

static void count_progress(void *ctx, const char *file, uint64_t bytes, uint64_t lines)
{
    (void)file;
    (void)lines;
    uint64_t *last = ctx;
    *last = bytes;
}

/* A log of one endless line (a gzip bomb, /dev/zero) still shows progress. */
static void test_progress_without_lines(void **state)
{
    (void)state;
    size_t len = (size_t)LOGSCAN_PROGRESS_BYTES + 4096;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, '0', len);
    uint64_t told = 0;
    logscan *ls = NULL;
    error_info e = {0};
    assert_int_equal(logscan_new(&(logscan_opts){.progress = count_progress,
                                                  .progress_ctx = &told}, &ls, &e), ERROR_OK);
    assert_int_equal(logscan_text(ls, "zero.log", text, len, &e), ERROR_OK);
    assert_true(told >= (uint64_t)LOGSCAN_PROGRESS_BYTES);
    assert_int_equal(logscan_get_stats(ls)->too_long, 1);
    logscan_free(ls);
    free(text);
}

static void test_gzip_file(void **state)
{
    (void)state;
    char dir[64], path[128];
    ts_temp_dir_path(dir, sizeof dir, "/tmp/rampart-impact.XXXXXX", path, sizeof path,
                     "access.log.gz");
    char *text = generate(GEN_COMBINED);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_true(gzwrite(gz, text, (unsigned)strlen(text)) > 0);
    assert_int_equal(gzclose(gz), Z_OK);
    logscan *ls = NULL;
    error_info e = {0};
    assert_int_equal(logscan_new(&(logscan_opts){0}, &ls, &e), ERROR_OK);
    assert_int_equal(logscan_file(ls, path, &e), ERROR_OK);
    expect_generated(ls, true);
    assert_int_equal(logscan_file(ls, "/nonexistent/x.log", &e), ERROR_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/x.log"));
    logscan_free(ls);
    /* cut in half (a log still being compressed): an error, not half a log read
     * as a whole one (zlib's gzread returns what it got and says nothing) */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char gzdata[65536];
    size_t got = fread(gzdata, 1, sizeof gzdata, f);
    fclose(f);
    assert_true(got > 100 && got < sizeof gzdata);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(gzdata, 1, got / 2, f), got / 2);
    fclose(f);
    assert_int_equal(logscan_new(&(logscan_opts){0}, &ls, &e), ERROR_OK);
    assert_int_equal(logscan_file(ls, path, &e), ERROR_IO);
    assert_non_null(strstr(e.msg, "truncated"));
    logscan_free(ls);
    free(text);
    assert_int_equal(ts_remove_tree(dir), 0);
}

/* ---- the engine over a real store ---- */

typedef struct fixture {
    store *st;
    logscan *ls;
} fixture;

static int setup(void **state)
{
    fixture *f = ts_zalloc(sizeof *f);
    f->st = ts_store_open(":memory:");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    logscan_free(f->ls);
    store_close(f->st);
    free(f);
    return 0;
}

static void put(fixture *f, const char *id, const char *cidr, model_action action,
                model_state state)
{
    model_object o = ts_rule(P, cidr, action, state);
    if (id)
        strcpy(o.rule.id, id);
    ts_insert(f->st, &o, NULL);
}

static void edit_cidr(fixture *f, const char *id, const char *cidr)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.id, id);
    strcpy(o.rule.cidr, cidr);
    error_info e;
    const kind_field *fld = kind_field_by_name(MODEL_KIND_RULE, "cidr");
    if (store_edit(f->st, &o, kind_field_bit(MODEL_KIND_RULE, fld), NULL, &e) != ERROR_OK)
        fail_msg("store_edit: %s", e.msg);
    model_object_clear(&o);
}

static void delete_row(fixture *f, const char *id)
{
    error_info e;
    if (store_delete(f->st, MODEL_KIND_RULE, id, NULL, &e) != ERROR_OK)
        fail_msg("store_delete: %s", e.msg);
}

/* The flip of `ip` in `r`, or NULL. */
static const impact_flip *flip_of(const fixture *f, const impact_result *r, const char *ip)
{
    const logscan_addr *a = find(f->ls, ip);
    size_t n;
    const logscan_addr *all = logscan_addrs(f->ls, &n);
    for (size_t i = 0; a && i < r->nflips; i++)
        if (&all[r->flips[i].addr] == a)
            return &r->flips[i];
    return NULL;
}

static void evaluate(fixture *f, const char *log, const impact_change *changes, size_t n,
                     impact_index **ix, impact_result *r)
{
    logscan_free(f->ls);
    f->ls = scan_text(&(logscan_opts){0}, log);
    error_info e = {0};
    if (impact_index_load(f->st, P, changes, n, ix, &e) != ERROR_OK)
        fail_msg("impact_index_load: %s", e.msg);
    size_t na;
    const logscan_addr *addrs = logscan_addrs(f->ls, &na);
    assert_int_equal(impact_eval(*ix, addrs, na, r, &e), ERROR_OK);
}

static const char *rule_id(const impact_index *ix, uint32_t rule)
{
    static impact_rule_info info;
    impact_rule_get(ix, rule, &info);
    return info.id;
}

#define R_ALL4 "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc01"
#define R_ALL6 "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc02"
#define R_DEL "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc03"
#define R_EDIT "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc04"
#define R_DENY8 "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc05"
#define R_GONE "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc06"

/* Requests per address: 203.0.113.9 x4, 198.51.100.7 x3, 192.0.2.10 x2 (one of
 * them as ::ffff:192.0.2.10), and once each the rest. */
static const char *const traffic =
    "203.0.113.9\n203.0.113.9\n203.0.113.9\n203.0.113.9\n"
    "198.51.100.7\n198.51.100.7\n198.51.100.7\n"
    "192.0.2.10\n::ffff:192.0.2.10\n"
    "192.0.2.200\n10.0.0.1\n2001:db8::1\n2001:db9::1\n172.16.5.5\n100.64.0.9\n8.8.8.8\n";

/* The queue's changes flip exactly the addresses they should. */
static void test_queued_changes(void **state)
{
    fixture *f = *state;
    put(f, R_ALL4, "0.0.0.0/0", A, MODEL_STATE_SYNCED);
    put(f, R_ALL6, "::/0", A, MODEL_STATE_SYNCED);
    /* a queued deny create: 203.0.113.9 allow -> deny */
    put(f, NULL, "203.0.113.0/24", D, MODEL_STATE_NEW);
    /* a queued delete of a deny: 198.51.100.7 deny -> allow */
    put(f, R_DEL, "198.51.100.0/24", D, MODEL_STATE_SYNCED);
    delete_row(f, R_DEL);
    /* a deny edited from the /24 to its upper /25: 192.0.2.10 deny -> allow,
     * 192.0.2.200 stays denied */
    put(f, R_EDIT, "192.0.2.0/24", D, MODEL_STATE_SYNCED);
    edit_cidr(f, R_EDIT, "192.0.2.128/25");
    /* deny wins as in check: a pending allow /24 inside a synced deny /8 flips
     * nothing */
    put(f, R_DENY8, "10.0.0.0/8", D, MODEL_STATE_SYNCED);
    put(f, NULL, "10.0.0.0/24", A, MODEL_STATE_NEW);
    /* IPv6: a failed deny create still counts after */
    put(f, NULL, "2001:db8::/32", D, MODEL_STATE_FAILED);
    /* an unknown-outcome deny create counts after too */
    put(f, NULL, "172.16.0.0/12", D, MODEL_STATE_UNKNOWN);
    /* deleted remotely: on neither side */
    put(f, R_GONE, "100.64.0.0/10", D, MODEL_STATE_REMOTE_DELETED);

    impact_index *ix = NULL;
    impact_result r = {0};
    evaluate(f, traffic, NULL, 0, &ix, &r);
    assert_int_equal(r.nflips, 5);
    /* most requests first */
    const impact_flip *x = &r.flips[0];
    assert_ptr_equal(x, flip_of(f, &r, "203.0.113.9"));
    assert_true(x->before.allowed && !x->after.allowed);
    assert_string_equal(rule_id(ix, x->before.rule), R_ALL4);
    impact_rule_info info;
    impact_rule_get(ix, x->after.rule, &info);
    assert_string_equal(info.cidr, "203.0.113.0/24");
    assert_string_equal(info.label, "pending");
    x = &r.flips[1];
    assert_ptr_equal(x, flip_of(f, &r, "198.51.100.7"));
    assert_true(!x->before.allowed && x->after.allowed);
    impact_rule_get(ix, x->before.rule, &info);
    assert_string_equal(info.id, R_DEL);
    assert_string_equal(info.label, "removed");
    x = &r.flips[2];
    assert_ptr_equal(x, flip_of(f, &r, "192.0.2.10"));
    assert_int_equal(x->requests, 2); /* the mapped form is the same address */
    assert_true(!x->before.allowed && x->after.allowed);
    impact_rule_get(ix, x->before.rule, &info);
    assert_string_equal(info.cidr, "192.0.2.0/24"); /* the edit's base */
    x = flip_of(f, &r, "2001:db8::1");
    assert_non_null(x);
    impact_rule_get(ix, x->after.rule, &info);
    assert_string_equal(info.label, "failed"); /* not "pending": it was refused */
    assert_non_null(flip_of(f, &r, "172.16.5.5"));
    assert_null(flip_of(f, &r, "192.0.2.200"));
    assert_null(flip_of(f, &r, "10.0.0.1"));
    assert_null(flip_of(f, &r, "2001:db9::1"));
    assert_null(flip_of(f, &r, "100.64.0.9"));
    assert_null(flip_of(f, &r, "8.8.8.8"));
    assert_int_equal(r.denied_addresses, 3);
    assert_int_equal(r.denied_requests, 6);
    assert_int_equal(r.allowed_addresses, 2);
    assert_int_equal(r.allowed_requests, 5);
    /* a rule line per change that flips something, most requests first */
    assert_int_equal(r.nrules, 5);
    impact_rule_get(ix, r.rules[0].rule, &info);
    assert_string_equal(info.cidr, "203.0.113.0/24");
    assert_int_equal(r.rules[0].addresses, 1);
    assert_int_equal(r.rules[0].requests, 4);
    assert_string_equal(rule_id(ix, r.rules[1].rule), R_DEL);
    assert_int_equal(r.rules[1].requests, 3);
    impact_result_free(&r);
    impact_index_free(ix);
    /* the whole queue, as the console adds it up: this policy, plus one whose
     * only rule is synced (no change: not counted) */
    model_object o = ts_rule("ipp_2VhYfCwqPkX0n4sF5nYfW3eJb2b", "0.0.0.0/0", D,
                             MODEL_STATE_SYNCED);
    strcpy(o.rule.id, "ipr_2VhYfCwqPkX0n4sF5nYfW3eJc99");
    ts_insert(f->st, &o, NULL);
    impact_totals t;
    error_info e;
    size_t na;
    const logscan_addr *addrs = logscan_addrs(f->ls, &na);
    assert_int_equal(impact_queue_totals(f->st, addrs, na, &t, &e), ERROR_OK);
    assert_int_equal(t.policies, 1);
    assert_int_equal(t.denied_addresses, 3);
    assert_int_equal(t.denied_requests, 6);
    assert_int_equal(t.allowed_addresses, 2);
    assert_int_equal(t.allowed_requests, 5);
}

/* An apply's changes: a synced rule removed, one moved, one created. */
static void test_apply_changes(void **state)
{
    fixture *f = *state;
    put(f, R_ALL4, "0.0.0.0/0", A, MODEL_STATE_SYNCED);
    put(f, R_DEL, "198.51.100.0/24", D, MODEL_STATE_SYNCED);
    put(f, R_EDIT, "192.0.2.0/24", D, MODEL_STATE_SYNCED);
    impact_change ch[3] = {{.kind = IMPACT_CHANGE_REMOVE, .rule_id = R_DEL},
                           {.kind = IMPACT_CHANGE_MOVE, .rule_id = R_EDIT},
                           {.kind = IMPACT_CHANGE_ADD, .action = D}};
    error_info e;
    assert_int_equal(cidrset_parse_entry("192.0.2.128/25", &ch[1].pfx, &e), ERROR_OK);
    assert_int_equal(cidrset_parse_entry("203.0.113.0/24", &ch[2].pfx, &e), ERROR_OK);
    impact_index *ix = NULL;
    impact_result r = {0};
    evaluate(f, traffic, ch, 3, &ix, &r);
    assert_int_equal(r.nflips, 3);
    impact_rule_info info;
    impact_rule_get(ix, flip_of(f, &r, "203.0.113.9")->after.rule, &info);
    assert_string_equal(info.label, "apply");
    assert_string_equal(info.id, "");
    assert_true(flip_of(f, &r, "198.51.100.7")->after.allowed);
    assert_true(flip_of(f, &r, "192.0.2.10")->after.allowed);
    assert_null(flip_of(f, &r, "192.0.2.200"));
    impact_result_free(&r);
    impact_index_free(ix);
}

/* Nothing queued: nothing flips; an empty policy denies both sides alike. */
static void test_nothing_queued(void **state)
{
    fixture *f = *state;
    impact_index *ix = NULL;
    impact_result r = {0};
    evaluate(f, traffic, NULL, 0, &ix, &r);
    assert_int_equal(r.nflips, 0);
    assert_int_equal(impact_index_rules(ix), 0);
    impact_result_free(&r);
    impact_index_free(ix);
    put(f, R_ALL4, "0.0.0.0/0", A, MODEL_STATE_SYNCED);
    evaluate(f, traffic, NULL, 0, &ix, &r);
    assert_int_equal(r.nflips, 0);
    assert_int_equal(impact_index_changed(ix), 0);
    impact_result_free(&r);
    impact_index_free(ix);
}

/* The index alone: a mapped rule decides as IPv4; both sides in one probe. */
static void test_index_direct(void **state)
{
    (void)state;
    impact_index *ix = NULL;
    error_info e;
    assert_int_equal(impact_index_new(&ix, &e), ERROR_OK);
    validate_prefix p;
    assert_int_equal(validate_cidr("::ffff:198.51.100.0/120", &p, NULL, 0, &e), ERROR_OK);
    assert_int_equal(impact_index_add(ix, &p, D, "ipr_m", IMPACT_AFTER, false, &e), ERROR_OK);
    assert_int_equal(validate_cidr("0.0.0.0/0", &p, NULL, 0, &e), ERROR_OK);
    assert_int_equal(impact_index_add(ix, &p, A, "ipr_a", IMPACT_BOTH, false, &e), ERROR_OK);
    /* the same prefix and action on both sides from two rules */
    assert_int_equal(validate_cidr("203.0.113.0/24", &p, NULL, 0, &e), ERROR_OK);
    assert_int_equal(impact_index_add(ix, &p, D, "ipr_old", IMPACT_BEFORE, false, &e), ERROR_OK);
    assert_int_equal(impact_index_add(ix, &p, D, "ipr_new", IMPACT_AFTER, false, &e), ERROR_OK);
    p.addr[3] = 1; /* host bits */
    assert_int_equal(impact_index_add(ix, &p, D, "x", IMPACT_BOTH, false, &e), ERROR_INVALID);
    policy_addr a;
    impact_side b, af;
    assert_int_equal(policy_addr_parse("198.51.100.7", &a, &e), ERROR_OK);
    impact_check(ix, &a, &b, &af);
    assert_true(b.allowed && !af.allowed);
    assert_string_equal(rule_id(ix, af.rule), "ipr_m");
    assert_int_equal(policy_addr_parse("203.0.113.9", &a, &e), ERROR_OK);
    impact_check(ix, &a, &b, &af);
    assert_true(!b.allowed && !af.allowed);
    assert_string_equal(rule_id(ix, b.rule), "ipr_old");
    assert_string_equal(rule_id(ix, af.rule), "ipr_new");
    assert_int_equal(policy_addr_parse("2001:db8::1", &a, &e), ERROR_OK);
    impact_check(ix, &a, &b, &af); /* no IPv6 rule: not allowed, no rule */
    assert_true(!b.allowed && !af.allowed && b.rule == IMPACT_NO_RULE);
    impact_index_free(ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_proxy_field),
        cmocka_unit_test(test_since_and_cap),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_hostile_lines),
        cmocka_unit_test(test_progress_without_lines),
        cmocka_unit_test(test_gzip_file),
        cmocka_unit_test_setup_teardown(test_queued_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_queued, setup, teardown),
        cmocka_unit_test(test_index_direct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

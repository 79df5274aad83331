/* logscan: access logs streamed into their distinct client addresses (see
 * rampart/logscan.h). The per-line path parses in place: no regex, no copy of
 * the line, no allocation; one hash probe per line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rampart/logscan.h"

enum {
    CHUNK = 1 << 20,    /* bytes asked of zlib at a time */
    ADDR_TEXT_MAX = 63, /* longest address text parsed (IPv6 with brackets, port) */
    TIME_TEXT_MAX = 40
};

#define TIME_MAX INT64_C(253402300799) /* 9999-12-31T23:59:59Z */

typedef struct key_path {
    const char *part[LOGSCAN_PATH_DEPTH];
    size_t len[LOGSCAN_PATH_DEPTH];
    size_t n;
} key_path;

struct logscan {
    logscan_opts o;
    key_path ip_key, time_key;
    logscan_addr *addrs;
    size_t n, cap;
    uint32_t *slots; /* index in addrs, or UINT32_MAX; a power of two in size */
    size_t nslots;
    unsigned shift;  /* 64 - log2(nslots) */
    logscan_stats st;
    /* the file being read */
    logscan_format fmt;
    const char *label;
    uint64_t line_no;
    error_info fail; /* set by a line that stops the file (JSON without ip_key) */
    bool failed;
    /* the last time text parsed, and its value (logs repeat a second many times) */
    char tcache[TIME_TEXT_MAX];
    size_t tcache_len;
    int64_t tcache_val;
    bool tcache_ok;
    char *buf;
};

/* ---- formats ---- */

static const char *const format_names[LOGSCAN_FORMAT_COUNT] = {
    [LOGSCAN_AUTO] = "auto", [LOGSCAN_CLF] = "combined", [LOGSCAN_JSON] = "json",
    [LOGSCAN_PLAIN] = "plain"};

bool logscan_format_parse(const char *name, logscan_format *out)
{
    for (int f = 0; f < LOGSCAN_FORMAT_COUNT; f++) {
        if (strcmp(name, format_names[f]) == 0 ||
            (f == LOGSCAN_CLF && strcmp(name, "common") == 0)) {
            *out = (logscan_format)f;
            return true;
        }
    }
    return false;
}

const char *logscan_format_name(logscan_format f)
{
    return (unsigned)f < LOGSCAN_FORMAT_COUNT ? format_names[f] : "?";
}

/* ---- the table of distinct addresses ---- */

static uint64_t addr_hash(const policy_addr *a)
{
    uint64_t k0, k1;
    memcpy(&k0, a->bytes, 8);
    memcpy(&k1, a->bytes + 8, 8);
    uint64_t h = (k0 ^ (k1 * UINT64_C(0x9E3779B97F4A7C15)) ^ (uint64_t)a->family) *
                 UINT64_C(0xD6E8FEB86659FD93);
    return h ^ (h >> 29);
}

static bool table_grow(logscan *ls)
{
    size_t nslots = ls->nslots ? ls->nslots * 2 : 1024;
    uint32_t *slots = malloc(nslots * sizeof *slots);
    if (!slots)
        return false;
    memset(slots, 0xff, nslots * sizeof *slots);
    unsigned shift = 64;
    for (size_t s = nslots; s > 1; s >>= 1)
        shift--;
    for (size_t i = 0; i < ls->n; i++) {
        size_t j = (size_t)(addr_hash(&ls->addrs[i].addr) >> shift);
        while (slots[j] != UINT32_MAX)
            j = (j + 1) & (nslots - 1);
        slots[j] = (uint32_t)i;
    }
    free(ls->slots);
    ls->slots = slots;
    ls->nslots = nslots;
    ls->shift = shift;
    return true;
}

static void tally(logscan *ls, const policy_addr *a, bool timed, int64_t t)
{
    if ((ls->n + 1) * 4 > ls->nslots * 3 && ls->n < ls->o.max_addresses && !table_grow(ls)) {
        ls->st.over_cap++;
        return;
    }
    size_t mask = ls->nslots - 1;
    size_t j = (size_t)(addr_hash(a) >> ls->shift);
    for (;; j = (j + 1) & mask) {
        uint32_t i = ls->slots[j];
        if (i == UINT32_MAX)
            break;
        logscan_addr *e = &ls->addrs[i];
        if (e->addr.family == a->family && memcmp(e->addr.bytes, a->bytes, 16) == 0) {
            e->requests++;
            if (timed && t < e->first)
                e->first = t;
            if (timed && t > e->last)
                e->last = t;
            ls->st.used++;
            return;
        }
    }
    if (ls->n >= ls->o.max_addresses) {
        ls->st.over_cap++;
        return;
    }
    if (ls->n == ls->cap) {
        size_t cap = ls->cap ? ls->cap * 2 : 1024;
        logscan_addr *grown = realloc(ls->addrs, cap * sizeof *grown);
        if (!grown) {
            ls->st.over_cap++;
            return;
        }
        ls->addrs = grown;
        ls->cap = cap;
    }
    logscan_addr *e = &ls->addrs[ls->n];
    e->addr = *a;
    e->requests = 1;
    e->first = timed ? t : INT64_MAX;
    e->last = timed ? t : INT64_MIN;
    ls->slots[j] = (uint32_t)ls->n++;
    ls->st.used++;
}

/* ---- addresses ---- */

/* ":port" (or nothing) at s[0..n). */
static bool port_ok(const char *s, size_t n)
{
    if (n == 0)
        return true;
    if (s[0] != ':' || n == 1)
        return false;
    for (size_t k = 1; k < n; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    return true;
}

/* A dotted quad, no leading zeros, maybe followed by ":port". */
static bool parse_v4(const char *s, size_t n, policy_addr *out)
{
    size_t i = 0;
    for (int octet = 0; octet < 4; octet++) {
        if (octet && (i >= n || s[i++] != '.'))
            return false;
        size_t start = i;
        unsigned v = 0;
        while (i < n && i - start < 3 && s[i] >= '0' && s[i] <= '9')
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
            return false;
        out->bytes[octet] = (uint8_t)v;
    }
    if (!port_ok(s + i, n - i))
        return false;
    out->family = 4;
    memset(out->bytes + 4, 0, 12);
    return true;
}

static bool parse_addr(const char *s, size_t n, policy_addr *out)
{
    if (n && s[0] >= '0' && s[0] <= '9' && parse_v4(s, n, out))
        return true;
    if (n && s[0] == '[') { /* [v6]:port */
        const char *close = memchr(s, ']', n);
        if (!close)
            return false;
        if (!port_ok(close + 1, n - (size_t)(close - s) - 1))
            return false;
        n = (size_t)(close - s) - 1;
        s++;
    }
    if (n == 0 || n > ADDR_TEXT_MAX || !memchr(s, ':', n) || memchr(s, '\0', n))
        return false; /* a NUL would end the text early: "2001:db8::1<NUL>zz" */
    char text[ADDR_TEXT_MAX + 1];
    memcpy(text, s, n);
    text[n] = '\0';
    error_info e;
    return policy_addr_parse(text, out, &e) == ERROR_OK;
}

bool logscan_addr_private(const policy_addr *a)
{
    const uint8_t *b = a->bytes;
    if (a->family == 4)
        return b[0] == 10 || b[0] == 127 || (b[0] == 172 && (b[1] & 0xf0) == 16) ||
               (b[0] == 192 && b[1] == 168) || (b[0] == 169 && b[1] == 254) ||
               (b[0] == 100 && (b[1] & 0xc0) == 64);
    static const uint8_t loop[16] = {[15] = 1};
    return memcmp(b, loop, 16) == 0 || (b[0] & 0xfe) == 0xfc ||
           (b[0] == 0xfe && (b[1] & 0xc0) == 0x80);
}

/* ---- times ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

static bool civil_ok(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s)
{
    static const unsigned char mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    return y >= 1970 && y <= 9999 && mo >= 1 && mo <= 12 && d >= 1 && d <= mdays[mo - 1] &&
           (mo != 2 || d <= 28 || leap) && h <= 23 && mi <= 59 && s <= 60;
}

static int64_t civil_seconds(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                             unsigned s)
{
    return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

/* "+0100", "-05:30", "Z": seconds east of UTC. */
static bool zone_offset(const char *s, size_t n, int64_t *off)
{
    if (n == 1 && (s[0] == 'Z' || s[0] == 'z')) {
        *off = 0;
        return true;
    }
    unsigned h, m;
    if ((n != 5 && n != 6) || (s[0] != '+' && s[0] != '-') || !digits(s + 1, 2, &h) ||
        (n == 6 && s[3] != ':') || !digits(s + n - 2, 2, &m) || h > 23 || m > 59)
        return false;
    *off = (s[0] == '-' ? -1 : 1) * (int64_t)(h * 3600 + m * 60);
    return true;
}

/* 28/Nov/2026:10:02:13 +0000 */
static bool parse_clf_time(const char *s, size_t n, int64_t *out)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    unsigned d, y, h, mi, sec;
    if (n < 20 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' ||
        s[17] != ':' || !digits(s, 2, &d) || !digits(s + 7, 4, &y) ||
        !digits(s + 12, 2, &h) || !digits(s + 15, 2, &mi) || !digits(s + 18, 2, &sec))
        return false;
    unsigned mo = 0;
    for (unsigned i = 0; i < 12; i++)
        if (memcmp(s + 3, months + 3 * i, 3) == 0)
            mo = i + 1;
    int64_t off = 0;
    if (n > 20 && (s[20] != ' ' || !zone_offset(s + 21, n - 21, &off)))
        return false;
    if (!mo || !civil_ok(y, mo, d, h, mi, sec))
        return false;
    *out = civil_seconds(y, mo, d, h, mi, sec) - off;
    return true;
}

/* 2026-11-28T10:02:13[.123][Z|+01:00] */
static bool parse_rfc3339(const char *s, size_t n, int64_t *out)
{
    unsigned y, mo, d, h, mi, sec;
    if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        s[13] != ':' || s[16] != ':' || !digits(s, 4, &y) || !digits(s + 5, 2, &mo) ||
        !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) ||
        !digits(s + 17, 2, &sec) || !civil_ok(y, mo, d, h, mi, sec))
        return false;
    size_t i = 19;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    int64_t off = 0;
    if (i < n && !zone_offset(s + i, n - i, &off))
        return false;
    *out = civil_seconds(y, mo, d, h, mi, sec) - off;
    return true;
}

/* Seconds since the epoch as a JSON number (a fraction is dropped; a value past
 * the year 5138 is taken as milliseconds). */
static bool parse_epoch(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    size_t i = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && i < 16; i++)
        v = v * 10 + (s[i] - '0');
    if (i == 0 || (i < n && s[i] != '.'))
        return false;
    *out = v > INT64_C(100000000000) ? v / 1000 : v;
    return true;
}

static bool parse_time(logscan *ls, const char *s, size_t n, bool json_number, int64_t *out)
{
    if (ls->tcache_ok && n == ls->tcache_len && memcmp(s, ls->tcache, n) == 0) {
        *out = ls->tcache_val;
        return true;
    }
    bool ok = json_number ? parse_epoch(s, n, out)
              : n && s[0] >= '0' && s[0] <= '9' && n > 4 && s[4] == '-'
                  ? parse_rfc3339(s, n, out)
                  : parse_clf_time(s, n, out);
    ok = ok && *out <= TIME_MAX; /* printed back as RFC 3339: four-digit years */
    if (ok && n <= sizeof ls->tcache) {
        memcpy(ls->tcache, s, n);
        ls->tcache_len = n;
        ls->tcache_val = *out;
        ls->tcache_ok = true;
    }
    return ok;
}

/* ---- fields of a common/combined line ---- */

/* Field `want` (1-based): *v, *vn (quotes and brackets taken off). */
static bool clf_field(const char *s, size_t n, unsigned want, const char **v, size_t *vn)
{
    size_t i = 0;
    for (unsigned f = 1;; f++) {
        while (i < n && s[i] == ' ')
            i++;
        if (i >= n)
            return false;
        size_t start = i, end;
        if (s[i] == '"') {
            start = ++i;
            while (i < n && s[i] != '"')
                i += s[i] == '\\' ? 2 : 1;
            end = i < n ? i : n;
            i = end + 1;
        } else if (s[i] == '[') {
            start = ++i;
            const char *close = memchr(s + i, ']', n - i);
            end = close ? (size_t)(close - s) : n;
            i = end + 1;
        } else {
            const char *sp = memchr(s + i, ' ', n - i);
            end = sp ? (size_t)(sp - s) : n;
            i = end;
        }
        if (f == want) {
            *v = s + start;
            *vn = end - start;
            return true;
        }
    }
}

/* The first [bracketed] field from `from`. */
static bool clf_time_text(const char *s, size_t n, size_t from, const char **t, size_t *tn)
{
    if (from >= n)
        return false;
    const char *open = memchr(s + from, '[', n - from);
    if (!open)
        return false;
    size_t at = (size_t)(open - s) + 1;
    const char *close = memchr(s + at, ']', n - at);
    if (!close)
        return false;
    *t = s + at;
    *tn = (size_t)(close - s) - at;
    return true;
}

/* A forwarded list "a, b": its first entry, spaces trimmed. */
static void first_of_list(const char **v, size_t *vn)
{
    const char *comma = memchr(*v, ',', *vn);
    if (comma)
        *vn = (size_t)(comma - *v);
    while (*vn && (*v)[0] == ' ') {
        (*v)++;
        (*vn)--;
    }
    while (*vn && (*v)[*vn - 1] == ' ')
        (*vn)--;
}

/* ---- JSON lines: a member's value by dotted path, without a parser ---- */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

/* Past the string starting at s[i] == '"'; n when unterminated. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

static size_t skip_value(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return n;
    if (s[i] == '"')
        return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        unsigned depth = 0;
        for (; i < n; i++) {
            if (s[i] == '"') {
                i = skip_string(s, n, i) - 1;
            } else if (s[i] == '{' || s[i] == '[') {
                depth++;
            } else if ((s[i] == '}' || s[i] == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ')
        i++;
    return i;
}

/* The value at `path` in the object `s`: a string's text (*quoted) or a
 * scalar's. */
static bool json_find(const char *s, size_t n, const key_path *path, const char **v,
                      size_t *vn, bool *quoted)
{
    size_t i = skip_ws(s, n, 0);
    for (size_t depth = 0; depth < path->n; depth++) {
        if (i >= n || s[i] != '{')
            return false;
        i = skip_ws(s, n, i + 1);
        for (;;) {
            if (i >= n || s[i] != '"')
                return false;
            size_t kstart = i + 1, kend = skip_string(s, n, i);
            if (kend >= n)
                return false;
            bool match = kend - 1 - kstart == path->len[depth] &&
                         memcmp(s + kstart, path->part[depth], path->len[depth]) == 0;
            i = skip_ws(s, n, kend);
            if (i >= n || s[i] != ':')
                return false;
            i = skip_ws(s, n, i + 1);
            if (match)
                break;
            i = skip_ws(s, n, skip_value(s, n, i));
            if (i >= n || s[i] != ',')
                return false;
            i = skip_ws(s, n, i + 1);
        }
    }
    if (i >= n)
        return false;
    size_t end = skip_value(s, n, i);
    *quoted = s[i] == '"';
    if (*quoted) {
        if (end - i < 2)
            return false;
        *v = s + i + 1;
        *vn = end - i - 2;
    } else {
        *v = s + i;
        *vn = end - i;
    }
    return *vn > 0;
}

static error_code path_parse(const char *text, key_path *out, const char *what,
                             error_info *err)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return ERROR_OK;
    const char *p = text;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len == 0 || out->n == LOGSCAN_PATH_DEPTH)
            return error_set(err, ERROR_INVALID, "%s: a path of 1 to %d member names joined "
                             "by dots (conn.client_ip)", what, LOGSCAN_PATH_DEPTH);
        out->part[out->n] = p;
        out->len[out->n++] = len;
        if (!dot)
            return ERROR_OK;
        p = dot + 1;
    }
}

/* ---- one line ---- */

static void count_bad(logscan *ls)
{
    if (!ls->st.bad && !ls->st.too_long) {
        ls->st.bad_file = ls->st.files - 1;
        ls->st.bad_line = ls->line_no;
    }
    ls->st.bad++;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static void decide_format(logscan *ls, const char *s, size_t n)
{
    size_t i = skip_ws(s, n, 0);
    if (i < n && s[i] == '{') {
        ls->fmt = LOGSCAN_JSON;
        return;
    }
    size_t j = i;
    while (j < n && s[j] != ' ' && s[j] != '\t')
        j++;
    ls->fmt = blank(s + j, n - j) ? LOGSCAN_PLAIN : LOGSCAN_CLF;
}

/* The address and time texts of a line, by format. */
static bool line_fields(logscan *ls, const char *s, size_t n, const char **a, size_t *an,
                        const char **t, size_t *tn, bool *tnum)
{
    *t = NULL;
    *tnum = false;
    bool quoted;
    switch (ls->fmt) {
    case LOGSCAN_CLF:
        if (ls->o.ip_field <= 1) {
            const char *sp = memchr(s, ' ', n);
            *a = s;
            *an = sp ? (size_t)(sp - s) : n;
        } else if (!clf_field(s, n, ls->o.ip_field, a, an)) {
            return false;
        } else {
            first_of_list(a, an);
        }
        if (!clf_time_text(s, n, ls->o.ip_field <= 1 ? *an : 0, t, tn))
            *t = NULL;
        return true;
    case LOGSCAN_JSON:
        if (!json_find(s, n, &ls->ip_key, a, an, &quoted) || !quoted)
            return false;
        first_of_list(a, an);
        if (ls->time_key.n && json_find(s, n, &ls->time_key, t, tn, &quoted))
            *tnum = !quoted;
        else
            *t = NULL;
        return true;
    case LOGSCAN_PLAIN:
    default:
        *a = s;
        *an = n;
        while (*an && ((*a)[0] == ' ' || (*a)[0] == '\t')) {
            (*a)++;
            (*an)--;
        }
        while (*an && ((*a)[*an - 1] == ' ' || (*a)[*an - 1] == '\t'))
            (*an)--;
        return true;
    }
}

static void scan_line(logscan *ls, const char *s, size_t n)
{
    ls->st.lines++;
    ls->line_no++;
    if (n && s[n - 1] == '\r')
        n--;
    if (n == 0 || blank(s, n)) {
        ls->st.blank++;
        return;
    }
    if (ls->fmt == LOGSCAN_AUTO)
        decide_format(ls, s, n);
    if (ls->fmt == LOGSCAN_JSON && !ls->ip_key.n) {
        error_set(&ls->fail, ERROR_INVALID, "%s is JSON lines: say which member holds the "
                  "client's address with --ip-key (e.g. --ip-key remote_addr)", ls->label);
        ls->failed = true;
        return;
    }
    const char *a, *t;
    size_t an, tn = 0;
    bool tnum;
    policy_addr addr;
    if (!line_fields(ls, s, n, &a, &an, &t, &tn, &tnum) || !parse_addr(a, an, &addr)) {
        count_bad(ls);
        return;
    }
    int64_t when = 0;
    bool timed = t && parse_time(ls, t, tn, tnum, &when);
    if (ls->o.since) {
        if (!timed) {
            count_bad(ls);
            return;
        }
        if (when < ls->o.since) {
            ls->st.old++;
            return;
        }
    }
    tally(ls, &addr, timed, when);
}

/* ---- reading ---- */

typedef struct reader {
    size_t have;
    bool skipping; /* inside a line longer than LOGSCAN_LINE_MAX */
} reader;

static void count_too_long(logscan *ls)
{
    ls->st.lines++;
    ls->line_no++;
    if (!ls->st.bad && !ls->st.too_long) {
        ls->st.bad_file = ls->st.files - 1;
        ls->st.bad_line = ls->line_no;
    }
    ls->st.too_long++;
}

/* The complete lines of buf[0..have), the rest kept for the next chunk. */
static void scan_chunk(logscan *ls, reader *r)
{
    char *p = ls->buf, *end = ls->buf + r->have;
    char *nl;
    while (!ls->failed && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        if (r->skipping)
            r->skipping = false;
        else if ((size_t)(nl - p) > LOGSCAN_LINE_MAX)
            count_too_long(ls);
        else
            scan_line(ls, p, (size_t)(nl - p));
        p = nl + 1;
        if (ls->o.progress && (ls->st.lines & (LOGSCAN_PROGRESS_LINES - 1)) == 0)
            ls->o.progress(ls->o.progress_ctx, ls->label, ls->st.bytes, ls->st.lines);
    }
    size_t rest = (size_t)(end - p);
    if (r->skipping) {
        r->have = 0;
    } else if (rest > LOGSCAN_LINE_MAX) {
        r->skipping = true;
        count_too_long(ls);
        r->have = 0;
    } else {
        memmove(ls->buf, p, rest);
        r->have = rest;
    }
}

/* A chunk of `got` bytes was read: tell the progress when it crossed a
 * LOGSCAN_PROGRESS_BYTES mark (a file of few, long lines: a gzip bomb). */
static void bytes_progress(logscan *ls, size_t got)
{
    if (ls->o.progress && (ls->st.bytes - got) / LOGSCAN_PROGRESS_BYTES !=
                              ls->st.bytes / LOGSCAN_PROGRESS_BYTES)
        ls->o.progress(ls->o.progress_ctx, ls->label, ls->st.bytes, ls->st.lines);
}

static void begin_file(logscan *ls, const char *label)
{
    ls->st.files++;
    ls->fmt = ls->o.format;
    ls->label = label;
    ls->line_no = 0;
}

static error_code end_file(logscan *ls, reader *r, error_info *err)
{
    if (!ls->failed && r->have && !r->skipping)
        scan_line(ls, ls->buf, r->have);
    if (ls->failed) {
        *err = ls->fail;
        return ls->fail.code;
    }
    return ERROR_OK;
}

error_code logscan_text(logscan *ls, const char *label, const char *data, size_t len,
                        error_info *err)
{
    begin_file(ls, label);
    reader r = {0};
    size_t off = 0;
    while (off < len && !ls->failed) {
        size_t take = len - off < CHUNK ? len - off : CHUNK;
        memcpy(ls->buf + r.have, data + off, take);
        r.have += take;
        off += take;
        ls->st.bytes += take;
        scan_chunk(ls, &r);
        bytes_progress(ls, take);
    }
    return end_file(ls, &r, err);
}

error_code logscan_file(logscan *ls, const char *path, error_info *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *label = is_stdin ? "stdin" : path;
    int fd = is_stdin ? dup(0) : -1;
    gzFile gz = is_stdin ? (fd >= 0 ? gzdopen(fd, "rb") : NULL) : gzopen(path, "rb");
    if (!gz) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return error_set(err, ERROR_IO, "cannot open %s: %s", label,
                         e ? strerror(e) : "out of memory");
    }
    gzbuffer(gz, 1 << 17);
    begin_file(ls, label);
    reader r = {0};
    error_code rc = ERROR_OK;
    while (!ls->failed) {
        if (ls->o.keep_going && !ls->o.keep_going(ls->o.keep_going_ctx)) {
            rc = error_set(err, ERROR_STATE, "reading %s: stopped", label);
            break;
        }
        int got = gzread(gz, ls->buf + r.have, CHUNK);
        if (got < 0) {
            int zerr;
            const char *why = gzerror(gz, &zerr);
            rc = error_set(err, ERROR_IO, "cannot read %s: %s", label,
                           zerr == Z_ERRNO ? strerror(errno) : why);
            break;
        }
        if (got == 0) {
            int zerr;
            gzerror(gz, &zerr); /* gzread returns a cut file's data as if whole */
            if (zerr == Z_BUF_ERROR)
                rc = error_set(err, ERROR_IO, "cannot read %s: the gzip data is truncated "
                               "(a file still being written?)", label);
            break;
        }
        r.have += (size_t)got;
        ls->st.bytes += (uint64_t)got;
        scan_chunk(ls, &r);
        bytes_progress(ls, (size_t)got);
    }
    gzclose(gz);
    if (rc != ERROR_OK)
        return rc;
    return end_file(ls, &r, err);
}

/* ---- the scanner ---- */

error_code logscan_new(const logscan_opts *opts, logscan **out, error_info *err)
{
    *out = NULL;
    logscan *ls = calloc(1, sizeof *ls);
    if (!ls)
        return error_set(err, ERROR_NOMEM, "out of memory");
    ls->o = *opts;
    if (!ls->o.max_addresses)
        ls->o.max_addresses = LOGSCAN_MAX_ADDRESSES_DEFAULT;
    if (ls->o.max_addresses > UINT32_MAX - 1)
        ls->o.max_addresses = UINT32_MAX - 1;
    error_code rc = path_parse(opts->ip_key, &ls->ip_key, "--ip-key", err);
    if (rc == ERROR_OK)
        rc = path_parse(opts->time_key, &ls->time_key, "--time-key", err);
    if (rc == ERROR_OK && (!(ls->buf = malloc(CHUNK + LOGSCAN_LINE_MAX + 1)) ||
                           !table_grow(ls)))
        rc = error_set(err, ERROR_NOMEM, "out of memory");
    if (rc != ERROR_OK) {
        logscan_free(ls);
        return rc;
    }
    *out = ls;
    return ERROR_OK;
}

void logscan_free(logscan *ls)
{
    if (!ls)
        return;
    free(ls->addrs);
    free(ls->slots);
    free(ls->buf);
    free(ls);
}

const logscan_addr *logscan_addrs(const logscan *ls, size_t *n)
{
    *n = ls->n;
    return ls->addrs;
}

const logscan_stats *logscan_get_stats(const logscan *ls)
{
    return &ls->st;
}

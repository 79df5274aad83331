/*
 * cidrset_json: the entries of a JSON list, each with the line it stands on (a
 * message that names line 4,012 of a published range file is one a person can
 * act on; a general JSON library does not say where a value was). A small strict
 * reader (RFC 8259) walks the document once and takes the strings found at the
 * --key paths; everything else is checked for syntax and skipped.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/cidrset.h"

enum { JSON_DEPTH_MAX = 256, TOP_NAMES_MAX = 200 };

typedef struct json_path {
    const char *seg[CIDRSET_KEY_DEPTH];
    size_t len[CIDRSET_KEY_DEPTH];
    int nseg;
    const char *text; /* the --key as given */
} json_path;

/* Per path: how many of its members lead here (-1: off the path). */
typedef struct json_pos {
    signed char at[CIDRSET_KEYS_MAX];
} json_pos;

typedef struct json_scan {
    const char *p, *end;
    size_t line;
    json_path paths[CIDRSET_KEYS_MAX];
    size_t npaths;
    bool hit[CIDRSET_KEYS_MAX];
    cidrset *out;
    cidrset_problems *problems;
    error_info *err;
    buf_t str;       /* the string being read, decoded */
    bool str_nul;    /* ... holds \u0000 */
    int depth;
    char top_names[TOP_NAMES_MAX]; /* top-level members holding arrays, for messages */
} json_scan;

static error_code syntax(json_scan *s, const char *what)
{
    return error_set(s->err, ERROR_FORMAT, "line %zu: not valid JSON: %s", s->line, what);
}

static void skip_space(json_scan *s)
{
    for (; s->p < s->end; s->p++) {
        char c = *s->p;
        if (c == '\n')
            s->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
    }
}

static bool at(json_scan *s, char c)
{
    skip_space(s);
    return s->p < s->end && *s->p == c;
}

/* Step over `c` when it comes next (after white space); false when it does not. */
static bool consume(json_scan *s, char c)
{
    if (!at(s, c))
        return false;
    s->p++;
    return true;
}

/* ---- strings ---- */

static int hex4(const char *p, const char *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(buf_t *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf_append(b, u, n);
}

/* \uXXXX at s->p (after the backslash and 'u'), with a surrogate pair's second
 * half. */
static error_code unicode_escape(json_scan *s)
{
    int hi = hex4(s->p, s->end);
    if (hi < 0)
        return syntax(s, "\\u needs four hex digits");
    s->p += 4;
    uint32_t cp = (uint32_t)hi;
    if (hi >= 0xD800 && hi <= 0xDBFF && s->end - s->p >= 6 && s->p[0] == '\\' &&
        s->p[1] == 'u') {
        int lo = hex4(s->p + 2, s->end);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            s->p += 6;
        }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        cp = 0xFFFD; /* a lone surrogate: no character; the entry will not validate */
    if (cp == 0)
        s->str_nul = true;
    else
        put_utf8(&s->str, cp);
    return ERROR_OK;
}

static error_code escape(json_scan *s)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (s->p >= s->end)
        return syntax(s, "a string does not end");
    char c = *s->p++;
    if (c == 'u')
        return unicode_escape(s);
    const char *k = strchr(from, c);
    if (!k || !c)
        return syntax(s, "an unknown escape in a string");
    buf_append(&s->str, &to[k - from], 1);
    return ERROR_OK;
}

/* The string at s->p (its opening quote), decoded into s->str. */
static error_code read_string(json_scan *s)
{
    buf_reset(&s->str);
    buf_puts(&s->str, ""); /* data is a C string even when empty */
    s->str_nul = false;
    s->p++;
    for (;;) {
        const char *q = s->p;
        while (q < s->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
            q++;
        buf_append(&s->str, s->p, (size_t)(q - s->p));
        s->p = q;
        if (q >= s->end)
            return syntax(s, "a string does not end");
        if ((unsigned char)*q < 0x20)
            return syntax(s, "a control character inside a string");
        s->p++;
        if (*q == '"')
            break;
        error_code rc = escape(s);
        if (rc != ERROR_OK)
            return rc;
    }
    return s->str.failed ? error_set(s->err, ERROR_NOMEM, "out of memory reading the list")
                         : ERROR_OK;
}

/* ---- scalars ---- */

static bool digits(json_scan *s)
{
    const char *start = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > start;
}

static error_code read_number(json_scan *s)
{
    if (*s->p == '-')
        s->p++;
    const char *int_start = s->p;
    if (!digits(s) || (s->p - int_start > 1 && *int_start == '0'))
        return syntax(s, "a malformed number");
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!digits(s))
            return syntax(s, "a malformed number");
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!digits(s))
            return syntax(s, "a malformed number");
    }
    return ERROR_OK;
}

static error_code read_word(json_scan *s, const char **name)
{
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(s->end - s->p) >= n && memcmp(s->p, words[i], n) == 0) {
            s->p += n;
            *name = words[i];
            return ERROR_OK;
        }
    }
    return syntax(s, "expected a value");
}

/* ---- where we are ---- */

/* Whether a path ends here; marks it found. */
static bool is_target(json_scan *s, const json_pos *pos)
{
    bool target = false;
    for (size_t k = 0; k < s->npaths; k++) {
        if (pos->at[k] == s->paths[k].nseg) {
            s->hit[k] = true;
            target = true;
        }
    }
    return target;
}

/* The position inside member `name` of an object at `pos`. */
static json_pos member_pos(const json_scan *s, const json_pos *pos, const char *name, size_t n)
{
    json_pos child;
    for (size_t k = 0; k < CIDRSET_KEYS_MAX; k++) {
        int a = k < s->npaths ? pos->at[k] : -1;
        const json_path *jp = &s->paths[k];
        bool next = a >= 0 && a < jp->nseg && jp->len[a] == n && memcmp(jp->seg[a], name, n) == 0;
        child.at[k] = (signed char)(next ? a + 1 : -1);
    }
    return child;
}

static void note_top_name(json_scan *s, const char *name)
{
    size_t used = strlen(s->top_names);
    if (used + strlen(name) + 3 >= sizeof s->top_names || strchr(name, '\n'))
        return;
    snprintf(s->top_names + used, sizeof s->top_names - used, "%s%s", used ? ", " : "", name);
}

static error_code value(json_scan *s, const json_pos *pos);

/* Whether `child` is on the way to a --key path (a member named by one). */
static bool on_a_path(const json_scan *s, const json_pos *child)
{
    for (size_t k = 0; k < s->npaths; k++) {
        if (child->at[k] >= 0)
            return true;
    }
    return false;
}

/* The members of one object that a --key path goes through, to refuse one named
 * twice: which of the two is the list would be a guess (jansson keeps the last,
 * others the first). */
typedef struct seen_names {
    char name[CIDRSET_KEYS_MAX][128];
    size_t n;
} seen_names;

static error_code once_per_object(json_scan *s, seen_names *seen, const json_pos *child)
{
    if (!on_a_path(s, child))
        return ERROR_OK;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)s->str.len, s->str.data);
    for (size_t i = 0; i < seen->n; i++) {
        if (strcmp(seen->name[i], name) == 0)
            return error_set(s->err, ERROR_FORMAT, "line %zu: member \"%s\" appears twice in "
                             "one object: which one is the list is not clear (keep one)",
                             s->line, name);
    }
    if (seen->n < CIDRSET_KEYS_MAX)
        snprintf(seen->name[seen->n++], sizeof seen->name[0], "%s", name);
    return ERROR_OK;
}

static error_code object(json_scan *s, const json_pos *pos)
{
    s->p++;
    if (consume(s, '}'))
        return ERROR_OK;
    seen_names seen = {.n = 0};
    for (;;) {
        if (!at(s, '"'))
            return syntax(s, "expected a member name in quotes");
        error_code rc = read_string(s);
        if (rc != ERROR_OK)
            return rc;
        json_pos child = member_pos(s, pos, s->str.data, s->str.len);
        if ((rc = once_per_object(s, &seen, &child)) != ERROR_OK)
            return rc;
        char name[64]; /* for the message that lists the top-level arrays */
        snprintf(name, sizeof name, "%s", s->str.data);
        if (!consume(s, ':'))
            return syntax(s, "expected ':' after a member name");
        if (s->depth == 1 && at(s, '['))
            note_top_name(s, name);
        if ((rc = value(s, &child)) != ERROR_OK)
            return rc;
        if (consume(s, '}'))
            return ERROR_OK;
        if (!consume(s, ','))
            return syntax(s, "expected ',' or '}' in an object");
    }
}

static error_code array(json_scan *s, const json_pos *pos)
{
    s->p++;
    if (consume(s, ']'))
        return ERROR_OK;
    for (;;) {
        error_code rc = value(s, pos); /* arrays are looked through */
        if (rc != ERROR_OK)
            return rc;
        if (consume(s, ']'))
            return ERROR_OK;
        if (!consume(s, ','))
            return syntax(s, "expected ',' or ']' in an array");
    }
}

/* A string at a path's end: an entry (or a problem on its line). */
static error_code take_string(json_scan *s, size_t line)
{
    if (s->str_nul)
        return cidrset_problem_add(s->problems, line, s->err, "a string holding \\u0000");
    validate_prefix pfx;
    error_info why;
    if (cidrset_parse_entry(s->str.data, &pfx, &why) == ERROR_OK)
        return cidrset_add(s->out, &pfx, line, NULL, s->err);
    bool plain = s->str.len <= 64;
    for (size_t i = 0; plain && i < s->str.len; i++)
        plain = (unsigned char)s->str.data[i] > ' ' && (unsigned char)s->str.data[i] < 0x7f;
    if (plain && s->str.len)
        return cidrset_problem_add(s->problems, line, s->err, "'%s': %s", s->str.data, why.msg);
    return cidrset_problem_add(s->problems, line, s->err, "%s", why.msg);
}

static error_code scalar(json_scan *s, bool target)
{
    size_t line = s->line;
    const char *got = "a number";
    error_code rc;
    if (*s->p == '"') {
        if ((rc = read_string(s)) != ERROR_OK)
            return rc;
        return target ? take_string(s, line) : ERROR_OK;
    }
    rc = *s->p == '-' || (*s->p >= '0' && *s->p <= '9') ? read_number(s) : read_word(s, &got);
    if (rc != ERROR_OK || !target)
        return rc;
    return cidrset_problem_add(s->problems, line, s->err, "expected a CIDR string, got %s",
                               got);
}

static error_code value(json_scan *s, const json_pos *pos)
{
    skip_space(s);
    if (s->p >= s->end)
        return syntax(s, "the document ends too early");
    if (++s->depth > JSON_DEPTH_MAX)
        return syntax(s, "nested too deeply");
    bool target = is_target(s, pos);
    error_code rc;
    if (*s->p == '{') {
        if (target && (rc = cidrset_problem_add(s->problems, s->line, s->err,
                                                "expected a CIDR string, got an object")))
            return rc;
        json_pos off;
        memset(off.at, -1, sizeof off.at);
        rc = object(s, target ? &off : pos);
    } else if (*s->p == '[') {
        rc = array(s, pos);
    } else {
        rc = scalar(s, target);
    }
    s->depth--;
    return rc;
}

/* ---- paths ---- */

static error_code split_path(const char *key, json_path *jp, error_info *err)
{
    *jp = (json_path){.text = key};
    const char *p = key;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0)
            return error_set(err, ERROR_INVALID,
                             "--key '%s': an empty member name (write a.b for member b of "
                             "member a)", key);
        if (jp->nseg == CIDRSET_KEY_DEPTH)
            return error_set(err, ERROR_INVALID, "--key '%s': more than %d members deep",
                             key, CIDRSET_KEY_DEPTH);
        jp->seg[jp->nseg] = p;
        jp->len[jp->nseg++] = n;
        if (!dot)
            return ERROR_OK;
        p = dot + 1;
    }
}

static error_code scan_init(json_scan *s, const cidrset_parse_opts *opt, error_info *err)
{
    size_t nkeys = opt ? opt->nkeys : 0;
    if (nkeys > CIDRSET_KEYS_MAX)
        return error_set(err, ERROR_INVALID, "at most %d --key options", CIDRSET_KEYS_MAX);
    for (size_t k = 0; k < nkeys; k++) {
        error_code rc = split_path(opt->keys[k], &s->paths[k], err);
        if (rc != ERROR_OK)
            return rc;
    }
    s->npaths = nkeys ? nkeys : 1; /* no key: the document itself (nseg 0) */
    return ERROR_OK;
}

/* After the walk: every path must have named something. */
static error_code check_found(json_scan *s, bool keyed, bool top_object)
{
    const char *members = s->top_names[0] ? s->top_names : "none";
    if (!keyed && top_object)
        return error_set(s->err, ERROR_INVALID,
                         "the document is an object: name the array of CIDRs with --key "
                         "(its members holding arrays: %s)", members);
    for (size_t k = 0; keyed && k < s->npaths; k++) {
        if (!s->hit[k])
            return error_set(s->err, ERROR_INVALID,
                             "--key '%s': no such member in the document (its members "
                             "holding arrays: %s)", s->paths[k].text, members);
    }
    return ERROR_OK;
}

error_code cidrset_parse_json(const char *data, size_t len, const cidrset_parse_opts *opt,
                              cidrset *out, cidrset_problems *problems, error_info *err)
{
    json_scan s = {.p = data, .end = data + len, .line = 1, .out = out,
                   .problems = problems, .err = err};
    error_code rc = scan_init(&s, opt, err);
    if (rc != ERROR_OK)
        return rc;
    bool keyed = opt && opt->nkeys;
    json_pos top;
    memset(&top, 0, sizeof top);
    skip_space(&s);
    bool top_object = s.p < s.end && *s.p == '{';
    if (!keyed && top_object)
        top.at[0] = -1; /* walked for its member names only */
    rc = value(&s, &top);
    if (rc == ERROR_OK && (skip_space(&s), s.p < s.end))
        rc = syntax(&s, "more after the end of the document");
    buf_free(&s.str);
    if (rc != ERROR_OK)
        return rc;
    return check_found(&s, keyed, top_object);
}

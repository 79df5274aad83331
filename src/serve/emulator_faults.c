/* emulator: the --faults SPEC parser and its counter-based selection (syntax in
 * rampart/emulator.h). */
#include "rampart/emulator.h"

#include <stdio.h>
#include <string.h>

enum {
    ENTRY_MAX = 128,        /* bytes of one entry */
    DELAY_MAX_MS = 60000,
    RETRY_AFTER_MAX = 86400,
    COUNT_MAX = 1000000000  /* request numbers */
};

static const char *const op_names[EMULATOR_OP_COUNT] = {
    [EMULATOR_OP_CREATE_RULE] = "create_rule", [EMULATOR_OP_CREATE_CRED] = "create_cred",
    [EMULATOR_OP_DELETE_RULE] = "delete_rule", [EMULATOR_OP_DELETE_CRED] = "delete_cred",
    [EMULATOR_OP_LIST_RULES] = "list_rules",   [EMULATOR_OP_LIST_CREDS] = "list_creds",
    [EMULATOR_OP_GET_RULE] = "get_rule",       [EMULATOR_OP_GET_CRED] = "get_cred",
    [EMULATOR_OP_PATCH_RULE] = "patch_rule",   [EMULATOR_OP_PATCH_CRED] = "patch_cred",
    [EMULATOR_OP_ANY] = "any",
};

/* Kinds without an argument. */
static const struct {
    const char *name;
    emulator_fault_kind kind;
    int status;
} plain_kinds[] = {
    {"drop", EMULATOR_FAULT_DROP, 0},     {"reset", EMULATOR_FAULT_RESET, 0},
    {"truncate", EMULATOR_FAULT_TRUNCATE, 0}, {"429", EMULATOR_FAULT_STATUS, 429},
    {"500", EMULATOR_FAULT_STATUS, 500},  {"502", EMULATOR_FAULT_STATUS, 502},
    {"403", EMULATOR_FAULT_STATUS, 403},
};

#define KINDS_HELP "drop, reset, truncate, delay=MS, trickle=MS, 403, 429, 500, 502"
#define SELECT_HELP "@N, @N-M, @N+ or @every=K, counting from 1"

const char *emulator_op_name(emulator_op op)
{
    return (unsigned)op < EMULATOR_OP_COUNT ? op_names[op] : "?";
}

/* A whole decimal number in 1..max (0..max when zero_ok), no sign, no leading
 * zeros. */
static bool parse_number(const char *s, unsigned long max, bool zero_ok, unsigned long *out)
{
    size_t len = strlen(s);
    if (len == 0 || len > 10 || (len > 1 && s[0] == '0'))
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > max || (v == 0 && !zero_ok))
        return false;
    *out = v;
    return true;
}

/* The parts of one entry, cut in place: op ":" kind "@" select [":" option]... */
typedef struct parts {
    char *op, *kind, *select, *options; /* options: NULL or "a:b" */
} parts;

static bool cut(char *entry, parts *p, char *why, size_t size)
{
    char *colon = strchr(entry, ':');
    if (!colon) {
        snprintf(why, size, "expected OP:KIND@SELECT");
        return false;
    }
    *colon = '\0';
    p->op = entry;
    p->kind = colon + 1;
    char *at = strchr(p->kind, '@');
    if (!at) {
        snprintf(why, size, "missing the selection: add %s", SELECT_HELP);
        return false;
    }
    *at = '\0';
    p->select = at + 1;
    p->options = strchr(p->select, ':');
    if (p->options)
        *p->options++ = '\0';
    return true;
}

static bool parse_op(const char *text, emulator_fault *f, char *why, size_t size)
{
    for (size_t i = 0; i < EMULATOR_OP_COUNT; i++) {
        if (strcmp(text, op_names[i]) == 0) {
            f->op = (emulator_op)i;
            return true;
        }
    }
    snprintf(why, size, "unknown operation '%.32s' (create_rule, create_cred, delete_rule, "
             "delete_cred, list_rules, list_creds, get_rule, get_cred, patch_rule, "
             "patch_cred, any)", text);
    return false;
}

static bool parse_kind(const char *text, emulator_fault *f, char *why, size_t size)
{
    for (size_t i = 0; i < sizeof plain_kinds / sizeof plain_kinds[0]; i++) {
        if (strcmp(text, plain_kinds[i].name) == 0) {
            f->kind = plain_kinds[i].kind;
            f->status = plain_kinds[i].status;
            return true;
        }
    }
    bool trickle = strncmp(text, "trickle=", 8) == 0;
    if (trickle || strncmp(text, "delay=", 6) == 0) {
        const char *name = trickle ? "trickle" : "delay";
        const char *arg = text + strlen(name) + 1;
        unsigned long ms;
        if (!parse_number(arg, DELAY_MAX_MS, false, &ms)) {
            snprintf(why, size, "%s '%.16s' is not a number of milliseconds from 1 to %d",
                     name, arg, DELAY_MAX_MS);
            return false;
        }
        f->kind = trickle ? EMULATOR_FAULT_TRICKLE : EMULATOR_FAULT_DELAY;
        f->delay_ms = (unsigned)ms;
        return true;
    }
    snprintf(why, size, "unknown kind '%.32s' (%s)", text, KINDS_HELP);
    return false;
}

static bool parse_select(char *text, emulator_fault *f, char *why, size_t size)
{
    size_t len = strlen(text);
    bool ok;
    if (strncmp(text, "every=", 6) == 0) {
        f->select = EMULATOR_SELECT_EVERY;
        ok = parse_number(text + 6, COUNT_MAX, false, &f->every);
    } else if (len > 1 && text[len - 1] == '+') {
        text[len - 1] = '\0';
        f->select = EMULATOR_SELECT_RANGE;
        ok = parse_number(text, COUNT_MAX, false, &f->first);
        f->last = 0;
        text[len - 1] = '+';
    } else {
        char *dash = strchr(text, '-');
        if (dash)
            *dash = '\0';
        f->select = EMULATOR_SELECT_RANGE;
        ok = parse_number(text, COUNT_MAX, false, &f->first) &&
             parse_number(dash ? dash + 1 : text, COUNT_MAX, false, &f->last) &&
             f->last >= f->first;
        if (dash)
            *dash = '-';
    }
    if (!ok)
        snprintf(why, size, "bad selection '@%.32s': use %s (N <= M)", text, SELECT_HELP);
    return ok;
}

static bool parse_options(char *text, emulator_fault *f, char *why, size_t size)
{
    f->retry_after = -1;
    for (char *opt = text; opt;) {
        char *next = strchr(opt, ':');
        if (next)
            *next++ = '\0';
        unsigned long s;
        if (strncmp(opt, "retry-after=", 12) != 0) {
            snprintf(why, size, "unknown option '%.32s' (only retry-after=S, for 429)", opt);
            return false;
        }
        if (f->kind != EMULATOR_FAULT_STATUS || f->status != 429) {
            snprintf(why, size, "retry-after goes only with 429");
            return false;
        }
        if (f->retry_after >= 0) {
            snprintf(why, size, "retry-after given twice");
            return false;
        }
        if (!parse_number(opt + 12, RETRY_AFTER_MAX, true, &s)) {
            snprintf(why, size, "retry-after '%.16s' is not a number of seconds from 0 to %d",
                     opt + 12, RETRY_AFTER_MAX);
            return false;
        }
        f->retry_after = (long)s;
        opt = next;
    }
    return true;
}

static bool parse_entry(char *entry, emulator_fault *f, char *why, size_t size)
{
    parts p;
    memset(f, 0, sizeof *f);
    f->retry_after = -1;
    return cut(entry, &p, why, size) && parse_op(p.op, f, why, size) &&
           parse_kind(p.kind, f, why, size) && parse_select(p.select, f, why, size) &&
           (!p.options || parse_options(p.options, f, why, size));
}

error_code emulator_faults_parse(const char *spec, emulator_faults *out, error_info *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return ERROR_OK;
    size_t n = 0;
    for (const char *p = spec;; n++) {
        size_t len = strcspn(p, ",");
        char entry[ENTRY_MAX];
        char why[256] = "";
        if (n == EMULATOR_FAULTS_MAX) {
            memset(out, 0, sizeof *out);
            return error_set(err, ERROR_INVALID, "more than %d entries",
                             EMULATOR_FAULTS_MAX);
        }
        bool ok = len > 0 && len < sizeof entry;
        if (ok) {
            memcpy(entry, p, len);
            entry[len] = '\0';
            ok = parse_entry(entry, &out->items[n], why, sizeof why);
        } else {
            snprintf(why, sizeof why, len ? "too long" : "empty (a stray comma?)");
        }
        if (!ok) {
            memset(out, 0, sizeof *out);
            return error_set(err, ERROR_INVALID, "entry %zu '%.*s': %s", n + 1,
                             (int)(len < 64 ? len : 64), p, why);
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    out->count = n + 1;
    return ERROR_OK;
}

static bool selects(const emulator_fault *f, unsigned long nth)
{
    if (f->select == EMULATOR_SELECT_EVERY)
        return f->every > 0 && nth % f->every == 0;
    return nth >= f->first && (f->last == 0 || nth <= f->last);
}

const emulator_fault *emulator_faults_next(emulator_faults *f, emulator_op op)
{
    if ((unsigned)op >= EMULATOR_OP_ANY)
        return NULL;
    f->seen[op]++;
    f->seen[EMULATOR_OP_ANY]++;
    for (size_t i = 0; i < f->count; i++) {
        const emulator_fault *it = &f->items[i];
        if (it->op != EMULATOR_OP_ANY && it->op != op)
            continue;
        if (selects(it, f->seen[it->op]))
            return it;
    }
    return NULL;
}

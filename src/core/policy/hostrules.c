/*
 * hostrules: the ordered rule set a host enforces, read from the cache, and the
 * checks of the renderers' options. The renderers are in hostrules_render.c.
 * See rampart/hostrules.h.
 */
#include "rampart/hostrules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/cidrset.h"

error_code hostrules_add(hostrules_set *set, const char *id, const char *cidr,
                         model_action action, model_state state, const char *description,
                         error_info *err)
{
    hostrules_rule r = {.action = action, .state = state};
    if (validate_cidr(cidr, &r.pfx, NULL, 0, err) != ERROR_OK)
        return error_prefix(err, "rule %s: cidr", id);
    /* An IPv4-mapped rule (kept as the remote has it) means the IPv4 prefix. */
    validate_prefix v4;
    if (validate_prefix_unmap(&r.pfx, &v4))
        r.pfx = v4;
    cidrset_format(&r.pfx, r.cidr);
    snprintf(r.id, sizeof r.id, "%s", id);
    if (!buf_grow_array((void **)&set->rules, &set->cap, set->count + 1, sizeof *set->rules) ||
        !(r.description = strdup(description ? description : "")))
        return error_set(err, ERROR_NOMEM, "out of memory reading the policy's rules");
    set->rules[set->count++] = r;
    return ERROR_OK;
}

static int rule_order(const void *pa, const void *pb)
{
    const hostrules_rule *a = pa, *b = pb;
    if (a->action != b->action)
        return a->action == MODEL_ACTION_DENY ? -1 : 1;
    int c = cidrset_compare(&a->pfx, &b->pfx);
    return c ? c : strcmp(a->id, b->id);
}

void hostrules_sort(hostrules_set *set)
{
    if (set->count > 1)
        qsort(set->rules, set->count, sizeof *set->rules, rule_order);
}

void hostrules_free(hostrules_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free(set->rules[i].description);
    free(set->rules);
    *set = (hostrules_set){0};
}

/* The rules `rampart check` decides with (policy_index_load's states). */
static bool in_force(model_state s)
{
    return s != MODEL_STATE_DELETING && s != MODEL_STATE_REMOTE_DELETED &&
           s != MODEL_STATE_FAILED && s != MODEL_STATE_CONFLICT;
}

typedef struct take_ctx {
    hostrules_set *set;
    store *st;
} take_ctx;

static error_code take_rule(void *ctx, const store_policy_rule *r, error_info *err)
{
    const take_ctx *t = ctx;
    bool held = r->state == MODEL_STATE_CONFLICT &&
                store_conflict_holds_remote(t->st, MODEL_KIND_RULE, r->id);
    if (!in_force(r->state) && !held)
        return ERROR_OK;
    return hostrules_add(t->set, r->id, r->cidr, r->action, r->state, r->description, err);
}

error_code hostrules_load(store *st, const char *policy_id, hostrules_set *out,
                          error_info *err)
{
    snprintf(out->policy_id, sizeof out->policy_id, "%s", policy_id);
    take_ctx t = {out, st};
    error_code rc = store_policy_rules(st, policy_id, take_rule, &t, err);
    if (rc == ERROR_OK)
        hostrules_sort(out);
    return rc;
}

static const char *const format_names[HOSTRULES_FORMAT_COUNT] = {
    [HOSTRULES_NFTABLES] = "nftables", [HOSTRULES_NGINX] = "nginx",
    [HOSTRULES_IPTABLES] = "iptables", [HOSTRULES_IP6TABLES] = "ip6tables",
    [HOSTRULES_JSON] = "json",         [HOSTRULES_CSV] = "csv",
};

bool hostrules_format_parse(const char *name, hostrules_format *out)
{
    for (int f = 0; f < HOSTRULES_FORMAT_COUNT; f++) {
        if (strcmp(name, format_names[f]) == 0) {
            *out = (hostrules_format)f;
            return true;
        }
    }
    return false;
}

const char *hostrules_format_name(hostrules_format fmt)
{
    return (unsigned)fmt < HOSTRULES_FORMAT_COUNT ? format_names[fmt] : "?";
}

size_t hostrules_left_out(const hostrules_set *set, hostrules_format fmt)
{
    int other = fmt == HOSTRULES_IPTABLES ? 6 : fmt == HOSTRULES_IP6TABLES ? 4 : 0;
    size_t n = 0;
    for (size_t i = 0; other && i < set->count; i++)
        n += set->rules[i].pfx.family == other;
    return n;
}

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

error_code hostrules_name_check(const char *name, error_info *err)
{
    size_t n = strlen(name);
    if (n == 0 || n > HOSTRULES_NAME_MAX || !is_letter(name[0]))
        return error_set(err, ERROR_INVALID,
                         "--name: 1 to %d characters, starting with a letter",
                         HOSTRULES_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!is_letter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '-')
            return error_set(err, ERROR_INVALID,
                             "--name: only letters, digits, '_' and '-' (character %zu is "
                             "not)", i + 1);
    }
    return ERROR_OK;
}

/* A port at *p (1..65535, no sign, no leading zero); moves *p past it. */
static bool read_port(const char **p, unsigned *out)
{
    const char *s = *p;
    unsigned v = 0;
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 6)
        v = v * 10 + (unsigned)(s[n++] - '0');
    if (n == 0 || (n > 1 && s[0] == '0') || v < 1 || v > 65535)
        return false;
    *p = s + n;
    *out = v;
    return true;
}

error_code hostrules_ports_check(const char *ports, error_info *err)
{
    const char *p = ports;
    for (;;) {
        unsigned lo, hi;
        if (!read_port(&p, &lo))
            break;
        if (*p == '-' && (++p, !read_port(&p, &hi) || hi <= lo))
            break;
        if (*p == '\0')
            return ERROR_OK;
        if (*p++ != ',')
            break;
    }
    return error_set(err, ERROR_INVALID,
                     "--port: ports 1-65535 and ranges LOW-HIGH joined by ',' (e.g. "
                     "80,443,8000-8100)");
}

bool hostrules_ports_cover(const char *ports, unsigned port)
{
    if (!ports)
        return true;
    const char *p = ports;
    for (;;) {
        unsigned lo, hi;
        if (!read_port(&p, &lo))
            return false;
        hi = lo;
        if (*p == '-' && (++p, !read_port(&p, &hi)))
            return false;
        if (port >= lo && port <= hi)
            return true;
        if (*p++ != ',')
            return false;
    }
}

/* Whether prefix `r` holds address `a` (both of one family). */
static bool holds(const validate_prefix *r, const validate_prefix *a)
{
    if (r->family != a->family)
        return false;
    unsigned full = r->bits / 8, rest = r->bits % 8;
    if (memcmp(r->addr, a->addr, full) != 0)
        return false;
    unsigned char mask = (unsigned char)(0xffu << (8 - rest));
    return rest == 0 || (r->addr[full] & mask) == (a->addr[full] & mask);
}

bool hostrules_decide(const hostrules_set *set, const char *ip, bool *allowed)
{
    *allowed = false;
    validate_prefix a;
    if (validate_ip(ip, &a, NULL) != ERROR_OK)
        return false;
    bool allow = false;
    for (size_t i = 0; i < set->count; i++) {
        const hostrules_rule *x = &set->rules[i];
        if (!holds(&x->pfx, &a))
            continue;
        if (x->action == MODEL_ACTION_DENY)
            return true; /* deny wins */
        allow = true;
    }
    *allowed = allow;
    return true;
}

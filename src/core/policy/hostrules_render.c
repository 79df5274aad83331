/*
 * hostrules_render: one table of renderers over one ordered rule set. Each
 * writes the policy's decision in its tool's words (see rampart/hostrules.h for
 * why each is ordered as it is).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rampart/cidrset.h"
#include "rampart/hostrules.h"

enum { NFT_ELEMENTS_PER_LINE = 4 };

typedef struct render {
    const hostrules_set *set;
    const hostrules_opts *opt;
    const char *name; /* the table's or chain's */
    buf_t *out;
} render;

static void put(render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Any length: a --port list of hundreds of ports is one line. */
static void put(render *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0 || !buf_reserve(r->out, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(r->out->data + r->out->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_commit(r->out, (size_t)n);
}

static size_t count_action(const hostrules_set *set, model_action action)
{
    size_t n = 0;
    for (size_t i = 0; i < set->count; i++)
        n += set->rules[i].action == action;
    return n;
}

/* The comment every rule file starts with: what it is and how it decides. */
static void header(render *r, const char *hash)
{
    const hostrules_set *s = r->set;
    put(r, "%s rampart export of IP policy %s: %zu rules in force (%zu allow, %zu deny).\n",
        hash, s->policy_id, s->count, count_action(s, MODEL_ACTION_ALLOW),
        count_action(s, MODEL_ACTION_DENY));
    put(r, "%s An address is allowed only when an allow rule covers it and no deny rule "
           "does.\n", hash);
}

/* ---- nftables ---- */

/* The rules of one action and family as the fewest prefixes: an interval set
 * refuses overlapping elements, and the union is the same addresses. */
static error_code merged(const hostrules_set *set, model_action action, int family,
                         cidrset *out, error_info *err)
{
    for (size_t i = 0; i < set->count; i++) {
        const hostrules_rule *x = &set->rules[i];
        if (x->action != action || x->pfx.family != family)
            continue;
        error_code rc = cidrset_add(out, &x->pfx, 0, NULL, err);
        if (rc != ERROR_OK)
            return rc;
    }
    cidrset_sort(out);
    cidrset_aggregate(out);
    return ERROR_OK;
}

static error_code nft_set(render *r, model_action action, int family, error_info *err)
{
    cidrset s = {0};
    error_code rc = merged(r->set, action, family, &s, err);
    if (rc != ERROR_OK) {
        cidrset_free(&s);
        return rc;
    }
    put(r, "\tset %s_v%d {\n\t\ttype %s\n\t\tflags interval\n",
        action == MODEL_ACTION_ALLOW ? "allow" : "deny", family,
        family == 4 ? "ipv4_addr" : "ipv6_addr");
    for (size_t i = 0; i < s.count; i++) {
        char cidr[MODEL_CIDR_MAX + 1];
        cidrset_format(&s.items[i].pfx, cidr);
        const char *lead = i == 0                          ? "\t\telements = { "
                           : i % NFT_ELEMENTS_PER_LINE ? " "
                                                       : "\n\t\t\t";
        put(r, "%s%s%s", lead, cidr, i + 1 < s.count ? "," : " }\n");
    }
    put(r, "\t}\n");
    cidrset_free(&s);
    return ERROR_OK;
}

static error_code render_nftables(render *r, error_info *err)
{
    put(r, "#!/usr/sbin/nft -f\n");
    header(r, "#");
    put(r, "# Load it with nft -f FILE: it replaces table inet %s as a whole, at once.\n"
           "# Each set holds its rules merged into the fewest prefixes (the same "
           "addresses).\n", r->name);
    put(r, "table inet %s {}\ndelete table inet %s\ntable inet %s {\n", r->name, r->name,
        r->name);
    static const model_action actions[] = {MODEL_ACTION_DENY, MODEL_ACTION_ALLOW};
    for (size_t a = 0; a < 2; a++) {
        for (int family = 4; family <= 6; family += 2) {
            error_code rc = nft_set(r, actions[a], family, err);
            if (rc != ERROR_OK)
                return rc;
        }
    }
    put(r, "\tchain decide {\n"
           "\t\tip saddr @deny_v4 drop\n\t\tip6 saddr @deny_v6 drop\n"
           "\t\tip saddr @allow_v4 accept\n\t\tip6 saddr @allow_v6 accept\n"
           "\t\tdrop\n\t}\n");
    if (r->opt && r->opt->no_hook) {
        put(r, "\t# No chain on the input hook (--no-hook): jump to decide from yours.\n}\n");
        return ERROR_OK;
    }
    put(r, "\tchain guard {\n"
           "\t\ttype filter hook input priority filter; policy accept;\n"
           "\t\tiif \"lo\" accept\n"
           "\t\tct state established,related accept\n");
    if (r->opt && r->opt->ports)
        put(r, "\t\tmeta l4proto { tcp, udp } th dport { %s } jump decide\n", r->opt->ports);
    else
        put(r, "\t\tjump decide\n");
    put(r, "\t}\n}\n");
    return ERROR_OK;
}

/* ---- nginx ---- */

static error_code render_nginx(render *r, error_info *err)
{
    (void)err;
    header(r, "#");
    put(r, "# Include it in an http, server or location block. nginx takes the first\n"
           "# rule that matches: every deny comes first, then every allow, then deny all.\n");
    for (size_t i = 0; i < r->set->count; i++) {
        const hostrules_rule *x = &r->set->rules[i];
        put(r, "%s %s;\t# %s\n", x->action == MODEL_ACTION_DENY ? "deny" : "allow", x->cidr,
            x->id);
    }
    put(r, "deny all;\n");
    return ERROR_OK;
}

/* ---- iptables, ip6tables ---- */

static void render_xtables(render *r, int family)
{
    const char *tool = family == 4 ? "iptables" : "ip6tables";
    header(r, "#");
    put(r, "# IPv%d rules only (%zu of the other family are in the %s export).\n", family,
        hostrules_left_out(r->set, family == 4 ? HOSTRULES_IPTABLES : HOSTRULES_IP6TABLES),
        family == 4 ? "ip6tables" : "iptables");
    put(r, "# Load it with %s-restore --noflush FILE (it replaces chain %s only), then\n"
           "# send traffic to the chain once, e.g. %s -I INPUT -p tcp --dport 443 -j %s\n",
        tool, r->name, tool, r->name);
    put(r, "*filter\n:%s - [0:0]\n-F %s\n", r->name, r->name);
    for (size_t i = 0; i < r->set->count; i++) {
        const hostrules_rule *x = &r->set->rules[i];
        if (x->pfx.family != family)
            continue;
        put(r, "-A %s -s %s -m comment --comment \"%s\" -j %s\n", r->name, x->cidr, x->id,
            x->action == MODEL_ACTION_DENY ? "DROP" : "ACCEPT");
    }
    put(r, "-A %s -j DROP\nCOMMIT\n", r->name);
}

static error_code render_iptables(render *r, error_info *err)
{
    (void)err;
    render_xtables(r, 4);
    return ERROR_OK;
}

static error_code render_ip6tables(render *r, error_info *err)
{
    (void)err;
    render_xtables(r, 6);
    return ERROR_OK;
}

/* ---- json, csv ---- */

static error_code render_json(render *r, error_info *err)
{
    (void)err;
    put(r, "{\"policy\": \"%s\", \"decision\": \"allowed only when an allow rule covers the "
           "address and no deny rule does\", \"rules\": [", r->set->policy_id);
    for (size_t i = 0; i < r->set->count; i++) {
        const hostrules_rule *x = &r->set->rules[i];
        put(r, "%s\n  {\"action\": \"%s\", \"cidr\": \"%s\", \"family\": %d, \"id\": \"%s\", "
               "\"state\": \"%s\", \"description\": ", i ? "," : "",
            model_action_name(x->action), x->cidr, x->pfx.family, x->id,
            model_state_name(x->state));
        buf_json_string(r->out, x->description);
        put(r, "}");
    }
    put(r, "%s]}\n", r->set->count ? "\n" : "");
    return ERROR_OK;
}

/* A CSV field, always quoted, quotes doubled (RFC 4180). */
static void csv_field(render *r, const char *s)
{
    buf_append(r->out, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        buf_append(r->out, s, (size_t)(q - s));
        buf_append(r->out, "\"\"", 2);
    }
    buf_puts(r->out, s);
    buf_append(r->out, "\"", 1);
}

static error_code render_csv(render *r, error_info *err)
{
    (void)err;
    put(r, "action,cidr,family,id,state,description\n");
    for (size_t i = 0; i < r->set->count; i++) {
        const hostrules_rule *x = &r->set->rules[i];
        put(r, "%s,%s,%d,%s,%s,", model_action_name(x->action), x->cidr, x->pfx.family, x->id,
            model_state_name(x->state));
        csv_field(r, x->description);
        put(r, "\n");
    }
    return ERROR_OK;
}

static error_code (*const renderers[HOSTRULES_FORMAT_COUNT])(render *, error_info *) = {
    [HOSTRULES_NFTABLES] = render_nftables, [HOSTRULES_NGINX] = render_nginx,
    [HOSTRULES_IPTABLES] = render_iptables, [HOSTRULES_IP6TABLES] = render_ip6tables,
    [HOSTRULES_JSON] = render_json,         [HOSTRULES_CSV] = render_csv,
};

error_code hostrules_render(const hostrules_set *set, hostrules_format fmt,
                            const hostrules_opts *opt, buf_t *out, error_info *err)
{
    if ((unsigned)fmt >= HOSTRULES_FORMAT_COUNT)
        return error_set(err, ERROR_INVALID, "unknown export format");
    render r = {set, opt, opt && opt->name ? opt->name : HOSTRULES_NAME_DEFAULT, out};
    error_code rc = hostrules_name_check(r.name, err);
    if (rc == ERROR_OK && opt && opt->ports)
        rc = hostrules_ports_check(opt->ports, err);
    if (rc == ERROR_OK)
        rc = renderers[fmt](&r, err);
    if (rc == ERROR_OK && out->failed)
        rc = error_set(err, ERROR_NOMEM, "out of memory writing the export");
    return rc;
}

/* impact: one index of a policy's rules tagged before/after, and the addresses
 * whose decision changes (see rampart/impact.h).
 *
 * The index is a hash of prefixes (family, length, network bits), each node
 * holding the rule of each action on each side; a check masks the address to
 * every prefix length the index holds, longest first, and stops once both
 * sides have a deny and an allow. It is built once and probed once per
 * distinct address, so a hash (a few lookups per address) beats a trie's
 * build here, and one node answers both sides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/cidrset.h"
#include "rampart/impact.h"
#include "rampart/kind.h"

enum { SIDE_BEFORE = 0, SIDE_AFTER = 1 };

/* Where a one-sided rule comes from, for its label. */
enum { ROW_QUEUED, ROW_FAILED, ROW_CONFLICT };

typedef struct irule {
    uint32_t node; /* its prefix */
    uint32_t id;   /* offset in text */
    uint8_t action, sides;
    bool apply;
    uint8_t row; /* ROW_* */
} irule; /* 12 bytes: a prefix is kept once, in its node */

typedef struct inode {
    uint64_t key[2];
    uint8_t family, bits;
    uint32_t ref[2][2]; /* [side][action]: rule index or IMPACT_NO_RULE */
} inode;

struct impact_index {
    irule *rules;
    size_t nrules, cap_rules;
    inode *nodes;
    size_t nnodes, cap_nodes;
    uint32_t *slots;
    size_t nslots;
    char *text;
    size_t ntext, cap_text;
    bool present[2][129]; /* by family (0: IPv4), the prefix lengths held */
    uint8_t lens[2][129]; /* the same, longest first */
    size_t nlens[2];
    size_t changed;
};

/* ---- building ---- */

error_code impact_index_new(impact_index **out, error_info *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? ERROR_OK : error_set(err, ERROR_NOMEM, "out of memory");
}

void impact_index_free(impact_index *ix)
{
    if (!ix)
        return;
    free(ix->rules);
    free(ix->nodes);
    free(ix->slots);
    free(ix->text);
    free(ix);
}

static void prefix_key(const validate_prefix *p, uint64_t k[2])
{
    k[0] = k[1] = 0;
    for (size_t i = 0; i < 8; i++)
        k[0] = k[0] << 8 | (p->family == 4 && i >= 4 ? 0 : p->addr[i]);
    if (p->family == 6)
        for (size_t i = 8; i < 16; i++)
            k[1] = k[1] << 8 | p->addr[i];
}

static uint64_t mask64(unsigned len)
{
    return len == 0 ? 0 : ~UINT64_C(0) << (64 - len);
}

/* `k` cut to its first `bits` bits. */
static void mask_key(const uint64_t k[2], unsigned bits, uint64_t out[2])
{
    out[0] = k[0] & mask64(bits > 64 ? 64 : bits);
    out[1] = bits > 64 ? k[1] & mask64(bits - 64) : 0;
}

static size_t node_hash(const uint64_t k[2], unsigned family, unsigned bits, size_t mask)
{
    uint64_t h = (k[0] ^ (k[1] * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)family << 8 | bits)) *
                 UINT64_C(0xD6E8FEB86659FD93);
    return (size_t)(h ^ (h >> 32)) & mask;
}

static uint32_t node_find(const impact_index *ix, const uint64_t k[2], unsigned family,
                          unsigned bits, size_t *slot)
{
    size_t mask = ix->nslots - 1;
    for (size_t i = node_hash(k, family, bits, mask);; i = (i + 1) & mask) {
        uint32_t n = ix->slots[i];
        if (n == IMPACT_NO_RULE || (ix->nodes[n].key[0] == k[0] && ix->nodes[n].key[1] == k[1] &&
                                    ix->nodes[n].family == family && ix->nodes[n].bits == bits)) {
            if (slot)
                *slot = i;
            return n;
        }
    }
}

static bool slots_grow(impact_index *ix)
{
    size_t nslots = ix->nslots ? ix->nslots * 2 : 256;
    uint32_t *slots = malloc(nslots * sizeof *slots);
    if (!slots)
        return false;
    memset(slots, 0xff, nslots * sizeof *slots);
    free(ix->slots);
    ix->slots = slots;
    ix->nslots = nslots;
    for (size_t n = 0; n < ix->nnodes; n++) {
        size_t slot;
        node_find(ix, ix->nodes[n].key, ix->nodes[n].family, ix->nodes[n].bits, &slot);
        ix->slots[slot] = (uint32_t)n;
    }
    return true;
}

static uint32_t node_get(impact_index *ix, const validate_prefix *p, error_info *err)
{
    if ((ix->nnodes + 1) * 2 > ix->nslots && !slots_grow(ix))
        goto nomem;
    uint64_t k[2];
    prefix_key(p, k);
    unsigned family = p->family == 4 ? 0 : 1;
    size_t slot;
    uint32_t n = node_find(ix, k, family, p->bits, &slot);
    if (n != IMPACT_NO_RULE)
        return n;
    if (!buf_grow_array((void **)&ix->nodes, &ix->cap_nodes, ix->nnodes + 1, sizeof *ix->nodes))
        goto nomem;
    inode *node = &ix->nodes[ix->nnodes];
    memset(node, 0, sizeof *node);
    memcpy(node->key, k, sizeof k);
    node->family = (uint8_t)family;
    node->bits = (uint8_t)p->bits;
    memset(node->ref, 0xff, sizeof node->ref);
    ix->slots[slot] = (uint32_t)ix->nnodes;
    if (!ix->present[family][p->bits]) {
        ix->present[family][p->bits] = true;
        size_t i = ix->nlens[family]++;
        for (; i > 0 && ix->lens[family][i - 1] < p->bits; i--)
            ix->lens[family][i] = ix->lens[family][i - 1];
        ix->lens[family][i] = (uint8_t)p->bits;
    }
    return (uint32_t)ix->nnodes++;
nomem:
    error_set(err, ERROR_NOMEM, "out of memory");
    return IMPACT_NO_RULE;
}

static bool host_bits_clear(const validate_prefix *p)
{
    uint64_t k[2], m[2];
    prefix_key(p, k);
    mask_key(k, p->bits, m);
    return m[0] == k[0] && m[1] == k[1];
}

error_code impact_index_add(impact_index *ix, const validate_prefix *pfx, model_action action,
                            const char *rule_id, unsigned sides, bool apply, error_info *err)
{
    validate_prefix p = *pfx;
    validate_prefix v4;
    if (p.family == 6 && validate_prefix_unmap(&p, &v4))
        p = v4; /* decided as the IPv4 prefix it carries, as check does */
    if ((p.family != 4 && p.family != 6) || p.bits > (p.family == 4 ? 32u : 128u) ||
        !host_bits_clear(&p))
        return error_set(err, ERROR_INVALID, "impact: not a canonical prefix");
    sides &= IMPACT_BOTH;
    if (!sides)
        return ERROR_OK;
    size_t idlen = strlen(rule_id) + 1;
    if (ix->nrules >= IMPACT_NO_RULE - 1 || ix->ntext + idlen > UINT32_MAX ||
        !buf_grow_array((void **)&ix->rules, &ix->cap_rules, ix->nrules + 1, sizeof *ix->rules) ||
        !buf_grow_array((void **)&ix->text, &ix->cap_text, ix->ntext + idlen, 1))
        return error_set(err, ERROR_NOMEM, "out of memory");
    uint32_t n = node_get(ix, &p, err);
    if (n == IMPACT_NO_RULE)
        return err->code;
    uint32_t r = (uint32_t)ix->nrules++;
    irule *rule = &ix->rules[r];
    rule->node = n;
    rule->id = (uint32_t)ix->ntext;
    rule->action = (uint8_t)action;
    rule->sides = (uint8_t)sides;
    rule->apply = apply;
    rule->row = ROW_QUEUED;
    memcpy(ix->text + ix->ntext, rule_id, idlen);
    ix->ntext += idlen;
    if (sides != IMPACT_BOTH)
        ix->changed++;
    unsigned a = action == MODEL_ACTION_DENY ? 1 : 0;
    for (unsigned s = 0; s < 2; s++) {
        /* the first rule of a side and action at a prefix decides there */
        if ((sides & (1u << s)) && ix->nodes[n].ref[s][a] == IMPACT_NO_RULE)
            ix->nodes[n].ref[s][a] = r;
    }
    return ERROR_OK;
}

size_t impact_index_rules(const impact_index *ix)
{
    return ix->nrules;
}

size_t impact_index_changed(const impact_index *ix)
{
    return ix->changed;
}

void impact_rule_get(const impact_index *ix, uint32_t rule, impact_rule_info *out)
{
    memset(out, 0, sizeof *out);
    if (rule >= ix->nrules) {
        out->id = "";
        out->label = "";
        return;
    }
    const irule *r = &ix->rules[rule];
    const inode *n = &ix->nodes[r->node];
    validate_prefix p = {.family = n->family ? 6 : 4, .bits = n->bits};
    for (size_t i = 0; i < 16; i++)
        p.addr[i] = (uint8_t)(n->key[i / 8] >> (56 - 8 * (i % 8)));
    out->id = ix->text + r->id;
    cidrset_format(&p, out->cidr);
    out->action = (model_action)r->action;
    out->sides = r->sides;
    out->label = r->sides == IMPACT_BOTH    ? "synced"
                 : r->row == ROW_CONFLICT   ? "conflict"
                 : r->row == ROW_FAILED     ? "failed"
                 : r->sides == IMPACT_BEFORE ? "removed"
                 : r->apply                 ? "apply"
                                            : "pending";
}

/* ---- deciding ---- */

void impact_check(const impact_index *ix, const policy_addr *addr, impact_side *before,
                  impact_side *after)
{
    uint32_t best[2][2];
    memset(best, 0xff, sizeof best);
    validate_prefix p = {.family = addr->family, .bits = addr->family == 4 ? 32u : 128u};
    memcpy(p.addr, addr->bytes, 16);
    uint64_t k[2];
    prefix_key(&p, k);
    unsigned family = addr->family == 4 ? 0 : 1;
    unsigned missing = 4;
    for (size_t i = 0; ix->nslots && i < ix->nlens[family] && missing; i++) {
        unsigned bits = ix->lens[family][i];
        uint64_t m[2];
        mask_key(k, bits, m);
        uint32_t n = node_find(ix, m, family, bits, NULL);
        if (n == IMPACT_NO_RULE)
            continue;
        for (unsigned s = 0; s < 2; s++) {
            for (unsigned a = 0; a < 2; a++) {
                if (best[s][a] == IMPACT_NO_RULE && ix->nodes[n].ref[s][a] != IMPACT_NO_RULE) {
                    best[s][a] = ix->nodes[n].ref[s][a];
                    missing--;
                }
            }
        }
    }
    impact_side *out[2] = {before, after};
    for (unsigned s = 0; s < 2; s++) {
        out[s]->allowed = best[s][1] == IMPACT_NO_RULE && best[s][0] != IMPACT_NO_RULE;
        out[s]->rule = best[s][1] != IMPACT_NO_RULE ? best[s][1] : best[s][0];
    }
}

static int flip_order(const void *pa, const void *pb, void *ctx)
{
    const impact_flip *a = pa, *b = pb;
    const logscan_addr *addrs = ctx;
    if (a->requests != b->requests)
        return a->requests > b->requests ? -1 : 1;
    const policy_addr *x = &addrs[a->addr].addr, *y = &addrs[b->addr].addr;
    if (x->family != y->family)
        return x->family < y->family ? -1 : 1;
    return memcmp(x->bytes, y->bytes, 16);
}

static int count_order(const void *pa, const void *pb)
{
    const impact_rule_count *a = pa, *b = pb;
    if (a->requests != b->requests)
        return a->requests > b->requests ? -1 : 1;
    if (a->addresses != b->addresses)
        return a->addresses > b->addresses ? -1 : 1;
    return a->rule < b->rule ? -1 : a->rule > b->rule;
}

static bool one_sided(const impact_index *ix, uint32_t rule)
{
    return rule != IMPACT_NO_RULE && ix->rules[rule].sides != IMPACT_BOTH;
}

/* Put the flip down to the changed rule(s) that decide it. */
static void attribute(const impact_index *ix, const impact_flip *f, impact_rule_count *per)
{
    uint32_t who[2] = {f->after.rule, f->before.rule};
    for (size_t i = 0; i < 2; i++) {
        if (!one_sided(ix, who[i]) || (i == 1 && who[1] == who[0]))
            continue;
        per[who[i]].rule = who[i];
        per[who[i]].addresses++;
        per[who[i]].requests += f->requests;
    }
}

static error_code collect_rules(const impact_index *ix, impact_rule_count *per,
                                impact_result *out, error_info *err)
{
    size_t n = 0;
    for (size_t r = 0; r < ix->nrules; r++)
        n += per[r].addresses > 0;
    if (!n)
        return ERROR_OK;
    out->rules = malloc(n * sizeof *out->rules);
    if (!out->rules)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t r = 0; r < ix->nrules; r++)
        if (per[r].addresses)
            out->rules[out->nrules++] = per[r];
    qsort(out->rules, out->nrules, sizeof *out->rules, count_order);
    return ERROR_OK;
}

error_code impact_eval(const impact_index *ix, const logscan_addr *addrs, size_t n,
                       impact_result *out, error_info *err)
{
    size_t cap = 0;
    impact_rule_count *per = calloc(ix->nrules ? ix->nrules : 1, sizeof *per);
    if (!per)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        impact_flip f = {.addr = i, .requests = addrs[i].requests};
        impact_check(ix, &addrs[i].addr, &f.before, &f.after);
        if (f.before.allowed == f.after.allowed)
            continue;
        if (!buf_grow_array((void **)&out->flips, &cap, out->nflips + 1, sizeof f)) {
            free(per);
            return error_set(err, ERROR_NOMEM, "out of memory");
        }
        out->flips[out->nflips++] = f;
        if (f.after.allowed) {
            out->allowed_addresses++;
            out->allowed_requests += f.requests;
        } else {
            out->denied_addresses++;
            out->denied_requests += f.requests;
        }
        attribute(ix, &f, per);
    }
    if (out->nflips)
        qsort_r(out->flips, out->nflips, sizeof *out->flips, flip_order, (void *)addrs);
    error_code rc = collect_rules(ix, per, out, err);
    free(per);
    return rc;
}

void impact_result_free(impact_result *r)
{
    if (!r)
        return;
    free(r->flips);
    free(r->rules);
    memset(r, 0, sizeof *r);
}

/* ---- loading from the cache ---- */

typedef struct deferred {
    char id[MODEL_ID_MAX + 1];
    char cidr[MODEL_CIDR_MAX + 1];
    model_action action;
} deferred;

typedef struct loader {
    impact_index *ix;
    impact_change *changes; /* sorted by rule id */
    size_t nchanges;
    deferred *later; /* edited and conflicting rows: their bases are read after */
    size_t nlater, cap_later;
} loader;

typedef struct row_sides {
    bool before, after;
    validate_prefix b, a;
    uint8_t row; /* ROW_*: what its one-sided rules are labelled */
} row_sides;

static int change_order(const void *pa, const void *pb)
{
    const impact_change *a = pa, *b = pb;
    return strcmp(a->rule_id, b->rule_id);
}

static error_code parse_cidr(const char *id, const char *cidr, validate_prefix *out,
                             error_info *err)
{
    error_info e = {0};
    if (validate_cidr(cidr, out, NULL, 0, &e) != ERROR_OK)
        return error_set(err, ERROR_INVALID, "rule %s: cidr: %s", id, e.msg);
    return ERROR_OK;
}

/* Add a rule to one side, labelled by where its row stands. */
static error_code add_side(loader *L, const validate_prefix *p, model_action action,
                           const char *id, unsigned side, bool apply, uint8_t row,
                           error_info *err)
{
    error_code rc = impact_index_add(L->ix, p, action, id, side, apply, err);
    if (rc == ERROR_OK && !apply)
        L->ix->rules[L->ix->nrules - 1].row = row;
    return rc;
}

static error_code add_row(loader *L, const char *id, model_action action, row_sides *rs,
                          error_info *err)
{
    impact_change key = {0};
    snprintf(key.rule_id, sizeof key.rule_id, "%s", id);
    const impact_change *c =
        L->nchanges ? bsearch(&key, L->changes, L->nchanges, sizeof key, change_order) : NULL;
    bool apply = false;
    if (c && c->kind == IMPACT_CHANGE_REMOVE) {
        rs->after = false;
    } else if (c && c->kind == IMPACT_CHANGE_MOVE) {
        rs->after = true;
        rs->a = c->pfx;
        apply = true;
    }
    if (rs->before && rs->after && cidrset_compare(&rs->b, &rs->a) == 0)
        return impact_index_add(L->ix, &rs->b, action, id, IMPACT_BOTH, false, err);
    error_code rc = ERROR_OK;
    if (rs->before)
        rc = add_side(L, &rs->b, action, id, IMPACT_BEFORE, false, rs->row, err);
    if (rc == ERROR_OK && rs->after)
        rc = add_side(L, &rs->a, action, id, IMPACT_AFTER, apply, rs->row, err);
    return rc;
}

static error_code take_rule(void *ctx, const store_policy_rule *r, error_info *err)
{
    loader *L = ctx;
    if (r->state == MODEL_STATE_EDITED || r->state == MODEL_STATE_CONFLICT) {
        if (!buf_grow_array((void **)&L->later, &L->cap_later, L->nlater + 1, sizeof *L->later))
            return error_set(err, ERROR_NOMEM, "out of memory");
        deferred *d = &L->later[L->nlater++];
        snprintf(d->id, sizeof d->id, "%s", r->id);
        snprintf(d->cidr, sizeof d->cidr, "%s", r->cidr);
        d->action = r->action;
        return ERROR_OK;
    }
    row_sides rs = {0};
    switch (r->state) {
    case MODEL_STATE_SYNCED:
        rs.before = rs.after = true;
        break;
    case MODEL_STATE_NEW:
    case MODEL_STATE_CREATING:
    case MODEL_STATE_UNKNOWN:
        rs.after = true;
        break;
    case MODEL_STATE_FAILED:
        rs.after = true;
        rs.row = ROW_FAILED;
        break;
    case MODEL_STATE_DELETING:
        rs.before = true;
        break;
    default: /* remote_deleted, orphaned: on neither side */
        break;
    }
    if (!rs.before && !rs.after)
        return ERROR_OK;
    error_code rc = parse_cidr(r->id, r->cidr, &rs.b, err);
    rs.a = rs.b;
    return rc == ERROR_OK ? add_row(L, r->id, r->action, &rs, err) : rc;
}

/* The remote's cidr of an edited or conflicting row, from its edit lines. */
static const char *remote_cidr(const store_edit_info *info, const char *own)
{
    const kind_desc *k = kind_get(MODEL_KIND_RULE);
    for (size_t i = 0; i < info->count; i++) {
        const store_edit_field *f = &info->field[i];
        if (f->field < k->field_count && strcmp(k->fields[f->field].name, "cidr") == 0)
            return f->remote ? f->remote : f->base ? f->base : own;
    }
    return own;
}

static error_code take_later(loader *L, store *st, const deferred *d, error_info *err)
{
    store_edit_info info = {0};
    error_code rc = store_edit_get(st, MODEL_KIND_RULE, d->id, &info, err);
    if (rc != ERROR_OK)
        return rc;
    row_sides rs = {.before = true, .after = true};
    const char *before = remote_cidr(&info, d->cidr);
    if (info.state == MODEL_STATE_CONFLICT) {
        rs.row = ROW_CONFLICT;
        switch (info.conflict) {
        case STORE_CONFLICT_GONE:
            rs.before = false;
            break;
        case STORE_CONFLICT_KEY:
            rs.before = info.count > 0; /* a local create never reached the remote */
            break;
        case STORE_CONFLICT_CHANGED:
            rs.after = false; /* deleted here */
            before = d->cidr; /* the row holds the remote's values */
            break;
        case STORE_CONFLICT_CROSSED:
            before = d->cidr;
            break;
        default:
            break;
        }
    }
    rc = parse_cidr(d->id, before, &rs.b, err);
    if (rc == ERROR_OK)
        rc = parse_cidr(d->id, d->cidr, &rs.a, err);
    store_edit_info_clear(&info);
    return rc == ERROR_OK ? add_row(L, d->id, d->action, &rs, err) : rc;
}

static error_code add_changes(loader *L, error_info *err)
{
    for (size_t i = 0; i < L->nchanges; i++) {
        const impact_change *c = &L->changes[i];
        if (c->kind != IMPACT_CHANGE_ADD)
            continue;
        error_code rc = impact_index_add(L->ix, &c->pfx, c->action, c->rule_id, IMPACT_AFTER,
                                         true, err);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

error_code impact_index_load(store *st, const char *policy_id, const impact_change *changes,
                             size_t n, impact_index **out, error_info *err)
{
    *out = NULL;
    loader L = {0};
    error_code rc = impact_index_new(&L.ix, err);
    if (rc == ERROR_OK && n) {
        L.changes = malloc(n * sizeof *changes);
        if (!L.changes)
            rc = error_set(err, ERROR_NOMEM, "out of memory");
        else
            memcpy(L.changes, changes, n * sizeof *changes);
        L.nchanges = n;
        if (L.changes)
            qsort(L.changes, n, sizeof *changes, change_order);
    }
    if (rc == ERROR_OK)
        rc = store_policy_rules(st, policy_id, take_rule, &L, err);
    for (size_t i = 0; rc == ERROR_OK && i < L.nlater; i++)
        rc = take_later(&L, st, &L.later[i], err);
    if (rc == ERROR_OK)
        rc = add_changes(&L, err);
    free(L.changes);
    free(L.later);
    if (rc != ERROR_OK) {
        impact_index_free(L.ix);
        return rc;
    }
    *out = L.ix;
    return ERROR_OK;
}

/* ---- the whole queue ---- */

static error_code add_policy(store *st, const char *policy, const logscan_addr *addrs,
                             size_t n, impact_totals *out, error_info *err)
{
    impact_index *ix = NULL;
    error_code rc = impact_index_load(st, policy, NULL, 0, &ix, err);
    if (rc != ERROR_OK || !impact_index_changed(ix)) {
        impact_index_free(ix);
        return rc;
    }
    impact_result r = {0};
    rc = impact_eval(ix, addrs, n, &r, err);
    if (rc == ERROR_OK) {
        out->policies++;
        out->denied_addresses += r.denied_addresses;
        out->denied_requests += r.denied_requests;
        out->allowed_addresses += r.allowed_addresses;
        out->allowed_requests += r.allowed_requests;
    }
    impact_result_free(&r);
    impact_index_free(ix);
    return rc;
}

error_code impact_queue_totals(store *st, const logscan_addr *addrs, size_t n,
                               impact_totals *out, error_info *err)
{
    enum { IDS = 64 };
    memset(out, 0, sizeof *out);
    char ids[IDS][MODEL_ID_MAX + 1], after[MODEL_ID_MAX + 1] = "";
    for (;;) {
        size_t got = 0;
        error_code rc = store_policy_ids(st, after, ids, IDS, &got, err);
        for (size_t i = 0; rc == ERROR_OK && i < got; i++)
            rc = add_policy(st, ids[i], addrs, n, out, err);
        if (rc != ERROR_OK)
            return rc;
        if (got < IDS)
            return ERROR_OK;
        memcpy(after, ids[got - 1], sizeof after);
    }
}

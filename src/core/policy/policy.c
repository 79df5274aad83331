/*
 * policy: building the index (see policy_internal.h for its shape); the
 * decisions are in policy_check.c.
 */
#include "rampart/policy.h"

#include <arpa/inet.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"
#include "rampart/buf.h"
#include "rampart/cidrset.h"
#include "rampart/validate.h"

#define WALK_PAGE 256

static error_code nomem(error_info *err)
{
    return error_set(err, ERROR_NOMEM, "out of memory building the policy index");
}

/* Copy `a` and then `b` (each with its NUL; `b` may be NULL) into the arena;
 * POLICY_NONE when out of memory or space. */
static uint32_t text_add(policy_index *ix, const char *a, const char *b)
{
    size_t la = strlen(a) + 1, lb = b ? strlen(b) + 1 : 0;
    size_t off = ix->ntext;
    if (la + lb > POLICY_TEXT_MAX - off)
        return POLICY_NONE;
    if (!buf_grow_array((void **)&ix->text, &ix->cap_text, off + la + lb, 1))
        return POLICY_NONE;
    memcpy(ix->text + off, a, la);
    if (b)
        memcpy(ix->text + off + la, b, lb);
    ix->ntext = off + la + lb;
    return (uint32_t)off;
}

/* ---- policies by id ------------------------------------------------------ */

static void slot_put(uint32_t *slots, size_t nslots, uint32_t h, uint32_t p)
{
    size_t mask = nslots - 1, i = h & mask;
    while (slots[i] != POLICY_NONE)
        i = (i + 1) & mask;
    slots[i] = p;
}

/* Keep the table at most half full, so probes stay short. */
static bool slots_reserve(policy_index *ix, size_t count)
{
    if (count * 2 <= ix->nslots)
        return true;
    size_t n = ix->nslots ? ix->nslots * 2 : 16;
    while (count * 2 > n)
        n *= 2;
    uint32_t *s = malloc(n * sizeof *s);
    if (!s)
        return false;
    memset(s, 0xff, n * sizeof *s);
    for (size_t p = 0; p < ix->npolicies; p++)
        slot_put(s, n, ix->policies[p].hash, (uint32_t)p);
    free(ix->slots);
    ix->slots = s;
    ix->nslots = n;
    return true;
}

static error_code policy_get_or_add(policy_index *ix, const char *id, uint32_t *out,
                                    error_info *err)
{
    uint32_t h = policy_hash(id);
    *out = policy_lookup(ix, id, h);
    if (*out != POLICY_NONE)
        return ERROR_OK;
    if (ix->npolicies >= POLICY_NONE - 1 || !slots_reserve(ix, ix->npolicies + 1) ||
        !buf_grow_array((void **)&ix->policies, &ix->cap_policies, ix->npolicies + 1,
                      sizeof *ix->policies))
        return nomem(err);
    uint32_t off = text_add(ix, id, NULL);
    if (off == POLICY_NONE)
        return nomem(err);
    uint32_t p = (uint32_t)ix->npolicies++;
    policy_trie empty = {.root = POLICY_NONE, .has_jumps = false};
    ix->policies[p] = (policy_entry){.id = off, .hash = h, .trie = {empty, empty}};
    slot_put(ix->slots, ix->nslots, h, p);
    *out = p;
    return ERROR_OK;
}

/* ---- the tries ----------------------------------------------------------- */

/* Bits two keys share from the top, at most `max`. */
static unsigned common_bits(const uint64_t a[2], const uint64_t b[2], unsigned max)
{
    uint64_t x0 = a[0] ^ b[0], x1 = a[1] ^ b[1];
    unsigned n = x0 ? (unsigned)__builtin_clzll(x0)
               : x1 ? 64u + (unsigned)__builtin_clzll(x1) : 128u;
    return n < max ? n : max;
}

static uint32_t node_new(policy_index *ix, const uint64_t key[2], unsigned len)
{
    uint32_t n = (uint32_t)ix->nnodes++;
    policy_node *p = &ix->nodes[n];
    p->key[0] = len >= 64 ? key[0] : key[0] & policy_mask64(len);
    p->key[1] = len <= 64 ? 0 : key[1] & policy_mask64(len - 64u);
    p->len = (uint8_t)len;
    p->child[0] = p->child[1] = POLICY_NONE;
    p->rule[0] = p->rule[1] = POLICY_NONE;
    p->jump = POLICY_NONE;
    p->jbits = 0;
    return n;
}

/*
 * The node for exactly (key, len) under *slot, made if missing: a leaf, or a
 * node between *slot's and its subtree, plus a branch node where the new prefix
 * parts from an existing one. At most two new nodes: the caller reserved room
 * for them, so pointers into the array stay valid throughout.
 */
static uint32_t trie_node_for(policy_index *ix, uint32_t *slot, const uint64_t key[2],
                              unsigned len)
{
    for (;;) {
        uint32_t cur = *slot;
        if (cur == POLICY_NONE)
            return *slot = node_new(ix, key, len);
        policy_node *n = &ix->nodes[cur];
        unsigned cpl = common_bits(key, n->key, len < n->len ? len : n->len);
        if (cpl == n->len && cpl == len)
            return cur;
        if (cpl == n->len) {
            slot = &n->child[policy_bit(key, n->len)];
            continue;
        }
        uint32_t up = node_new(ix, key, cpl);
        ix->nodes[up].child[policy_bit(ix->nodes[cur].key, cpl)] = cur;
        *slot = up;
        if (cpl == len)
            return up;
        uint32_t leaf = node_new(ix, key, len);
        ix->nodes[up].child[policy_bit(key, cpl)] = leaf;
        return leaf;
    }
}

/* ---- jump tables (see policy_internal.h) ---------------------------------- */

/* A table stands for 4 to 20 bits; all of them together hold at most half as
 * many entries as there are nodes (6 bytes a node), whatever the rules' shape. */
enum { JUMP_MIN_BITS = 4, JUMP_MAX_BITS = 20, JUMP_NODES_PER_ENTRY = 2 };

static void forget_below(policy_index *ix, uint32_t n)
{
    while (n != POLICY_NONE) {
        policy_node *node = &ix->nodes[n];
        node->jump = POLICY_NONE;
        forget_below(ix, node->child[0]);
        n = node->child[1];
    }
}

/* A rule is being added to `t`: its tables describe the trie as it was. Their
 * entries stay in ix->jumps, unused, until the next finish. */
static void jumps_forget(policy_index *ix, policy_trie *t)
{
    if (!t->has_jumps)
        return;
    forget_below(ix, t->root);
    t->has_jumps = false;
}

/* Set bits [s, s + k) of `a` to v. */
static void set_bits(uint64_t a[2], unsigned s, unsigned k, uint32_t v)
{
    for (unsigned i = 0; i < k; i++) {
        unsigned b = s + i;
        uint64_t m = UINT64_C(1) << (63 - b % 64);
        uint64_t *w = &a[b / 64];
        *w = (v >> (k - 1 - i)) & 1u ? *w | m : *w & ~m;
    }
}

/* Entry v of a table of k bits below `fan`: the walk through those levels. */
static policy_jump jump_entry(const policy_index *ix, const policy_node *fan, unsigned k,
                              uint32_t v)
{
    policy_jump j = {{POLICY_NONE, POLICY_NONE}, POLICY_NONE};
    uint64_t a[2] = {fan->key[0], fan->key[1]};
    unsigned end = fan->len + k;
    set_bits(a, fan->len, k, v);
    uint32_t cur = fan->child[policy_bit(a, fan->len)];
    while (cur != POLICY_NONE) {
        const policy_node *n = &ix->nodes[cur];
        if (n->len >= end) {
            j.next = cur; /* its own prefix check is done by the walk */
            break;
        }
        if (!policy_node_matches(n, a))
            break;
        for (int act = 0; act < 2; act++) {
            if (n->rule[act] != POLICY_NONE)
                j.rule[act] = n->rule[act];
        }
        cur = n->child[policy_bit(a, n->len)];
    }
    return j;
}

typedef struct jump_build {
    policy_index *ix;
    const uint32_t *count; /* nodes in each node's subtree */
    size_t cap, budget;    /* entries allocated, and allowed in all */
    unsigned maxlen;       /* 32 or 128 */
} jump_build;

/*
 * A table at the first node from `n` down with two children, with between a
 * quarter and an eighth as many entries as its subtree has nodes (each entry
 * then leads to a node or two), and tables below it, nested, wherever the
 * subtree an entry leads to is large. Small subtrees go without.
 */
static error_code jumps_build(jump_build *b, uint32_t n, error_info *err)
{
    policy_index *ix = b->ix;
    while (n != POLICY_NONE) {
        const policy_node *node = &ix->nodes[n];
        if (node->child[0] != POLICY_NONE && node->child[1] != POLICY_NONE)
            break;
        n = node->child[0] != POLICY_NONE ? node->child[0] : node->child[1];
    }
    if (n == POLICY_NONE)
        return ERROR_OK;
    policy_node *fan = &ix->nodes[n];
    unsigned k = 0;
    while (k < JUMP_MAX_BITS && (size_t)1 << (k + 2) <= b->count[n])
        k++;
    if (k > b->maxlen - fan->len)
        k = b->maxlen - fan->len;
    size_t first = ix->njumps, size = (size_t)1 << k;
    if (k < JUMP_MIN_BITS || first + size > b->budget)
        return ERROR_OK;
    if (!buf_grow_array((void **)&ix->jumps, &b->cap, first + size, sizeof *ix->jumps))
        return nomem(err);
    for (uint32_t v = 0; v < size; v++)
        ix->jumps[first + v] = jump_entry(ix, fan, k, v);
    ix->njumps += size;
    fan->jump = (uint32_t)first;
    fan->jbits = (uint8_t)k;
    /* The entries leading to one node are neighbours: visit each node once. */
    uint32_t last = POLICY_NONE;
    for (size_t v = 0; v < size; v++) {
        uint32_t next = ix->jumps[first + v].next;
        if (next == POLICY_NONE || next == last)
            continue;
        last = next;
        error_code rc = jumps_build(b, next, err);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

/* Tables for every trie; nodes must be in breadth-first order (children after
 * their parent), as policy_index_finish leaves them. */
static error_code jumps_build_all(policy_index *ix, error_info *err)
{
    uint32_t *count = malloc(ix->nnodes * sizeof *count);
    if (!count)
        return nomem(err);
    for (size_t i = ix->nnodes; i-- > 0;) {
        const policy_node *n = &ix->nodes[i];
        count[i] = 1;
        for (int c = 0; c < 2; c++)
            count[i] += n->child[c] != POLICY_NONE ? count[n->child[c]] : 0;
    }
    jump_build b = {ix, count, 0, ix->nnodes / JUMP_NODES_PER_ENTRY, 32};
    if (b.budget >= POLICY_NONE)
        b.budget = POLICY_NONE - 1;
    error_code rc = ERROR_OK;
    for (size_t p = 0; p < ix->npolicies && rc == ERROR_OK; p++) {
        for (int f = 0; f < 2 && rc == ERROR_OK; f++) {
            policy_trie *t = &ix->policies[p].trie[f];
            b.maxlen = f == POLICY_V4 ? 32 : 128;
            rc = jumps_build(&b, t->root, err);
            t->has_jumps = true; /* even on failure: the tables built are valid */
        }
    }
    free(count);
    policy_jump *fit;
    if (ix->njumps && (fit = realloc(ix->jumps, ix->njumps * sizeof *fit)))
        ix->jumps = fit;
    return rc;
}

/* ---- building ------------------------------------------------------------ */

error_code policy_index_new(policy_index **out, error_info *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? ERROR_OK : nomem(err);
}

void policy_index_free(policy_index *ix)
{
    if (!ix)
        return;
    free(ix->nodes);
    free(ix->jumps);
    free(ix->policies);
    free(ix->slots);
    free(ix->text);
    free(ix);
}

static error_code check_id(const char *id, const char *what, error_info *err)
{
    if (!id || !*id)
        return error_set(err, ERROR_INVALID, "%s is empty", what);
    if (strlen(id) > MODEL_ID_MAX)
        return error_set(err, ERROR_INVALID, "%s is longer than %d bytes", what,
                         MODEL_ID_MAX);
    return ERROR_OK;
}

/*
 * Check a rule and parse its cidr into *pfx and canon. `strict`: the cidr must
 * already be canonical (policy_index_add's contract); otherwise any form
 * validate accepts is taken ("2001:DB8::/32" from a remote listing).
 */
static error_code check_rule(const char *policy_id, const char *cidr, model_action action,
                             const char *rule_id, bool strict, validate_prefix *pfx,
                             char canon[MODEL_CIDR_MAX + 1], error_info *err)
{
    error_code rc;
    if ((rc = check_id(policy_id, "policy id", err)) != ERROR_OK ||
        (rc = check_id(rule_id, "rule id", err)) != ERROR_OK)
        return rc;
    if (action != MODEL_ACTION_ALLOW && action != MODEL_ACTION_DENY)
        return error_set(err, ERROR_INVALID, "rule %s: action is neither allow nor deny",
                         rule_id);
    if (!cidr)
        return error_set(err, ERROR_INVALID, "rule %s: cidr missing", rule_id);
    if (validate_cidr(cidr, pfx, canon, MODEL_CIDR_MAX + 1, err) != ERROR_OK)
        return error_prefix(err, "rule %s: cidr", rule_id);
    if (strict && strcmp(canon, cidr) != 0)
        return error_set(err, ERROR_INVALID,
                         "rule %s: cidr is not in canonical form (write %s)", rule_id, canon);
    return ERROR_OK;
}

static error_code add_rule(policy_index *ix, const char *policy_id, const char *cidr,
                           model_action action, const char *rule_id, bool synced, bool strict,
                           error_info *err)
{
    validate_prefix pfx = {0};
    char canon[MODEL_CIDR_MAX + 1];
    error_code rc = check_rule(policy_id, cidr, action, rule_id, strict, &pfx, canon, err);
    if (rc != ERROR_OK)
        return rc;
    /* An IPv4-mapped rule (kept as the remote has it) decides as the IPv4 prefix it
     * means, as a mapped address is checked as IPv4. */
    validate_prefix v4;
    if (validate_prefix_unmap(&pfx, &v4))
        pfx = v4;
    if (ix->nnodes > POLICY_NONE - 3 ||
        !buf_grow_array((void **)&ix->nodes, &ix->cap_nodes, ix->nnodes + 2, sizeof *ix->nodes))
        return nomem(err);
    uint32_t p = POLICY_NONE;
    if ((rc = policy_get_or_add(ix, policy_id, &p, err)) != ERROR_OK)
        return rc;
    uint64_t key[2];
    policy_key(pfx.family, pfx.addr, key);
    policy_trie *t = &ix->policies[p].trie[pfx.family == 4 ? POLICY_V4 : POLICY_V6];
    jumps_forget(ix, t);
    uint32_t n = trie_node_for(ix, &t->root, key, pfx.bits);
    if (ix->nodes[n].rule[action] != POLICY_NONE)
        return ERROR_OK; /* the same prefix and action twice: the first one speaks */
    uint32_t off = text_add(ix, rule_id, canon);
    if (off == POLICY_NONE)
        return nomem(err); /* a node without rules is harmless: walks pass it */
    ix->nodes[n].rule[action] = off << 1 | (synced ? 1u : 0u);
    ix->nrules++;
    return ERROR_OK;
}

error_code policy_index_add(policy_index *ix, const char *policy_id, const char *cidr,
                            model_action action, const char *rule_id, bool synced,
                            error_info *err)
{
    return add_rule(ix, policy_id, cidr, action, rule_id, synced, true, err);
}

/*
 * Lay each trie out breadth first, so the top levels every walk goes through
 * share cache lines and stay cached, and give back the arrays' spare room.
 */
error_code policy_index_finish(policy_index *ix, error_info *err)
{
    if (!ix || ix->nnodes == 0)
        return ERROR_OK;
    policy_node *out = malloc(ix->nnodes * sizeof *out);
    if (!out)
        return nomem(err);
    size_t n = 0;
    for (size_t p = 0; p < ix->npolicies; p++) {
        for (int f = 0; f < 2; f++) {
            uint32_t *root = &ix->policies[p].trie[f].root;
            if (*root == POLICY_NONE)
                continue;
            size_t head = n;
            out[n++] = ix->nodes[*root];
            *root = (uint32_t)head;
            /* out[head..n) is the queue: a node's children are copied behind it
             * and its links pointed at the copies. */
            for (; head < n; head++) {
                for (int c = 0; c < 2; c++) {
                    uint32_t k = out[head].child[c];
                    if (k == POLICY_NONE)
                        continue;
                    out[n] = ix->nodes[k];
                    out[head].child[c] = (uint32_t)n++;
                }
            }
        }
    }
    free(ix->nodes);
    ix->nodes = out;
    ix->cap_nodes = ix->nnodes = n;
    /* Tables of an earlier finish name nodes by their old numbers. */
    for (size_t i = 0; i < n; i++)
        out[i].jump = POLICY_NONE;
    free(ix->jumps);
    ix->jumps = NULL;
    ix->njumps = 0;
    error_code rc = jumps_build_all(ix, err);
    if (rc != ERROR_OK)
        return rc; /* the nodes without a table still answer */
    void *q;
    if (ix->ntext && (q = realloc(ix->text, ix->ntext))) {
        ix->text = q;
        ix->cap_text = ix->ntext;
    }
    if (ix->npolicies && (q = realloc(ix->policies, ix->npolicies * sizeof *ix->policies))) {
        ix->policies = q;
        ix->cap_policies = ix->npolicies;
    }
    return ERROR_OK;
}

typedef struct load_ctx {
    policy_index *ix;
    store *st;
} load_ctx;

static error_code load_page(void *ctx, model_object *rows, size_t count, error_info *err)
{
    const load_ctx *l = ctx;
    policy_index *ix = l->ix;
    for (size_t i = 0; i < count; i++) {
        const model_rule *r = &rows[i].rule;
        /* A conflict answers only when it holds the remote's values (a delete
         * that found the rule changed remotely): it stays in force until
         * resolved. */
        if (r->state == MODEL_STATE_CONFLICT &&
            !store_conflict_holds_remote(l->st, MODEL_KIND_RULE, r->id))
            continue;
        error_code rc = add_rule(ix, r->policy_id, r->cidr, r->action, r->id,
                                 r->state == MODEL_STATE_SYNCED, false, err);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

static error_code load(store *st, const char *policy_id, policy_index **out,
                       error_info *err)
{
    error_code rc = policy_index_new(out, err);
    if (rc != ERROR_OK)
        return rc;
    unsigned all = (1u << MODEL_STATE_COUNT) - 1;
    store_query q = {
        .policy_id = policy_id,
        .sort = STORE_SORT_ID,
        /* A conflict waits for the user: a local create in a key conflict
         * shares its key with the remote rule, which answers for it (load_page
         * keeps the conflicts that hold the remote's values). */
        .states = all & ~((1u << MODEL_STATE_DELETING) | (1u << MODEL_STATE_REMOTE_DELETED) |
                          (1u << MODEL_STATE_FAILED)),
    };
    load_ctx l = {*out, st};
    rc = store_walk(st, MODEL_KIND_RULE, &q, WALK_PAGE, load_page, &l, err);
    if (rc == ERROR_OK)
        rc = policy_index_finish(*out, err);
    if (rc != ERROR_OK) {
        policy_index_free(*out);
        *out = NULL;
    }
    return rc;
}

error_code policy_index_load(store *st, policy_index **out, error_info *err)
{
    return load(st, NULL, out, err);
}

/* A rule of the store's lean walk, taken when it is in force (the states load
 * takes; a conflict only when it holds the remote's values). */
typedef struct containing_ctx {
    policy_index *ix;
    store *st;
    const char *policy_id;
} containing_ctx;

static error_code take_containing(void *ctx, const store_policy_rule *r, error_info *err)
{
    const containing_ctx *c = ctx;
    if (r->state == MODEL_STATE_DELETING || r->state == MODEL_STATE_REMOTE_DELETED ||
        r->state == MODEL_STATE_FAILED)
        return ERROR_OK;
    if (r->state == MODEL_STATE_CONFLICT &&
        !store_conflict_holds_remote(c->st, MODEL_KIND_RULE, r->id))
        return ERROR_OK;
    return add_rule(c->ix, c->policy_id, r->cidr, r->action, r->id,
                    r->state == MODEL_STATE_SYNCED, false, err);
}

/* The address as text for the store's lookup (an IPv4-mapped one as IPv4). */
static void addr_text(const policy_addr *a, char *out, size_t size)
{
    if (!inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, out, (socklen_t)size))
        out[0] = '\0';
}

error_code policy_index_load_containing(store *st, const char *policy_id,
                                        const policy_addr *addrs, size_t n,
                                        policy_index **out, error_info *err)
{
    *out = NULL;
    if (!policy_id || !*policy_id)
        return error_set(err, ERROR_INVALID, "policy id is empty");
    error_code rc = policy_index_new(out, err);
    containing_ctx c = {*out, st, policy_id};
    for (size_t i = 0; rc == ERROR_OK && i < n; i++) {
        char ip[64], mapped[80];
        addr_text(&addrs[i], ip, sizeof ip);
        rc = store_policy_rules_containing(st, policy_id, ip, take_containing, &c, err);
        /* An IPv4 address is also met by a remote rule kept in IPv4-mapped form. */
        snprintf(mapped, sizeof mapped, "::ffff:%s", ip);
        if (rc == ERROR_OK && addrs[i].family == 4)
            rc = store_policy_rules_containing(st, policy_id, mapped, take_containing, &c, err);
    }
    if (rc != ERROR_OK) {
        policy_index_free(*out);
        *out = NULL;
    }
    return rc;
}

error_code policy_index_load_policy(store *st, const char *policy_id, policy_index **out,
                                    error_info *err)
{
    if (!policy_id || !*policy_id) {
        *out = NULL;
        return error_set(err, ERROR_INVALID, "policy id is empty");
    }
    return load(st, policy_id, out, err);
}

size_t policy_index_rule_count(const policy_index *ix)
{
    return ix ? ix->nrules : 0;
}

size_t policy_index_policy_count(const policy_index *ix)
{
    return ix ? ix->npolicies : 0;
}

size_t policy_index_bytes(const policy_index *ix)
{
    if (!ix)
        return 0;
    return sizeof *ix + ix->njumps * sizeof *ix->jumps + ix->cap_nodes * sizeof *ix->nodes +
           ix->cap_policies * sizeof *ix->policies + ix->nslots * sizeof *ix->slots +
           ix->cap_text;
}

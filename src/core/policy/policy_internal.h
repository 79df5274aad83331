/*
 * policy internals shared by policy.c (building) and policy_check.c (deciding).
 * Nothing outside the policy module includes this.
 *
 * Per policy, one path-compressed binary trie per family over the rules'
 * prefixes; the nodes of every trie live in one array (indices, not pointers:
 * half the size, one allocation, and a layout policy_index_finish can choose).
 * Policies are found through an open-addressing hash table of their ids. Rule
 * ids and cidrs are kept as text in one arena, so a decision is a copy.
 *
 * Keys are two 64-bit words, bits left-aligned: an IPv4 address is the top 32
 * bits of the first word. A node's key bits past its length are zero.
 */
#ifndef RAMPART_POLICY_INTERNAL_H
#define RAMPART_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rampart/policy.h"

#define POLICY_NONE UINT32_MAX
/* Arena offsets stay below this, so a rule reference (offset << 1 | synced) is
 * never POLICY_NONE. */
#define POLICY_TEXT_MAX 0x7ffffffeu

enum { POLICY_V4 = 0, POLICY_V6 = 1 };

/*
 * A jump table below a node with two children stands for the next `jbits`
 * address bits after the node's prefix: entry v holds the most specific rule
 * of each action met in those levels and the node to go on from. One cache
 * miss instead of a level per bit. Tables hang wherever a subtree is large,
 * so they nest (a multibit trie with strides fitted to the rules).
 */
typedef struct policy_jump {
    uint32_t rule[2]; /* as policy_node.rule */
    uint32_t next;    /* node to go on from, or POLICY_NONE: the walk ends */
} policy_jump;

typedef struct policy_node {
    uint64_t key[2];
    uint32_t child[2];
    /* By model_action: the rule ending here as (arena offset of "rule_id\0cidr\0"
     * << 1 | synced), or POLICY_NONE. */
    uint32_t rule[2];
    uint32_t jump; /* first entry of this node's table in ix->jumps, or POLICY_NONE */
    uint8_t len;
    uint8_t jbits; /* the table has 1 << jbits entries */
} policy_node;   /* 40 bytes */

typedef struct policy_trie {
    uint32_t root;   /* node index or POLICY_NONE */
    bool has_jumps;  /* some node of it has a table (dropped when a rule is added) */
} policy_trie;

typedef struct policy_entry {
    uint32_t id; /* arena offset of the policy id */
    uint32_t hash;
    policy_trie trie[2]; /* by family */
} policy_entry;

struct policy_index {
    policy_node *nodes;
    size_t nnodes, cap_nodes;
    policy_jump *jumps; /* every table, back to back (built by policy_index_finish) */
    size_t njumps;
    policy_entry *policies;
    size_t npolicies, cap_policies;
    uint32_t *slots; /* policy index or POLICY_NONE; a power of two in size */
    size_t nslots;
    char *text;
    size_t ntext, cap_text;
    size_t nrules;
};

static inline uint32_t policy_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* The index of policy `id` (hash `h`), or POLICY_NONE. */
static inline uint32_t policy_lookup(const policy_index *ix, const char *id, uint32_t h)
{
    if (!ix->nslots)
        return POLICY_NONE;
    size_t mask = ix->nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t p = ix->slots[i];
        if (p == POLICY_NONE)
            return POLICY_NONE;
        const policy_entry *e = &ix->policies[p];
        if (e->hash == h && strcmp(ix->text + e->id, id) == 0)
            return p;
    }
}

static inline uint64_t policy_mask64(unsigned len)
{
    return len == 0 ? 0 : ~UINT64_C(0) << (64 - len);
}

static inline unsigned policy_bit(const uint64_t k[2], unsigned i)
{
    return i < 64 ? (unsigned)(k[0] >> (63 - i)) & 1u : (unsigned)(k[1] >> (127 - i)) & 1u;
}

/* `k` (1..32) bits of `a` from bit `s` (s + k <= 128), as a number. */
static inline uint32_t policy_bits(const uint64_t a[2], unsigned s, unsigned k)
{
    uint64_t top = s == 0 ? a[0] : s < 64 ? a[0] << s | a[1] >> (64 - s) : a[1] << (s - 64);
    return (uint32_t)(top >> (64 - k));
}

static inline bool policy_node_matches(const policy_node *n, const uint64_t a[2])
{
    if (n->len <= 64)
        return ((a[0] ^ n->key[0]) & policy_mask64(n->len)) == 0;
    return a[0] == n->key[0] && ((a[1] ^ n->key[1]) & policy_mask64(n->len - 64u)) == 0;
}

static inline void policy_key(int family, const uint8_t *b, uint64_t k[2])
{
    k[0] = k[1] = 0;
    for (size_t i = 0; i < 8; i++)
        k[0] = k[0] << 8 | (family == 4 && i >= 4 ? 0 : b[i]);
    if (family == 4)
        return;
    for (size_t i = 8; i < 16; i++)
        k[1] = k[1] << 8 | b[i];
}

#endif

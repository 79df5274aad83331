/*
 * cidrset: one entry's text read and written, ordering, overlaps and aggregation
 * of a list of prefixes, and the problems both readers (cidrset_parse.c,
 * cidrset_json.c) record. See rampart/cidrset.h. Addresses are compared as 16
 * bytes in network order (an IPv4 address uses the first 4), so one piece of
 * code serves both families.
 */
#include "rampart/cidrset.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"

static size_t family_bytes(int family)
{
    return family == 4 ? 4 : 16;
}

static unsigned bit_at(const unsigned char *addr, unsigned i)
{
    return (addr[i / 8] >> (7 - i % 8)) & 1u;
}

/* Whether the first `bits` bits of two addresses are the same. */
static bool same_bits(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    size_t whole = bits / 8;
    if (memcmp(a, b, whole) != 0)
        return false;
    unsigned rest = bits % 8;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xFFu << (8 - rest));
    return ((a[whole] ^ b[whole]) & mask) == 0;
}

error_code cidrset_add(cidrset *set, const validate_prefix *pfx, size_t line,
                       const char *note, error_info *err)
{
    char *copy = NULL;
    if (!buf_grow_array((void **)&set->items, &set->cap, set->count + 1, sizeof *set->items) ||
        (note && *note && !(copy = strdup(note))))
        return error_set(err, ERROR_NOMEM, "out of memory reading the list");
    set->items[set->count++] = (cidrset_entry){.pfx = *pfx, .line = line, .note = copy};
    return ERROR_OK;
}

void cidrset_free(cidrset *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free(set->items[i].note);
    free(set->items);
    *set = (cidrset){0};
}

void cidrset_format(const validate_prefix *pfx, char out[MODEL_CIDR_MAX + 1])
{
    char addr[INET6_ADDRSTRLEN] = "";
    if (pfx->family == 4)
        snprintf(addr, sizeof addr, "%u.%u.%u.%u", pfx->addr[0], pfx->addr[1], pfx->addr[2],
                 pfx->addr[3]);
    else if (!inet_ntop(AF_INET6, pfx->addr, addr, sizeof addr))
        addr[0] = '\0';
    snprintf(out, MODEL_CIDR_MAX + 1, "%s/%u", addr, pfx->bits);
}

error_code cidrset_parse_entry(const char *text, validate_prefix *out, error_info *err)
{
    error_code rc = strchr(text, '/') ? validate_cidr(text, out, NULL, 0, err)
                                      : validate_ip(text, out, err);
    return rc == ERROR_OK ? validate_prefix_given(out, err) : rc;
}

int cidrset_compare(const validate_prefix *a, const validate_prefix *b)
{
    if (a->family != b->family)
        return a->family < b->family ? -1 : 1;
    int c = memcmp(a->addr, b->addr, family_bytes(a->family));
    if (c != 0)
        return c < 0 ? -1 : 1;
    return a->bits < b->bits ? -1 : a->bits > b->bits ? 1 : 0;
}

bool cidrset_contains(const validate_prefix *outer, const validate_prefix *inner)
{
    return outer->family == inner->family && outer->bits <= inner->bits &&
           same_bits(outer->addr, inner->addr, outer->bits);
}

static int entry_order(const void *pa, const void *pb)
{
    const cidrset_entry *a = pa, *b = pb;
    int c = cidrset_compare(&a->pfx, &b->pfx);
    if (c != 0)
        return c;
    return a->line < b->line ? -1 : a->line > b->line ? 1 : 0;
}

void cidrset_sort(cidrset *set)
{
    if (set->count > 1)
        qsort(set->items, set->count, sizeof *set->items, entry_order);
}

/*
 * Sorted, a prefix comes before everything it contains, so the entries that
 * contain the current one are a chain: a stack of "open" prefixes, popped while
 * the top does not contain the next entry, finds the nearest container of each.
 */
error_code cidrset_overlaps(const cidrset *set, cidrset_overlap **out, size_t *count,
                            error_info *err)
{
    *out = NULL;
    *count = 0;
    if (set->count == 0)
        return ERROR_OK;
    size_t *stack = malloc(set->count * sizeof *stack);
    cidrset_overlap *found = NULL;
    size_t depth = 0, n = 0, cap = 0;
    error_code rc = stack ? ERROR_OK : ERROR_NOMEM;
    for (size_t i = 0; rc == ERROR_OK && i < set->count; i++) {
        const validate_prefix *p = &set->items[i].pfx;
        while (depth && !cidrset_contains(&set->items[stack[depth - 1]].pfx, p))
            depth--;
        if (depth) {
            if (!buf_grow_array((void **)&found, &cap, n + 1, sizeof *found)) {
                rc = ERROR_NOMEM;
                break;
            }
            size_t outer = stack[depth - 1];
            found[n++] = (cidrset_overlap){
                i, outer, cidrset_compare(&set->items[outer].pfx, p) == 0};
        }
        stack[depth++] = i;
    }
    free(stack);
    if (rc != ERROR_OK) {
        free(found);
        return error_set(err, rc, "out of memory comparing the list's entries");
    }
    *out = found;
    *count = n;
    return ERROR_OK;
}

size_t cidrset_dedupe(cidrset *set)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->count; i++) {
        if (kept && cidrset_compare(&set->items[kept - 1].pfx, &set->items[i].pfx) == 0) {
            free(set->items[i].note);
            continue;
        }
        set->items[kept++] = set->items[i];
    }
    size_t gone = set->count - kept;
    set->count = kept;
    return gone;
}

/* `a` and `b` (a before b) are the two halves of one prefix. */
static bool halves(const validate_prefix *a, const validate_prefix *b)
{
    return a->family == b->family && a->bits == b->bits && a->bits > 0 &&
           same_bits(a->addr, b->addr, a->bits - 1) && bit_at(a->addr, a->bits - 1) == 0 &&
           bit_at(b->addr, b->bits - 1) == 1;
}

/* Merged entries keep a note only when their parts agree on it. */
static void merge_note(cidrset_entry *into, cidrset_entry *from)
{
    if (into->note && (!from->note || strcmp(into->note, from->note) != 0)) {
        free(into->note);
        into->note = NULL;
    }
    free(from->note);
    from->note = NULL;
}

/*
 * The classic stack merge: walk in order, drop what the top covers, push, then
 * while the top two are halves of one prefix replace them by it. The parent of
 * two halves starts where the first one does, so it never covers an entry below
 * it on the stack: the stack stays ordered and disjoint, and the result is the
 * union's minimal decomposition.
 */
size_t cidrset_aggregate(cidrset *set)
{
    size_t top = 0; /* entries [0, top) are the stack */
    for (size_t i = 0; i < set->count; i++) {
        cidrset_entry e = set->items[i];
        if (top && cidrset_contains(&set->items[top - 1].pfx, &e.pfx)) {
            free(e.note); /* the covering entry speaks for it */
            continue;
        }
        set->items[top++] = e;
        while (top >= 2 && halves(&set->items[top - 2].pfx, &set->items[top - 1].pfx)) {
            cidrset_entry *a = &set->items[top - 2], *b = &set->items[top - 1];
            merge_note(a, b);
            if (b->line && (!a->line || b->line < a->line))
                a->line = b->line;
            a->pfx.bits--;
            top--;
        }
    }
    size_t gone = set->count - top;
    set->count = top;
    return gone;
}

void cidrset_problems_free(cidrset_problems *p)
{
    if (!p)
        return;
    free(p->items);
    *p = (cidrset_problems){0};
}

error_code cidrset_problem_add(cidrset_problems *p, size_t line, error_info *err,
                               const char *fmt, ...)
{
    p->total++;
    if (p->kept >= CIDRSET_PROBLEMS_KEPT)
        return ERROR_OK;
    if (!p->items && !(p->items = calloc(CIDRSET_PROBLEMS_KEPT, sizeof *p->items)))
        return error_set(err, ERROR_NOMEM, "out of memory reading the list");
    cidrset_problem *q = &p->items[p->kept++];
    q->line = line;
    va_list ap;
    va_start(ap, fmt);
    error_info tmp;
    error_vset(&tmp, ERROR_INVALID, fmt, ap); /* cut at a UTF-8 boundary */
    va_end(ap);
    snprintf(q->msg, sizeof q->msg, "%s", tmp.msg);
    return ERROR_OK;
}

/*
 * cidrset: a list of IPv4/IPv6 prefixes as they come from the world (a published
 * range file, an office's networks, a blocklist), with where each came from:
 * reading such a list (plain text or JSON), ordering it, finding the entries that
 * overlap, and merging it into the fewest CIDRs that cover exactly the same
 * addresses. `rampart apply` and `rampart export` are built on it.
 *
 * - Entries hold parsed prefixes (validate_prefix: network address, host bits
 *   clear) and their source line (1-based; 0: none) and note (a line's trailing
 *   comment; NULL: none). A set owns its entries and notes: cidrset_free releases
 *   them; a zeroed cidrset is an empty set ready for use. Not thread-safe per set;
 *   no global state.
 * - Order (cidrset_sort): IPv4 before IPv6, then by address, then shorter prefix
 *   first, so a prefix comes before every prefix it contains.
 * - cidrset_overlaps and cidrset_aggregate need a sorted set.
 * - Aggregation is exact: the merged set covers the same addresses, no more, no
 *   fewer, in the fewest prefixes (the union's unique minimal decomposition).
 * - Reading (cidrset_parse) checks every entry with the validators the forms use
 *   (validate_cidr / validate_ip: the same reasons, "host bits set: did you mean
 *   10.0.0.0/8?"); a bare address becomes a /32 or /128. Every bad entry is
 *   recorded as a problem with its line; the caller decides (apply queues nothing
 *   unless there is none). Errors returned are ERROR_NOMEM and, for a JSON file
 *   that is not JSON or whose --key names nothing, ERROR_FORMAT / ERROR_INVALID
 *   (also recorded as a problem with its line).
 */
#ifndef RAMPART_CIDRSET_H
#define RAMPART_CIDRSET_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/validate.h"

typedef struct cidrset_entry {
    validate_prefix pfx;
    size_t line;  /* 1-based line in the source; 0: none */
    char *note;   /* heap, the set's; NULL: none */
} cidrset_entry;

typedef struct cidrset {
    cidrset_entry *items;
    size_t count, cap;
} cidrset;

/* Append a copy of `pfx` (host bits must be clear) with its line and a copy of
 * `note` (NULL or "": none). ERROR_NOMEM. */
error_code cidrset_add(cidrset *set, const validate_prefix *pfx, size_t line,
                       const char *note, error_info *err);

/* Release the entries and notes; the set is empty and usable again. NULL: no-op. */
void cidrset_free(cidrset *set);

/* The canonical text of a prefix, as the store keeps it ("10.0.0.0/8",
 * "2001:db8::/32"), into `out` (MODEL_CIDR_MAX + 1 bytes). */
void cidrset_format(const validate_prefix *pfx, char out[MODEL_CIDR_MAX + 1]);

/*
 * One entry's text: a CIDR ("10.0.0.0/8", checked by validate_cidr) or a bare
 * address ("10.1.2.3" -> 10.1.2.3/32, "2001:db8::1" -> /128). ERROR_INVALID with
 * the validator's reason.
 */
error_code cidrset_parse_entry(const char *text, validate_prefix *out, error_info *err);

/* Order of cidrset_sort: < 0, 0 (the same prefix), > 0. */
int cidrset_compare(const validate_prefix *a, const validate_prefix *b);

/* Whether `outer` covers every address of `inner` (same family; a prefix covers
 * itself). */
bool cidrset_contains(const validate_prefix *outer, const validate_prefix *inner);

/* Sort in the set's order (stable: equal prefixes keep their order of lines). */
void cidrset_sort(cidrset *set);

/* An entry inside another: `inner` lies inside `outer` (indices of the sorted
 * set); `same` when both are the same prefix (a duplicate). */
typedef struct cidrset_overlap {
    size_t inner, outer;
    bool same;
} cidrset_overlap;

/*
 * Every entry of the sorted `set` that lies inside an earlier one (the nearest
 * entry containing it), in order, as a heap array the caller frees (*out NULL
 * when there is none). ERROR_NOMEM.
 */
error_code cidrset_overlaps(const cidrset *set, cidrset_overlap **out, size_t *count,
                            error_info *err);

/* Drop the entries of the sorted `set` that repeat the prefix of the one before
 * (the first line's entry stays). Returns how many went. */
size_t cidrset_dedupe(cidrset *set);

/*
 * Merge the sorted `set` in place into the fewest prefixes covering the same
 * addresses: an entry inside another goes, two halves of one prefix become it
 * (again and again). A merged entry keeps the first line of its parts and their
 * note when they all have the same one. Returns how many entries went.
 */
size_t cidrset_aggregate(cidrset *set);

/* ---- reading a list (cidrset_parse.c, cidrset_json.c) ---- */

enum {
    CIDRSET_PROBLEM_MSG = ERROR_MSG_MAX,
    CIDRSET_PROBLEMS_KEPT = 1000, /* problems beyond it are counted, not kept */
    CIDRSET_KEYS_MAX = 8,         /* --key paths */
    CIDRSET_KEY_DEPTH = 8         /* members in one --key path */
};

typedef struct cidrset_problem {
    size_t line; /* 0: the whole file */
    char msg[CIDRSET_PROBLEM_MSG];
} cidrset_problem;

typedef struct cidrset_problems {
    cidrset_problem *items; /* heap; the first CIDRSET_PROBLEMS_KEPT */
    size_t kept, total;
    size_t bad_notes;       /* comments dropped: not valid UTF-8 */
} cidrset_problems;

void cidrset_problems_free(cidrset_problems *p);

/* Record a problem at `line` (printf-style). ERROR_NOMEM. */
error_code cidrset_problem_add(cidrset_problems *p, size_t line, error_info *err,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

typedef struct cidrset_parse_opts {
    /* JSON only: paths of members naming the arrays ("prefixes", "a.b"); arrays on
     * the way are looked through ("prefixes.ip_prefix" takes that member of every
     * object of the array "prefixes"). None: the document must be an array. */
    const char *const *keys;
    size_t nkeys;
} cidrset_parse_opts;

/*
 * Read a list: JSON when its first character (after a byte order mark and
 * white space) is '[' or '{', else text: one CIDR or address per line, '#' or
 * ';' starting a comment, blank lines skipped, CRLF accepted. A trailing comment
 * (valid UTF-8, cut to MODEL_DESCRIPTION_MAX bytes) becomes the entry's note.
 * Entries are appended to `out` in file order; bad ones are problems. *json says
 * which form was read. Returns ERROR_OK when the file could be read to its end
 * (look at problems->total), ERROR_FORMAT for a JSON syntax error, ERROR_INVALID
 * for keys that are malformed or name nothing, ERROR_NOMEM.
 */
error_code cidrset_parse(const char *data, size_t len, const cidrset_parse_opts *opt,
                         cidrset *out, cidrset_problems *problems, bool *json,
                         error_info *err);

/* The JSON half of cidrset_parse (the same contract). */
error_code cidrset_parse_json(const char *data, size_t len, const cidrset_parse_opts *opt,
                              cidrset *out, cidrset_problems *problems, error_info *err);

/*
 * The text form read as it comes (standard input, a pipe from curl), so memory
 * grows with the entries, never with the input: feed chunks in order, then end.
 * A line longer than CIDRSET_LINE_MAX bytes (no list has one: an endless line,
 * /dev/zero, a binary) stops the reading at once with ERROR_FORMAT naming it.
 * Entries and problems as cidrset_parse; a byte order mark at the start is
 * skipped. The reader holds at most one line; zero it before the first feed.
 */
enum { CIDRSET_LINE_MAX = 4096 };
typedef struct cidrset_text_reader {
    char pending[CIDRSET_LINE_MAX + 1]; /* a line cut by a chunk's end */
    size_t npending, line;
    bool started;
} cidrset_text_reader;
error_code cidrset_text_feed(cidrset_text_reader *r, const char *chunk, size_t n,
                             cidrset *out, cidrset_problems *problems, error_info *err);
error_code cidrset_text_end(cidrset_text_reader *r, cidrset *out, cidrset_problems *problems,
                            error_info *err);

#endif

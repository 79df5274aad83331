/*
 * logscan: access logs read as a stream into their distinct client addresses,
 * each with its request count and the first and last time it was seen.
 * - Formats, decided per file from its first line that is not blank
 *   (LOGSCAN_AUTO: '{' starts JSON lines, one word a plain address list, else
 *   a common/combined log) or given: common and combined (nginx, Apache): the
 *   address is field 1, or `ip_field` (fields are split at spaces; "quoted" and
 *   [bracketed] ones count as one; a forwarded list "a, b" gives its first); the
 *   time is the first [bracketed] field (28/Nov/2026:10:02:13 +0000). JSON lines:
 *   the address is the string at `ip_key` (a dotted path: conn.client_ip), the
 *   time at `time_key` (RFC 3339 text, a common-log time, or a number of seconds
 *   since the epoch). Plain: one address a line.
 * - Addresses are read as check reads them (policy_addr_parse: an IPv4-mapped one
 *   is its IPv4 address); "[2001:db8::1]:443" and "10.0.0.1:443" lose the port.
 *   A line without a readable address (or, with `since`, a time) is counted bad,
 *   never fatal; a line longer than LOGSCAN_LINE_MAX is counted too long and
 *   skipped.
 * - Memory grows with the distinct addresses, never with the lines: an
 *   open-addressing table, at most `max_addresses` of them; the lines of any
 *   further address are counted (over_cap), not kept. No allocation per line.
 * - Files are read through zlib (gzip or plain; "-" is standard input). Errors
 *   come back in error_info; nothing here prints.
 */
#ifndef RAMPART_LOGSCAN_H
#define RAMPART_LOGSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rampart/error.h"
#include "rampart/policy.h"

enum {
    LOGSCAN_LINE_MAX = 65536,
    LOGSCAN_MAX_ADDRESSES_DEFAULT = 2000000,
    LOGSCAN_PATH_DEPTH = 8 /* members in an --ip-key / --time-key path */
};

typedef enum logscan_format {
    LOGSCAN_AUTO,
    LOGSCAN_CLF,   /* common or combined */
    LOGSCAN_JSON,
    LOGSCAN_PLAIN,
    LOGSCAN_FORMAT_COUNT
} logscan_format;

/* "auto", "combined", "json", "plain"; false for any other word. */
bool logscan_format_parse(const char *name, logscan_format *out);
const char *logscan_format_name(logscan_format f);

/* Told every LOGSCAN_PROGRESS_LINES lines, and every LOGSCAN_PROGRESS_BYTES
 * read however few lines they hold: bytes read (uncompressed) and lines. */
enum { LOGSCAN_PROGRESS_LINES = 1 << 20, LOGSCAN_PROGRESS_BYTES = 64 << 20 };
typedef void (*logscan_progress_fn)(void *ctx, const char *file, uint64_t bytes,
                                    uint64_t lines);

typedef struct logscan_opts {
    logscan_format format;
    unsigned ip_field;        /* common/combined: 1-based field; 0: 1 */
    const char *ip_key;       /* JSON: dotted path of the address (required) */
    const char *time_key;     /* JSON: dotted path of the time; NULL: none */
    int64_t since;            /* keep lines at or after (epoch seconds); 0: all */
    size_t max_addresses;     /* 0: LOGSCAN_MAX_ADDRESSES_DEFAULT */
    logscan_progress_fn progress; /* may be NULL */
    void *progress_ctx;
    /* Asked before each chunk (1 MiB) of a file; false stops the reading with
     * ERROR_STATE (a console leaving). NULL: read to the end. */
    bool (*keep_going)(void *ctx);
    void *keep_going_ctx;
} logscan_opts;

/* A distinct address: first/last INT64_MAX/INT64_MIN when no line had a time. */
typedef struct logscan_addr {
    policy_addr addr;
    uint64_t requests;
    int64_t first, last;
} logscan_addr;

typedef struct logscan_stats {
    uint64_t lines;     /* lines read, blank ones included */
    uint64_t used;      /* lines counted for an address */
    uint64_t bad;       /* no readable address (or time, with since) */
    uint64_t too_long;  /* longer than LOGSCAN_LINE_MAX (skipped) */
    uint64_t old;       /* before `since` */
    uint64_t over_cap;  /* of addresses past max_addresses */
    uint64_t blank;
    uint64_t bytes;     /* read, uncompressed */
    /* The first bad line: its file (index in the order read) and line number. */
    size_t bad_file;
    uint64_t bad_line;
    unsigned files;
} logscan_stats;

typedef struct logscan logscan;

/* A scanner (opts copied; its key strings must outlive it). ERROR_INVALID for a
 * malformed key path, ERROR_NOMEM. */
error_code logscan_new(const logscan_opts *opts, logscan **out, error_info *err);
void logscan_free(logscan *ls); /* NULL: no-op */

/* Read a whole file ("-": standard input), gzip or not. ERROR_IO naming the
 * file (a truncated gzip too); ERROR_INVALID for a JSON log without ip_key. */
error_code logscan_file(logscan *ls, const char *path, error_info *err);

/* The same from memory (a whole file's text): for tests and callers with text. */
error_code logscan_text(logscan *ls, const char *label, const char *data, size_t len,
                        error_info *err);

/* The distinct addresses so far, in the order first seen. */
const logscan_addr *logscan_addrs(const logscan *ls, size_t *n);
const logscan_stats *logscan_get_stats(const logscan *ls);

/* Whether `a` is loopback, private (RFC 1918, fc00::/7), link-local or shared
 * (100.64.0.0/10): what a proxy or tunnel agent in front of a server shows. */
bool logscan_addr_private(const policy_addr *a);

#endif

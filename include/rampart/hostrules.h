/*
 * hostrules: one IP policy's rules as a host enforces them itself (a host the
 * remote does not front): an ordered rule set read from the cache, and a table
 * of renderers over it (nftables, nginx, iptables, ip6tables, json, csv) that
 * `rampart export` writes.
 *
 * - The rules are the ones in force, as `rampart check` decides with them
 *   (policy.h): every state but deleting, remote_deleted and failed (a conflict
 *   only when it holds the remote's values).
 * - Order: deny rules before allow rules, IPv4 before IPv6, then by address and
 *   shorter prefix first (cidrset_compare): one order every format renders from.
 * - Every format gives policy.h's decision (deny wins; no rule: refused).
 *   nftables: named interval sets (each action and family merged into the fewest
 *   prefixes: an interval set refuses overlaps) and a chain that drops on a deny
 *   set, accepts on an allow set, drops the rest; nginx: every deny, every allow,
 *   then `deny all` (the first match wins); iptables / ip6tables: one chain of an
 *   iptables-restore file in the same order, one family each (the other's rules
 *   left out: hostrules_left_out).
 * - Output is a pure function of the rule set and the options: no time stamp, so
 *   a watcher can compare two renderings to know whether anything changed.
 * - Identifiers written into rule files come from checked text only (policy and
 *   rule ids, canonical CIDRs, a checked name); descriptions (any text) appear
 *   only in json (escaped) and csv (quoted).
 * - A set owns its rules (hostrules_free); a zeroed set is empty.
 */
#ifndef RAMPART_HOSTRULES_H
#define RAMPART_HOSTRULES_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/buf.h"
#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"
#include "rampart/validate.h"

#define HOSTRULES_NAME_DEFAULT "rampart"
#define HOSTRULES_NAME_MAX 28 /* an iptables chain's limit */

typedef enum hostrules_format {
    HOSTRULES_NFTABLES,
    HOSTRULES_NGINX,
    HOSTRULES_IPTABLES,
    HOSTRULES_IP6TABLES,
    HOSTRULES_JSON,
    HOSTRULES_CSV,
    HOSTRULES_FORMAT_COUNT
} hostrules_format;

typedef struct hostrules_rule {
    validate_prefix pfx;
    char cidr[MODEL_CIDR_MAX + 1];
    char id[MODEL_ID_MAX + 1];
    char *description; /* heap */
    model_action action;
    model_state state;
} hostrules_rule;

typedef struct hostrules_set {
    char policy_id[MODEL_ID_MAX + 1];
    hostrules_rule *rules;
    size_t count, cap;
} hostrules_set;

/* Append one rule (a cidr validate_cidr accepts, in any valid form). ERROR_INVALID
 * naming the rule for a cidr it refuses, ERROR_NOMEM. The set is unordered until
 * hostrules_sort. */
error_code hostrules_add(hostrules_set *set, const char *id, const char *cidr,
                         model_action action, model_state state, const char *description,
                         error_info *err);

/* Put the rules in the set's order (see the contract). */
void hostrules_sort(hostrules_set *set);

/*
 * The rules in force of `policy_id` from the cache, ordered, into `out` (empty
 * before; released with hostrules_free whatever the result). A cached cidr that
 * does not validate fails the load (ERROR_INVALID naming the rule), as policy
 * checks do: no output is better than one without a deny rule.
 */
error_code hostrules_load(store *st, const char *policy_id, hostrules_set *out,
                          error_info *err);

void hostrules_free(hostrules_set *set);

/* The format named `name` ("nftables", "nginx", "iptables", "ip6tables", "json",
 * "csv"); false for another word. */
bool hostrules_format_parse(const char *name, hostrules_format *out);
const char *hostrules_format_name(hostrules_format fmt);

typedef struct hostrules_opts {
    const char *name;  /* nftables table, iptables chain; NULL: HOSTRULES_NAME_DEFAULT */
    const char *ports; /* nftables: the TCP/UDP destination ports the policy guards
                          ("443", "80,443", "8000-8100"); NULL: all inbound traffic
                          but loopback and established connections */
    bool no_hook;      /* nftables: the sets and chain decide only, no chain on the
                          input hook (the caller jumps to decide) */
} hostrules_opts;

/* A name for a table or chain: 1..28 of letters, digits, '_' and '-', starting
 * with a letter. ERROR_INVALID with why. */
error_code hostrules_name_check(const char *name, error_info *err);

/* Whether `port` is in a checked port list (NULL: every port). */
bool hostrules_ports_cover(const char *ports, unsigned port);

/* The set's decision for the address `ip` (deny wins; no rule: not allowed).
 * false for text that is no address (*allowed then false too). */
bool hostrules_decide(const hostrules_set *set, const char *ip, bool *allowed);

/* A port list: ports 1..65535 and ranges LOW-HIGH, joined by ','. ERROR_INVALID. */
error_code hostrules_ports_check(const char *ports, error_info *err);

/* Render `set` (sorted) in `fmt` into `out` (appended). ERROR_NOMEM, or
 * ERROR_INVALID for options the checks above refuse. */
error_code hostrules_render(const hostrules_set *set, hostrules_format fmt,
                            const hostrules_opts *opt, buf_t *out, error_info *err);

/* Rules of `set` that `fmt` leaves out (iptables: the IPv6 ones; ip6tables: the
 * IPv4 ones; 0 for the other formats). */
size_t hostrules_left_out(const hostrules_set *set, hostrules_format fmt);

#endif

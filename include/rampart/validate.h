/*
 * validate: every rule the remote API enforces (service-api.md, api-facts.md),
 * checked locally so bad input is refused at the door with a reason a person can
 * act on, before anything is stored or sent.
 *
 * - Each function returns ERROR_OK or ERROR_INVALID; on failure `err` holds one
 *   sentence naming the field's problem and, where one exists, the fix
 *   ("host bits set: did you mean 10.0.0.0/8?"). Messages quote the offending
 *   input only when it is not a secret, truncated to a readable length.
 * - Pure functions: no allocation, no I/O, no global state; safe from any thread.
 * - Lengths are counted in bytes; text must be valid UTF-8 (no overlongs, no
 *   surrogates, nothing above U+10FFFF).
 */
#ifndef RAMPART_VALIDATE_H
#define RAMPART_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"

/* A parsed CIDR: address bytes in network order, only the first 4 used for IPv4. */
typedef struct validate_prefix {
    int family;              /* 4 or 6 */
    unsigned char addr[16];
    unsigned bits;           /* 0..32 or 0..128 */
} validate_prefix;

/*
 * CIDR of a rule: IPv4 (dotted quad, no leading zeros in an octet) or IPv6, a
 * mask is required ("/8"), the prefix length in range and without leading zeros,
 * and the address must be the network address. No whitespace anywhere, no zone
 * id ("fe80::1%eth0"), no port.
 * On success writes the canonical text (IPv4 as given; IPv6 per RFC 5952,
 * lower-case, e.g. "2001:db8::/32") into `canon` (`canon_size` >= MODEL_CIDR_MAX+1)
 * (skipped when `canon` is NULL) and, when `out` is not NULL, the parsed prefix.
 * Messages do not name the field ("mask missing: write 10.1.2.3/32 for one
 * address"); callers put their own field name in front.
 */
error_code validate_cidr(const char *text, validate_prefix *out, char *canon,
                         size_t canon_size, error_info *err);

/* Whether `p` is an IPv4-mapped IPv6 prefix (in ::ffff:0:0/96, at least that
 * long): *v4 (may be NULL) gets the IPv4 prefix it means. */
bool validate_prefix_unmap(const validate_prefix *p, validate_prefix *v4);

/*
 * A CIDR a person gives (a create, an edit, an import, an apply): as
 * validate_cidr, and an IPv4-mapped one ("::ffff:192.0.2.1/128") is refused with
 * its IPv4 form as the fix: the remote keeps it an IPv6 rule that an IPv4 client
 * never meets. (A remote rule of that form is kept, and decided as IPv4.)
 */
error_code validate_cidr_given(const char *text, error_info *err);
/* The same for a parsed prefix (a list's entry). */
error_code validate_prefix_given(const validate_prefix *p, error_info *err);

/*
 * A bare IP address (no mask), as asked for by a policy check. Same syntax rules as
 * validate_cidr, but a mask is refused ("give an address, not a range: …");
 * `out` (may be NULL) gets the address with `bits` set to 32 or 128.
 */
error_code validate_ip(const char *text, validate_prefix *out, error_info *err);

/* "allow" or "deny" (exactly, lower-case). */
error_code validate_action(const char *text, model_action *out, error_info *err);

/*
 * An identifier with the given prefix ("ipr", "ipp", "cr", "usr", "bot", "op"):
 * `prefix` + "_" + one or more base62 characters, at most MODEL_ID_MAX bytes in all.
 * `what` names the field in the message ("policy id").
 */
error_code validate_id(const char *text, const char *prefix, const char *what,
                       error_info *err);

/* An id with one of `count` prefixes ({"usr", "bot"}: "usr_…" or "bot_…"), checked
 * as validate_id checks it; `what` names the field ("owner id"). */
error_code validate_id_among(const char *text, const char *const *prefixes, size_t count,
                             const char *what, error_info *err);

/* A local id as made by ids_generate("local", …). */
bool validate_is_local_id(const char *text);

/*
 * Valid UTF-8 of at most `max_bytes` bytes; `what` names the field and starts the
 * message ("description is 256 bytes; the limit is 255", "… not valid UTF-8 at byte
 * offset 7: …"). Control characters are allowed (the API does not forbid them);
 * NULL counts as empty.
 */
error_code validate_text(const char *text, size_t max_bytes, const char *what,
                         error_info *err);

/* description: valid UTF-8, <= 255 bytes. */
error_code validate_description(const char *text, error_info *err);

/* metadata: valid UTF-8, <= 4096 bytes. */
error_code validate_metadata(const char *text, error_info *err);

/*
 * One ACL rule: "*" or "bind:<target>" where target is
 * - a domain ("foo.example.com"): labels of letters, digits and hyphens (no hyphen
 *   at either end of a label, at most 63 bytes each) joined by dots, <= 253 bytes;
 *   upper-case letters are accepted;
 * - a leading-wildcard domain ("*.example.com"): "*" only as the whole first label;
 * - a label ("key=value"): key and value each "*" or letters, digits and - _ . /;
 * - an address ("1.tcp.example.net:20002"): a domain name or IPv4 host (no
 *   wildcard), ":", and a port 1..65535 without leading zeros;
 * - "*".
 * No whitespace anywhere. Messages start with "acl rule: ".
 */
error_code validate_acl_rule(const char *text, error_info *err);

/*
 * A whole ACL: every rule valid, and "*" only when it is the single rule.
 * On failure the message names the rule's position, counting from 1
 * ("acl rule 3: …"). A NULL or empty ACL is valid (no restriction).
 */
error_code validate_acl(const model_acl *acl, error_info *err);

/*
 * A rule as the user wants to create it: cidr (canonicalised in place, and only
 * when every check passes), policy id, action, description, metadata. Messages
 * start with the field: "cidr: host bits set: …", "policy: id must start with
 * ipp_", "action: …", "description is …", "metadata is …".
 */
error_code validate_rule(model_rule *rule, error_info *err);

/*
 * A credential to create: description, metadata, ACL (the owner is checked by
 * its field's check, kind.h). Messages as from validate_text, validate_acl.
 */
error_code validate_cred(const model_cred *cred, error_info *err);

/*
 * Name the character at `s` for a message: "'-'", "'é'", "a space",
 * "a non-breaking space", "control character 0x09", or "byte 0xFF" when `s` does
 * not start a valid UTF-8 sequence. Writes at most `size` bytes (32 suffice).
 */
void validate_describe_char(const char *s, char *buf, size_t size);

/*
 * A timestamp as the API writes it: RFC 3339, "2025-09-04T10:11:15Z", optional
 * fraction, "Z" or a "+hh:mm"/"-hh:mm" offset; fields in range, and the date
 * on the calendar (no 2025-02-31; February 29 in leap years only). `what` names
 * the field in the message.
 */
error_code validate_timestamp(const char *text, const char *what, error_info *err);

/* An absolute http(s) URI without spaces or control characters, as the API's "uri"
 * fields are; empty is allowed (not assigned yet). */
error_code validate_uri(const char *text, const char *what, error_info *err);

#endif

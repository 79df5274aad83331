/*
 * cidrset_parse: reading a list of CIDRs as people publish them: plain text, one
 * entry per line with comments, or JSON (handed to cidrset_json.c, which never
 * calls back here). See rampart/cidrset.h.
 */
#include <stdio.h>
#include <string.h>

#include "rampart/cidrset.h"
#include "rampart/utf8.h"

enum { ENTRY_TEXT_MAX = 256 }; /* longer than any address: "too long" is said */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The entry quoted for a message when it is short printable ASCII: a line may
 * hold anything, and the message is printed on a terminal. */
static const char *quoted(const char *text, char *buf, size_t size)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)text[i] <= ' ' || (unsigned char)text[i] >= 0x7f)
            return "";
    }
    if (n == 0 || n > 64)
        return "";
    snprintf(buf, size, "'%.64s': ", text);
    return buf;
}

/* One entry's text: added, or a problem naming its line. */
static error_code take_entry(const char *text, size_t line, const char *note, cidrset *out,
                             cidrset_problems *problems, error_info *err)
{
    validate_prefix pfx;
    error_info why;
    if (cidrset_parse_entry(text, &pfx, &why) == ERROR_OK)
        return cidrset_add(out, &pfx, line, note, err);
    char q[80];
    return cidrset_problem_add(problems, line, err, "%s%s", quoted(text, q, sizeof q), why.msg);
}

/* A line's comment as a note: trimmed, valid UTF-8 (else dropped and counted),
 * cut to what a description holds. */
static void take_note(const char *s, size_t n, char note[MODEL_DESCRIPTION_MAX + 1],
                      cidrset_problems *problems)
{
    note[0] = '\0';
    while (n && (is_space(*s) || *s == '#' || *s == ';')) {
        s++;
        n--;
    }
    while (n && is_space(s[n - 1]))
        n--;
    if (n == 0)
        return;
    if (memchr(s, '\0', n) || utf8_find_invalid(s, n, NULL) != n) {
        problems->bad_notes++;
        return;
    }
    /* utf8_prefix judges a cut by the byte after it: give it one more. */
    char cut[MODEL_DESCRIPTION_MAX + 2];
    size_t take = n < sizeof cut - 1 ? n : sizeof cut - 1;
    memcpy(cut, s, take);
    cut[take] = '\0';
    size_t keep = utf8_prefix(cut, MODEL_DESCRIPTION_MAX);
    memcpy(note, cut, keep);
    note[keep] = '\0';
}

/* One line of a text list: its entry before any comment, one word. */
static error_code text_line(const char *s, size_t n, size_t line, cidrset *out,
                            cidrset_problems *problems, error_info *err)
{
    size_t body = 0;
    while (body < n && s[body] != '#' && s[body] != ';')
        body++;
    size_t start = 0, end = body;
    while (start < end && is_space(s[start]))
        start++;
    while (end > start && is_space(s[end - 1]))
        end--;
    if (start == end)
        return ERROR_OK; /* blank, or a comment alone */
    size_t word = start;
    while (word < end && !is_space(s[word]) && s[word] != '\0')
        word++;
    if (word < end)
        return cidrset_problem_add(problems, line, err,
                                   s[word] == '\0' ? "a NUL byte in the entry"
                                                   : "one entry per line: text after the "
                                                     "first word (comments start with # "
                                                     "or ;)");
    if (end - start >= ENTRY_TEXT_MAX)
        return cidrset_problem_add(problems, line, err, "too long for an address: %zu bytes",
                                   end - start);
    char text[ENTRY_TEXT_MAX];
    memcpy(text, s + start, end - start);
    text[end - start] = '\0';
    char note[MODEL_DESCRIPTION_MAX + 1];
    take_note(s + body, n - body, note, problems);
    return take_entry(text, line, note, out, problems, err);
}

static error_code parse_text(const char *data, size_t len, cidrset *out,
                             cidrset_problems *problems, error_info *err)
{
    size_t line = 1;
    for (size_t at = 0; at < len; line++) {
        const char *nl = memchr(data + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (data + at)) : len - at;
        error_code rc = text_line(data + at, n, line, out, problems, err);
        if (rc != ERROR_OK)
            return rc;
        at += n + 1;
    }
    return ERROR_OK;
}

error_code cidrset_parse(const char *data, size_t len, const cidrset_parse_opts *opt,
                         cidrset *out, cidrset_problems *problems, bool *json,
                         error_info *err)
{
    static const char bom[] = "\xEF\xBB\xBF";
    if (len >= 3 && memcmp(data, bom, 3) == 0) {
        data += 3;
        len -= 3;
    }
    size_t i = 0;
    while (i < len && (is_space(data[i]) || data[i] == '\n'))
        i++;
    *json = i < len && (data[i] == '[' || data[i] == '{');
    if (*json)
        return cidrset_parse_json(data, len, opt, out, problems, err);
    if (opt && opt->nkeys)
        return error_set(err, ERROR_INVALID,
                         "--key names a member of a JSON document; this file is text (one "
                         "entry per line)");
    return parse_text(data, len, out, problems, err);
}

/* One whole line of the stream (its number is r->line + 1). */
static error_code feed_line(cidrset_text_reader *r, const char *s, size_t n, cidrset *out,
                            cidrset_problems *problems, error_info *err)
{
    r->line++;
    return text_line(s, n, r->line, out, problems, err);
}

static error_code too_long(const cidrset_text_reader *r, error_info *err)
{
    return error_set(err, ERROR_FORMAT, "line %zu is longer than %d bytes: not a list of "
                     "CIDRs (one a line)", r->line + 1, CIDRSET_LINE_MAX);
}

error_code cidrset_text_feed(cidrset_text_reader *r, const char *chunk, size_t n,
                             cidrset *out, cidrset_problems *problems, error_info *err)
{
    if (!r->started && n) {
        static const char bom[] = "\xEF\xBB\xBF";
        if (n >= 3 && memcmp(chunk, bom, 3) == 0) {
            chunk += 3;
            n -= 3;
        }
        r->started = true;
    }
    while (n) {
        const char *nl = memchr(chunk, '\n', n);
        size_t part = nl ? (size_t)(nl - chunk) : n;
        if (r->npending + part > CIDRSET_LINE_MAX)
            return too_long(r, err);
        error_code rc = ERROR_OK;
        if (nl && !r->npending) {
            rc = feed_line(r, chunk, part, out, problems, err); /* whole in the chunk */
        } else {
            memcpy(r->pending + r->npending, chunk, part);
            r->npending += part;
            if (nl) {
                rc = feed_line(r, r->pending, r->npending, out, problems, err);
                r->npending = 0;
            }
        }
        if (rc != ERROR_OK)
            return rc;
        size_t used = nl ? part + 1 : part;
        chunk += used;
        n -= used;
    }
    return ERROR_OK;
}

error_code cidrset_text_end(cidrset_text_reader *r, cidrset *out, cidrset_problems *problems,
                            error_info *err)
{
    if (!r->npending)
        return ERROR_OK;
    error_code rc = feed_line(r, r->pending, r->npending, out, problems, err);
    r->npending = 0;
    return rc;
}

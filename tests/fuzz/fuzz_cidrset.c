/*
 * Fuzz target: reading CIDR lists (cidrset_parse: text, and the hand-written
 * JSON reader with --key paths), then ordering, overlaps, dedupe and
 * aggregation. Byte 0 picks the keys (% 4: none, "hooks", "prefixes.ip_prefix",
 * both), the rest is the file. Properties checked beyond "no crash": every entry
 * read is a valid prefix whose canonical text reads back to itself with a line
 * inside the file; after aggregation the entries are sorted, none lies inside
 * another, and every entry read is covered by one of them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/cidrset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entries(const cidrset *s, size_t lines)
{
    for (size_t i = 0; i < s->count; i++) {
        char text[MODEL_CIDR_MAX + 1];
        validate_prefix back;
        error_info e;
        cidrset_format(&s->items[i].pfx, text);
        if (cidrset_parse_entry(text, &back, &e) != ERROR_OK ||
            cidrset_compare(&back, &s->items[i].pfx) != 0 || s->items[i].line == 0 ||
            s->items[i].line > lines)
            abort();
    }
}

static void check_aggregate(const cidrset *read, cidrset *merged)
{
    cidrset_sort(merged);
    cidrset_overlap *o = NULL;
    size_t n = 0;
    error_info e;
    if (cidrset_overlaps(merged, &o, &n, &e) == ERROR_OK)
        free(o);
    cidrset_aggregate(merged);
    for (size_t i = 0; i + 1 < merged->count; i++) {
        if (cidrset_compare(&merged->items[i].pfx, &merged->items[i + 1].pfx) >= 0 ||
            cidrset_contains(&merged->items[i].pfx, &merged->items[i + 1].pfx))
            abort();
    }
    for (size_t i = 0; i < read->count; i++) {
        bool covered = false;
        for (size_t j = 0; j < merged->count && !covered; j++)
            covered = cidrset_contains(&merged->items[j].pfx, &read->items[i].pfx);
        if (!covered)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const all[] = {"hooks", "prefixes.ip_prefix"};
    unsigned pick = data[0] % 4;
    cidrset_parse_opts opt = {pick == 2 ? all + 1 : all, pick == 0 ? 0 : pick == 3 ? 2 : 1};
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    cidrset read = {0}, merged = {0};
    cidrset_problems problems = {0};
    bool json = false;
    error_info e;
    if (cidrset_parse(text, len, &opt, &read, &problems, &json, &e) == ERROR_OK) {
        check_entries(&read, lines);
        for (size_t i = 0; i < read.count; i++)
            cidrset_add(&merged, &read.items[i].pfx, read.items[i].line, read.items[i].note, &e);
        check_aggregate(&read, &merged);
    }
    cidrset_free(&read);
    cidrset_free(&merged);
    cidrset_problems_free(&problems);
    return 0;
}

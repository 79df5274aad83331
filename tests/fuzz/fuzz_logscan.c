/*
 * Fuzz target: reading access logs (logscan_text: common/combined, JSON lines
 * with dotted key paths, plain address lists, told apart or given). Byte 0 picks
 * the format (% 4: auto, combined, json, plain), the field (/ 4 % 4: 1 to 4), a
 * --since (/ 16 % 2) and a small address cap (/ 32 % 2: 3 addresses); the rest is
 * the file. Properties beyond "no crash": every line is counted once (used, bad,
 * too long, old, over the cap or blank); the distinct addresses hold at most the
 * cap, each with at least one request, and their requests add up to the lines
 * used; an address's first time is never after its last.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rampart/logscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const logscan *ls, size_t cap)
{
    const logscan_stats *st = logscan_get_stats(ls);
    if (st->used + st->bad + st->too_long + st->old + st->over_cap + st->blank != st->lines)
        abort();
    size_t n = 0;
    const logscan_addr *a = logscan_addrs(ls, &n);
    if (cap && n > cap)
        abort();
    uint64_t requests = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].requests == 0)
            abort();
        if (a[i].first != INT64_MAX && a[i].first > a[i].last)
            abort();
        requests += a[i].requests;
    }
    if (requests != st->used)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned pick = data[0];
    logscan_opts o = {
        .format = (logscan_format)(pick % 4),
        .ip_field = 1 + (pick / 4) % 4,
        .ip_key = "conn.client_ip",
        .time_key = "ts",
        .since = (pick / 16) % 2 ? 1764320000 : 0, /* 2025-11-28 */
        .max_addresses = (pick / 32) % 2 ? 3 : 0,
    };
    logscan *ls = NULL;
    error_info e;
    if (logscan_new(&o, &ls, &e) != ERROR_OK)
        abort();
    if (logscan_text(ls, "fuzz.log", (const char *)data + 1, size - 1, &e) == ERROR_OK)
        check(ls, o.max_addresses);
    logscan_free(ls);
    return 0;
}

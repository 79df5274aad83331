/*
 * duration: how rampart writes a span of time, the one formatter of the CLI and
 * the console alike (src/core/duration.c).
 *
 * Contract:
 * - duration_text: a duration to the second, "42s", "3m05s", "2h10m"; whole
 *   seconds rounded up (an estimate never reads shorter than it is).
 * - duration_age: how long ago, "12s", "3m", "2h", "4d"; one unit, rounded down.
 * - duration_countdown: what is left of a wait, written as an age but rounded
 *   up ("retry in 12s" until the twelfth second has begun).
 * - duration_parse_time reads the time an age counts from: RFC 3339 UTC, as the
 *   cache records it ("2026-11-25T11:57:51Z", fractions and "+00:00" allowed).
 * - duration_parse reads what a person types: "90d", "24h", "1h30m", "2w", "30".
 * - Negative (and NaN) is "0s". Each writes a NUL-terminated text into `buf`
 *   (`size` > 0), cut when it does not fit, and returns `buf`.
 */
#ifndef RAMPART_DURATION_H
#define RAMPART_DURATION_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

enum { DURATION_TEXT_MAX = 32 }; /* room for any of them, NUL included */

const char *duration_text(double seconds, char *buf, size_t size);
const char *duration_age(double seconds, char *buf, size_t size);
const char *duration_countdown(double seconds, char *buf, size_t size);

/* `text` in seconds since the epoch; false (and *out untouched) when it is not
 * an RFC 3339 UTC time. */
bool duration_parse_time(const char *text, double *out);

/* The longest duration duration_parse takes: 10 years of seconds. */
#define DURATION_MAX 315360000LL

/* Whole numbers each followed by a unit, s, m, h, d or w ("90d", "1h30m"), or a
 * bare whole number of seconds, at most DURATION_MAX, into *seconds.
 * ERROR_INVALID naming `what` and showing the forms otherwise. */
error_code duration_parse(const char *text, const char *what, long long *seconds,
                          error_info *err);

#endif

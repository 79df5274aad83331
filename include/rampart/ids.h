/*
 * ids: identifiers that sort by creation time, in the API's shape
 * (prefix + "_" + 27 base62 characters), for local rows and for the reference server.
 *
 * - The first 9 characters encode milliseconds since the epoch, the other 18 come
 *   from the system's random source. Ids from one ids_gen are strictly increasing
 *   (in byte order) even within one millisecond: the random part is then the
 *   previous one plus one.
 * - An ids_gen is a plain value owned by its user; not thread-safe (one per
 *   thread, or a lock around it). Zero-initialise it before first use.
 */
#ifndef RAMPART_IDS_H
#define RAMPART_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "rampart/error.h"

#define IDS_BODY_LEN 27

typedef struct ids_gen {
    uint64_t last_ms;
    char last_body[IDS_BODY_LEN + 1];
} ids_gen;

/*
 * Write prefix + "_" + body into `out` (`size` bytes, at least
 * strlen(prefix) + IDS_BODY_LEN + 2). ERROR_INVALID when it does not fit,
 * ERROR_IO when the random source fails.
 */
error_code ids_generate(ids_gen *gen, const char *prefix, char *out, size_t size,
                        error_info *err);

/* Fill `out` with `len` random base62 characters and a NUL (`out` holds len+1). */
error_code ids_random_base62(char *out, size_t len, error_info *err);

/* Current time as RFC 3339 UTC with "Z" ("2025-09-04T10:11:15Z"); out >= 21 bytes. */
void ids_now_rfc3339(char *out, size_t size);

#endif

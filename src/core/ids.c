#include "rampart/ids.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static const char BASE62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

enum { TIME_CHARS = 9, RANDOM_CHARS = IDS_BODY_LEN - TIME_CHARS };

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int digit_value(char c)
{
    const char *p = strchr(BASE62, c);
    return p && c ? (int)(p - BASE62) : 0;
}

error_code ids_random_base62(char *out, size_t len, error_info *err)
{
    size_t done = 0;
    while (done < len) {
        unsigned char buf[64];
        ssize_t n = getrandom(buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return error_set(err, ERROR_IO, "random source failed: %s", strerror(errno));
        }
        /* Rejection sampling: 248 = 4*62 keeps every digit equally likely. */
        for (ssize_t i = 0; i < n && done < len; i++) {
            if (buf[i] < 248)
                out[done++] = BASE62[buf[i] % 62];
        }
    }
    out[len] = '\0';
    return ERROR_OK;
}

/* Add one to a base62 string in place; false when it wrapped around. */
static int increment_base62(char *s, size_t len)
{
    for (size_t i = len; i-- > 0;) {
        int v = digit_value(s[i]);
        if (v < 61) {
            s[i] = BASE62[v + 1];
            return 1;
        }
        s[i] = BASE62[0];
    }
    return 0;
}

static void encode_time(uint64_t ms, char *out)
{
    for (int i = TIME_CHARS - 1; i >= 0; i--) {
        out[i] = BASE62[ms % 62];
        ms /= 62;
    }
}

error_code ids_generate(ids_gen *gen, const char *prefix, char *out, size_t size,
                        error_info *err)
{
    size_t plen = strlen(prefix);
    if (size < plen + IDS_BODY_LEN + 2)
        return error_set(err, ERROR_INVALID, "id buffer too small");
    uint64_t ms = now_ms();
    char body[IDS_BODY_LEN + 1];
    /* Within one millisecond (or if the clock stepped back) keep ids increasing. */
    if (gen->last_body[0] && ms <= gen->last_ms) {
        memcpy(body, gen->last_body, sizeof body);
        if (!increment_base62(body + TIME_CHARS, RANDOM_CHARS))
            increment_base62(body, TIME_CHARS);
    } else {
        encode_time(ms, body);
        if (ids_random_base62(body + TIME_CHARS, RANDOM_CHARS, err) != ERROR_OK)
            return err ? err->code : ERROR_IO;
        gen->last_ms = ms;
    }
    memcpy(gen->last_body, body, sizeof body);
    snprintf(out, size, "%s_%s", prefix, body);
    return ERROR_OK;
}

void ids_now_rfc3339(char *out, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

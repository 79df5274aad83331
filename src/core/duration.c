/* duration: see rampart/duration.h. */
#include "rampart/duration.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whole seconds of `seconds`, rounded up or down; 0 for negative or NaN, capped
 * at a billion (31 years) so every count fits the text. */
static unsigned long whole(double seconds, int up)
{
    if (!(seconds > 0))
        return 0;
    if (seconds > 1e9)
        return 1000000000ul;
    return (unsigned long)(up ? ceil(seconds - 1e-6) : seconds);
}

const char *duration_text(double seconds, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    unsigned long t = whole(seconds, 1);
    if (t < 60)
        snprintf(buf, size, "%lus", t);
    else if (t < 3600)
        snprintf(buf, size, "%lum%02lus", t / 60, t % 60);
    else
        snprintf(buf, size, "%luh%02lum", t / 3600, t / 60 % 60);
    return buf;
}

static const char *age(unsigned long s, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    if (s < 60)
        snprintf(buf, size, "%lus", s);
    else if (s < 3600)
        snprintf(buf, size, "%lum", s / 60);
    else if (s < 86400)
        snprintf(buf, size, "%luh", s / 3600);
    else
        snprintf(buf, size, "%lud", s / 86400);
    return buf;
}

const char *duration_age(double seconds, char *buf, size_t size)
{
    return age(whole(seconds, 0), buf, size);
}

const char *duration_countdown(double seconds, char *buf, size_t size)
{
    return age(whole(seconds, 1), buf, size);
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static long days_from_civil(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool duration_parse_time(const char *text, double *out)
{
    int y, mo, d, h, mi, s, n = 0;
    if (!text || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 ||
        n != 19)
        return false;
    const char *p = text + n;
    double frac = 0;
    if (*p == '.') {
        double scale = 0.1;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970)
        return false;
    long days = days_from_civil(y, mo, d);
    *out = (double)days * 86400.0 + h * 3600.0 + mi * 60.0 + s + frac;
    return true;
}

static long long duration_unit(char c)
{
    switch (c) {
    case 's': return 1;
    case 'm': return 60;
    case 'h': return 3600;
    case 'd': return 86400;
    case 'w': return 604800;
    default: return 0;
    }
}

error_code duration_parse(const char *text, const char *what, long long *seconds,
                          error_info *err)
{
    long long total = 0;
    const char *p = text ? text : "";
    bool ok = *p != '\0';
    while (ok && *p) {
        long long n = 0;
        const char *digits = p;
        while (*p >= '0' && *p <= '9' && n <= DURATION_MAX)
            n = n * 10 + (*p++ - '0');
        long long unit = *p ? duration_unit(*p) : (digits == text ? 1 : 0);
        ok = p > digits && unit > 0 && n <= DURATION_MAX;
        if (ok) {
            total += n * unit;
            ok = total <= DURATION_MAX;
            p += *p ? 1 : 0;
        }
    }
    if (!ok)
        return error_set(err, ERROR_INVALID, "%s: '%.40s' is not a duration: give whole "
                         "numbers with units s, m, h, d, w (90d, 24h, 1h30m, 2w) up to 10 "
                         "years, or seconds alone", what, text ? text : "");
    *seconds = total;
    return ERROR_OK;
}

/* textcat: appending to a text in a fixed array (rampart/textcat.h). */
#include "rampart/textcat.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void textcat_add(char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

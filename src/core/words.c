/* words: a command line split as rampart runs commands without a shell; see
 * rampart/words.h. */
#include "rampart/words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/model.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/* One word at *p into *out (NUL-terminated); false for an unclosed quote. */
static bool next_word(const char **p, char **out)
{
    const char *s = *p;
    char *w = *out;
    char quote = 0;
    for (; *s && (quote || !blank(*s)); s++) {
        if (quote && *s == quote) {
            quote = 0;
        } else if (!quote && (*s == '\'' || *s == '"')) {
            quote = *s;
        } else if (*s == '\\' && quote != '\'' && s[1]) {
            *w++ = *++s;
        } else {
            *w++ = *s;
        }
    }
    *w++ = '\0';
    *out = w;
    *p = s;
    return quote == 0;
}

error_code words_split(const char *text, words *w, error_info *err)
{
    memset(w, 0, sizeof *w);
    size_t len = strlen(text);
    w->size = len + 1;
    w->storage = malloc(w->size);
    w->argv = calloc(len / 2 + 2, sizeof *w->argv);
    if (!w->storage || !w->argv) {
        words_free(w);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    char *out = w->storage;
    for (const char *p = text;;) {
        while (blank(*p))
            p++;
        if (!*p)
            break;
        char *start = out;
        if (!next_word(&p, &out)) {
            words_free(w);
            return error_set(err, ERROR_INVALID, "a quote is not closed");
        }
        w->argv[w->argc++] = start;
    }
    if (w->argc == 0) {
        words_free(w);
        return error_set(err, ERROR_INVALID, "no command given");
    }
    return ERROR_OK;
}

void words_free(words *w)
{
    if (w->storage)
        model_wipe(w->storage, w->size);
    free(w->storage);
    free(w->argv);
    memset(w, 0, sizeof *w);
}

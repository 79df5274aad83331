/*
 * words: a command line split into words the way rampart runs a command without
 * a shell (export --exec, key_command): blanks (space, tab, newline) separate
 * words; single quotes group everything up to the next single quote; double
 * quotes group, and inside them (and outside quotes) a backslash takes the next
 * character as it is. Nothing else is special: no variables, globs, pipes or
 * redirections (a user who wants them writes sh -c '...').
 *
 * - words_split fills `w` with a NULL-terminated argv whose strings live in one
 *   buffer it owns; words_free releases both and wipes the buffer (a command line
 *   may name a secret's path). The caller may replace entries of w->argv with
 *   strings of its own (they are not freed).
 * - ERROR_INVALID for an unclosed quote or no word at all (the message says
 *   which, without a prefix: the caller names the setting); ERROR_NOMEM.
 */
#ifndef RAMPART_WORDS_H
#define RAMPART_WORDS_H

#include <stddef.h>

#include "rampart/error.h"

typedef struct words {
    char **argv;   /* NULL-terminated; NULL before words_split */
    size_t argc;
    char *storage; /* the words, back to back */
    size_t size;   /* bytes of storage */
} words;

/* Split `text` into `w` (zeroed first). On failure `w` holds nothing to free. */
error_code words_split(const char *text, words *w, error_info *err);

/* Free what words_split made; `w` is zeroed. A zeroed `w` is a no-op. */
void words_free(words *w);

#endif

/*
 * error: status codes and the human-readable error every fallible function fills.
 *
 * - A fallible function returns an error_code and, when it fails and `err` is not
 *   NULL, fills `err` with the same code and a message a person can act on
 *   ("host bits set: did you mean 10.0.0.0/8?"), never with a secret.
 * - Nothing in core prints or exits; the command line and the console decide how
 *   to show an error_info.
 * - error_info is a plain value (no heap): copy it, keep it on the stack.
 */
#ifndef RAMPART_ERROR_H
#define RAMPART_ERROR_H

#include <stdarg.h>

typedef enum error_code {
    ERROR_OK = 0,
    ERROR_INVALID,     /* input breaks a rule (validation, bad flag value) */
    ERROR_CONFLICT,    /* input is valid but clashes with what is stored */
    ERROR_NOT_FOUND,   /* no such record */
    ERROR_STATE,       /* the record's sync state does not allow this now */
    ERROR_UNAVAILABLE, /* the record exists but this machine lacks the data (a token) */
    ERROR_FORMAT,      /* malformed document (JSON, config file) */
    ERROR_CONFIG,      /* configuration unusable (unsafe mode, missing setting) */
    ERROR_IO,          /* file system or database failure */
    ERROR_NOMEM        /* out of memory */
} error_code;

#define ERROR_MSG_MAX 512

typedef struct error_info {
    error_code code;
    char msg[ERROR_MSG_MAX];
} error_info;

/*
 * Fill `err` (if not NULL) with `code` and a printf-style message; returns `code`
 * so callers can write `return error_set(err, ERROR_INVALID, "...")`.
 * Messages longer than ERROR_MSG_MAX-1 bytes are truncated at a UTF-8 boundary.
 */
error_code error_set(error_info *err, error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same as error_set with a va_list. */
error_code error_vset(error_info *err, error_code code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/*
 * Put `prefix: ` in front of the message already in `err`, keeping its code
 * ("line 3: host bits set: …"). Returns err->code. No-op when err is NULL.
 */
error_code error_prefix(error_info *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * `err`, or when it is NULL a zeroed error_info that lives until the enclosing
 * block ends: for a function that accepts a NULL `err` but reads err->code.
 * Write it in the function's outermost block: `err = ERROR_OR_SCRATCH(err);`.
 */
#define ERROR_OR_SCRATCH(err) ((err) ? (err) : &(error_info){ERROR_OK, ""})

/* Reset to ERROR_OK with an empty message. */
void error_clear(error_info *err);

/* Stable lower-case name of a code ("invalid", "not_found"), for --json output. */
const char *error_code_name(error_code code);

#endif

/*
 * buf: the one growable byte buffer, for text built piece by piece (JSON bodies,
 * pages, a reply read from the network, a file read whole).
 *
 * - A zeroed buf is an empty buffer ready for use: `buf_t b = {0};`, or
 *   `buf_t b = {.wipe = true};` for one that may hold a secret. `data` is NULL until
 *   the first byte is appended; `len` bytes are in use; `cap` are allocated.
 * - The caller owns the buffer and its memory: buf_free releases it, buf_take
 *   hands the bytes over (the caller then frees them with free(), or
 *   model_free_wiped for a secret). Nothing is shared; no global state; one buf
 *   must not be used by two threads at once.
 * - After any successful append data[len] == '\0', so text without NUL bytes is
 *   a C string as it is. The terminator is not counted in `len`.
 * - Growth doubles the capacity (at least BUF_MIN bytes): n appends of one byte
 *   cost O(n) in all.
 * - Failure (out of memory, a size that would overflow) is sticky: `failed` is
 *   set, the bytes are kept, and later appends do nothing and return false until
 *   buf_reset, buf_take or buf_free: append everything, check once.
 * - buf_grow_array: the same doubling for a heap array (never secrets: realloc).
 * - `wipe`: the buffer may hold a token or a key. Growing then never uses
 *   realloc (which may leave the old block behind unwiped): a new block is
 *   allocated, the bytes copied, and the old block wiped before it is freed;
 *   buf_reset, buf_free and a failed buf_take wipe too. Without `wipe` growth is
 *   a plain realloc.
 */
#ifndef RAMPART_BUF_H
#define RAMPART_BUF_H

#include <stdbool.h>
#include <stddef.h>

enum { BUF_MIN = 256, BUF_ARRAY_MIN = 16 };

/* buf_t, not buf: `buf` is a local name all over the tree, and would shadow. */
typedef struct buf_t {
    char *data;
    size_t len, cap;
    bool wipe;   /* set before the first append; see the contract */
    bool failed; /* an append failed: sticky, see the contract */
} buf_t;

/* Make room for `extra` more bytes (and the terminator) without appending them:
 * on true, data + len has at least cap - len - 1 >= extra writable bytes, for a
 * caller that fills them itself (fread) and then adds to `len` with
 * buf_commit. False when the buffer failed (now or before). */
bool buf_reserve(buf_t *b, size_t extra);

/* After writing `n` bytes at data + len (within what buf_reserve promised):
 * count them and terminate the text. */
void buf_commit(buf_t *b, size_t n);

/* Append `n` bytes of `data` (may hold NULs). False when the buffer failed. */
bool buf_append(buf_t *b, const void *data, size_t n);

/* Append a C string (without its NUL). False when the buffer failed. */
bool buf_puts(buf_t *b, const char *s);

/*
 * Append `s` as a quoted JSON string: '"' and '\\' backslash-escaped, bytes
 * below 0x20 and DEL as \u00xx (lower-case hex); every other byte as it is
 * (the caller hands valid UTF-8). The one JSON string writer of the text built
 * by hand (rampart's wire format goes through jansson in codec). NULL writes
 * "". False when the buffer failed.
 */
bool buf_json_string(buf_t *b, const char *s);

/* Start a new text: empty the buffer (its bytes wiped first with `wipe`),
 * clear `failed`, and keep the memory for the next text. */
void buf_reset(buf_t *b);

/* Hand the bytes over: the NUL-terminated text (an empty buffer gives a heap
 * ""), now the caller's. NULL when the buffer failed, after wiping (with `wipe`)
 * and freeing it. Either way `b` is left empty, with `wipe` kept and `failed`
 * cleared, ready for use again. */
char *buf_take(buf_t *b);

/* Make room for `need` elements of `elem` bytes in the heap array *items that
 * holds *cap (doubling, from BUF_ARRAY_MIN; new room is not zeroed). False when
 * out of memory or the size would overflow: the array is kept as it was. The
 * one growth of the tree's arrays; `(void **)&array` is how callers pass it. */
bool buf_grow_array(void **items, size_t *cap, size_t need, size_t elem);

/* Release the memory (wiped first with `wipe`); `b` is left empty, with `wipe`
 * kept and `failed` cleared. NULL is a no-op. */
void buf_free(buf_t *b);

#endif

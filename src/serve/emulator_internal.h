/*
 * emulator internals shared by emulator.c (lifecycle, gate, routes, faults),
 * emulator_ops.c (create/get/patch/delete), emulator_list.c (pages) and
 * emulator_reply.c (replies). emulator.c calls the operations, and they call
 * only emulator_reply.c, never emulator.c. Not part of the public contract (see
 * rampart/emulator.h).
 */
#ifndef RAMPART_EMULATOR_INTERNAL_H
#define RAMPART_EMULATOR_INTERNAL_H

#include <pthread.h>

#include "rampart/emulator.h"
#include "rampart/http.h"
#include "rampart/ids.h"
#include "rampart/kind.h"
#include "rampart/model.h"
#include "rampart/store.h"

enum { EMU_BASE_URL_MAX = 512, EMU_HEADER_NAME_MAX = 64 };

struct emulator {
    char *api_key;                 /* heap, wiped at stop */
    size_t key_len;
    char version_header[EMU_HEADER_NAME_MAX];
    bool accept_missing_version;
    char base_url[EMU_BASE_URL_MAX + 1];
    emulator_log_fn log;
    void *log_ctx;
    pthread_mutex_t lock;          /* guards st, gen and faults */
    store *st;
    ids_gen gen;
    emulator_faults faults;
    http_server *http;
    int rate_limit;                /* 0: none */
    int rate_window_s;             /* the rolling window of rate_limit, seconds */
    double *rate_times;            /* ring of the last rate_limit request times */
    int rate_next, rate_count;     /* when full, rate_times[rate_next] is the oldest */
};

/* ---- emulator_reply.c ---- */

/* Error reply: body {"error_code","status_code","msg","details":{"operation_id"}}
 * and the Operation-Id header; `msg` is printf-style. */
void emu_error(http_response *resp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A success reply with an encoded object (NULL, out of memory: a 500). */
void emu_reply(http_response *resp, int status, char *json);

/* A store failure as a reply: not found 404, conflict 400 ERR_VALIDATION, the
 * rest 500. */
void emu_store_error(http_response *resp, const error_info *e);

/* ---- emulator_ops.c, emulator_list.c ---- */

/*
 * The operations on the collection of `kind`, run after the gate and the pre-reply
 * faults: one piece of code for every kind, the kind's descriptor (rampart/kind.h)
 * saying what differs. What is one kind's own stays in emulator_ops.c: a
 * credential's token (made here, sent in the create reply only) and its default
 * owner.
 */
typedef void (*emu_op_fn)(emulator *em, model_kind kind, const http_request *req,
                          http_response *resp);

/* POST <collection>: 201 with the new object; 400 for a bad body or a bad field. */
void emu_create(emulator *em, model_kind kind, const http_request *req, http_response *resp);
/* GET <collection>/{id}: 200 with the object (token null); 404 for an unknown id. */
void emu_get(emulator *em, model_kind kind, const http_request *req, http_response *resp);
/* PATCH <collection>/{id}: an edit in place (rampart/emulator.h), 200 with the whole
 * object (token null); 400 for a field that never changes, an unknown or bad
 * field, nothing to change, or a CIDR the policy holds; 404 for an unknown id. */
void emu_patch(emulator *em, model_kind kind, const http_request *req, http_response *resp);
/* DELETE <collection>/{id}: 204 with no body; 404 for an unknown id. */
void emu_delete(emulator *em, model_kind kind, const http_request *req, http_response *resp);
/* GET <collection>: a list page (emulator_list.c); 400 for a bad query. */
void emu_list(emulator *em, model_kind kind, const http_request *req, http_response *resp);

#endif

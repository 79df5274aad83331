/*
 * emulator internals shared by emulator.c (lifecycle, gate, routes, faults),
 * emulator_ops.c (create/get/delete) and emulator_list.c (pages). Not part of the
 * public contract (see rampart/emulator.h).
 */
#ifndef RAMPART_EMULATOR_INTERNAL_H
#define RAMPART_EMULATOR_INTERNAL_H

#include <pthread.h>

#include "rampart/emulator.h"
#include "rampart/http.h"
#include "rampart/ids.h"
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
    double *rate_times;            /* ring of the last rate_limit request times */
    int rate_next, rate_count;     /* when full, rate_times[rate_next] is the oldest */
};

/* Error reply: body {"error_code","status_code","msg","details":{"operation_id"}}
 * and the Operation-Id header; `msg` is printf-style. */
void emu_error(http_response *resp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A success reply with an encoded object (NULL, out of memory: a 500). */
void emu_reply(http_response *resp, int status, char *json);

/* A store failure as a reply: not found 404, conflict 400 ERR_VALIDATION, the
 * rest 500. */
void emu_store_error(http_response *resp, const error_info *e);

/* Absolute uris of a row, from the base URL (the stored ones may be from another
 * base). */
void emu_rule_uris(const emulator *em, model_rule *rule);
void emu_cred_uri(const emulator *em, model_cred *cred);

/* The operations, run after the gate and the pre-reply faults. */
void emu_create_rule(emulator *em, const http_request *req, http_response *resp);
void emu_create_cred(emulator *em, const http_request *req, http_response *resp);
void emu_get_rule(emulator *em, const http_request *req, http_response *resp);
void emu_get_cred(emulator *em, const http_request *req, http_response *resp);
void emu_delete_rule(emulator *em, const http_request *req, http_response *resp);
void emu_delete_cred(emulator *em, const http_request *req, http_response *resp);
void emu_list_rules(emulator *em, const http_request *req, http_response *resp);
void emu_list_creds(emulator *em, const http_request *req, http_response *resp);

#endif

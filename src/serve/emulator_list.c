/*
 * emulator: the two list routes. Query rules, reading order and page shape are
 * shared with the agent's mirror (rampart/serve_list.h); what is the server's own
 * is the lock around its one store connection and its error bodies.
 */
#include "emulator_internal.h"

#include "rampart/serve_list.h"

typedef error_code (*list_fn)(store *st, const serve_list_query *q, unsigned states,
                              const char *base, char **body, error_info *err);

static void list(emulator *em, const http_request *req, const char *prefix, list_fn fn,
                 http_response *resp)
{
    serve_list_query q;
    char why[160];
    if (!serve_list_parse(req, prefix, &q, why, sizeof why)) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "%s", why);
        return;
    }
    char *body = NULL;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = fn(em->st, &q, 0, em->base_url, &body, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK) {
        emu_store_error(resp, &e);
        return;
    }
    http_response_set(resp, 200, body);
}

void emu_list_rules(emulator *em, const http_request *req, http_response *resp)
{
    list(em, req, "ipr", serve_list_rules, resp);
}

void emu_list_creds(emulator *em, const http_request *req, http_response *resp)
{
    list(em, req, "cr", serve_list_creds, resp);
}

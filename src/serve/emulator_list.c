/*
 * emulator: the list routes, one for every kind. Query rules, reading order and
 * page shape are shared with the agent's mirror (rampart/serve_list.h); what is the
 * server's own is the lock around its one store connection and its error bodies.
 */
#include "emulator_internal.h"

#include "rampart/serve_list.h"

void emu_list(emulator *em, model_kind kind, const http_request *req, http_response *resp)
{
    serve_list_query q;
    char why[160];
    if (!serve_list_parse(req, kind, &q, why, sizeof why)) {
        emu_error(resp, 400, "ERR_INVALID_QUERY", "%s", why);
        return;
    }
    char *body = NULL;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = serve_list_page(em->st, kind, &q, 0, em->base_url, &body, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK) {
        emu_store_error(resp, &e);
        return;
    }
    http_response_set(resp, 200, body);
}

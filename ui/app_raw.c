/*
 * Raw terminal output (ui_app.h): a queue of bytes the terminal layer writes as
 * they are after its next screen update. It lives in the per-console ui_sync
 * state (ui/sync_worker.c), so the loop needs no field of its own for it.
 */
#include <stdlib.h>
#include <string.h>

#include "rampart/ui_app.h"
#include "action_internal.h"

void ui_app_raw(ui_app *app, const char *bytes, size_t n)
{
    ui_raw_queue *q = ui_sync_raw_queue(ui_app_sync(app));
    if (!q || n == 0)
        return;
    char *grown = malloc(q->len + n);
    if (!grown)
        return; /* a copy to the clipboard is best effort */
    if (q->len)
        memcpy(grown, q->bytes, q->len);
    memcpy(grown + q->len, bytes, n);
    ui_raw_queue_wipe(q);
    q->bytes = grown;
    q->len += n;
}

const char *ui_app_raw_peek(ui_app *app, size_t *n)
{
    ui_raw_queue *q = ui_sync_raw_queue(ui_app_sync(app));
    *n = q ? q->len : 0;
    return q && q->len ? q->bytes : NULL;
}

void ui_app_raw_clear(ui_app *app)
{
    ui_raw_queue_wipe(ui_sync_raw_queue(ui_app_sync(app)));
}

void ui_raw_queue_wipe(ui_raw_queue *q)
{
    if (!q)
        return;
    if (q->bytes) {
        model_wipe(q->bytes, q->len);
        free(q->bytes);
    }
    q->bytes = NULL;
    q->len = 0;
}

/*
 * Raw terminal output (ui_app.h): a queue of bytes in the console's state that the
 * terminal layer writes as they are after its next screen update (an OSC 52 copy).
 * The bytes may hold a token: they are wiped whenever they go.
 */
#include <stdlib.h>
#include <string.h>

#include "ui_state.h"

void ui_app_raw(ui_app *app, const char *bytes, size_t n)
{
    ui_raw_queue *q = &app->raw;
    if (n == 0)
        return;
    char *grown = malloc(q->len + n);
    if (!grown)
        return; /* a copy to the clipboard is best effort */
    if (q->len)
        memcpy(grown, q->bytes, q->len);
    memcpy(grown + q->len, bytes, n);
    size_t len = q->len + n;
    ui_raw_queue_wipe(q);
    q->bytes = grown;
    q->len = len;
}

const char *ui_app_raw_peek(const ui_app *app, size_t *n)
{
    *n = app->raw.len;
    return app->raw.len ? app->raw.bytes : NULL;
}

void ui_app_raw_clear(ui_app *app)
{
    ui_raw_queue_wipe(&app->raw);
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

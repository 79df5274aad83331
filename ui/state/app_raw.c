/*
 * Raw terminal output (ui_app.h): a queue of bytes in the console's state that the
 * terminal layer writes as they are after its next screen update (an OSC 52 copy).
 * The bytes may hold a token: they are wiped whenever they go.
 */
#include "ui_state.h"

void ui_app_raw(ui_app *app, const char *bytes, size_t n)
{
    /* A copy to the clipboard is best effort: a failed append drops the queue. */
    if (n && !buf_append(&app->raw, bytes, n))
        buf_free(&app->raw);
}

const char *ui_app_raw_peek(const ui_app *app, size_t *n)
{
    *n = app->raw.len;
    return app->raw.len ? app->raw.data : NULL;
}

void ui_app_raw_clear(ui_app *app)
{
    buf_free(&app->raw);
}

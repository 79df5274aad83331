/*
 * Private to ui/actions.c, ui/sync_worker.c, ui/app_raw.c, ui/form_create.c and
 * ui/dialog*.c: what those files share beyond ui_app.h.
 */
#ifndef RAMPART_UI_ACTION_INTERNAL_H
#define RAMPART_UI_ACTION_INTERNAL_H

#include <stddef.h>

#include "rampart/ui_app.h"

/* Bytes queued for the terminal (ui_app_raw); heap, wiped when cleared. */
typedef struct ui_raw_queue {
    char *bytes;
    size_t len;
} ui_raw_queue;

/* The queue kept in the console's ui_sync state (NULL when s is NULL). */
ui_raw_queue *ui_sync_raw_queue(ui_sync *s);

/* Wipe and free the queued bytes; NULL is a no-op. */
void ui_raw_queue_wipe(ui_raw_queue *q);

/* Open the create form of `kind` as an overlay (ui/form_create.c). The rule form
 * offers the cache's policy ids and starts on the view's policy filter. */
error_code ui_form_create_open(ui_app *app, ui_kind kind, error_info *err);

/* 's' after the read-only check (ui/sync_worker.c): start the worker, or retry at
 * once while it waits to retry an unreachable remote; refused (status line) when
 * no remote is configured or a sync is running. */
void ui_sync_start(ui_app *app);

#endif

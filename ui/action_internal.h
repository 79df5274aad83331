/*
 * What the console's actions (ui/app/actions.c) and the sync worker
 * (ui/sync_worker.c) share beyond ui_app.h. Private to ui/.
 *
 * It stays at the top of ui/ for the sync worker, whose file sits there; the raw
 * queue itself is part of the console's state (ui/state/ui_state.h).
 */
#ifndef RAMPART_UI_ACTION_INTERNAL_H
#define RAMPART_UI_ACTION_INTERNAL_H

#include <stddef.h>

#include "rampart/ui_app.h"
#include "state/ui_state.h"

/* A queue kept in the console's ui_sync state (NULL when s is NULL); the console
 * now queues its raw bytes in its own state (ui_app_raw), so nothing uses it. */
ui_raw_queue *ui_sync_raw_queue(ui_sync *s);

/* 's' after the read-only check (ui/sync_worker.c): start the worker, or retry at
 * once while it waits to retry an unreachable remote; refused (status line) when
 * no remote is configured or a sync is running. */
void ui_sync_start(ui_app *app);

#endif

/*
 * ui_internal: what the console offers the code at the top of ui/ (the sync
 * worker, ui/sync_worker.c): the state's services (ui/state/ui_state.h), among
 * them ui_app_drain and ui_app_wake_fd, which its join uses to keep handling
 * events while the worker ends. Private to ui/.
 *
 * The rest of ui/ includes the header of the layer it uses (state/ui_state.h,
 * views/ui_views.h, app/app_internal.h); this one stays for the sync worker, whose
 * file sits here.
 */
#ifndef RAMPART_UI_INTERNAL_H
#define RAMPART_UI_INTERNAL_H

#include "state/ui_state.h"

#endif

/*
 * The headless runner (ui/headless.c): a key script drives the loop, dumps go to
 * opt->dump. Private to ui/.
 */
#ifndef RAMPART_UI_HEADLESS_H
#define RAMPART_UI_HEADLESS_H

#include "rampart/ui_app.h"

/* Parse the whole script, then run it on `app` (already sized). ERROR_INVALID
 * naming the file and line for a bad step; nothing runs then. */
error_code ui_headless_run(ui_app *app, const ui_options *opt, error_info *err);

/* "80x24" into width and height (1..1000 each); ERROR_INVALID otherwise. */
error_code ui_headless_size(const char *text, int *width, int *height, error_info *err);

#endif

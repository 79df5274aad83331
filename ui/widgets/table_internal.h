/*
 * What ui/widgets/table.c shares with ui/widgets/table_marks.c. Private to the
 * table widget.
 */
#ifndef RAMPART_UI_TABLE_INTERNAL_H
#define RAMPART_UI_TABLE_INTERNAL_H

#include "rampart/ui_table.h"

/* Copy text into a fixed buffer, cut at a character boundary. */
void ui_table_set_text(char *dst, size_t size, const char *src);

/* Rows after (forward) or before `cursor` in display order, in display order;
 * a failure lands in t->error and empties the screen. */
error_code ui_table_fetch(ui_table *t, const char *cursor, bool forward, size_t limit,
                          ui_table_row *out, size_t *n);

/* Refresh when stale. */
error_code ui_table_ready(ui_table *t);

#endif

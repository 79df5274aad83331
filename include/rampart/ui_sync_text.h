/*
 * ui_sync_text: what the console says about a sync, as pure functions of the
 * engine's typed progress and failures (ui/state/sync_text.c): the header's and
 * the log view's words for a wait or a failure. No console, no clock of their
 * own, so unit tests call them directly.
 *
 * - A cause is named from its type (sync_failure_kind, sync_wait_cause) and the
 *   HTTP status, never from a message's text: "rate limited (429)", "server error
 *   503", "unreachable", "timed out", "connection lost", "API key refused",
 *   "refused 422", "not found (404)", "unusable reply", "local database error",
 *   "another sync is running", "local error".
 * - `detail` adds what the server said and the operation id, when it said them:
 *   "server error 503: upstream down (op_123)". The API key is never part of a
 *   failure, so never part of a text. Control characters of the server's message
 *   become '?'.
 * - Countdowns and ages are rampart/duration.h's ("retry in 12s").
 * - Every function writes a NUL-terminated text into `buf` (`size` > 0 bytes), cut
 *   when it does not fit, and returns `buf`.
 */
#ifndef RAMPART_UI_SYNC_TEXT_H
#define RAMPART_UI_SYNC_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/sync.h"
#include "rampart/ui.h"

/* The cause of `f` ("" for NULL or SYNC_FAILURE_NONE). */
const char *ui_failure_text(const sync_failure *f, bool detail, char *buf, size_t size);

/* A wait of `cause` with `remaining_s` left, `f` the failure behind it (may be
 * NULL) and `rate_per_s` the pace the budget allows:
 *   RATE_LIMITED  "rate limited (429), retry in 12s" (never with the 429's message)
 *   BACKOFF       "server error 503: msg (op_…), retry in 4s", "unreachable, retry
 *                 in 30s" (the failure's cause; "backing off" without one)
 *   BUDGET        "paced: 9.6 req/s" (the next slot is at most a second or two away)
 *   NONE          "paused 12s" (an engine that did not say why) */
const char *ui_wait_text(sync_wait_cause cause, const sync_failure *f, double remaining_s,
                         double rate_per_s, bool detail, char *buf, size_t size);

/* A pace: "paced: 1.6 req/s" ("paced: 0.05 req/s" under 0.1; "" when not paced,
 * rate_per_s <= 0). */
const char *ui_pace_text(double rate_per_s, char *buf, size_t size);

/* The budget of an idle auto-pull: `b` with its share at most UI_AUTO_PULL_SHARE
 * (0.1; a share of 0 is the engine's default 0.8, so it becomes 0.1 too). */
sync_budget ui_auto_pull_budget(const sync_budget *b);

#endif

/*
 * ui: the console (ncurses). The only public entry of the ui/ folder; everything
 * else under ui/ is reached through the ui_*.h headers by the folder itself.
 *
 * Contract:
 * - ui_run takes over the terminal until the user quits, and restores it on every
 *   exit path (quit, error, SIGINT, SIGTERM, SIGHUP, SIGQUIT).
 * - Headless (opt->script set): no terminal at all. Keys come from the script, the
 *   screen is a `width` x `height` text grid, and "dump" steps write it to
 *   opt->dump (plain text, trailing spaces trimmed, one "----" line after each
 *   screen). The same code draws both, so a headless screen is what a terminal
 *   shows.
 * - Script syntax (one step per line, '#' comments): `key NAME…` where NAME is a
 *   character, or <Up> <Down> <Left> <Right> <PgUp> <PgDn> <Home> <End> <Enter>
 *   <Esc> <Tab> <BTab> <Space> <Backspace> <Del> <C-x> (control keys) <F1>…;
 *   `type TEXT` (each character as a key); `resize WxH`; `wait-sync` (until a
 *   running sync ends); `wait-for TEXT` (other threads' events are handled until the screen
 *   shows TEXT; a failure after 30 s); `tick SECONDS` (the console's clock moves on that many
 *   seconds; a headless console's clock stands still otherwise, so ages and the
 *   idle auto-pull are deterministic); `dump`; `repeat N key NAME`. Bad steps are
 *   ERROR_INVALID naming the line.
 * - Idle auto-pull (opt->auto_pull_s > 0, a remote, not read-only): when no sync
 *   runs, no overlay or prompt is open and no key came for a few seconds, the
 *   console pulls (no push) once auto_pull_s have passed since the last sync it
 *   knows of (its own, or STORE_META_LAST_SYNC) or its start, taking at most
 *   UI_AUTO_PULL_SHARE of the budget. Its outcome goes to the header and the log,
 *   not the status line.
 * - Sync status: the header and the log view name the cause of a wait or a failure
 *   from the engine's typed progress and report (rampart/ui_sync_text.h), with a
 *   countdown that ticks between the engine's reports; "synced 12s ago" ticks and,
 *   after a restart, comes from the cache's STORE_META_LAST_SYNC ("never synced"
 *   only when the cache has no such fact).
 * - The console never prints to stdout/stderr while it owns the terminal; errors
 *   go to its log view and status line.
 * - Headless extras: bytes queued for the terminal itself (ui_app_raw, an OSC 52
 *   copy) come before the next dump as one line "raw: …" with escapes spelled
 *   out (\e, \a, \xNN); with RAMPART_UI_TIMING=FILE set, each key's handling and
 *   drawing time goes to FILE ("key_us N"), then the peak RSS ("vmhwm_kb N").
 * - Profiles (opt->profiles set): `:profile NAME` switches the console to another
 *   account. Refused, with the reason in the status line, while a sync runs or an
 *   overlay is open (a form's edits would be lost). Otherwise the hooks load the
 *   profile (its configuration read again, its key resolved, its cache opened)
 *   while the current one stays open; when that fails the console stays where it
 *   is and says why. When it works, a console on the new profile replaces the old
 *   one (the old one's agent stopped, its cache released through the hooks), on the
 *   same screen, the terminal and (headless) the script going on. opt->profile,
 *   when set, is shown in the header.
 * - Returns a process exit status (0 quit normally, 1 failure, 2 usage, a bad
 *   script or no terminal; 128 + the signal when SIGINT, SIGTERM, SIGHUP or SIGQUIT
 *   ended it) and fills err on failure.
 */
#ifndef RAMPART_UI_H
#define RAMPART_UI_H

#include <stdbool.h>
#include <stdio.h>

#include "rampart/api.h"
#include "rampart/error.h"
#include "rampart/store.h"
#include "rampart/sync.h"

/* The most of the budget's share an automatic pull may take. */
#define UI_AUTO_PULL_SHARE 0.1

typedef struct ui_options ui_options;

/* The terminal, given back while a command that may ask the user something runs
 * (a key_command asking for a passphrase); both no-ops headless. */
typedef struct ui_term_hold {
    void (*pause)(void *ctx);
    void (*resume)(void *ctx);
    void *ctx;
} ui_term_hold;

/* How the console switches profiles (`:profile NAME`), provided by its caller. */
typedef struct ui_profiles {
    /* Load profile `name` into options the console can run on (*next, owned by the
     * caller's side), leaving the current profile open and in use. `term` gives the
     * terminal back around anything that may ask the user. An error with a message
     * for the status line when it cannot. */
    error_code (*open)(void *ctx, const char *name, const ui_term_hold *term,
                       const ui_options **next, error_info *err);
    /* After a successful open: `keep` true, the console now runs on *next (release
     * the profile it left); false, it stayed (release *next). */
    void (*finish)(void *ctx, bool keep);
    void *ctx;
} ui_profiles;

struct ui_options {
    store *st;               /* the cache, owned by the caller, used by the ui thread */
    const char *db_path;     /* the same cache's path: the sync worker and the agent
                                open their own handles */
    bool remote;             /* a remote is configured (else `s` explains how) */
    bool sandbox;            /* that remote is --sandbox's private server: the header
                                says so, so nobody mistakes it for production */
    api_config api;          /* how to reach it (strings borrowed for the whole run),
                                its low-speed limit included */
    sync_budget budget;      /* the account's request budget and the sync's share */
    double deadline_s;       /* a whole sync's deadline (0: none) */
    double max_backoff_s;    /* the longest pause after a failure (0: the engine's) */
    long long rotate_quiet_s, rotate_keep_s; /* sync_options' (0: the engine's) */
    long long rotate_grace_s;                /* 'T': the grace period (rotate_grace) */
    char rotate_exec[1025];                  /* 'T': the command (rotate_exec; "" none) */
    double auto_pull_s;      /* an idle console pulls this often (0: never); those
                                pulls take at most UI_AUTO_PULL_SHARE of the budget */
    bool readonly;           /* hide and refuse every mutating key */
    const char *readonly_why; /* why, said when a key is refused: NULL "started
                                 with --readonly" (a follower: its setting) */
    bool ascii;              /* no UTF-8 line drawing even when the locale has it */
    bool no_color;           /* also set when NO_COLOR is in the environment */
    bool agent;              /* start the local agent endpoint while open */
    const char *agent_listen;/* NULL: the agent's default socket */
    /* headless */
    const char *script;      /* path of a key script; NULL: a real terminal */
    FILE *dump;              /* where dumps go (headless) */
    int width, height;       /* headless screen size; 0: 80x24 */
    /* profiles */
    const char *profile;     /* the profile shown in the header; NULL: none shown */
    const ui_profiles *profiles; /* NULL: `:profile` says there is nothing to switch */
};

/* Run the console. See the contract for the exit status. */
int ui_run(const ui_options *opt, error_info *err);

#endif

/*
 * ui: the console (ncurses). The only public entry of the ui/ folder; everything
 * else under ui/ is reached through the ui_*.h headers by the folder itself.
 *
 * - ui_run takes over the terminal until the user quits and restores it on every
 *   exit path (quit, error, SIGINT, SIGTERM, SIGHUP, SIGQUIT). While it owns the
 *   terminal it never prints to stdout or stderr: errors go to its log view and
 *   status line.
 * - Headless (opt->script set): no terminal; keys come from the script and the
 *   screen is a `width` x `height` text grid drawn by the same code, so a dump is
 *   what a terminal shows.
 * - Sync status: the header and the log view name the cause of a wait or a
 *   failure from the engine's typed progress and report (rampart/ui_sync_text.h);
 *   "synced 12s ago" comes from the console's last run or the cache's
 *   STORE_META_LAST_SYNC.
 * - Idle auto-pull (opt->auto_pull_s > 0, a remote, not read-only): with no sync,
 *   overlay, prompt or key for a few seconds, once auto_pull_s passed since the
 *   last sync known or the start, a pull (no push) taking at most
 *   UI_AUTO_PULL_SHARE of the budget; its outcome goes to the header and the log.
 * - Profiles (opt->profiles): `:profile NAME` loads the profile through the hooks
 *   while the current one stays open, then replaces the console on the same
 *   screen; refused while a sync runs or an overlay is open, and any failure
 *   leaves the console as it was, saying why.
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
    const char *impact_log;  /* access logs (words) whose clients the pending view
                                says the queue would flip; NULL or "": none */
    /* headless */
    const char *script;      /* path of a key script; NULL: a real terminal */
    FILE *dump;              /* where dumps go (headless) */
    int width, height;       /* headless screen size; 0: 80x24 */
    /* profiles */
    const char *profile;     /* the profile shown in the header; NULL: none shown */
    int profile_color;       /* its name's colour: config_color's index (0: none, 1
                                red, 2 green, 3 yellow, 4 blue, 5 magenta, 6 cyan) */
    const ui_profiles *profiles; /* NULL: `:profile` says there is nothing to switch */
};

/*
 * Run the console. Returns a process exit status (0 quit normally, 1 failure, 2
 * usage, a bad script or no terminal; 128 + the signal when SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT ended it) and fills err on failure.
 * A script is one step per line ('#' comments): `key NAME…` (a character, or <Up>
 * <Down> <Left> <Right> <PgUp> <PgDn> <Home> <End> <Enter> <Esc> <Tab> <BTab>
 * <Space> <Backspace> <Del> <C-x> <F1>…), `type TEXT`, `resize WxH`, `wait-sync`
 * (until a running sync ends), `wait-for TEXT` (other threads' events handled
 * until the screen shows TEXT; a failure after 30 s), `tick SECONDS` (the clock,
 * which otherwise stands still headless, moves on), `dump` (the screen to
 * opt->dump, trailing spaces trimmed, then a "----" line), `repeat N key NAME`.
 * A bad step is ERROR_INVALID naming the line. Bytes queued for the terminal
 * itself (an OSC 52 copy) come before the next dump as a line "raw: …" with
 * escapes spelled out (\e, \a, \xNN). With RAMPART_UI_TIMING=FILE, each key's
 * handling and drawing time goes to FILE ("key_us N"), then the peak RSS
 * ("vmhwm_kb N").
 */
int ui_run(const ui_options *opt, error_info *err);

#endif

/* `rampart tui`: the console (also `rampart` with no command, on a terminal). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_follower.h"
#include "cli_sync.h"
#include "rampart/cli.h"
#include "rampart/ui.h"

static int tui_run(cli_ctx *ctx, const char *path, int argc, char **argv);

static const cli_command tui_command = {
    "tui", tui_run,
    "[--readonly] [--ascii] [--no-color] [--no-agent] [--headless SCRIPT [--size WxH]]",
    "The console: browse, create, delete and sync rules and credentials.",
    "Options:\n"
    "  --readonly         browse only: every key that changes data or shows a token is\n"
    "                     hidden and refused\n"
    "  --ascii            no UTF-8 line drawing (also when the locale is not UTF-8)\n"
    "  --no-color         no colours (also when NO_COLOR is set); selection and marks\n"
    "                     stay visible as '>' and '*'\n"
    "  --no-agent         do not serve the local agent endpoint while open\n"
    "  --headless SCRIPT  no terminal: run the key script, print the screens it dumps\n"
    "  --size WxH         the headless screen (default 80x24)\n"
    "\n"
    "Keys: ? lists them for the current view; : opens the command line (:help);\n"
    ":profile NAME switches to another profile (rampart profiles lists them).\n"
    "Script steps (one per line, # comments): key NAME..., type TEXT, repeat N key\n"
    "NAME..., resize WxH, wait-sync (until a running sync ends), wait-for TEXT (until\n"
    "the screen shows TEXT, at most 30 s), tick SECONDS (a headless console's clock\n"
    "stands still; this moves it on: ages, countdowns, the idle auto-pull), dump.\n"
    "Names: a character, or <Up> <Down> <PgUp> <PgDn> <Home> <End> <Enter> <Esc> <Tab>\n"
    "<BTab> <Space> <Backspace> <Del> <C-x> <F1>.\n"
    "\n"
    "An idle console with a remote pulls every auto_pull seconds (default 300; 0: off),\n"
    "never while a form or prompt is open, with at most a tenth of the budget.\n",
    .min_operands = 0, .max_operands = 0};

/* "80x24" into width and height. */
static bool parse_size(const char *text, int *w, int *h)
{
    char *end;
    long lw = strtol(text, &end, 10);
    if (end == text || *end != 'x')
        return false;
    const char *hs = end + 1;
    long lh = strtol(hs, &end, 10);
    if (end == hs || *end || lw < 1 || lw > 1000 || lh < 1 || lh > 1000)
        return false;
    *w = (int)lw;
    *h = (int)lh;
    return true;
}

static bool no_color_env(void)
{
    const char *v = getenv("NO_COLOR");
    return v && *v;
}

/* The sync's budget, deadlines and low-speed limit (cli_sync_settings: the same as
 * the command line's), and the idle auto-pull's interval, from the configuration. */
static void tui_sync_settings(const config *cfg, ui_options *o)
{
    sync_options so = {0};
    cli_sync_settings(cfg, &so, &o->api);
    o->budget = so.budget;
    o->deadline_s = so.deadline_s;
    o->max_backoff_s = so.max_backoff_s;
    o->rotate_quiet_s = so.rotate_quiet_s;
    o->rotate_keep_s = so.rotate_keep_s;
    o->rotate_grace_s = config_number(cfg, CONFIG_ROTATE_GRACE);
    snprintf(o->rotate_exec, sizeof o->rotate_exec, "%s", config_get(cfg, CONFIG_ROTATE_EXEC));
    o->auto_pull_s = (double)config_number(cfg, CONFIG_AUTO_PULL);
    o->profile_color = config_color(cfg, CONFIG_PROFILE_COLOR);
}

/* What the console shows and how it reaches the remote, from one profile's
 * configuration and cache; the display options (`base`) stay as they were. */
static void fill_options(const config *cfg, store *st, bool sandbox, const ui_options *base,
                         ui_options *o)
{
    *o = *base;
    o->st = st;
    o->db_path = config_get(cfg, CONFIG_DB);
    o->impact_log = config_get(cfg, CONFIG_IMPACT_LOG);
    o->remote = config_remote_configured(cfg);
    o->sandbox = sandbox;
    o->api = (api_config){0};
    o->api.base_url = config_get(cfg, CONFIG_API_URL);
    o->api.api_key = config_get(cfg, CONFIG_API_KEY);
    o->api.version_header = config_get(cfg, CONFIG_VERSION_HEADER);
    tui_sync_settings(cfg, o);
    /* A single account needs no name; the sandbox says so itself. */
    o->profile = cfg->nprofiles > 0 && !sandbox ? config_profile(cfg) : NULL;
}

/* The key now, when the console may sync (not read-only): a key_command runs
 * before the console opens, or (a switch) with the terminal given back. */
static error_code console_key(config *cfg, bool readonly, const ui_term_hold *term,
                              error_info *e)
{
    bool runs = !readonly && config_remote_configured(cfg) &&
                !config_get(cfg, CONFIG_API_KEY)[0];
    if (!runs)
        return ERROR_OK;
    if (term && term->pause)
        term->pause(term->ctx);
    error_code rc = config_resolve_key(cfg, false, e);
    if (term && term->resume)
        term->resume(term->ctx);
    return rc;
}

/* ---- `:profile NAME`: the console's hooks (ui.h) ---------------------------------- */

/* One profile the console runs on, after a switch: its configuration, its cache and
 * the options that borrow both. The first profile is the command line's own
 * (ctx->cfg, ctx->st) and is not one of these. */
typedef struct tui_profile {
    config cfg;
    store *st;
    ui_options o;
} tui_profile;

typedef struct tui_switch {
    cli_ctx *ctx;
    const ui_options *base;
    ui_profiles hooks;
    tui_profile *current; /* NULL: still the first profile */
    tui_profile *next;    /* opened, not yet taken */
} tui_switch;

static const char *tui_getenv(void *unused, const char *name)
{
    (void)unused;
    return getenv(name);
}

static void profile_free(tui_profile *p)
{
    if (!p)
        return;
    store_close(p->st);
    config_clear(&p->cfg);
    free(p);
}

/* A profile whose cache is the one open now would mix two accounts in one cache
 * (RAMPART_DB or --db name one file for every profile). */
static error_code check_other_cache(const tui_switch *sw, const tui_profile *p,
                                    error_info *e)
{
    const config *now = sw->current ? &sw->current->cfg : &sw->ctx->cfg;
    if (strcmp(config_get(now, CONFIG_DB), config_get(&p->cfg, CONFIG_DB)) != 0)
        return ERROR_OK;
    return error_set(e, ERROR_CONFIG,
                     "profile %s would use this console's cache (%s, from %s): two accounts "
                     "must not share one",
                     config_profile(&p->cfg), config_get(&p->cfg, CONFIG_DB),
                     config_source_name(p->cfg.sources[CONFIG_DB]));
}

static error_code switch_open(void *ctx, const char *name, const ui_term_hold *term,
                              const ui_options **next, error_info *e)
{
    tui_switch *sw = ctx;
    tui_profile *p = calloc(1, sizeof *p);
    if (!p)
        return error_set(e, ERROR_NOMEM, "out of memory");
    error_code rc = config_load_profile(&p->cfg, name, tui_getenv, NULL, e);
    if (rc == ERROR_OK)
        rc = config_copy_flags(&p->cfg, &sw->ctx->cfg, e);
    if (rc == ERROR_OK)
        rc = check_other_cache(sw, p, e);
    if (rc == ERROR_OK)
        rc = console_key(&p->cfg, sw->base->readonly, term, e);
    if (rc == ERROR_OK)
        rc = store_open(config_get(&p->cfg, CONFIG_DB), 0, &p->st, e);
    if (rc != ERROR_OK) {
        profile_free(p);
        return rc;
    }
    fill_options(&p->cfg, p->st, false, sw->base, &p->o);
    sw->next = p;
    *next = &p->o;
    return ERROR_OK;
}

static void switch_finish(void *ctx, bool keep)
{
    tui_switch *sw = ctx;
    if (!keep) {
        profile_free(sw->next);
        sw->next = NULL;
        return;
    }
    if (sw->current) {
        profile_free(sw->current);
    } else { /* the command line's own: its cache closed, its key wiped */
        store_close(sw->ctx->st);
        sw->ctx->st = NULL;
        config_clear(&sw->ctx->cfg);
    }
    sw->current = sw->next;
    sw->next = NULL;
}

static int tui_run(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    bool readonly = false, ascii = false, no_color = false, no_agent = false;
    const char *script = NULL, *size = NULL;
    const cli_opt opts[] = {
        {"readonly", CLI_OPT_FLAG, &readonly}, {"ascii", CLI_OPT_FLAG, &ascii},
        {"no-color", CLI_OPT_FLAG, &no_color}, {"no-agent", CLI_OPT_FLAG, &no_agent},
        {"headless", CLI_OPT_STRING, &script}, {"size", CLI_OPT_STRING, &size},
    };
    int first, rc;
    if (!cli_parse(ctx, path, &tui_command, opts, sizeof opts / sizeof opts[0], argc, argv,
                   &first, &rc))
        return rc;
    char setting[CONFIG_PATH_MAX + 64], follower_why[CONFIG_PATH_MAX + 128];
    cli_follower_setting(ctx, setting, sizeof setting);
    snprintf(follower_why, sizeof follower_why, "a follower: %s", setting);
    ui_options o = {
        .readonly = readonly || cli_follower(ctx), /* a follower changes nothing */
        .readonly_why = !readonly && cli_follower(ctx) ? follower_why : NULL,
        .ascii = ascii,
        .no_color = no_color || no_color_env(),
        .agent = !no_agent,
        .script = script,
        .dump = ctx->out,
    };
    if (size && !script)
        return cli_usage_error(ctx, path, "--size is for --headless (a terminal has its own)");
    if (size && !parse_size(size, &o.width, &o.height))
        return cli_usage_error(ctx, path, "--size '%s' is not WIDTHxHEIGHT (1x1 to 1000x1000)",
                               size);
    error_info e = {0};
    if (console_key(&ctx->cfg, readonly, NULL, &e) != ERROR_OK)
        return cli_fail(ctx, &e);
    store *st = cli_store(ctx);
    if (!st)
        return ctx->store_exit;
    bool sandbox = ctx->sandbox_pid != 0;
    tui_switch sw = {.ctx = ctx, .base = &o};
    sw.hooks = (ui_profiles){switch_open, switch_finish, &sw};
    o.profiles = sandbox ? NULL : &sw.hooks;
    ui_options start;
    fill_options(&ctx->cfg, st, sandbox, &o, &start);
    rc = ui_run(&start, &e);
    profile_free(sw.current);
    profile_free(sw.next);
    if (e.code != ERROR_OK) {
        fprintf(ctx->err, "%s: ", ctx->program);
        cli_put_cell(ctx->err, e.msg, 0, 0);
        fputc('\n', ctx->err);
    }
    return rc;
}

int cli_tui(cli_ctx *ctx, const char *path, int argc, char **argv)
{
    return tui_run(ctx, path, argc, argv);
}

/*
 * The headless runner: the console driven by a key script, its screen dumped as
 * text (ui.h has the syntax). The whole script is parsed before the first key, so
 * a bad line runs nothing. Per-key times for benchmarks go to the file named by
 * RAMPART_UI_TIMING (one "key_us N" line per key, then "vmhwm_kb N" at the end).
 */
#include "app_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../widgets/ui_text.h"
#include "rampart/buf.h"

enum { LINE_MAX_BYTES = 4096, KEYS_PER_STEP = 64 };

typedef enum step_kind {
    STEP_KEYS, STEP_RESIZE, STEP_WAIT_SYNC, STEP_DUMP, STEP_TICK, STEP_WAIT_FOR
} step_kind;

enum { WAIT_FOR_MS = 30000, WAIT_FOR_MAX = 256 };

typedef struct step {
    step_kind kind;
    int keys[KEYS_PER_STEP * 4]; /* `type` may take a line of text */
    size_t nkeys;
    long repeat;
    int width, height;
    double seconds;              /* tick */
    char text[WAIT_FOR_MAX];     /* wait-for */
} step;

/* The headless console's clock: the wall clock when it started, moved only by
 * `tick`, so ages, countdowns and the idle auto-pull are the same on every run. */
typedef struct fake_clock {
    double now;
} fake_clock;

static double fake_now(void *ctx)
{
    return ((const fake_clock *)ctx)->now;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `tick SECONDS`: 0 to a week, fractions allowed. */
static error_code parse_tick(const char *rest, step *st, error_info *err)
{
    char *end;
    errno = 0;
    double s = strtod(rest, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == rest || *end || errno || !(s >= 0) || s > 604800)
        return error_set(err, ERROR_INVALID, "'tick' needs seconds from 0 to 604800: "
                         "tick SECONDS");
    st->seconds = s;
    return ERROR_OK;
}

typedef struct script {
    step *steps;
    size_t n, cap;
} script;

static error_code add_step(script *s, const step *st, error_info *err)
{
    if (!buf_grow_array((void **)&s->steps, &s->cap, s->n + 1, sizeof *s->steps))
        return error_set(err, ERROR_NOMEM, "out of memory");
    s->steps[s->n++] = *st;
    return ERROR_OK;
}

/* "80x24" into width and height (1..1000 each); ERROR_INVALID otherwise. */
static error_code ui_headless_size(const char *text, int *width, int *height,
                                   error_info *err)
{
    char *end;
    errno = 0;
    long w = strtol(text, &end, 10);
    if (end == text || *end != 'x')
        return error_set(err, ERROR_INVALID, "size '%s' is not WIDTHxHEIGHT (e.g. 80x24)", text);
    const char *hs = end + 1;
    long h = strtol(hs, &end, 10);
    if (end == hs || *end != '\0' || errno)
        return error_set(err, ERROR_INVALID, "size '%s' is not WIDTHxHEIGHT (e.g. 80x24)", text);
    if (w < 1 || w > 1000 || h < 1 || h > 1000)
        return error_set(err, ERROR_INVALID, "size '%s' is out of range (1x1 to 1000x1000)",
                         text);
    *width = (int)w;
    *height = (int)h;
    return ERROR_OK;
}

/* `key NAME…` after the word: names separated by spaces. */
static error_code parse_keys(char *rest, step *st, error_info *err)
{
    char *save = NULL;
    for (char *name = strtok_r(rest, " \t", &save); name; name = strtok_r(NULL, " \t", &save)) {
        int key = ui_key_parse(name);
        if (key == UI_KEY_NONE)
            return error_set(err, ERROR_INVALID, "unknown key name '%s' (a character, or "
                             "<Up> <PgDn> <Enter> <Esc> <C-x> <F1> …)", name);
        if (st->nkeys >= KEYS_PER_STEP)
            return error_set(err, ERROR_INVALID, "more than %d keys in one step",
                             KEYS_PER_STEP);
        st->keys[st->nkeys++] = key;
    }
    if (st->nkeys == 0)
        return error_set(err, ERROR_INVALID, "'key' needs at least one key name");
    return ERROR_OK;
}

static error_code parse_type(const char *text, step *st, error_info *err)
{
    while (*text) {
        uint32_t cp;
        size_t n = ui_text_decode(text, &cp);
        if (n == 0)
            return error_set(err, ERROR_INVALID, "'type' text is not valid UTF-8");
        if (st->nkeys >= sizeof st->keys / sizeof st->keys[0])
            return error_set(err, ERROR_INVALID, "'type' text is too long");
        st->keys[st->nkeys++] = (int)cp;
        text += n;
    }
    return ERROR_OK;
}

static error_code parse_repeat(char *rest, step *st, error_info *err)
{
    char *end;
    long n = strtol(rest, &end, 10);
    if (end == rest || n < 1 || n > 100000000)
        return error_set(err, ERROR_INVALID, "'repeat' needs a count from 1 up: repeat N key NAME");
    while (*end == ' ' || *end == '\t')
        end++;
    if (strncmp(end, "key ", 4) != 0)
        return error_set(err, ERROR_INVALID, "'repeat N' is followed by 'key NAME…'");
    st->repeat = n;
    return parse_keys(end + 4, st, err);
}

static error_code parse_line(char *line, step *st, bool *empty, error_info *err)
{
    memset(st, 0, sizeof *st);
    st->repeat = 1;
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    *empty = *p == '\0' || *p == '#';
    if (*empty)
        return ERROR_OK;
    size_t wlen = strcspn(p, " \t");
    char *rest = p + wlen;
    if (*rest)
        *rest++ = '\0';
    if (strcmp(p, "key") == 0)
        return parse_keys(rest, st, err);
    if (strcmp(p, "type") == 0)
        return parse_type(rest, st, err);
    if (strcmp(p, "repeat") == 0)
        return parse_repeat(rest, st, err);
    st->kind = strcmp(p, "dump") == 0        ? STEP_DUMP
               : strcmp(p, "wait-sync") == 0 ? STEP_WAIT_SYNC
               : strcmp(p, "resize") == 0    ? STEP_RESIZE
               : strcmp(p, "tick") == 0      ? STEP_TICK
               : strcmp(p, "wait-for") == 0  ? STEP_WAIT_FOR
                                             : STEP_KEYS;
    if (st->kind == STEP_WAIT_FOR) {
        if (!*rest || strlen(rest) >= sizeof st->text)
            return error_set(err, ERROR_INVALID, "'wait-for' needs a text (at most %d bytes)",
                             WAIT_FOR_MAX - 1);
        memcpy(st->text, rest, strlen(rest) + 1);
        return ERROR_OK;
    }
    if (st->kind == STEP_RESIZE)
        return ui_headless_size(rest, &st->width, &st->height, err);
    if (st->kind == STEP_TICK)
        return parse_tick(rest, st, err);
    if (st->kind == STEP_KEYS)
        return error_set(err, ERROR_INVALID, "unknown step '%s' (key, type, repeat, resize, "
                         "wait-sync, wait-for, tick, dump)", p);
    return ERROR_OK;
}

static error_code parse_script(const char *path, script *s, error_info *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return error_set(err, ERROR_INVALID, "cannot open the script %s: %s", path,
                         strerror(errno));
    char line[LINE_MAX_BYTES];
    error_code rc = ERROR_OK;
    for (int no = 1; rc == ERROR_OK && fgets(line, sizeof line, f); no++) {
        step st;
        bool empty;
        rc = parse_line(line, &st, &empty, err);
        if (rc != ERROR_OK)
            error_prefix(err, "%s line %d", path, no);
        else if (!empty)
            rc = add_step(s, &st, err);
    }
    if (rc == ERROR_OK && ferror(f))
        rc = error_set(err, ERROR_IO, "cannot read the script %s", path);
    fclose(f);
    return rc;
}

/* ---- running ------------------------------------------------------------------ */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void press(ui_app *app, int key, FILE *timing)
{
    double t0 = timing ? now_us() : 0;
    ui_app_key(app, key);
    ui_app_drain(app);
    ui_app_render(app);
    if (timing)
        fprintf(timing, "key_us %.2f\n", now_us() - t0);
}

/* Raw terminal bytes (an OSC 52 copy) shown as text, escapes spelled out. */
static void dump_raw(ui_app *app, FILE *out)
{
    size_t n;
    const char *raw = ui_app_raw_peek(app, &n);
    if (!raw)
        return;
    fputs("raw: ", out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == 27)
            fputs("\\e", out);
        else if (c == 7)
            fputs("\\a", out);
        else if (c < 0x20 || c >= 0x7f || c == '\\')
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('\n', out);
    ui_app_raw_clear(app);
}

/* Whether a row of the screen holds `text`. */
static bool screen_shows(const ui_canvas *c, const char *text)
{
    char row[4096];
    for (int y = 0; y < c->height; y++) {
        ui_canvas_row_text(c, y, row, sizeof row);
        if (strstr(row, text))
            return true;
    }
    return false;
}

/* `wait-for TEXT`: handle other threads' events as they come (woken by their pipe,
 * never a guessed sleep) until the screen shows TEXT; ERROR_IO after 30 s. */
static error_code wait_for(ui_app *app, const char *text, error_info *err)
{
    for (int waited = 0; waited < WAIT_FOR_MS; waited += 100) {
        ui_app_drain(app);
        ui_app_render(app);
        if (screen_shows(ui_app_canvas(app), text))
            return ERROR_OK;
        struct pollfd p = {.fd = ui_app_wake_fd(app), .events = POLLIN};
        poll(&p, 1, 100);
    }
    return error_set(err, ERROR_IO, "wait-for: '%s' not shown within %d s", text,
                     WAIT_FOR_MS / 1000);
}

static error_code run_step(ui_app **appp, const step *st, fake_clock *clock, FILE *dump,
                           FILE *timing, error_info *err)
{
    ui_app *app = *appp;
    switch (st->kind) {
    case STEP_WAIT_FOR:
        return wait_for(app, st->text, err);
    case STEP_TICK:
        clock->now += st->seconds;
        ui_app_drain(app);
        ui_app_render(app);
        return ERROR_OK;
    case STEP_KEYS:
        for (long r = 0; r < st->repeat && !ui_app_quitting(app, NULL); r++) {
            for (size_t i = 0; i < st->nkeys && !ui_app_quitting(app, NULL); i++) {
                press(app, st->keys[i], timing);
                ui_app *now = ui_app_follow_profile(app, NULL);
                if (now != app)
                    ui_app_render(now); /* as press does after a key */
                *appp = app = now;
            }
        }
        return ERROR_OK;
    case STEP_RESIZE:
        if (ui_app_resize(app, st->width, st->height, err) != ERROR_OK)
            return err->code;
        ui_app_render(app);
        return ERROR_OK;
    case STEP_WAIT_SYNC:
        ui_sync_join(app, false);
        ui_app_drain(app);
        ui_app_render(app);
        return ERROR_OK;
    case STEP_DUMP:
        ui_app_drain(app);
        ui_app_render(app);
        dump_raw(app, dump);
        ui_canvas_dump(ui_app_canvas(app), dump);
        fflush(dump);
        return ERROR_OK;
    }
    return ERROR_OK;
}

static void peak_rss(FILE *timing)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            fprintf(timing, "vmhwm_kb %ld\n", kb);
    }
    fclose(f);
}

error_code ui_headless_run(ui_app **appp, const ui_options *opt, error_info *err)
{
    ui_app *app = *appp;
    script s = {0};
    if (parse_script(opt->script, &s, err) != ERROR_OK) {
        free(s.steps);
        return err->code;
    }
    FILE *timing = NULL;
    const char *tpath = getenv("RAMPART_UI_TIMING");
    if (tpath && *tpath && !(timing = fopen(tpath, "w"))) {
        free(s.steps);
        return error_set(err, ERROR_IO, "cannot write %s: %s", tpath, strerror(errno));
    }
    FILE *dump = opt->dump ? opt->dump : stdout;
    fake_clock clock = {wall_seconds()};
    ui_app_set_clock(app, fake_now, &clock);
    ui_app_tick(app);
    ui_app_render(app);
    error_code rc = ERROR_OK;
    for (size_t i = 0; i < s.n && rc == ERROR_OK && !ui_app_quitting(app, NULL); i++) {
        rc = run_step(&app, &s.steps[i], &clock, dump, timing, err);
        *appp = app;
        /* As the terminal's loop does after whatever woke it. */
        if (rc == ERROR_OK && ui_app_tick(app))
            ui_app_render(app);
    }
    if (timing) {
        peak_rss(timing);
        fclose(timing);
    }
    free(s.steps);
    return rc;
}

/*
 * The form model (ui_form.h): fields, focus, checks and submit. Plain data, no
 * curses and no store, so the unit tests drive it key by key.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/ui_key.h"
#include "rampart/ui_form.h"

#include "form_internal.h"

/* ---- checks ---------------------------------------------------------------- */

static void check_list(form_field *fd)
{
    error_clear(&fd->err);
    const char **kept = malloc((fd->n_lines ? fd->n_lines : 1) * sizeof *kept);
    size_t n = 0;
    for (size_t i = 0; i < fd->n_lines; i++) {
        error_clear(&fd->line_err[i]);
        if (fd->lines[i].len == 0)
            continue;
        if (fd->check &&
            fd->check(fd->check_ctx, fd->lines[i].buf, &fd->line_err[i]) != ERROR_OK &&
            fd->err.code == ERROR_OK)
            fd->err = fd->line_err[i];
        if (kept)
            kept[n++] = fd->lines[i].buf;
    }
    if (!kept && fd->err.code == ERROR_OK)
        error_set(&fd->err, ERROR_NOMEM, "out of memory");
    if (fd->err.code == ERROR_OK && fd->check_all)
        fd->check_all(fd->check_ctx, kept, n, &fd->err);
    free(kept);
}

static void check_field(form_field *fd)
{
    switch (fd->kind) {
    case UI_FORM_TEXT:
    case UI_FORM_POLICY:
        error_clear(&fd->err);
        if (fd->check)
            fd->check(fd->check_ctx, fd->text.buf, &fd->err);
        return;
    case UI_FORM_CHOICE:
        error_clear(&fd->err);
        return;
    case UI_FORM_LIST:
        check_list(fd);
        return;
    }
}

static void changed(ui_form *f, form_field *fd)
{
    fd->touched = true;
    f->message[0] = '\0';
    check_field(fd);
}

/* ---- building ---------------------------------------------------------------- */

error_code ui_form_new(const char *title, ui_form **out, error_info *err)
{
    *out = NULL;
    ui_form *f = calloc(1, sizeof *f);
    if (!f || !(f->title = strdup(title))) {
        free(f);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *out = f;
    return ERROR_OK;
}

static void field_free(form_field *fd)
{
    free(fd->label);
    ui_line_free(&fd->text);
    for (size_t i = 0; i < fd->n_options; i++)
        free(fd->options[i]);
    free(fd->options);
    free(fd->ids);
    for (size_t i = 0; i < fd->n_lines; i++)
        ui_line_free(&fd->lines[i]);
    free(fd->lines);
    free(fd->line_err);
    memset(fd, 0, sizeof *fd);
}

void ui_form_free(ui_form *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->count; i++)
        field_free(&f->fields[i]);
    free(f->fields);
    free(f->title);
    free(f);
}

/* A new zeroed field at the end, labelled; NULL when out of memory. */
static form_field *add_field(ui_form *f, ui_form_kind kind, const char *label)
{
    if (!buf_grow_array((void **)&f->fields, &f->cap, f->count + 1, sizeof *f->fields))
        return NULL;
    form_field *fd = &f->fields[f->count];
    memset(fd, 0, sizeof *fd);
    fd->kind = kind;
    if (!(fd->label = strdup(label)))
        return NULL;
    return fd;
}

static error_code added(ui_form *f, form_field *fd, error_code rc, error_info *err)
{
    if (rc != ERROR_OK || !fd) {
        if (fd)
            field_free(fd);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    check_field(fd);
    f->count++;
    return ERROR_OK;
}

error_code ui_form_add_text(ui_form *f, const char *label, const char *initial,
                            size_t max_bytes, ui_form_check check, const void *ctx,
                            error_info *err)
{
    form_field *fd = add_field(f, UI_FORM_TEXT, label);
    error_code rc = fd ? ui_line_init(&fd->text, initial, max_bytes, err) : ERROR_NOMEM;
    if (fd) {
        fd->check = check;
        fd->check_ctx = ctx;
    }
    return added(f, fd, rc, err);
}

error_code ui_form_add_choice(ui_form *f, const char *label, const char *const *options,
                              size_t count, size_t selected, error_info *err)
{
    form_field *fd = add_field(f, UI_FORM_CHOICE, label);
    error_code rc = fd && count ? ERROR_OK : ERROR_NOMEM;
    if (rc == ERROR_OK && !(fd->options = calloc(count, sizeof *fd->options)))
        rc = ERROR_NOMEM;
    for (size_t i = 0; rc == ERROR_OK && i < count; i++) {
        if (!(fd->options[i] = strdup(options[i])))
            rc = ERROR_NOMEM;
        fd->n_options = i + 1;
    }
    if (rc == ERROR_OK) {
        fd->choice = selected < count ? selected : 0;
        snprintf(fd->hint, sizeof fd->hint, "Left/Right or a first letter to change");
    }
    return added(f, fd, rc, err);
}

error_code ui_form_add_policy(ui_form *f, const char *label, const char *initial,
                              const char (*ids)[MODEL_ID_MAX + 1], size_t count,
                              ui_form_check check, const void *ctx, error_info *err)
{
    form_field *fd = add_field(f, UI_FORM_POLICY, label);
    error_code rc = fd ? ui_line_init(&fd->text, initial, MODEL_ID_MAX, err) : ERROR_NOMEM;
    if (rc == ERROR_OK && count && !(fd->ids = malloc(count * sizeof *fd->ids)))
        rc = ERROR_NOMEM;
    if (rc == ERROR_OK) {
        if (count)
            memcpy(fd->ids, ids, count * sizeof *fd->ids);
        fd->n_ids = count;
        fd->check = check;
        fd->check_ctx = ctx;
        if (count)
            snprintf(fd->hint, sizeof fd->hint, "Up/Down: %zu known polic%s", count,
                     count == 1 ? "y" : "ies");
        else
            snprintf(fd->hint, sizeof fd->hint, "no policy in the cache yet: type its id");
    }
    return added(f, fd, rc, err);
}

/* Insert an empty line at `at`; false when full or out of memory. */
static bool list_insert(form_field *fd, size_t at)
{
    if (fd->n_lines >= fd->max_lines)
        return false;
    ui_line *lines = realloc(fd->lines, (fd->n_lines + 1) * sizeof *lines);
    if (lines)
        fd->lines = lines;
    error_info *errs = realloc(fd->line_err, (fd->n_lines + 1) * sizeof *errs);
    if (errs)
        fd->line_err = errs;
    ui_line fresh;
    if (!lines || !errs || ui_line_init(&fresh, "", fd->line_max, NULL) != ERROR_OK)
        return false;
    memmove(&fd->lines[at + 1], &fd->lines[at], (fd->n_lines - at) * sizeof *lines);
    memmove(&fd->line_err[at + 1], &fd->line_err[at], (fd->n_lines - at) * sizeof *errs);
    fd->lines[at] = fresh;
    error_clear(&fd->line_err[at]);
    fd->n_lines++;
    return true;
}

static void list_remove(form_field *fd, size_t at)
{
    ui_line_free(&fd->lines[at]);
    memmove(&fd->lines[at], &fd->lines[at + 1], (fd->n_lines - at - 1) * sizeof *fd->lines);
    memmove(&fd->line_err[at], &fd->line_err[at + 1],
            (fd->n_lines - at - 1) * sizeof *fd->line_err);
    fd->n_lines--;
}

error_code ui_form_add_list(ui_form *f, const char *label, size_t max_lines,
                            size_t max_bytes, ui_form_check check_line,
                            ui_form_list_check check_all, const void *ctx, error_info *err)
{
    form_field *fd = add_field(f, UI_FORM_LIST, label);
    error_code rc = ERROR_NOMEM;
    if (fd) {
        fd->max_lines = max_lines ? max_lines : 1;
        fd->line_max = max_bytes;
        fd->check = check_line;
        fd->check_all = check_all;
        fd->check_ctx = ctx;
        snprintf(fd->hint, sizeof fd->hint,
                 "Enter: new line; Backspace on an empty line removes it");
        rc = list_insert(fd, 0) ? ERROR_OK : ERROR_NOMEM;
    }
    return added(f, fd, rc, err);
}

/* ---- keys -------------------------------------------------------------------- */

/* The next editable field from the focus in direction `step` (+1, -1), wrapping
 * round; the focus stays when no other field is editable. */
static void focus_step(ui_form *f, size_t step)
{
    size_t at = f->focus;
    for (size_t n = 0; n < f->count; n++) {
        at = (at + step) % f->count;
        if (!f->fields[at].readonly) {
            f->focus = at;
            return;
        }
    }
}

static void focus_next(ui_form *f) { focus_step(f, 1); }

static void focus_prev(ui_form *f) { focus_step(f, f->count - 1); }

void ui_form_set_readonly(ui_form *f, size_t field)
{
    if (field >= f->count)
        return;
    form_field *fd = &f->fields[field];
    fd->readonly = true;
    snprintf(fd->hint, sizeof fd->hint, "read-only: it cannot change after creation");
    if (f->focus == field)
        focus_next(f);
}

error_code ui_form_set_lines(ui_form *f, size_t field, const char *const *lines,
                             size_t count, error_info *err)
{
    form_field *fd = field < f->count ? &f->fields[field] : NULL;
    if (!fd || fd->kind != UI_FORM_LIST)
        return error_set(err, ERROR_INVALID, "not a list field");
    while (fd->n_lines > 1)
        list_remove(fd, fd->n_lines - 1);
    ui_line_set(&fd->lines[0], "");
    for (size_t i = 0; i < count; i++) {
        if (i > 0 && !list_insert(fd, i))
            return error_set(err, ERROR_NOMEM, "at most %zu lines", fd->max_lines);
        ui_line_set(&fd->lines[i], lines[i]);
    }
    fd->line_focus = 0;
    check_field(fd);
    return ERROR_OK;
}

static ui_form_result submit(ui_form *f)
{
    f->tried = true;
    size_t bad = f->count;
    for (size_t i = 0; i < f->count; i++) {
        check_field(&f->fields[i]);
        if (f->fields[i].err.code != ERROR_OK && bad == f->count)
            bad = i;
    }
    if (bad == f->count) {
        f->message[0] = '\0';
        return UI_FORM_SUBMIT;
    }
    f->focus = bad;
    form_field *fd = &f->fields[bad];
    for (size_t i = 0; fd->kind == UI_FORM_LIST && i < fd->n_lines; i++) {
        if (fd->line_err[i].code != ERROR_OK) {
            fd->line_focus = i;
            break;
        }
    }
    snprintf(f->message, sizeof f->message, "not saved: fix the fields marked '!' first");
    return UI_FORM_REFUSED;
}

/* Up/Down in a POLICY field: the next known id starting with what was typed. */
static void cycle_policy(ui_form *f, form_field *fd, bool down)
{
    if (!fd->cycling) {
        fd->cycling = true;
        model_copy_text(fd->prefix, sizeof fd->prefix, fd->text.buf);
        for (size_t i = 0; i < fd->n_ids; i++) {
            if (strcmp(fd->ids[i], fd->text.buf) == 0)
                fd->prefix[0] = '\0'; /* a whole id: cycle through all */
        }
    }
    size_t plen = strlen(fd->prefix), cur = fd->n_ids;
    for (size_t i = 0; i < fd->n_ids; i++) {
        if (strcmp(fd->ids[i], fd->text.buf) == 0)
            cur = i;
    }
    for (size_t step = 1; step <= fd->n_ids; step++) {
        size_t i = cur == fd->n_ids ? (down ? step - 1 : fd->n_ids - step)
                   : down          ? (cur + step) % fd->n_ids
                                   : (cur + fd->n_ids - step) % fd->n_ids;
        if (strncmp(fd->ids[i], fd->prefix, plen) == 0) {
            ui_line_set(&fd->text, fd->ids[i]);
            changed(f, fd);
            return;
        }
    }
    snprintf(f->message, sizeof f->message, "no known policy starts with \"%s\"",
             fd->prefix);
}

static void choose(ui_form *f, form_field *fd, size_t i)
{
    fd->choice = i % fd->n_options;
    changed(f, fd);
}

static ui_form_result choice_key(ui_form *f, form_field *fd, int key)
{
    if (key == UI_KEY_LEFT)
        choose(f, fd, fd->choice + fd->n_options - 1);
    else if (key == UI_KEY_RIGHT || key == ' ')
        choose(f, fd, fd->choice + 1);
    else if (key > ' ' && key < 0x7F) {
        for (size_t i = 0; i < fd->n_options; i++) {
            if (fd->options[i][0] == key) {
                choose(f, fd, i);
                break;
            }
        }
    }
    return UI_FORM_CONTINUE;
}

static ui_form_result list_key(ui_form *f, form_field *fd, int key)
{
    ui_line *l = &fd->lines[fd->line_focus];
    if (key == UI_KEY_ENTER || key == '\n') {
        if (l->len == 0)
            return submit(f);
        if (list_insert(fd, fd->line_focus + 1))
            fd->line_focus++;
        else
            snprintf(f->message, sizeof f->message, "at most %zu lines", fd->max_lines);
        check_field(fd);
        return UI_FORM_CONTINUE;
    }
    if (key == UI_KEY_UP || key == UI_KEY_DOWN) {
        bool down = key == UI_KEY_DOWN;
        if (down && fd->line_focus + 1 < fd->n_lines)
            fd->line_focus++;
        else if (!down && fd->line_focus > 0)
            fd->line_focus--;
        else
            down ? focus_next(f) : focus_prev(f);
        return UI_FORM_CONTINUE;
    }
    if ((key == UI_KEY_BACKSPACE || key == 8 || key == UI_KEY_DEL) && l->len == 0 &&
        fd->n_lines > 1) {
        list_remove(fd, fd->line_focus);
        if (key != UI_KEY_DEL && fd->line_focus > 0)
            fd->line_focus--;
        if (fd->line_focus >= fd->n_lines)
            fd->line_focus = fd->n_lines - 1;
        fd->lines[fd->line_focus].cursor = fd->lines[fd->line_focus].len;
        changed(f, fd);
        return UI_FORM_CONTINUE;
    }
    if (ui_line_key(l, key) == UI_LINE_CHANGED)
        changed(f, fd);
    return UI_FORM_CONTINUE;
}

size_t ui_form_hints(const ui_form *f, ui_key_hint *out, size_t max)
{
    const form_field *fd = f->count ? &f->fields[f->focus] : NULL;
    bool editable = fd && !fd->readonly;
    bool new_line = editable && fd->kind == UI_FORM_LIST &&
                    fd->lines[fd->line_focus].len > 0;
    ui_key_hint all[6];
    size_t n = 0;
    all[n++] = (ui_key_hint){UI_KEY_ENTER, new_line ? "new line" : "save"};
    all[n++] = (ui_key_hint){UI_KEY_TAB, "next field"};
    all[n++] = (ui_key_hint){UI_KEY_ESC, "cancel"};
    if (editable && fd->kind == UI_FORM_POLICY && fd->n_ids)
        all[n++] = (ui_key_hint){UI_KEY_DOWN, "next known policy"};
    if (editable && fd->kind == UI_FORM_CHOICE)
        all[n++] = (ui_key_hint){' ', "next option"};
    all[n++] = (ui_key_hint){UI_KEY_BTAB, "previous field"};
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < k; i++)
        out[i] = all[i];
    return k;
}

ui_form_result ui_form_key(ui_form *f, int key)
{
    if (f->count == 0)
        return key == UI_KEY_ESC ? UI_FORM_CANCEL : UI_FORM_CONTINUE;
    form_field *fd = &f->fields[f->focus];
    bool up_down = key == UI_KEY_UP || key == UI_KEY_DOWN;
    if (!up_down)
        fd->cycling = false;
    switch (key) {
    case UI_KEY_ESC:
        return UI_FORM_CANCEL;
    case UI_KEY_TAB:
        focus_next(f);
        return UI_FORM_CONTINUE;
    case UI_KEY_BTAB:
        focus_prev(f);
        return UI_FORM_CONTINUE;
    default:
        break;
    }
    if (fd->readonly) /* focused only when nothing else is editable, or refused */
        return key == UI_KEY_ENTER || key == '\n' ? submit(f) : UI_FORM_CONTINUE;
    if (fd->kind == UI_FORM_LIST)
        return list_key(f, fd, key);
    if (key == UI_KEY_ENTER || key == '\n')
        return submit(f);
    if (up_down) {
        if (fd->kind == UI_FORM_POLICY && fd->n_ids)
            cycle_policy(f, fd, key == UI_KEY_DOWN);
        else
            key == UI_KEY_DOWN ? focus_next(f) : focus_prev(f);
        return UI_FORM_CONTINUE;
    }
    if (fd->kind == UI_FORM_CHOICE)
        return choice_key(f, fd, key);
    if (ui_line_key(&fd->text, key) == UI_LINE_CHANGED)
        changed(f, fd);
    return UI_FORM_CONTINUE;
}

/*
 * Reading a form (ui_form.h): its fields, values, reasons and message, as the
 * drawing, the record forms and the tests read them. No curses, no store.
 */
#include <stdarg.h>
#include <stdio.h>

#include "form_internal.h"

/* ---- reading ------------------------------------------------------------------ */

static const form_field *field_at(const ui_form *f, size_t i)
{
    return i < f->count ? &f->fields[i] : NULL;
}

/* The field when it is of `kind` (the accessors of one kind answer 0 or "" for
 * the others). */
static const form_field *field_of(const ui_form *f, size_t i, ui_form_kind kind)
{
    const form_field *fd = field_at(f, i);
    return fd && fd->kind == kind ? fd : NULL;
}

const char *ui_form_title(const ui_form *f) { return f->title; }
size_t ui_form_count(const ui_form *f) { return f->count; }
size_t ui_form_focus(const ui_form *f) { return f->focus; }

ui_form_kind ui_form_field_kind(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd ? fd->kind : UI_FORM_TEXT;
}

const char *ui_form_label(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd ? fd->label : "";
}

const char *ui_form_text(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    if (!fd)
        return "";
    switch (fd->kind) {
    case UI_FORM_CHOICE:
        return fd->options[fd->choice];
    case UI_FORM_LIST:
        return fd->lines[fd->line_focus].buf;
    default:
        return fd->text.buf;
    }
}

size_t ui_form_cursor(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    if (!fd || fd->kind == UI_FORM_CHOICE)
        return 0;
    return fd->kind == UI_FORM_LIST ? fd->lines[fd->line_focus].cursor : fd->text.cursor;
}

size_t ui_form_choice(const ui_form *f, size_t field)
{
    const form_field *fd = field_of(f, field, UI_FORM_CHOICE);
    return fd ? fd->choice : 0;
}

size_t ui_form_options(const ui_form *f, size_t field)
{
    const form_field *fd = field_of(f, field, UI_FORM_CHOICE);
    return fd ? fd->n_options : 0;
}

const char *ui_form_option(const ui_form *f, size_t field, size_t option)
{
    const form_field *fd = field_of(f, field, UI_FORM_CHOICE);
    return fd && option < fd->n_options ? fd->options[option] : "";
}

size_t ui_form_lines(const ui_form *f, size_t field)
{
    const form_field *fd = field_of(f, field, UI_FORM_LIST);
    return fd ? fd->n_lines : 0;
}

/* LIST: line `line` of the field, NULL when there is none. */
static const form_field *list_line(const ui_form *f, size_t field, size_t line)
{
    const form_field *fd = field_of(f, field, UI_FORM_LIST);
    return fd && line < fd->n_lines ? fd : NULL;
}

const char *ui_form_line(const ui_form *f, size_t field, size_t line)
{
    const form_field *fd = list_line(f, field, line);
    return fd ? fd->lines[line].buf : "";
}

size_t ui_form_line_focus(const ui_form *f, size_t field)
{
    const form_field *fd = field_of(f, field, UI_FORM_LIST);
    return fd ? fd->line_focus : 0;
}

const char *ui_form_line_error(const ui_form *f, size_t field, size_t line)
{
    const form_field *fd = list_line(f, field, line);
    return fd && fd->line_err[line].code != ERROR_OK ? fd->line_err[line].msg : "";
}

const char *ui_form_error(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd && fd->err.code != ERROR_OK ? fd->err.msg : "";
}

bool ui_form_shows_error(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd && (fd->touched || f->tried) && fd->err.code != ERROR_OK;
}

bool ui_form_readonly(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd && fd->readonly;
}

const char *ui_form_hint(const ui_form *f, size_t field)
{
    const form_field *fd = field_at(f, field);
    return fd ? fd->hint : "";
}

bool ui_form_valid(const ui_form *f)
{
    for (size_t i = 0; i < f->count; i++) {
        if (f->fields[i].err.code != ERROR_OK)
            return false;
    }
    return true;
}

void ui_form_refuse(ui_form *f, size_t field, const char *reason)
{
    if (field >= f->count)
        return;
    form_field *fd = &f->fields[field];
    error_set(&fd->err, ERROR_INVALID, "%s", reason);
    fd->touched = true;
    if (!fd->readonly)
        f->focus = field;
}

void ui_form_set_message(ui_form *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

const char *ui_form_message(const ui_form *f) { return f->message; }

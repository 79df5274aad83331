/*
 * form_internal: the form's data (ui_form.h), shared by the model (form.c: building,
 * keys, checks) and its readers (form_read.c). Private to ui/widgets/.
 */
#ifndef RAMPART_UI_FORM_INTERNAL_H
#define RAMPART_UI_FORM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/ui_form.h"
#include "ui_line.h"

typedef struct form_field {
    ui_form_kind kind;
    char *label;
    ui_form_check check;
    const void *check_ctx;    /* what the checks are given */
    ui_line text;             /* TEXT, POLICY */
    char **options;           /* CHOICE */
    size_t n_options, choice;
    char (*ids)[MODEL_ID_MAX + 1]; /* POLICY: offered ids */
    size_t n_ids;
    bool cycling;             /* POLICY: the last key was Up/Down */
    char prefix[MODEL_ID_MAX + 1];
    ui_line *lines;           /* LIST */
    error_info *line_err;
    size_t n_lines, line_focus, max_lines, line_max;
    ui_form_list_check check_all;
    bool touched;
    bool readonly;            /* shown, never edited, skipped by the focus */
    error_info err;           /* the current reason; code ERROR_OK when valid */
    char hint[96];
} form_field;

struct ui_form {
    char *title;
    form_field *fields;
    size_t count, cap, focus;
    bool tried;
    char message[ERROR_MSG_MAX];
};

#endif

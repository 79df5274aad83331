/*
 * ui_form: a form as plain data (ui/form.c), with no curses and no store in it, so
 * it is tested by feeding it keys: labelled fields, each with its own editor and a
 * check run on every change and again on submit. ui_form_draw (ui/form_draw.c)
 * draws one into a ui_canvas; the create overlays (ui/form_create.c) turn a
 * submitted form into a record.
 *
 * Contract:
 * - Fields, in the order added: TEXT (a line of UTF-8 with a cursor), CHOICE (one
 *   of fixed options), POLICY (a text field that also cycles through known ids
 *   with Up/Down, among those starting with what was typed), LIST (lines of text,
 *   each checked alone and then all together; empty lines are ignored).
 * - Keys are ui_key values (ui_app.h). Editing is UTF-8 aware: Left/Right,
 *   Backspace and Del (Ctrl-D) act on whole characters; Home/End, Ctrl-A/Ctrl-E,
 *   Ctrl-U (to the start), Ctrl-K (to the end), Ctrl-W (the word before). Tab and
 *   BTab move between fields; Up/Down too, except inside a POLICY field (they
 *   cycle the ids) and inside a LIST (they move between its lines first). In a
 *   CHOICE field Left/Right/Space cycle, a letter picks the option it starts with.
 *   In a LIST, Enter on a non-empty line opens a new line below, Backspace/Del on
 *   an empty line removes it; Enter on an empty line submits, like Enter anywhere
 *   else. Esc cancels. Control characters are never inserted.
 * - A field's reason ("host bits set: did you mean 10.0.0.0/8?") is recomputed on
 *   every change of that field; it is meant to be shown once the field was edited
 *   or a submit was tried (ui_form_shows_error). Text beyond a field's limit is
 *   refused a few bytes past it, so the limit's own message shows.
 * - ui_form_key returns UI_FORM_SUBMIT only when every field passes its check;
 *   otherwise UI_FORM_REFUSED, with the focus on the first failing field.
 * - Memory: the form owns every buffer and wipes them in ui_form_free. Strings
 *   returned by accessors stay valid until the next key or change to the form.
 */
#ifndef RAMPART_UI_FORM_H
#define RAMPART_UI_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/ui_canvas.h"

typedef struct ui_form ui_form;

/* A field's check: ERROR_OK, or ERROR_INVALID with the reason in err. */
typedef error_code (*ui_form_check)(const char *text, error_info *err);

/* The check of a whole LIST (its non-empty lines), after each line passed alone. */
typedef error_code (*ui_form_list_check)(const char *const *lines, size_t count,
                                         error_info *err);

typedef enum ui_form_kind {
    UI_FORM_TEXT,
    UI_FORM_CHOICE,
    UI_FORM_POLICY,
    UI_FORM_LIST
} ui_form_kind;

typedef enum ui_form_result {
    UI_FORM_CONTINUE, /* key taken (or ignored); the form stays open */
    UI_FORM_SUBMIT,   /* every field is valid: the caller reads it and closes it */
    UI_FORM_REFUSED,  /* a submit was tried with invalid fields: reasons now shown */
    UI_FORM_CANCEL    /* Esc: the caller frees it; nothing was kept */
} ui_form_result;

/* A form titled `title` ("Create rule"). Free with ui_form_free. */
error_code ui_form_new(const char *title, ui_form **out, error_info *err);

/* Wipe every buffer and free the form. NULL is a no-op. */
void ui_form_free(ui_form *f);

/*
 * Add fields; each returns ERROR_NOMEM on allocation failure (the form is then
 * unchanged). `max_bytes` is the field's limit (its check names it); `check` may be
 * NULL (always valid); `initial` may be NULL. Strings are copied.
 */
error_code ui_form_add_text(ui_form *f, const char *label, const char *initial,
                            size_t max_bytes, ui_form_check check, error_info *err);
error_code ui_form_add_choice(ui_form *f, const char *label, const char *const *options,
                              size_t count, size_t selected, error_info *err);
/* `ids` (count of them) are offered by Up/Down; copied. */
error_code ui_form_add_policy(ui_form *f, const char *label, const char *initial,
                              const char (*ids)[MODEL_ID_MAX + 1], size_t count,
                              ui_form_check check, error_info *err);
/* At most `max_lines` lines of at most `max_bytes` each; starts with one empty line. */
error_code ui_form_add_list(ui_form *f, const char *label, size_t max_lines,
                            size_t max_bytes, ui_form_check check_line,
                            ui_form_list_check check_all, error_info *err);

/* Feed one key (see the contract). */
ui_form_result ui_form_key(ui_form *f, int key);

/* ---- reading the form ------------------------------------------------------ */

const char *ui_form_title(const ui_form *f);
size_t ui_form_count(const ui_form *f);
size_t ui_form_focus(const ui_form *f);
ui_form_kind ui_form_field_kind(const ui_form *f, size_t field);
const char *ui_form_label(const ui_form *f, size_t field);

/* TEXT/POLICY: the text; CHOICE: the selected option; LIST: its focused line. */
const char *ui_form_text(const ui_form *f, size_t field);
/* Byte offset of the cursor in ui_form_text (0 for a CHOICE). */
size_t ui_form_cursor(const ui_form *f, size_t field);
/* CHOICE: the index of the selected option, how many there are, and one. */
size_t ui_form_choice(const ui_form *f, size_t field);
size_t ui_form_options(const ui_form *f, size_t field);
const char *ui_form_option(const ui_form *f, size_t field, size_t option);

/* LIST: how many lines (empty ones included), one line, and the focused one. */
size_t ui_form_lines(const ui_form *f, size_t field);
const char *ui_form_line(const ui_form *f, size_t field, size_t line);
size_t ui_form_line_focus(const ui_form *f, size_t field);
/* LIST: the reason of one line ("" when it passes or is empty). */
const char *ui_form_line_error(const ui_form *f, size_t field, size_t line);

/* The field's reason, "" when valid (LIST: the first failing line's reason, with
 * its position, or the whole list's). */
const char *ui_form_error(const ui_form *f, size_t field);
/* Whether the reason should be on screen: edited, or a submit was tried. */
bool ui_form_shows_error(const ui_form *f, size_t field);
/* A short help for the field when focused ("Up/Down: 3 known policies"); may be "". */
const char *ui_form_hint(const ui_form *f, size_t field);
/* Every field passes. */
bool ui_form_valid(const ui_form *f);

/* A message for the whole form (the store refused the record, why a submit was
 * refused); "" when none. Set by the caller; cleared by the next change. */
void ui_form_set_message(ui_form *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *ui_form_message(const ui_form *f);

/* ---- the two create forms (ui/form_records.c) -------------------------------- */

/* Field order of the rule form. */
enum ui_rule_field {
    UI_RULE_CIDR, UI_RULE_POLICY, UI_RULE_ACTION, UI_RULE_DESCRIPTION, UI_RULE_METADATA
};

/* Field order of the credential form. */
enum ui_cred_field {
    UI_CRED_DESCRIPTION, UI_CRED_ACL, UI_CRED_METADATA, UI_CRED_OWNER
};

/* The field checks, each the validate.h rule for that field (the credential's
 * metadata also leaves room for the sync's creation marker; an empty owner is the
 * API key's owner). */
error_code ui_form_check_cidr(const char *text, error_info *err);
error_code ui_form_check_policy(const char *text, error_info *err);
error_code ui_form_check_description(const char *text, error_info *err);
error_code ui_form_check_metadata(const char *text, error_info *err);
error_code ui_form_check_cred_metadata(const char *text, error_info *err);
error_code ui_form_check_owner(const char *text, error_info *err);
error_code ui_form_check_acl_rule(const char *text, error_info *err);
error_code ui_form_check_acl(const char *const *lines, size_t count, error_info *err);

/* The "Create rule" form: policy pre-filled with `policy` (may be NULL or ""),
 * `ids` offered by Up/Down, action allow. */
error_code ui_form_rule_new(const char *policy, const char (*ids)[MODEL_ID_MAX + 1],
                            size_t count, ui_form **out, error_info *err);

/* The "Create credential" form: description, ACL rules, metadata, owner. */
error_code ui_form_cred_new(ui_form **out, error_info *err);

/* A submitted rule form as a new rule (state new, cidr canonical), checked again
 * as a whole with validate_rule. ERROR_INVALID with the reason. */
error_code ui_form_rule_get(const ui_form *f, model_rule *out, error_info *err);

/* A submitted credential form as a new credential (`out` zeroed; release with
 * model_cred_clear even on failure), checked again with validate_cred. */
error_code ui_form_cred_get(const ui_form *f, model_cred *out, error_info *err);

/* ---- drawing (ui/form_draw.c) ----------------------------------------------- */

/* Draw the form as a centred box inside `area` (scrolled so the focused field
 * shows): labels, values with the cursor in reverse video, reasons prefixed with
 * "!" next to their field, the focused field's hint, the message, the keys. */
void ui_form_draw(const ui_form *f, ui_canvas *c, ui_rect area);

#endif

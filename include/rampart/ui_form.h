/*
 * ui_form: a form as plain data (ui/widgets/form.c), with no curses and no store
 * in it, so it is tested by feeding it keys: labelled fields, each with its own
 * editor and a check run on every change and again on submit. ui_form_draw
 * (ui/widgets/form_draw.c) draws one into a ui_canvas.
 *
 * - Fields, in the order added: TEXT (a line of UTF-8 with a cursor), CHOICE (one
 *   of fixed options), POLICY (a text field that also cycles through known ids
 *   with Up/Down, among those starting with what was typed), LIST (lines of text,
 *   each checked alone and then all together; empty lines are ignored).
 * - Keys are ui_key values (ui_key.h), edited as whole UTF-8 characters (the
 *   readline keys: Ctrl-A/E/U/K/W/D). Tab and BTab move between fields, Up/Down
 *   too but in a POLICY field (they cycle the ids) and a LIST (its lines first).
 *   CHOICE: Left/Right/Space cycle, a letter picks. LIST: Enter on a non-empty
 *   line opens one below, Backspace/Del on an empty one removes it. Enter
 *   elsewhere submits, Esc cancels; control characters are never inserted.
 * - A field's reason ("host bits set: did you mean 10.0.0.0/8?") is recomputed on
 *   every change of that field, shown once the field was edited or a submit tried
 *   (ui_form_shows_error). Text is refused a few bytes past a field's limit.
 * - ui_form_key returns UI_FORM_SUBMIT only when every field passes its check,
 *   else UI_FORM_REFUSED, the focus on the first failing field. A read-only field
 *   is shown but takes no key; the focus skips it.
 * - The form owns and wipes its buffers (ui_form_free); an accessor's string
 *   stays valid until the next key or change.
 */
#ifndef RAMPART_UI_FORM_H
#define RAMPART_UI_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/kind.h"
#include "rampart/model.h"
#include "rampart/ui_canvas.h"
#include "rampart/ui_key.h"

typedef struct ui_form ui_form;

/* A field's check: ERROR_OK, or ERROR_INVALID with the reason in err. `ctx` is the
 * one given with the field (a closure: the generic forms pass what the field is). */
typedef error_code (*ui_form_check)(const void *ctx, const char *text, error_info *err);

/* The check of a whole LIST (its non-empty lines), after each line passed alone. */
typedef error_code (*ui_form_list_check)(const void *ctx, const char *const *lines,
                                         size_t count, error_info *err);

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
 * NULL (always valid) and gets `ctx` (borrowed for the form's life); `initial` may
 * be NULL. Strings are copied.
 */
error_code ui_form_add_text(ui_form *f, const char *label, const char *initial,
                            size_t max_bytes, ui_form_check check, const void *ctx,
                            error_info *err);
error_code ui_form_add_choice(ui_form *f, const char *label, const char *const *options,
                              size_t count, size_t selected, error_info *err);
/* `ids` (count of them) are offered by Up/Down; copied. */
error_code ui_form_add_policy(ui_form *f, const char *label, const char *initial,
                              const char (*ids)[MODEL_ID_MAX + 1], size_t count,
                              ui_form_check check, const void *ctx, error_info *err);
/* At most `max_lines` lines of at most `max_bytes` each; starts with one empty line. */
error_code ui_form_add_list(ui_form *f, const char *label, size_t max_lines,
                            size_t max_bytes, ui_form_check check_line,
                            ui_form_list_check check_all, const void *ctx, error_info *err);

/* Make `field` read-only: shown (marked as such) but never edited, and skipped
 * by Tab/BTab/Up/Down (the focus leaves it now if it had it). An edit form's
 * fields that never change after creation. */
void ui_form_set_readonly(ui_form *f, size_t field);

/* LIST: replace its lines with `count` copies of `lines` (none: one empty line),
 * the focus on the first; checked at once. ERROR_INVALID when `field` is not a
 * LIST, ERROR_NOMEM (or more lines than it takes) when they do not fit. */
error_code ui_form_set_lines(ui_form *f, size_t field, const char *const *lines,
                             size_t count, error_info *err);

/* Feed one key (see the contract). */
ui_form_result ui_form_key(ui_form *f, int key);

/* ---- reading the form ------------------------------------------------------ */

const char *ui_form_title(const ui_form *f);
size_t ui_form_count(const ui_form *f);
size_t ui_form_focus(const ui_form *f);
ui_form_kind ui_form_field_kind(const ui_form *f, size_t field);

/* The keys the form takes now, most important first, for a key bar: Enter (save,
 * or in a LIST on a non-empty line a new line), Tab, Esc, then the focused field's
 * own (Down through a POLICY field's known ids, Space through a CHOICE's options),
 * BTab. At most `max` into `out`; returns how many. */
size_t ui_form_hints(const ui_form *f, ui_key_hint *out, size_t max);
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
/* Whether the field is read-only (ui_form_set_readonly). */
bool ui_form_readonly(const ui_form *f, size_t field);
/* A short help for the field when focused ("Up/Down: 3 known policies"); may be "". */
const char *ui_form_hint(const ui_form *f, size_t field);
/* Every field passes. */
bool ui_form_valid(const ui_form *f);

/* A reason from outside the form for one field (the store refused the record
 * for it): shown under the field, which takes the focus, until the field changes
 * or the next submit checks it again. */
void ui_form_refuse(ui_form *f, size_t field, const char *reason);

/* A message for the whole form (the store refused the record, why a submit was
 * refused); "" when none. Set by the caller; cleared by the next change. */
void ui_form_set_message(ui_form *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *ui_form_message(const ui_form *f);

/* ---- the create form of a kind (ui/views/form_records.c) ----------------------- */

/*
 * One form for every kind: its fields are the kind's create fields (kind.h), in
 * the order of its table, each checked as typed with the field's own check (the
 * console adds labels, and for a few fields a reason when left empty or a tighter
 * limit: a credential's metadata leaves room for the sync's creation marker). A
 * text field gives a TEXT field, an action a CHOICE, an ACL a LIST; the field the
 * console marks as offered (a rule's policy) a POLICY field.
 */

/* Field order of the rule form and of the credential form. */
enum ui_rule_field {
    UI_RULE_CIDR, UI_RULE_POLICY, UI_RULE_ACTION, UI_RULE_DESCRIPTION, UI_RULE_METADATA
};
enum ui_cred_field {
    UI_CRED_DESCRIPTION, UI_CRED_ACL, UI_CRED_METADATA, UI_CRED_OWNER
};

/* What the offered field (a rule's policy) starts on and cycles through; any part
 * may be NULL or 0. The form copies what it keeps. */
typedef struct ui_form_offer {
    const char *initial;
    char (*ids)[MODEL_ID_MAX + 1];
    size_t count;
} ui_form_offer;

/* The "Create <noun>" form of `kind`; `offer` may be NULL. */
error_code ui_form_record_new(model_kind kind, const ui_form_offer *offer, ui_form **out,
                              error_info *err);

/* A submitted form of `kind` as a new row (state new) in `out` (which holds no
 * heap before; release it with model_object_clear, even on failure), checked again
 * field by field and as a whole by the kind's validate (a CIDR canonical).
 * ERROR_INVALID with the reason. */
error_code ui_form_record_get(const ui_form *f, model_kind kind, model_object *out,
                              error_info *err);

/* The store's gate refused the row this form of `kind` gave: `bad` is the field
 * kind_check_row named (a value, never the message's text, decides) and gets
 * `why` under it (ui_form_refuse). False when `bad` is NULL or no field of the
 * form (the refusal was about something else). */
bool ui_form_record_refused(ui_form *f, model_kind kind, const kind_field *bad,
                            const char *why);

/* ---- the edit form of a record (ui/views/form_records.c) ----------------------- */

/*
 * The "Edit <noun> <id>" form of `obj`'s kind: the create form's fields, in the
 * same order (enum ui_rule_field, ui_cred_field), pre-filled with the row's
 * values; the fields the kind does not let change after creation (no
 * KIND_FIELD_EDIT: a rule's policy and action, a credential's owner) read-only.
 * Each field is checked as the create form checks it.
 */
error_code ui_form_record_edit(const model_object *obj, ui_form **out, error_info *err);

/*
 * A submitted edit form of `orig`'s row: `out` (which holds no heap before;
 * release it with model_object_clear, even on failure) becomes a copy of `orig`
 * with every editable field taken from the form, and *fields the kind_field_bit
 * set of those whose value differs from orig's (0: nothing changed). Each field is
 * checked again and canonicalised as ui_form_record_get does before the
 * comparison (an IPv6 CIDR retyped in capitals is no change).
 * ERROR_INVALID with the reason.
 */
error_code ui_form_record_changes(const ui_form *f, const model_object *orig,
                                  model_object *out, unsigned *fields, error_info *err);

/* ---- drawing (ui/widgets/form_draw.c) --------------------------------------- */

/* Draw the form as a centred box inside `area` (scrolled so the focused field
 * shows): labels, values with the cursor in reverse video, reasons prefixed with
 * "!" next to their field, the focused field's hint, the message, the keys. */
void ui_form_draw(const ui_form *f, ui_canvas *c, ui_rect area);

#endif

/*
 * A credential's ACL list in the console (ui_record.h), in one place: its cell in
 * the credentials view, its lines in the details, its LIST field in the create
 * form and the rules that field gives back.
 */
#include <stdint.h>
#include <stdio.h>

#include "rampart/validate.h"
#include "ui_record.h"
#include "../widgets/ui_text.h"

enum { ACL_MAX_LINES = 100 };

void ui_acl_details(const model_acl *acl, const char *label, ui_table_detail_fn fn,
                    void *ctx)
{
    if (acl->count == 0)
        fn(ctx, label, "(none: any address may be bound)");
    for (size_t i = 0; i < acl->count; i++)
        fn(ctx, i == 0 ? label : "", acl->rules[i]);
}

static error_code check_rule(const void *ctx, const char *text, error_info *err)
{
    (void)ctx;
    return validate_acl_rule(text, err);
}

static error_code check_all(const void *ctx, const char *const *lines, size_t count,
                            error_info *err)
{
    (void)ctx;
    /* validate_acl only reads the rules; the cast does not let it write them. */
    model_acl acl = {.count = count, .rules = (char **)(uintptr_t)lines};
    return validate_acl(&acl, err);
}

error_code ui_acl_form_add(ui_form *f, const char *label, error_info *err)
{
    return ui_form_add_list(f, label, ACL_MAX_LINES, MODEL_ACL_RULE_MAX, check_rule,
                            check_all, NULL, err);
}

error_code ui_acl_form_get(const ui_form *f, size_t field, model_acl *acl, error_info *err)
{
    for (size_t i = 0; i < ui_form_lines(f, field); i++) {
        const char *line = ui_form_line(f, field, i);
        if (line[0] && model_acl_add(acl, line, err) != ERROR_OK)
            return ERROR_NOMEM;
    }
    return ERROR_OK;
}

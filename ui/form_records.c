/*
 * The two create forms (ui_form.h): which fields they have, the validate.h check
 * behind each, and the record a submitted form becomes. No curses, no store.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/sync.h"
#include "rampart/ui_form.h"
#include "rampart/validate.h"

enum { ACL_MAX_LINES = 100 };

static const char *const actions[] = {"allow", "deny"};

/* ---- field checks ------------------------------------------------------------- */

error_code ui_form_check_cidr(const char *text, error_info *err)
{
    char canon[MODEL_CIDR_MAX + 1];
    if (!text[0])
        return error_set(err, ERROR_INVALID, "required: an IPv4 or IPv6 range such as "
                         "10.0.0.0/8 or 2001:db8::/32");
    return validate_cidr(text, NULL, canon, sizeof canon, err);
}

error_code ui_form_check_policy(const char *text, error_info *err)
{
    return validate_id(text, "ipp", "policy id", err);
}

error_code ui_form_check_description(const char *text, error_info *err)
{
    return validate_description(text, err);
}

error_code ui_form_check_metadata(const char *text, error_info *err)
{
    return validate_metadata(text, err);
}

error_code ui_form_check_cred_metadata(const char *text, error_info *err)
{
    if (validate_metadata(text, err) != ERROR_OK)
        return ERROR_INVALID;
    if (strlen(text) > SYNC_USER_METADATA_MAX)
        return error_set(err, ERROR_INVALID,
                         "metadata is %zu bytes; a credential's limit is %d (rampart keeps "
                         "the rest for its creation marker)",
                         strlen(text), SYNC_USER_METADATA_MAX);
    return ERROR_OK;
}

error_code ui_form_check_owner(const char *text, error_info *err)
{
    return text[0] ? validate_owner_id(text, err) : ERROR_OK;
}

error_code ui_form_check_acl_rule(const char *text, error_info *err)
{
    return validate_acl_rule(text, err);
}

error_code ui_form_check_acl(const char *const *lines, size_t count, error_info *err)
{
    /* validate_acl only reads the rules; the cast does not let it write them. */
    model_acl acl = {.count = count, .rules = (char **)(uintptr_t)lines};
    return validate_acl(&acl, err);
}

/* ---- building ------------------------------------------------------------------- */

error_code ui_form_rule_new(const char *policy, const char (*ids)[MODEL_ID_MAX + 1],
                            size_t count, ui_form **out, error_info *err)
{
    ui_form *f = NULL;
    if (ui_form_new("Create rule", &f, err) != ERROR_OK)
        return ERROR_NOMEM;
    if (ui_form_add_text(f, "CIDR", "", MODEL_CIDR_MAX, ui_form_check_cidr, err) ||
        ui_form_add_policy(f, "Policy", policy, ids, count, ui_form_check_policy, err) ||
        ui_form_add_choice(f, "Action", actions, 2, 0, err) ||
        ui_form_add_text(f, "Description", "", MODEL_DESCRIPTION_MAX,
                         ui_form_check_description, err) ||
        ui_form_add_text(f, "Metadata", "", MODEL_METADATA_MAX, ui_form_check_metadata,
                         err)) {
        ui_form_free(f);
        return ERROR_NOMEM;
    }
    *out = f;
    return ERROR_OK;
}

error_code ui_form_cred_new(ui_form **out, error_info *err)
{
    ui_form *f = NULL;
    if (ui_form_new("Create credential", &f, err) != ERROR_OK)
        return ERROR_NOMEM;
    if (ui_form_add_text(f, "Description", "", MODEL_DESCRIPTION_MAX,
                         ui_form_check_description, err) ||
        ui_form_add_list(f, "ACL rules", ACL_MAX_LINES, MODEL_ACL_RULE_MAX,
                         ui_form_check_acl_rule, ui_form_check_acl, err) ||
        ui_form_add_text(f, "Metadata", "", SYNC_USER_METADATA_MAX,
                         ui_form_check_cred_metadata, err) ||
        ui_form_add_text(f, "Owner", "", MODEL_ID_MAX, ui_form_check_owner, err)) {
        ui_form_free(f);
        return ERROR_NOMEM;
    }
    *out = f;
    return ERROR_OK;
}

/* ---- reading a submitted form ------------------------------------------------- */

static error_code copy_field(char *dst, size_t size, const char *src, const char *what,
                             error_info *err)
{
    if (!model_copy_text(dst, size, src))
        return error_set(err, ERROR_INVALID, "%s is too long", what);
    return ERROR_OK;
}

error_code ui_form_rule_get(const ui_form *f, model_rule *out, error_info *err)
{
    memset(out, 0, sizeof *out);
    if (ui_form_count(f) != UI_RULE_METADATA + 1)
        return error_set(err, ERROR_INVALID, "not a rule form");
    if (copy_field(out->cidr, sizeof out->cidr, ui_form_text(f, UI_RULE_CIDR), "cidr", err) ||
        copy_field(out->policy_id, sizeof out->policy_id, ui_form_text(f, UI_RULE_POLICY),
                   "policy id", err) ||
        copy_field(out->description, sizeof out->description,
                   ui_form_text(f, UI_RULE_DESCRIPTION), "description", err) ||
        copy_field(out->metadata, sizeof out->metadata, ui_form_text(f, UI_RULE_METADATA),
                   "metadata", err))
        return ERROR_INVALID;
    out->action = ui_form_choice(f, UI_RULE_ACTION) == 1 ? MODEL_ACTION_DENY
                                                        : MODEL_ACTION_ALLOW;
    out->state = MODEL_STATE_NEW;
    return validate_rule(out, err);
}

error_code ui_form_cred_get(const ui_form *f, model_cred *out, error_info *err)
{
    if (ui_form_count(f) != UI_CRED_OWNER + 1)
        return error_set(err, ERROR_INVALID, "not a credential form");
    if (copy_field(out->description, sizeof out->description,
                   ui_form_text(f, UI_CRED_DESCRIPTION), "description", err) ||
        copy_field(out->metadata, sizeof out->metadata, ui_form_text(f, UI_CRED_METADATA),
                   "metadata", err) ||
        copy_field(out->owner_id, sizeof out->owner_id, ui_form_text(f, UI_CRED_OWNER),
                   "owner", err) ||
        ui_form_check_cred_metadata(out->metadata, err))
        return ERROR_INVALID;
    for (size_t i = 0; i < ui_form_lines(f, UI_CRED_ACL); i++) {
        const char *line = ui_form_line(f, UI_CRED_ACL, i);
        if (line[0] && model_acl_add(&out->acl, line, err) != ERROR_OK)
            return ERROR_NOMEM;
    }
    out->state = MODEL_STATE_NEW;
    return validate_cred(out, err);
}

/*
 * The create forms as overlays: 'c' in the rules or credentials view opens one;
 * a submit that passes every check is validated again as a whole record and
 * stored as new (the next sync sends it); Esc leaves nothing behind.
 */
#include <stdlib.h>
#include <string.h>

#include "action_internal.h"
#include "rampart/store.h"
#include "rampart/ui_form.h"

/* Policy ids offered by the rule form: enough to cycle through, not the world. */
enum { POLICY_IDS_MAX = 500, POLICY_PAGE = 100 };

typedef struct create_overlay {
    ui_form *form;
    ui_kind kind;
} create_overlay;

static void create_draw(void *self, ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    create_overlay *o = self;
    ui_form_draw(o->form, c, area);
}

static bool save_rule(create_overlay *o, ui_app *app)
{
    model_rule rule;
    error_info e = {0};
    if (ui_form_rule_get(o->form, &rule, &e) != ERROR_OK ||
        store_rule_insert(ui_app_store(app), &rule, &e) != ERROR_OK) {
        ui_form_set_message(o->form, "not saved: %s", e.msg);
        return false;
    }
    ui_app_status(app, false, "new rule queued: %s %s ('s' syncs it)",
                  model_action_name(rule.action), rule.cidr);
    return true;
}

static bool save_cred(create_overlay *o, ui_app *app)
{
    model_cred cred = {0};
    error_info e = {0};
    bool ok = ui_form_cred_get(o->form, &cred, &e) == ERROR_OK &&
              store_cred_insert(ui_app_store(app), &cred, &e) == ERROR_OK;
    if (ok) {
        ui_sync_expect_token(app, cred.id);
        ui_app_status(app, false, "new credential queued: its token shows once 's' has "
                      "synced it");
    } else {
        ui_form_set_message(o->form, "not saved: %s", e.msg);
    }
    model_cred_clear(&cred);
    return ok;
}

static ui_overlay_result create_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)req;
    create_overlay *o = self;
    switch (ui_form_key(o->form, key)) {
    case UI_FORM_CANCEL:
        ui_app_status(app, false, "cancelled: nothing saved");
        return UI_OVERLAY_CLOSE;
    case UI_FORM_SUBMIT:
        if (ui_app_readonly(app)) {
            ui_app_status(app, true, "read-only: nothing saved");
            return UI_OVERLAY_CLOSE;
        }
        if (!(o->kind == UI_KIND_RULE ? save_rule(o, app) : save_cred(o, app)))
            return UI_OVERLAY_KEEP;
        ui_app_reload(app);
        return UI_OVERLAY_CLOSE;
    default:
        return UI_OVERLAY_KEEP;
    }
}

static void create_free(void *self)
{
    create_overlay *o = self;
    if (!o)
        return;
    ui_form_free(o->form);
    free(o);
}

static const ui_overlay_ops rule_ops = {"create rule", create_draw, create_key, create_free};
static const ui_overlay_ops cred_ops = {"create credential", create_draw, create_key,
                                        create_free};

/* The policy ids in the cache, the view's policy filter first when it has one. */
static error_code load_policy_ids(ui_app *app, char (**ids)[MODEL_ID_MAX + 1], size_t *count,
                                  error_info *err)
{
    *count = 0;
    *ids = malloc(POLICY_IDS_MAX * sizeof **ids);
    if (!*ids)
        return error_set(err, ERROR_NOMEM, "out of memory");
    const char *after = "";
    while (*count < POLICY_IDS_MAX) {
        size_t want = POLICY_IDS_MAX - *count < POLICY_PAGE ? POLICY_IDS_MAX - *count
                                                            : POLICY_PAGE;
        size_t got = 0;
        if (store_policy_ids(ui_app_store(app), after, *ids + *count, want, &got, err))
            return err ? err->code : ERROR_IO;
        *count += got;
        if (got < want)
            break;
        after = (*ids)[*count - 1];
    }
    return ERROR_OK;
}

error_code ui_form_create_open(ui_app *app, ui_kind kind, error_info *err)
{
    create_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    o->kind = kind;
    error_code rc;
    if (kind == UI_KIND_RULE) {
        char (*ids)[MODEL_ID_MAX + 1] = NULL;
        size_t n = 0;
        rc = load_policy_ids(app, &ids, &n, err);
        if (rc == ERROR_OK)
            rc = ui_form_rule_new(ui_app_policy(app), ids, n, &o->form, err);
        free(ids);
    } else {
        rc = ui_form_cred_new(&o->form, err);
    }
    if (rc != ERROR_OK) {
        create_free(o);
        return rc;
    }
    return ui_app_push(app, kind == UI_KIND_RULE ? &rule_ops : &cred_ops, o, err);
}

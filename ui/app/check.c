/*
 * `:check IP [POLICY]`: would the cached rules of a policy let the address in,
 * and which rule decided. The decision and its words come from the same core
 * calls `rampart check` uses (policy_check_cached, policy_decision_sentence), so
 * the console and the command line cannot disagree.
 */
#include "app_internal.h"

#include <stdio.h>
#include <string.h>

#include "rampart/policy.h"
#include "rampart/validate.h"

/* The policy of the row under the cursor, when its kind has one (a rule). */
static bool row_policy(ui_app *app, char *out, size_t size)
{
    ui_row_ref ref;
    if (!ui_app_current(app, &ref) || !kind_field_by_name(ref.kind, "ip_policy_id"))
        return false;
    model_object obj;
    model_object_init(&obj, ref.kind);
    bool ok = store_get(ui_app_browse_store(app), ref.kind, ref.id, &obj, NULL) == ERROR_OK &&
              kind_value(&obj, "ip_policy_id", NULL, 0)[0];
    if (ok)
        snprintf(out, size, "%s", kind_value(&obj, "ip_policy_id", NULL, 0));
    model_object_clear(&obj);
    return ok;
}

/* The only policy id in the cache; false when there are none or several (a
 * guess between several would answer a question nobody asked). */
static bool only_policy(ui_app *app, char *out, size_t size, error_info *err)
{
    char ids[2][MODEL_ID_MAX + 1];
    size_t n = 0;
    if (store_policy_ids(ui_app_browse_store(app), "", ids, 2, &n, err) != ERROR_OK || n != 1)
        return false;
    snprintf(out, size, "%s", ids[0]);
    return true;
}

/* The policy to check in: the one named, else the row's, else the only one. */
static bool pick_policy(ui_app *app, const char *named, char *out, size_t size)
{
    if (named[0]) {
        size_t len = strlen(named);
        if (len >= size) {
            ui_app_status(app, true, ":check: the policy id is too long (at most %zu "
                          "characters)", size - 1);
            return false;
        }
        memcpy(out, named, len + 1);
        return true;
    }
    error_info e = {0};
    if (row_policy(app, out, size) || only_policy(app, out, size, &e))
        return true;
    if (e.code)
        ui_app_status(app, true, ":check: %s", e.msg);
    else
        ui_app_status(app, true, ":check needs a policy: :check IP POLICY_ID (or put the "
                      "cursor on a rule of that policy)");
    return false;
}

void ui_check_command(ui_app *app, const char *arg)
{
    char ip[128] = "", named[128] = "", extra[8] = "";
    int n = sscanf(arg, "%127s %127s %7s", ip, named, extra);
    if (n < 1 || n > 2) {
        ui_app_status(app, true, ":check IP [POLICY_ID]: %s",
                      n < 1 ? "which address?" : "one address at a time");
        return;
    }
    error_info e = {0};
    policy_addr addr;
    if (policy_addr_parse(ip, &addr, &e) != ERROR_OK) {
        ui_app_status(app, true, ":check %s: %s", ip, e.msg);
        return;
    }
    char policy[MODEL_ID_MAX + 1];
    if (!pick_policy(app, named, policy, sizeof policy))
        return;
    if (validate_id(policy, "ipp", "policy id", &e) != ERROR_OK) {
        ui_app_status(app, true, ":check: %s", e.msg);
        return;
    }
    policy_decision d;
    bool known = false;
    if (policy_check_cached(ui_app_browse_store(app), policy, &addr, 1, &d, &known, &e)) {
        ui_app_status(app, true, ":check: nothing decided: %s", e.msg);
        return;
    }
    char line[512];
    policy_decision_sentence(ip, policy, &d, known, line, sizeof line);
    ui_app_status(app, !d.allowed && !known, "%s", line);
}

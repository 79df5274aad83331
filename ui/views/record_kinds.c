/*
 * The console's data of each kind (ui_record.h): only data, and the hooks of what
 * is one kind's own (a rule's policy). Values are named as in kind.h's field
 * tables; the code over this data is in ui/views/record.c, ui/views/view_records.c,
 * ui/views/view_pending.c, ui/views/form_records.c and ui/app/actions.c.
 */

#include "ui_record.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- rules --------------------------------------------------------------------- */

/* Placed by rank (ui_table.h): the CIDR whole first (a full IPv6 /128 is 43
 * columns, an IPv4 page no more than its widest), then action and state, a
 * little description, the id (shortened in the middle, hidden by a key) and the
 * policy when they fit; the description takes what is left. */
static const ui_table_col rule_cols[] = {
    {"ID", 10, 33, true, 4, false, true, true, "id", STORE_SORT_ID},
    {"CIDR", 18, 43, false, 0, true, true, false, "cidr", STORE_SORT_CIDR},
    {"ACTION", 6, 6, false, 1, true, false, false, "action", STORE_SORT_ACTION},
    {"STATE", 5, 14, false, 2, true, true, false, "state", STORE_SORT_STATE},
    {"POLICY", 12, 33, true, 5, false, true, false, "policy", STORE_SORT_POLICY},
    {"DESCRIPTION", 8, 0, false, 3, false, false, false, NULL, STORE_SORT_ID},
};
static const char *const rule_values[] = {"id",    "cidr",         "action",
                                          "state", "ip_policy_id", "description"};

static const ui_record_line rule_details[] = {
    {"id", "id"},
    {"cidr", "cidr"},
    {"action", "action"},
    {"policy", "ip_policy_id"},
    {"policy uri", "policy_uri"},
    {"description", "description"},
    {"metadata", "metadata"},
    {"state", "state"},
    {"error", "error"},
    {"created", "created_at"},
    {"uri", "uri"},
};

/* The create form's extras (its labels are the descriptor's): the reason an
 * empty CIDR is refused, the policies offered. A credential's form has none. */
static const ui_record_input rule_inputs[] = {
    {MODEL_KIND_RULE, "cidr", NULL,
     "required: an IPv4 or IPv6 range such as 10.0.0.0/8 or 2001:db8::/32", 0, NULL, false},
    {MODEL_KIND_RULE, "ip_policy_id", NULL, NULL, 0, NULL, true},
};

/* ---- credentials ----------------------------------------------------------------- */

/* By rank: the description (the name agents ask by), the state, the ACL (what
 * the token may do: its minimum keeps the owner out at 80 columns, so it gets the
 * room), the id cut to a readable 14, the creation date, then the owner (most
 * often the caller, the same on every row) when it fits. */
static const ui_table_col cred_cols[] = {
    {"ID", 14, 33, true, 3, false, true, true, "id", STORE_SORT_ID},
    {"DESCRIPTION", 12, 40, false, 0, false, true, false, "description", STORE_SORT_DESCRIPTION},
    {"STATE", 5, 14, false, 1, true, true, false, "state", STORE_SORT_STATE},
    {"ACL", 22, 0, false, 2, false, false, false, NULL, STORE_SORT_ID},
    {"OWNER", 14, 33, true, 5, false, true, false, NULL, STORE_SORT_ID},
    {"CREATED", 10, 10, false, 4, false, false, false, NULL, STORE_SORT_ID},
};
static const char *const cred_values[] = {"id",  "description", "state",
                                          "acl", "owner_id",    "created_at:date"};

static const ui_record_line cred_details[] = {
    {"id", "id"},
    {"description", "description"},
    {"owner", "owner_id"},
    {"acl", "acl"},
    {"metadata", "metadata"},
    {"state", "state"},
    {"error", "error"},
    {"token", "token"},
    {"rotation", "rotation"},
    {"created", "created_at"},
    {"uri", "uri"},
};

/* ---- the kinds --------------------------------------------------------------------- */

/* The tables of a kind named by its prefix above, with their sizes (the form's
 * extras follow, when the kind has any). */
#define TABLES(p)                                                                      \
    p##_cols, p##_values, (int)COUNT(p##_cols), p##_details, COUNT(p##_details)

/* In ui_record_kind's order: the kind, its view, its tag and word in the plan, its
 * tables, the plan's WHAT (and what it says when that is empty), its row in a
 * confirmation, the status line after a create, what its form offers, the
 * editable field of its natural key, the empty view's other way in. */
static const ui_record_kind kinds[MODEL_KIND_COUNT] = {
    [MODEL_KIND_RULE] = {MODEL_KIND_RULE,
                         {"rules", "Rules", true, MODEL_KIND_RULE, ui_policy_request,
                          ui_policy_describe, ui_policy_scope},
                         'r', "rule", TABLES(rule), rule_inputs, COUNT(rule_inputs),
                         "{cidr} {action} {ip_policy_id}", "",
                         "{id}  {action} {cidr}  {state}  {ip_policy_id}",
                         "new rule queued: {action} {cidr} ('s' syncs it)", ui_policy_offer,
                         "cidr",
                         "  or import a JSON file from a shell: rampart rules import FILE"},
    [MODEL_KIND_CRED] = {MODEL_KIND_CRED,
                         {"creds", "Creds", true, MODEL_KIND_CRED, NULL, NULL, NULL},
                         'c', "cred", TABLES(cred), NULL, 0, "{description}",
                         "(no description)",
                         "{id}  \"{description}\"  {state}",
                         "new credential queued: its token shows once 's' has synced it", NULL,
                         NULL, NULL},
};

const ui_record_kind *ui_record_kind_get(model_kind kind)
{
    return (unsigned)kind < MODEL_KIND_COUNT ? &kinds[kind] : &kinds[MODEL_KIND_RULE];
}

/* The credentials view: keyset pages of the cached credentials. */
#include "view_internal.h"

static const ui_table_col cols[] = {
    {"ID", 16, 33, true},  {"DESCRIPTION", 16, 40, false}, {"STATE", 8, 14, false},
    {"ACL", 10, 0, false}, {"OWNER", 8, 33, true},         {"CREATED", 20, 20, false},
};

static const char *const sorts[] = {"id", "description", "state"};
static const store_sort sort_of[] = {STORE_SORT_ID, STORE_SORT_DESCRIPTION, STORE_SORT_STATE};

static const ui_view_ops ops = {"creds", "Creds", true, NULL, NULL};

static const ui_record_view def = {
    &ops,  UI_KIND_CRED, cols, (int)(sizeof cols / sizeof cols[0]),
    sorts, sort_of,      (int)(sizeof sorts / sizeof sorts[0]),
};

error_code ui_view_creds_new(ui_app *app, ui_view **out, error_info *err)
{
    return ui_view_records_new(app, &def, out, err);
}

/* Every SQL text of the store: the schema migrations and the cached statements. */
#include "store_internal.h"

/*
 * Ordered migrations: step i takes user_version i to i+1. Append only; never edit
 * a step that has shipped.
 *
 * Index choice: import speed matters, so rules carry only the indexes browsing
 * and the natural key need. The table itself is clustered by id (WITHOUT ROWID):
 * id pages walk it directly and one B-tree fewer is written per insert (measured
 * ~5% faster imports and a smaller file than a rowid table plus a unique id
 * index). Then (policy_id, id) for a policy's pages,
 * and (policy_id, cidr) unique among live rows, which is the natural-key check
 * itself (no separate lookup per insert, and no race between two writers).
 * aliases(remote_id) lets a removal drop a row's aliases without a scan; it is
 * written only on confirm.
 * Credential ACLs are stored one rule per line (rules never contain a newline).
 */
static const char *const migrations[] = {
    "CREATE TABLE rules ("
    " id TEXT NOT NULL PRIMARY KEY,"
    " uri TEXT NOT NULL DEFAULT '',"
    " created_at TEXT NOT NULL DEFAULT '',"
    " description TEXT NOT NULL DEFAULT '',"
    " metadata TEXT NOT NULL DEFAULT '',"
    " cidr TEXT NOT NULL,"
    " policy_id TEXT NOT NULL,"
    " policy_uri TEXT NOT NULL DEFAULT '',"
    " action TEXT NOT NULL CHECK (action IN ('allow', 'deny')),"
    " state TEXT NOT NULL CHECK (state IN ('new', 'creating', 'synced', 'deleting',"
    "  'failed', 'unknown', 'orphaned', 'remote_deleted')),"
    " error TEXT NOT NULL DEFAULT '',"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " updated_at TEXT NOT NULL DEFAULT '') WITHOUT ROWID;"
    "CREATE INDEX rules_policy_id ON rules(policy_id, id);"
    "CREATE UNIQUE INDEX rules_live_key ON rules(policy_id, cidr)"
    " WHERE state NOT IN ('deleting', 'remote_deleted');"
    "CREATE TABLE credentials ("
    " seq INTEGER PRIMARY KEY,"
    " id TEXT NOT NULL UNIQUE,"
    " uri TEXT NOT NULL DEFAULT '',"
    " created_at TEXT NOT NULL DEFAULT '',"
    " description TEXT NOT NULL DEFAULT '',"
    " metadata TEXT NOT NULL DEFAULT '',"
    " acl TEXT NOT NULL DEFAULT '',"
    " owner_id TEXT NOT NULL DEFAULT '',"
    " state TEXT NOT NULL CHECK (state IN ('new', 'creating', 'synced', 'deleting',"
    "  'failed', 'unknown', 'orphaned', 'remote_deleted')),"
    " error TEXT NOT NULL DEFAULT '',"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " updated_at TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE aliases ("
    " local_id TEXT PRIMARY KEY,"
    " remote_id TEXT NOT NULL,"
    " kind TEXT NOT NULL CHECK (kind IN ('rule', 'credential'))) WITHOUT ROWID;"
    "CREATE INDEX aliases_remote ON aliases(remote_id);"
    "CREATE TABLE tokens ("
    " cred_id TEXT PRIMARY KEY"
    "  REFERENCES credentials(id) ON UPDATE CASCADE ON DELETE CASCADE,"
    " token TEXT NOT NULL) WITHOUT ROWID;",
};

/* An id or a local alias, as ?1: the row's current id. */
#define RESOLVED_ID "coalesce((SELECT remote_id FROM aliases WHERE local_id = ?1), ?1)"
/* Same text as rules_live_key's WHERE, so the planner can use that index. */
#define LIVE "state NOT IN ('deleting', 'remote_deleted')"
/* Count create attempts; a confirmed row starts over. */
#define ATTEMPTS \
    "attempts = CASE ?2 WHEN 'creating' THEN attempts + 1 WHEN 'synced' THEN 0 " \
    "ELSE attempts END"
/* A confirm keeps what the remote's reply left empty. */
#define KEEP(col, param) col " = CASE " param " WHEN '' THEN " col " ELSE " param " END"

static const char *const statements[STMT_COUNT] = {
    [STMT_BEGIN] = "BEGIN IMMEDIATE",
    [STMT_COMMIT] = "COMMIT",
    [STMT_ROLLBACK] = "ROLLBACK",
    [STMT_SAVEPOINT] = "SAVEPOINT store_op",
    [STMT_RELEASE] = "RELEASE store_op",
    [STMT_ROLLBACK_TO] = "ROLLBACK TO store_op",
    [STMT_ALIAS_EXISTS] = "SELECT remote_id FROM aliases WHERE local_id = ?1",
    [STMT_ALIAS_INSERT] = "INSERT INTO aliases (local_id, remote_id, kind) VALUES (?1, ?2, ?3)",
    [STMT_ALIAS_DELETE] = "DELETE FROM aliases WHERE remote_id = ?1",

    [STMT_RULE_RESOLVE] = "SELECT id, state FROM rules WHERE id = " RESOLVED_ID,
    [STMT_RULE_GET] = "SELECT " STORE_RULE_COLS " FROM rules WHERE id = " RESOLVED_ID,
    [STMT_RULE_FIND] = "SELECT " STORE_RULE_COLS " FROM rules"
                       " WHERE policy_id = ?1 AND cidr = ?2 AND " LIVE " LIMIT 1",
    [STMT_RULE_LIVE_ID] = "SELECT id FROM rules"
                          " WHERE policy_id = ?1 AND cidr = ?2 AND " LIVE " LIMIT 1",
    [STMT_RULE_INSERT] = "INSERT INTO rules (id, uri, created_at, description, metadata,"
                         " cidr, policy_id, policy_uri, error, action, state, updated_at)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [STMT_RULE_SET_STATE] = "UPDATE rules SET state = ?2, error = ?3, updated_at = ?4, "
                            ATTEMPTS " WHERE id = " RESOLVED_ID,
    [STMT_RULE_DELETE] = "DELETE FROM rules WHERE id = ?1",
    [STMT_RULE_STATE_COUNTS] = "SELECT state, count(*) FROM rules GROUP BY state",
    [STMT_RULE_CONFIRM] = "UPDATE rules SET id = ?2, " KEEP("uri", "?3") ", "
                          KEEP("created_at", "?4") ", " KEEP("policy_uri", "?5") ","
                          " state = 'synced', error = '', attempts = 0, updated_at = ?6"
                          " WHERE id = ?1",

    [STMT_CRED_RESOLVE] = "SELECT id, state FROM credentials WHERE id = " RESOLVED_ID,
    [STMT_CRED_GET] = "SELECT " STORE_CRED_COLS " FROM credentials WHERE id = " RESOLVED_ID,
    [STMT_CRED_INSERT] = "INSERT INTO credentials (id, uri, created_at, description,"
                         " metadata, owner_id, error, acl, state, updated_at)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [STMT_CRED_SET_STATE] = "UPDATE credentials SET state = ?2, error = ?3, updated_at = ?4, "
                            ATTEMPTS " WHERE id = " RESOLVED_ID,
    [STMT_CRED_DELETE] = "DELETE FROM credentials WHERE id = ?1",
    [STMT_CRED_STATE_COUNTS] = "SELECT state, count(*) FROM credentials GROUP BY state",
    [STMT_CRED_CONFIRM] = "UPDATE credentials SET id = ?2, " KEEP("uri", "?3") ", "
                          KEEP("created_at", "?4") ","
                          " state = 'synced', error = '', attempts = 0, updated_at = ?5"
                          " WHERE id = ?1",
    [STMT_TOKEN_PUT] = "INSERT OR REPLACE INTO tokens (cred_id, token) VALUES (?1, ?2)",
    /* One indexed query: no credential row -> no result; no token -> NULL. */
    [STMT_TOKEN_GET] = "SELECT c.id, t.token FROM credentials AS c"
                       " LEFT JOIN tokens AS t ON t.cred_id = c.id"
                       " WHERE c.id = " RESOLVED_ID,
};

const char *store_sql_text(store_stmt_id id)
{
    return statements[id];
}

int store_sql_migration_count(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

const char *store_sql_migration(int index)
{
    return migrations[index];
}

#define LIKE3 " LIKE ?3 ESCAPE '\\'"

static const store_kind_info kinds[STORE_KIND_COUNT] = {
    [STORE_KIND_RULE] = {
        .noun = "rule",
        .table = "rules",
        .cols = STORE_RULE_COLS,
        .filter_sql = "(id" LIKE3 " OR cidr" LIKE3 " OR description" LIKE3
                      " OR policy_id" LIKE3 ")",
        .alias_kind = "rule",
        .resolve = STMT_RULE_RESOLVE,
        .set_state = STMT_RULE_SET_STATE,
        .remove = STMT_RULE_DELETE,
        .state_counts = STMT_RULE_STATE_COUNTS,
    },
    [STORE_KIND_CRED] = {
        .noun = "credential",
        .table = "credentials",
        .cols = STORE_CRED_COLS,
        .filter_sql = "(id" LIKE3 " OR description" LIKE3 " OR owner_id" LIKE3
                      " OR acl" LIKE3 ")",
        .alias_kind = "credential",
        .resolve = STMT_CRED_RESOLVE,
        .set_state = STMT_CRED_SET_STATE,
        .remove = STMT_CRED_DELETE,
        .state_counts = STMT_CRED_STATE_COUNTS,
    },
};

const store_kind_info *store_kind_get(store_kind kind)
{
    return &kinds[kind];
}

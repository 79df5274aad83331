/* Every SQL text of the store: the schema migrations and the cached statements. */
#include "store_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
/* The rules table's columns (migrations 1 and 3 differ only in how the state is
 * checked), then its indexes: made by migrations 1 and 3, and built again by a
 * bulk import that dropped them (store_import.c). */
#define RULE_COLUMNS(state_check) \
    " id TEXT NOT NULL PRIMARY KEY," \
    " uri TEXT NOT NULL DEFAULT ''," \
    " created_at TEXT NOT NULL DEFAULT ''," \
    " description TEXT NOT NULL DEFAULT ''," \
    " metadata TEXT NOT NULL DEFAULT ''," \
    " cidr TEXT NOT NULL," \
    " policy_id TEXT NOT NULL," \
    " policy_uri TEXT NOT NULL DEFAULT ''," \
    " action TEXT NOT NULL CHECK (action IN ('allow', 'deny'))," \
    " state TEXT NOT NULL CHECK (" state_check ")," \
    " error TEXT NOT NULL DEFAULT ''," \
    " attempts INTEGER NOT NULL DEFAULT 0," \
    " updated_at TEXT NOT NULL DEFAULT '') WITHOUT ROWID;"
/* The credentials table's columns (migrations 1 and 4 differ only in the states). */
#define CRED_COLUMNS(state_check) \
    " seq INTEGER PRIMARY KEY," \
    " id TEXT NOT NULL UNIQUE," \
    " uri TEXT NOT NULL DEFAULT ''," \
    " created_at TEXT NOT NULL DEFAULT ''," \
    " description TEXT NOT NULL DEFAULT ''," \
    " metadata TEXT NOT NULL DEFAULT ''," \
    " acl TEXT NOT NULL DEFAULT ''," \
    " owner_id TEXT NOT NULL DEFAULT ''," \
    " state TEXT NOT NULL CHECK (" state_check ")," \
    " error TEXT NOT NULL DEFAULT ''," \
    " attempts INTEGER NOT NULL DEFAULT 0," \
    " updated_at TEXT NOT NULL DEFAULT '');"
#define RULE_INDEXES \
    "CREATE INDEX rules_policy_id ON rules(policy_id, id);" \
    "CREATE UNIQUE INDEX rules_live_key ON rules(policy_id, cidr)" \
    " WHERE state NOT IN ('deleting', 'remote_deleted');"
#define RULE_INDEXES_DROP "DROP INDEX rules_policy_id; DROP INDEX rules_live_key;"
/* The console's sort orders (cidr in address order, action, state), each one index
 * so a page costs the same at any depth in every order: made by the migration that
 * added cidr_key, dropped and rebuilt by a bulk import with the others. */
#define RULE_SORT_INDEXES \
    "CREATE INDEX rules_cidr_key ON rules(cidr_key, id);" \
    "CREATE INDEX rules_action ON rules(action, id);" \
    "CREATE INDEX rules_state ON rules(state, id);"
#define RULE_SORT_INDEXES_DROP \
    "DROP INDEX rules_cidr_key; DROP INDEX rules_action; DROP INDEX rules_state;"
/* From migration 4 on: a rule in conflict holds no natural key (the remote rule it
 * clashes with is cached beside it). */
#define RULE_INDEXES_V4 \
    "CREATE INDEX rules_policy_id ON rules(policy_id, id);" \
    "CREATE UNIQUE INDEX rules_live_key ON rules(policy_id, cidr)" \
    " WHERE state NOT IN ('deleting', 'remote_deleted', 'conflict');"
#define STATES_V4 \
    "state = 'new' OR state = 'creating' OR state = 'synced'" \
    "  OR state = 'deleting' OR state = 'failed' OR state = 'unknown'" \
    "  OR state = 'orphaned' OR state = 'remote_deleted' OR state = 'edited'" \
    "  OR state = 'conflict'"
/* A row that leaves edited/conflict, is renamed or removed takes its edit along
 * (`k` the kind's name in edits, `t` its table). */
#define EDIT_TRIGGERS(k, t) \
    "CREATE TRIGGER " t "_edit_removed AFTER DELETE ON " t " BEGIN" \
    " DELETE FROM edits WHERE kind = '" k "' AND id = old.id;" \
    " DELETE FROM conflicts WHERE kind = '" k "' AND id = old.id; END;" \
    "CREATE TRIGGER " t "_edit_renamed AFTER UPDATE OF id ON " t \
    " WHEN new.id <> old.id BEGIN" \
    " UPDATE edits SET id = new.id WHERE kind = '" k "' AND id = old.id;" \
    " UPDATE conflicts SET id = new.id WHERE kind = '" k "' AND id = old.id; END;" \
    "CREATE TRIGGER " t "_edit_settled AFTER UPDATE OF state ON " t \
    " WHEN old.state IN ('edited', 'conflict') AND new.state <> old.state BEGIN" \
    " DELETE FROM edits WHERE kind = '" k "' AND id IN (old.id, new.id)" \
    "  AND new.state NOT IN ('edited', 'conflict');" \
    " DELETE FROM conflicts WHERE kind = '" k "' AND id IN (old.id, new.id)" \
    "  AND new.state <> 'conflict'; END;"

/* Every write to table `t` counts in changes (`k` the kind's name there): the
 * mirror's entity tags follow it. Dropped and made again by a bulk import. */
#define CHANGE_TRIGGER(k, t, when) \
    "CREATE TRIGGER " t "_changed_" when " AFTER " when " ON " t " BEGIN" \
    " UPDATE changes SET n = n + 1 WHERE kind = '" k "'; END;"
#define CHANGE_TRIGGERS(k, t) \
    CHANGE_TRIGGER(k, t, "insert") CHANGE_TRIGGER(k, t, "update") \
    CHANGE_TRIGGER(k, t, "delete")
#define CHANGE_TRIGGERS_DROP(t) \
    "DROP TRIGGER " t "_changed_insert; DROP TRIGGER " t "_changed_update;" \
    " DROP TRIGGER " t "_changed_delete;"

static const char *const migrations[] = {
    "CREATE TABLE rules (" RULE_COLUMNS(
        "state IN ('new', 'creating', 'synced', 'deleting',"
        "  'failed', 'unknown', 'orphaned', 'remote_deleted')")
    RULE_INDEXES
    "CREATE TABLE credentials (" CRED_COLUMNS(
        "state IN ('new', 'creating', 'synced', 'deleting',"
        "  'failed', 'unknown', 'orphaned', 'remote_deleted')")
    "CREATE TABLE aliases ("
    " local_id TEXT PRIMARY KEY,"
    " remote_id TEXT NOT NULL,"
    " kind TEXT NOT NULL CHECK (kind IN ('rule', 'credential'))) WITHOUT ROWID;"
    "CREATE INDEX aliases_remote ON aliases(remote_id);"
    "CREATE TABLE tokens ("
    " cred_id TEXT PRIMARY KEY"
    "  REFERENCES credentials(id) ON UPDATE CASCADE ON DELETE CASCADE,"
    " token TEXT NOT NULL) WITHOUT ROWID;",
    /* 2: agents ask for a token by name (the credential's description). */
    "CREATE INDEX credentials_description ON credentials(description);",
    /*
     * 3: the rules table again, with two changes.
     * - The state CHECK as a chain of comparisons: SQLite evaluates an IN list of
     *   more than two constants through a temporary B-tree built for every row
     *   written (measured: a quarter of a bulk import's time).
     * - The store canonicalises every CIDR it writes (IPv6 lower-case), so the
     *   natural key is unique whatever the spelling. Rows an older version cached
     *   from a remote as sent are made canonical (canon_cidr, a function the store
     *   registers on its connection before migrating); one that would then clash with a
     *   live rule of the same key is left as it was (OR IGNORE) and stays visible,
     *   rather than failing the upgrade.
     * No other table references rules, so it can be copied and renamed.
     */
    "CREATE TABLE rules_v3 (" RULE_COLUMNS(
        "state = 'new' OR state = 'creating' OR state = 'synced'"
        "  OR state = 'deleting' OR state = 'failed' OR state = 'unknown'"
        "  OR state = 'orphaned' OR state = 'remote_deleted'")
    "INSERT INTO rules_v3 SELECT id, uri, created_at, description, metadata, cidr,"
    " policy_id, policy_uri, action, state, error, attempts, updated_at FROM rules;"
    "DROP TABLE rules;"
    "ALTER TABLE rules_v3 RENAME TO rules;"
    RULE_INDEXES
    "UPDATE OR IGNORE rules SET cidr = canon_cidr(cidr) WHERE cidr <> canon_cidr(cidr);",
    /*
     * 4: edits in place. Both tables again, for the states edited and conflict; a
     * conflicting rule leaves the natural key's index. Per edited field, `edits`
     * keeps the value the remote had (base) and, in a conflict, the remote's new
     * one; `conflicts` says why a row waits for the user. The tokens table is
     * rebuilt with the credentials (its foreign key follows the rename), so no
     * token is ever deleted by the drop.
     */
    "CREATE TABLE rules_v4 (" RULE_COLUMNS(STATES_V4)
    "INSERT INTO rules_v4 SELECT id, uri, created_at, description, metadata, cidr,"
    " policy_id, policy_uri, action, state, error, attempts, updated_at FROM rules;"
    "DROP TABLE rules;"
    "ALTER TABLE rules_v4 RENAME TO rules;"
    RULE_INDEXES_V4
    "CREATE TABLE credentials_v4 (" CRED_COLUMNS(STATES_V4)
    "INSERT INTO credentials_v4 SELECT seq, id, uri, created_at, description, metadata,"
    " acl, owner_id, state, error, attempts, updated_at FROM credentials;"
    "CREATE TABLE tokens_v4 ("
    " cred_id TEXT PRIMARY KEY"
    "  REFERENCES credentials_v4(id) ON UPDATE CASCADE ON DELETE CASCADE,"
    " token TEXT NOT NULL) WITHOUT ROWID;"
    "INSERT INTO tokens_v4 SELECT cred_id, token FROM tokens;"
    "DROP TABLE tokens;"
    "DROP TABLE credentials;"
    "ALTER TABLE credentials_v4 RENAME TO credentials;"
    "ALTER TABLE tokens_v4 RENAME TO tokens;"
    "CREATE INDEX credentials_description ON credentials(description);"
    "CREATE TABLE edits ("
    " kind TEXT NOT NULL CHECK (kind IN ('rule', 'credential')),"
    " id TEXT NOT NULL,"
    " field TEXT NOT NULL,"
    " base TEXT NOT NULL,"
    " remote TEXT,"
    " PRIMARY KEY (kind, id, field)) WITHOUT ROWID;"
    "CREATE TABLE conflicts ("
    " kind TEXT NOT NULL CHECK (kind IN ('rule', 'credential')),"
    " id TEXT NOT NULL,"
    " reason TEXT NOT NULL CHECK (reason IN ('fields', 'gone', 'key', 'rejected')),"
    " other_id TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (kind, id)) WITHOUT ROWID;"
    EDIT_TRIGGERS("rule", "rules")
    EDIT_TRIGGERS("credential", "credentials"),
    /* 5: what the cache knows about itself (when it last synced), so it survives a
     * restart of the console. */
    "CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;",
    /* 6: every sort order the console offers walks an index. cidr_key is the cidr
     * in address order (cidr_sort_key, store_schema.c), set by the store's every
     * write of a cidr; rows cached before are keyed here. Credentials by state, and
     * by description then id (the agents' lookup by description uses it too). */
    "ALTER TABLE rules ADD COLUMN cidr_key BLOB NOT NULL DEFAULT x'';"
    "UPDATE rules SET cidr_key = cidr_sort_key(cidr);"
    RULE_SORT_INDEXES
    "CREATE INDEX credentials_state ON credentials(state, id);"
    "DROP INDEX credentials_description;"
    "CREATE INDEX credentials_description ON credentials(description, id);",
    /* 7: when the console first showed a token (NULL: not yet shown), so a token a
     * sync brought while nobody looked still shows once, even after a restart.
     * Tokens held before this step count as shown: their owner had them. */
    "ALTER TABLE tokens ADD COLUMN shown_at TEXT;"
    "UPDATE tokens SET shown_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now');",
    /* 8: when a local agent last handed out each credential's token (seconds since
     * the epoch), so the console can say which credentials are in use before one
     * is deleted. Ids and times only. The row follows its credential: renamed by
     * a confirm, gone with it. */
    "CREATE TABLE token_fetches ("
    " cred_id TEXT PRIMARY KEY"
    "  REFERENCES credentials(id) ON UPDATE CASCADE ON DELETE CASCADE,"
    " last_at INTEGER NOT NULL) WITHOUT ROWID;",
    /*
     * 9: a fleet. `changes` counts the writes to each kind's table (one trigger per
     * statement kind and row, so every path that writes counts, the sqlite3 shell
     * included); with `cache_id` (random, per cache) it makes the mirror's entity
     * tags, which change whenever a page may have and let a 304 be answered without
     * reading rows. A bulk import drops the rules' triggers and counts once
     * (store_import.c). `http_cache` is a follower's copy of the pages it pulled:
     * per URL, the entity tag and the body, reused when the remote answers 304.
     */
    "CREATE TABLE changes (kind TEXT NOT NULL PRIMARY KEY"
    "  CHECK (kind IN ('rule', 'credential')), n INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO changes (kind, n) VALUES ('rule', 1), ('credential', 1);"
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('cache_id', lower(hex(randomblob(8))));"
    CHANGE_TRIGGERS("rule", "rules")
    CHANGE_TRIGGERS("credential", "credentials")
    "CREATE TABLE http_cache ("
    " url TEXT NOT NULL UNIQUE,"
    " collection TEXT NOT NULL,"
    " etag TEXT NOT NULL,"
    " body BLOB NOT NULL,"
    " used_ms INTEGER NOT NULL);",
    /* 10: the look before each write: a delete that finds the object changed
     * remotely ('changed'), a PATCH whose reply shows another writer ('crossed'). */
    "DROP TRIGGER rules_edit_removed; DROP TRIGGER rules_edit_renamed;"
    "DROP TRIGGER rules_edit_settled; DROP TRIGGER credentials_edit_removed;"
    "DROP TRIGGER credentials_edit_renamed; DROP TRIGGER credentials_edit_settled;"
    "CREATE TABLE conflicts_v10 ("
    " kind TEXT NOT NULL CHECK (kind IN ('rule', 'credential')),"
    " id TEXT NOT NULL,"
    " reason TEXT NOT NULL CHECK (reason IN ('fields', 'gone', 'key', 'rejected',"
    "  'changed', 'crossed')),"
    " other_id TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (kind, id)) WITHOUT ROWID;"
    "INSERT INTO conflicts_v10 SELECT kind, id, reason, other_id FROM conflicts;"
    "DROP TABLE conflicts;"
    "ALTER TABLE conflicts_v10 RENAME TO conflicts;"
    EDIT_TRIGGERS("rule", "rules")
    EDIT_TRIGGERS("credential", "credentials"),
    /*
     * 11: credential rotation. A link from the old credential to its successor
     * (each by its current id: renamed with its row), the grace period, the
     * command to run once the successor's token is held and how it went. The
     * link goes with its successor; when the old credential goes, it is retired
     * and kept (an agent asking for the old id learns the successor's) until the
     * sync forgets it. Times in seconds since the epoch, 0: not yet.
     */
    "CREATE TABLE rotations ("
    " old_id TEXT NOT NULL PRIMARY KEY,"
    " new_id TEXT NOT NULL UNIQUE,"
    " mode TEXT NOT NULL CHECK (mode IN ('grace', 'finish', 'now')),"
    " grace_s INTEGER NOT NULL,"
    " started_at INTEGER NOT NULL,"
    " held_at INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL CHECK (state IN ('active', 'retiring', 'retired', 'stopped')),"
    " exec TEXT NOT NULL DEFAULT '',"
    " exec_state TEXT NOT NULL DEFAULT 'none'"
    "  CHECK (exec_state IN ('none', 'pending', 'ok', 'failed')),"
    " error TEXT NOT NULL DEFAULT '',"
    " retired_at INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
    "CREATE TRIGGER credentials_rotation_renamed AFTER UPDATE OF id ON credentials"
    " WHEN new.id <> old.id BEGIN"
    " UPDATE rotations SET old_id = new.id WHERE old_id = old.id;"
    " UPDATE rotations SET new_id = new.id WHERE new_id = old.id; END;"
    "CREATE TRIGGER credentials_rotation_removed AFTER DELETE ON credentials BEGIN"
    " DELETE FROM rotations WHERE new_id = old.id;"
    " UPDATE rotations SET state = 'retired',"
    "  retired_at = CAST(strftime('%s', 'now') AS INTEGER)"
    "  WHERE old_id = old.id AND state <> 'retired'; END;",
};

/* An id or a local alias, as ?1: the row's current id. */
#define RESOLVED_ID "coalesce((SELECT remote_id FROM aliases WHERE local_id = ?1), ?1)"
/* Same text as rules_live_key's WHERE, so the planner can use that index. */
#define LIVE "state NOT IN ('deleting', 'remote_deleted', 'conflict')"
/* Count create attempts; a confirmed row starts over. */
#define ATTEMPTS \
    "attempts = CASE ?2 WHEN 'creating' THEN attempts + 1 WHEN 'synced' THEN 0 " \
    "ELSE attempts END"
/* The local id an orphaned credential was created under (its alias), else itself. */
#define LOCAL_OF(id) \
    "coalesce((SELECT a.local_id FROM aliases AS a WHERE a.remote_id = " id \
    " AND a.kind = 'credential' ORDER BY a.local_id DESC LIMIT 1), " id ")"
/* Local rows a listing can settle: sent or about to be, never confirmed. */
#define ADOPTABLE "('new', 'creating', 'unknown', 'failed')"
/* Natural key of a local row that never got a remote id; the LIVE term lets the
 * join probe rules_live_key (a partial index is used only when the query repeats
 * its WHERE). */
#define KEY_MATCH(r) \
    "p.policy_id = " r ".policy_id AND p.cidr = " r ".cidr AND " r ".state IN " \
    ADOPTABLE " AND " r "." LIVE
#define UNSEEN(p) "NOT EXISTS (SELECT 1 FROM rules AS x WHERE x.id = " p ".id)"
#define UNSEEN_CRED(p) "NOT EXISTS (SELECT 1 FROM credentials AS x WHERE x.id = " p ".id)"
/* Two remote copies with one marker: the lowest id is the one a row adopts (the
 * alias insert and the rename must agree); the other is a stray. */
#define FIRST_COPY(p) \
    p ".id = (SELECT min(q.id) FROM pull_creds AS q WHERE q.marker = " p ".marker)"
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
    /* A rule's natural key among live rows (rules_live_key). */
    [STMT_LIVE_ID_BY_KEY] = "SELECT id FROM rules"
                            " WHERE policy_id = ?1 AND cidr = ?2 AND " LIVE " LIMIT 1",

    /* A new token is not yet shown (shown_at NULL), whoever brought it. */
    [STMT_TOKEN_PUT] = "INSERT OR REPLACE INTO tokens (cred_id, token, shown_at)"
                       " VALUES (?1, ?2, NULL)",
    [STMT_TOKEN_MARK_SHOWN] = "UPDATE tokens SET shown_at = ?2 WHERE cred_id = "
                              RESOLVED_ID " AND shown_at IS NULL",
    [STMT_TOKEN_UNSEEN] = "SELECT t.cred_id FROM tokens AS t JOIN credentials AS c"
                          " ON c.id = t.cred_id WHERE t.shown_at IS NULL"
                          " AND c.state NOT IN ('deleting', 'remote_deleted') ORDER BY c.seq",
    /* A credential no longer cached is skipped (no row to select); an older time
     * never moves the last one back. */
    [STMT_FETCH_RECORD] = "INSERT INTO token_fetches (cred_id, last_at) SELECT id, ?2"
                          " FROM credentials WHERE id = " RESOLVED_ID
                          " ON CONFLICT (cred_id) DO UPDATE"
                          " SET last_at = max(last_at, excluded.last_at)",
    [STMT_FETCH_SINCE] = "SELECT last_at FROM token_fetches WHERE cred_id = " RESOLVED_ID
                         " AND last_at >= ?2",
    /* One indexed query: no credential row -> no result; no token -> NULL. */
    [STMT_POLICY_IDS] = "SELECT min(policy_id) FROM rules WHERE policy_id > ?1",
    [STMT_POLICY_COUNTS] = "SELECT policy_id, count(*) FROM rules WHERE policy_id > ?1"
                           " GROUP BY policy_id ORDER BY policy_id LIMIT ?2",
    /* A rotation pair counts once: the successor once its token is held (and it
     * is live), the old one until then. A successor renamed by hand is no pair
     * for the old name: the old one keeps it. */
    [STMT_BY_DESCRIPTION] = "SELECT id FROM credentials AS c WHERE description = ?1"
                            " AND state NOT IN ('deleting', 'remote_deleted')"
                            " AND NOT EXISTS (SELECT 1 FROM rotations AS r"
                            "  JOIN tokens AS t ON t.cred_id = r.new_id"
                            "  JOIN credentials AS n ON n.id = r.new_id"
                            "  WHERE r.old_id = c.id AND n.description = c.description"
                            "  AND n.state NOT IN ('deleting', 'remote_deleted'))"
                            " AND NOT EXISTS (SELECT 1 FROM rotations AS r"
                            "  WHERE r.new_id = c.id AND NOT EXISTS"
                            "  (SELECT 1 FROM tokens AS t WHERE t.cred_id = c.id))"
                          " ORDER BY id LIMIT ?2",
    [STMT_ROTATION_SUCCESSOR] = "SELECT r.new_id FROM rotations AS r"
                                " JOIN tokens AS t ON t.cred_id = r.new_id"
                                " JOIN credentials AS n ON n.id = r.new_id"
                                " WHERE r.old_id = " RESOLVED_ID
                                " AND n.state NOT IN ('deleting', 'remote_deleted')",
    [STMT_DATA_VERSION] = "PRAGMA data_version",
    [STMT_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [STMT_META_SET] = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
    /* a fleet (store_http.c) */
    [STMT_CHANGE_TAG] = "SELECT n, (SELECT value FROM meta WHERE key = 'cache_id')"
                        " FROM changes WHERE kind = ?1",
    [STMT_CHANGE_BUMP] = "UPDATE changes SET n = n + 1 WHERE kind = ?1",
    [STMT_HTTP_GET] = "SELECT etag, body FROM http_cache WHERE url = ?1",
    [STMT_HTTP_TOUCH] = "UPDATE http_cache SET used_ms = ?2 WHERE url = ?1",
    [STMT_HTTP_PUT] = "INSERT OR REPLACE INTO http_cache (url, collection, etag, body,"
                      " used_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    [STMT_HTTP_PRUNE] = "DELETE FROM http_cache WHERE collection = ?1 AND used_ms < ?2",
    /* The ACL the remote enforces: an ACL edit not yet sent keeps its base. */
    [STMT_TOKEN_GET] = "SELECT c.id, t.token, c.state, coalesce((SELECT e.base FROM edits"
                       " AS e WHERE e.kind = 'credential' AND e.id = c.id AND e.field = 'acl'),"
                       " c.acl) FROM credentials AS c"
                       " LEFT JOIN tokens AS t ON t.cred_id = c.id"
                       " WHERE c.id = " RESOLVED_ID,

    /* ---- outbox ---- */
    /* An orphaned credential back to a create under its local id. */
    [STMT_REQUEUE_ORPHAN] = "UPDATE credentials SET id = " LOCAL_OF("?1") ", uri = '',"
                            " state = 'new', error = '', attempts = 0, updated_at = ?2"
                            " WHERE id = ?1 AND state = 'orphaned'",
    [STMT_TOKEN_DELETE] = "DELETE FROM tokens WHERE cred_id = ?1",
    /* ---- pull staging ---- */
    [STMT_PULL_RULES_CLEAR] = "DELETE FROM pull_rules",
    [STMT_PULL_CREDS_CLEAR] = "DELETE FROM pull_creds",
    /* ---- edits (store_edit.c): ?1 kind ('rule', 'credential'), ?2 id ---- */
    [STMT_EDIT_LIST] = "SELECT field, base, remote FROM edits WHERE kind = ?1 AND id = ?2",
    [STMT_EDIT_PUT] = "INSERT OR IGNORE INTO edits (kind, id, field, base) VALUES (?1, ?2, ?3, ?4)",
    [STMT_EDIT_SET] = "UPDATE edits SET base = ?4, remote = ?5"
                      " WHERE kind = ?1 AND id = ?2 AND field = ?3",
    [STMT_EDIT_DROP] = "DELETE FROM edits WHERE kind = ?1 AND id = ?2 AND field = ?3",
    [STMT_CONFLICT_GET] = "SELECT reason, other_id FROM conflicts WHERE kind = ?1 AND id = ?2",
    [STMT_CONFLICT_PUT] = "INSERT OR REPLACE INTO conflicts (kind, id, reason, other_id)"
                          " VALUES (?1, ?2, ?3, ?4)",
    [STMT_PULL_RULES_COUNT] = "SELECT count(*) FROM pull_rules",
    [STMT_PULL_CREDS_COUNT] = "SELECT count(*) FROM pull_creds",
    /* After the merge: listed rules left out of the cache because another listed
     * id holds their policy and cidr (the live key keeps one). */
    [STMT_PULL_RULES_SAME_KEY] = "SELECT count(*) FROM pull_rules AS p WHERE " UNSEEN("p")
                                 " AND EXISTS (SELECT 1 FROM pull_rules AS q WHERE"
                                 " q.policy_id = p.policy_id AND q.cidr = p.cidr"
                                 " AND q.id <> p.id)",

    /* Whether any local row waits for its create: else the key and marker steps
     * cannot match and are skipped (each is a pass over the whole listing). */
    [STMT_MERGE_RULE_LOCAL_CREATES] = "SELECT 1 FROM rules WHERE state IN " ADOPTABLE
                                      " OR state = 'edited' LIMIT 1",
    [STMT_MERGE_CRED_LOCAL_CREATES] = "SELECT 1 FROM credentials WHERE state IN " ADOPTABLE
                                      " LIMIT 1",

    /* ---- merge: rules (?1 = now) ---- */
    [STMT_MERGE_RULE_GONE_ALIASES] = "DELETE FROM aliases WHERE kind = 'rule' AND remote_id IN"
                                     " (SELECT id FROM rules WHERE state = 'deleting'"
                                     " AND id NOT IN (SELECT id FROM pull_rules))",
    [STMT_MERGE_RULE_GONE] = "DELETE FROM rules WHERE state = 'deleting'"
                             " AND id NOT IN (SELECT id FROM pull_rules)",
    [STMT_MERGE_RULE_REMOTE_DELETED] = "UPDATE rules SET state = 'remote_deleted', error = '',"
                                       " updated_at = ?1 WHERE state = 'synced'"
                                       " AND id NOT IN (SELECT id FROM pull_rules)",
    /* Aliases first: the adopt below renames the rows. */
    [STMT_MERGE_RULE_ADOPT_ALIASES] = "INSERT OR IGNORE INTO aliases (local_id, remote_id, kind)"
                                      " SELECT r.id, p.id, 'rule' FROM pull_rules AS p"
                                      " JOIN rules AS r ON " KEY_MATCH("r")
                                      " AND p.action = r.action WHERE " UNSEEN("p"),
    /* A local create the remote holds already (a queued one, or one refused as a
     * duplicate) with another description or metadata is not dropped silently: it
     * becomes a conflict of those fields (the remote's value beside the one given
     * here; the base is a create's, empty: a remote value that is empty too is no
     * conflict, and the next push sends the one given), for the user to keep or
     * let go. Lines and the record are keyed by the local id: the adopt's rename
     * carries them. */
    [STMT_MERGE_RULE_ADOPT_EDITS] = "INSERT OR IGNORE INTO edits (kind, id, field, base,"
                                    " remote) SELECT 'rule', r.id, f.name, '', CASE f.name WHEN"
                                    " 'description' THEN p.description ELSE p.metadata END"
                                    " FROM pull_rules AS p JOIN rules AS r ON " KEY_MATCH("r")
                                    " AND p.action = r.action"
                                    " JOIN (SELECT 'description' AS name UNION ALL"
                                    " SELECT 'metadata') AS f"
                                    " WHERE " UNSEEN("p") " AND ((f.name = 'description' AND"
                                    " r.description <> '' AND r.description <> p.description)"
                                    " OR (f.name = 'metadata' AND r.metadata <> '' AND"
                                    " r.metadata <> p.metadata))",
    [STMT_MERGE_RULE_ADOPT_CONFLICTS] = "INSERT OR REPLACE INTO conflicts (kind, id, reason,"
                                        " other_id) SELECT DISTINCT 'rule', e.id, 'fields', ''"
                                        " FROM edits AS e JOIN rules AS r ON r.id = e.id"
                                        " WHERE e.kind = 'rule' AND r.state IN " ADOPTABLE,
    [STMT_MERGE_RULE_ADOPT] = "UPDATE rules SET id = p.id, uri = p.uri,"
                              " created_at = p.created_at,"
                              " description = CASE rules.description WHEN '' THEN"
                              " p.description ELSE rules.description END,"
                              " metadata = CASE rules.metadata WHEN '' THEN p.metadata"
                              " ELSE rules.metadata END, policy_uri = p.policy_uri,"
                              " state = CASE WHEN EXISTS (SELECT 1 FROM edits AS e WHERE"
                              " e.kind = 'rule' AND e.id = rules.id) THEN 'conflict' ELSE"
                              " 'synced' END, error = CASE WHEN EXISTS (SELECT 1 FROM edits"
                              " AS e WHERE e.kind = 'rule' AND e.id = rules.id) THEN 'the"
                              " remote holds this rule already, with another description or"
                              " metadata: keep yours (--keep-local) or take theirs"
                              " (--take-remote)' ELSE '' END, attempts = 0, updated_at = ?1"
                              " FROM pull_rules AS p WHERE " KEY_MATCH("rules")
                              " AND p.action = rules.action AND " UNSEEN("p"),
    /* A remote rule whose key a local row holds with another meaning: a create of
     * the other action, or an edit's new cidr. Both become conflicts (which hold no
     * key), so the remote rule is cached beside them by the add below. */
    [STMT_MERGE_RULE_KEY_CONFLICTS] = "INSERT OR REPLACE INTO conflicts (kind, id, reason,"
                                      " other_id) SELECT 'rule', r.id, 'key', p.id"
                                      " FROM pull_rules AS p JOIN rules AS r ON"
                                      " p.policy_id = r.policy_id AND p.cidr = r.cidr AND r."
                                      LIVE " WHERE " UNSEEN("p") " AND ((r.state IN "
                                      ADOPTABLE " AND p.action <> r.action)"
                                      " OR r.state = 'edited')",
    [STMT_MERGE_RULE_CONFLICT] = "UPDATE rules SET state = 'conflict', error = 'the server"
                                 " already has rule ' || c.other_id || ' (' || p.action ||"
                                 " ') for ' || rules.cidr || ' in policy ' || rules.policy_id"
                                 " || ': adopt it (--take-remote) or replace it"
                                 " (--keep-local)', updated_at = ?1 FROM conflicts AS c"
                                 " JOIN pull_rules AS p ON p.id = c.other_id"
                                 " WHERE c.kind = 'rule' AND c.id = rules.id"
                                 " AND c.reason = 'key' AND rules.state <> 'conflict'",
    [STMT_MERGE_RULE_REQUEUE] = "UPDATE rules SET state = 'new', error = '', updated_at = ?1"
                                " WHERE state IN ('creating', 'unknown')",

    /* ---- merge: credentials (?1 = now) ---- */
    [STMT_MERGE_CRED_GONE_ALIASES] = "DELETE FROM aliases WHERE kind = 'credential' AND"
                                     " remote_id IN (SELECT id FROM credentials WHERE"
                                     " state = 'deleting' AND id NOT IN"
                                     " (SELECT id FROM pull_creds))",
    [STMT_MERGE_CRED_GONE] = "DELETE FROM credentials WHERE state = 'deleting'"
                             " AND id NOT IN (SELECT id FROM pull_creds)",
    [STMT_MERGE_CRED_REMOTE_DELETED] = "UPDATE credentials SET state = 'remote_deleted',"
                                       " error = '', updated_at = ?1 WHERE state = 'synced'"
                                       " AND id NOT IN (SELECT id FROM pull_creds)",
    [STMT_MERGE_CRED_UNORPHAN] = "UPDATE credentials SET id = " LOCAL_OF("credentials.id") ","
                                 " uri = '', state = 'new', error = '', attempts = 0,"
                                 " updated_at = ?1 WHERE state = 'orphaned'"
                                 " AND id NOT IN (SELECT id FROM pull_creds)",
    /* An alias named after a row's own id would hijack lookups of that row. */
    [STMT_MERGE_CRED_STALE_ALIASES] = "DELETE FROM aliases WHERE kind = 'credential'"
                                      " AND local_id IN (SELECT id FROM credentials)",
    /* Our own credential whose remote copy still carries its creation marker (a
     * create confirmed, its PATCH not yet through; or an older rampart's): the
     * server's metadata becomes the base of an edit, so the next push sends the
     * user's metadata and the marker goes. Others' markers are left alone: their
     * sync may still need them to find a create whose reply it lost. */
    [STMT_MERGE_CRED_MARKED_EDITS] = "INSERT OR IGNORE INTO edits (kind, id, field, base)"
                                     " SELECT 'credential', c.id, 'metadata', p.raw_metadata"
                                     " FROM pull_creds AS p JOIN credentials AS c ON c.id ="
                                     " p.id WHERE c.state = 'synced' AND p.raw_metadata <> ''"
                                     " AND p.kept = 0 AND p.marker IN (SELECT a.local_id FROM"
                                     " aliases AS a WHERE a.remote_id = c.id"
                                     " AND a.kind = 'credential')",
    [STMT_MERGE_CRED_MARKED] = "UPDATE credentials SET state = 'edited', updated_at = ?1"
                               " WHERE state = 'synced' AND EXISTS (SELECT 1 FROM edits AS e"
                               " WHERE e.kind = 'credential' AND e.id = credentials.id)",
    [STMT_MERGE_CRED_ORPHAN_ALIASES] = "INSERT OR IGNORE INTO aliases (local_id, remote_id, kind)"
                                       " SELECT c.id, p.id, 'credential' FROM pull_creds AS p"
                                       " JOIN credentials AS c ON c.id = p.marker"
                                       " WHERE p.marker <> '' AND c.state IN " ADOPTABLE
                                       " AND " FIRST_COPY("p") " AND " UNSEEN_CRED("p"),
    [STMT_MERGE_CRED_ORPHAN] = "UPDATE credentials SET id = p.id, uri = p.uri,"
                               " created_at = p.created_at, state = 'orphaned', error ="
                               " 'created remotely as ' || p.id || ' but the reply with its"
                               " token was lost: the next sync deletes it there and creates"
                               " it again', updated_at = ?1 FROM pull_creds AS p"
                               " WHERE p.marker = credentials.id AND p.marker <> ''"
                               " AND credentials.state IN " ADOPTABLE " AND " FIRST_COPY("p")
                               " AND " UNSEEN_CRED("p"),
    [STMT_MERGE_CRED_REQUEUE] = "UPDATE credentials SET state = 'new', error = '',"
                                " updated_at = ?1 WHERE state IN ('creating', 'unknown')",
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

const char *store_sql_rule_indexes(bool create)
{
    /* The natural key's unique index (rules_live_key) is never dropped. */
    return create ? "CREATE INDEX rules_policy_id ON rules(policy_id, id);" RULE_SORT_INDEXES
                  : "DROP INDEX rules_policy_id;" RULE_SORT_INDEXES_DROP;
}

const char *store_sql_rule_change_triggers(bool create)
{
    return create ? CHANGE_TRIGGERS("rule", "rules") : CHANGE_TRIGGERS_DROP("rules");
}

/* ---- one statement family per operation, made from the kind's descriptor ---- */

/* What the store keeps per kind beside the descriptor: an index key it derives
 * from a field (a rule's cidr in address order, for the console's sort), the
 * pull's staging table, and what a credential's staging adds (the metadata as the
 * server had it, read in place of the column; the creation marker, which a kept
 * copy sets to '', and its index). Every other column of the staging and of the
 * merge's statements comes from the descriptor. */
typedef struct kind_sql {
    const char *key_field, *key_column, *key_fn;
    const char *staging;
    const char *staged_column, *staged_expr;
    const char *keep_cols, *keep_values;
    const char *put_cols;     /* what a staged row carries beside its columns */
    const char *staging_cols; /* their definitions in the staging table */
    const char *staging_index; /* the staging's indexed column (NULL: none) */
} kind_sql;

static const kind_sql kind_sqls[MODEL_KIND_COUNT] = {
    [MODEL_KIND_RULE] = {"cidr", "cidr_key", "cidr_sort_key", "pull_rules", "", "", "", "", "",
                         "", NULL},
    [MODEL_KIND_CRED] = {NULL, NULL, NULL, "pull_creds", "metadata",
                         "CASE raw_metadata WHEN '' THEN metadata ELSE raw_metadata END",
                         ", marker", ", ''", ", marker, raw_metadata",
                         " marker TEXT NOT NULL, raw_metadata TEXT NOT NULL DEFAULT '',",
                         "marker"},
};

typedef struct sql_out {
    char *p;
    size_t size, len;
    bool cut;
} sql_out;

static void add(sql_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(sql_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = o->cut ? -1 : vsnprintf(o->p + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->size - o->len)
        o->cut = true;
    else
        o->len += (size_t)n;
}

const char *store_column(const kind_field *f)
{
    return f->column ? f->column : f->name;
}

int store_row_width(model_kind kind)
{
    const kind_desc *d = kind_get(kind);
    return (int)(d->head_field_count + d->field_count) + 1;
}

const kind_field *store_row_field(model_kind kind, int i)
{
    const kind_desc *d = kind_get(kind);
    size_t at = (size_t)i;
    if (at < d->head_field_count)
        return &d->head_fields[at];
    at -= d->head_field_count;
    return at < d->field_count ? &d->fields[at] : NULL;
}

/* The row's columns in store_row_read's order; `staged`: as a staged row is read
 * (no error text, synced, a credential's metadata as the server has it). */
static void add_cols(sql_out *o, model_kind kind, bool staged)
{
    const kind_sql *k = &kind_sqls[kind];
    int heads = (int)kind_get(kind)->head_field_count;
    for (int i = 0; i < store_row_width(kind); i++) {
        const kind_field *f = store_row_field(kind, i);
        const char *col = f ? store_column(f) : "state";
        if (staged && !f)
            col = "'synced'";
        else if (staged && i < heads && !(f->flags & KIND_FIELD_REMOTE))
            col = "''";
        else if (staged && strcmp(col, k->staged_column) == 0)
            col = k->staged_expr;
        add(o, "%s%s", i ? ", " : "", col);
    }
}

bool store_row_staged(model_kind kind, int i)
{
    const kind_field *f = store_row_field(kind, i);
    return f && (i >= (int)kind_get(kind)->head_field_count || (f->flags & KIND_FIELD_REMOTE));
}

/* The columns a listing stages, each after `prefix`. */
static void add_staged_cols(sql_out *o, model_kind kind, const char *prefix)
{
    for (int i = 0, n = 0; i < store_row_width(kind); i++) {
        if (store_row_staged(kind, i))
            add(o, "%s%s%s", n++ ? ", " : "", prefix, store_column(store_row_field(kind, i)));
    }
}

int store_pull_width(model_kind kind)
{
    int n = 0;
    for (int i = 0; i < store_row_width(kind); i++)
        n += store_row_staged(kind, i);
    const char *extra = kind_sqls[kind].put_cols;
    for (; *extra; extra++)
        n += *extra == ',';
    return n;
}

/* An INSERT of the whole row, ?1.. in store_row_read's order; updated_at is ''
 * until the row's state moves. */
static void add_insert(sql_out *o, model_kind kind, const char *table)
{
    const kind_sql *k = &kind_sqls[kind];
    int width = store_row_width(kind), key = 0;
    add(o, "INSERT INTO %s (", table);
    add_cols(o, kind, false);
    add(o, ", updated_at%s%s) VALUES (", k->key_column ? ", " : "",
        k->key_column ? k->key_column : "");
    for (int i = 0; i < width; i++) {
        const kind_field *f = store_row_field(kind, i);
        if (f && k->key_field && strcmp(f->name, k->key_field) == 0)
            key = i + 1;
        add(o, "%s?%d", i ? ", " : "", i + 1);
    }
    add(o, ", ''");
    if (key)
        add(o, ", %s(?%d)", k->key_fn, key);
    add(o, ")");
}

/* An edit: every editable column of row :id, bound by its field's name. */
static void add_update(sql_out *o, model_kind kind, const char *table)
{
    const kind_desc *d = kind_get(kind);
    const kind_sql *k = &kind_sqls[kind];
    add(o, "UPDATE %s SET ", table);
    for (size_t i = 0, n = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_EDIT))
            continue;
        add(o, "%s%s = :%s", n++ ? ", " : "", store_column(f), f->name);
        if (k->key_field && strcmp(f->name, k->key_field) == 0)
            add(o, ", %s = %s(:%s)", k->key_column, k->key_fn, f->name);
    }
    add(o, " WHERE id = :id");
}

/* A create's reply (named parameters, bound by store_confirm_create): the row
 * takes the remote id; it keeps what the reply left empty of what the remote
 * assigns (uri, created_at, a rule's policy_uri), and takes what the row left
 * empty of a field fixed at creation (a credential's owner). */
static void add_confirm(sql_out *o, model_kind kind, const char *table)
{
    const kind_desc *d = kind_get(kind);
    add(o, "UPDATE %s SET id = :id, state = 'synced', error = '', attempts = 0,"
           " updated_at = :now", table);
    for (size_t i = 1; i < d->head_field_count; i++) {
        const char *c = store_column(&d->head_fields[i]);
        if (d->head_fields[i].flags & KIND_FIELD_REMOTE)
            add(o, ", %s = CASE :%s WHEN '' THEN %s ELSE :%s END", c, c, c, c);
    }
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (f->type != KIND_FIELD_TEXT ||
            (f->flags & (KIND_FIELD_EDIT | KIND_FIELD_REMOTE | KIND_FIELD_REQUIRED)))
            continue;
        const char *c = store_column(f);
        add(o, ", %s = CASE %s WHEN '' THEN :%s ELSE %s END", c, c, f->name, c);
    }
    add(o, " WHERE id = :local_id");
}

/* The text filter over ?3: a substring of the id, the state or a field a person
 * reads (not the metadata, which is for machines). */
static void add_filter(sql_out *o, model_kind kind)
{
    const kind_desc *d = kind_get(kind);
    add(o, "(id LIKE ?3 ESCAPE '\\'");
    for (size_t i = 0; i < d->field_count; i++) {
        if (!(d->fields[i].flags & KIND_FIELD_OPAQUE))
            add(o, " OR %s LIKE ?3 ESCAPE '\\'", store_column(&d->fields[i]));
    }
    add(o, " OR state LIKE ?3 ESCAPE '\\')");
}

/* Whether the merge takes column i from a listed row that is cached already:
 * what the remote assigns but the id (the match), and the user's fields but one
 * that is required and fixed at creation (a rule's policy and action: the row's
 * for good, never rewritten). */
static bool merged(model_kind kind, int i)
{
    const kind_field *f = store_row_field(kind, i);
    if (i == 0 || !store_row_staged(kind, i))
        return false;
    return i < (int)kind_get(kind)->head_field_count || (f->flags & KIND_FIELD_EDIT) ||
           !(f->flags & KIND_FIELD_REQUIRED);
}

/*
 * A listed row cached already takes the remote's values (?1 now). Only rows that
 * changed are written: a pull of an unchanged 100,000-row listing rewrites
 * nothing. A row back in the listing after remote_deleted is synced again. A
 * marked kind's orphan (created remotely, its reply lost) is updated too. OR
 * IGNORE for a keyed kind: a remote change that would collide with a local live
 * row's natural key keeps the cached row as it was.
 */
static void add_merge_update(sql_out *o, model_kind kind, const char *t)
{
    const kind_desc *d = kind_get(kind);
    const kind_sql *k = &kind_sqls[kind];
    add(o, "UPDATE %s%s SET ", d->traits & KIND_KEYED ? "OR IGNORE " : "", t);
    for (int i = 0; i < store_row_width(kind); i++) {
        const kind_field *f = store_row_field(kind, i);
        if (!merged(kind, i))
            continue;
        add(o, "%s = p.%s, ", store_column(f), store_column(f));
        if (k->key_field && strcmp(f->name, k->key_field) == 0)
            add(o, "%s = %s(p.%s), ", k->key_column, k->key_fn, store_column(f));
    }
    add(o, "state = CASE %s.state WHEN 'remote_deleted' THEN 'synced' ELSE %s.state END,"
           " updated_at = ?1 FROM %s AS p WHERE p.id = %s.id AND %s.state IN ('synced',"
           " 'deleting', 'remote_deleted'%s) AND (%s.state = 'remote_deleted'",
        t, t, k->staging, t, t, d->traits & KIND_MARKED ? ", 'orphaned'" : "", t);
    for (int i = 0; i < store_row_width(kind); i++) {
        if (!merged(kind, i))
            continue;
        const char *c = store_column(store_row_field(kind, i));
        add(o, " OR %s.%s IS NOT p.%s", t, c, c);
    }
    add(o, ")");
}

/* Listed rows not cached, inserted in id order as `state` with `error` (?1 now);
 * the caller may add to the WHERE, then orders them (ORDER BY p.id). */
static void add_merge_insert(sql_out *o, model_kind kind, const char *t, const char *state,
                             const char *error)
{
    const kind_sql *k = &kind_sqls[kind];
    const kind_field *key = k->key_field ? kind_field_by_name(kind, k->key_field) : NULL;
    add(o, "INSERT OR IGNORE INTO %s (", t);
    add_staged_cols(o, kind, "");
    add(o, ", state, error, updated_at%s%s) SELECT ", key ? ", " : "",
        key ? k->key_column : "");
    add_staged_cols(o, kind, "p.");
    add(o, ", %s, %s, ?1", state, error);
    if (key)
        add(o, ", %s(p.%s)", k->key_fn, store_column(key));
    add(o, " FROM %s AS p WHERE NOT EXISTS (SELECT 1 FROM %s AS x WHERE x.id = p.id)",
        k->staging, t);
}

/* A marked kind's second remote copy of one of our creates (its marker names a
 * cached row or alias): cached as queued for deletion, with why. */
static void add_merge_strays(sql_out *o, model_kind kind, const char *t)
{
    add_merge_insert(o, kind, t, "'deleting'", "'a second copy of ' || p.marker || ' created"
                     " by an earlier sync: deleted remotely by the next sync'");
    add(o, " AND p.marker <> '' AND (EXISTS (SELECT 1 FROM aliases AS a WHERE a.local_id ="
           " p.marker AND a.kind = '%s') OR EXISTS (SELECT 1 FROM %s AS c WHERE c.id ="
           " p.marker))", kind_get(kind)->noun, t);
}

/*
 * Staging for pulls: TEMP tables of this connection, one per kind (its staged
 * columns, what kind_sqls adds, `kept`). A pull writes the remote
 * listings here page by page and merges them into rules/credentials in one
 * transaction, so an interrupted pull never touches the cache. Staged rows need
 * no durability (a crash discards them, as it should), so they stay out of the
 * WAL: no fsync per page, no checkpoint copying them (measured on 100,000 rules:
 * staging took 1.2 s in the main database, 0.4 s here). Their
 * page cache is SQLite's default for the temp schema; the rest spills to an
 * unlinked temp file, so memory stays bounded. No index on (policy_id, cidr): the
 * natural-key join probes rules_live_key instead. `marker` is the local id from a
 * credential's creation marker ('' when none), looked up by the orphan join;
 * `raw_metadata` the metadata as the server has it when it carried a marker
 * (`metadata` is the user's, marker stripped). `kept`: the row is the cached copy
 * standing in for a refused one (it says nothing about the remote's values).
 * Keyed by id DESC: listings come newest first, so each staged row lands at the
 * B-tree's right edge (an append, full pages) rather than its left (a split per
 * page, half-empty pages: twice the memory and twice the time). The merge's adds
 * read them back ORDER BY id, so the cache's tables still grow in id order.
 */
static void add_staging(sql_out *o, model_kind kind)
{
    const kind_sql *k = &kind_sqls[kind];
    add(o, "CREATE TEMP TABLE IF NOT EXISTS %s (", k->staging);
    for (int i = 0; i < store_row_width(kind); i++) {
        const kind_field *f = store_row_field(kind, i);
        if (!store_row_staged(kind, i))
            continue;
        add(o, " %s TEXT NOT NULL", store_column(f));
        if (f->type == KIND_FIELD_ACTION)
            add(o, " CHECK (%s IN ('allow', 'deny'))", store_column(f));
        add(o, ",");
    }
    add(o, "%s kept INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (id DESC)) WITHOUT ROWID;",
        k->staging_cols);
    if (k->staging_index)
        add(o, "CREATE INDEX IF NOT EXISTS temp.%s_%s ON %s(%s);", k->staging,
            k->staging_index, k->staging, k->staging_index);
}

bool store_kind_sql(model_kind kind, store_kstmt which, char *out, size_t size)
{
    const kind_desc *d = kind_get(kind);
    const kind_sql *k = &kind_sqls[kind];
    const char *t = d->table;
    sql_out o = {out, size, 0, size == 0};
    switch (which) {
    case KSTMT_RESOLVE:
        add(&o, "SELECT id, state FROM %s WHERE id = " RESOLVED_ID, t);
        break;
    case KSTMT_GET:
        add(&o, "SELECT ");
        add_cols(&o, kind, false);
        add(&o, " FROM %s WHERE id = " RESOLVED_ID, t);
        break;
    case KSTMT_INSERT:
        add_insert(&o, kind, t);
        break;
    case KSTMT_SET_STATE:
        add(&o, "UPDATE %s SET state = ?2, error = ?3, updated_at = ?4, " ATTEMPTS
                " WHERE id = " RESOLVED_ID, t);
        break;
    case KSTMT_DELETE:
        add(&o, "DELETE FROM %s WHERE id = ?1", t);
        break;
    case KSTMT_STATE_COUNTS:
        add(&o, "SELECT state, count(*) FROM %s GROUP BY state", t);
        break;
    case KSTMT_CONFIRM:
        add_confirm(&o, kind, t);
        break;
    case KSTMT_UPDATE:
        add_update(&o, kind, t);
        break;
    case KSTMT_CLAIM: /* compare-and-set: only a row still new is taken */
        add(&o, "UPDATE %s SET state = 'creating', attempts = attempts + 1,"
                " updated_at = ?2 WHERE id = " RESOLVED_ID " AND state = 'new'", t);
        break;
    case KSTMT_RECREATE:
        add(&o, "UPDATE %s SET id = ?2, uri = '', state = 'new', error = '',"
                " attempts = 0, updated_at = ?3 WHERE id = ?1", t);
        break;
    case KSTMT_UNDELETE:
        /* Undo a delete the user queued: back to edited when an edit waits under
         * it, else synced. A row the merge queued for deletion (a stray copy: it
         * carries why in `error`) stays queued. */
        add(&o, "UPDATE %s SET state = CASE WHEN EXISTS (SELECT 1 FROM edits AS e"
                " WHERE e.kind = '%s' AND e.id = %s.id) THEN 'edited' ELSE 'synced' END,"
                " updated_at = ?2 WHERE id = ?1 AND state = 'deleting' AND error = ''",
            t, d->noun, t);
        break;
    case KSTMT_EDITED_IDS:
        add(&o, "SELECT id FROM %s WHERE state IN ('edited', 'conflict')", t);
        break;
    case KSTMT_PULL_PUT: {
        add(&o, "INSERT OR REPLACE INTO %s (", k->staging);
        add_staged_cols(&o, kind, "");
        add(&o, "%s) VALUES (", k->put_cols);
        int n = store_pull_width(kind);
        for (int i = 0; i < n; i++)
            add(&o, "%s?%d", i ? ", " : "", i + 1);
        add(&o, ")");
        break;
    }
    case KSTMT_PULL_KEEP:
        /* A refused pulled row: the cached copy of its id stands in for it, so the
         * merge neither changes that row nor takes it for deleted remotely. */
        add(&o, "INSERT OR REPLACE INTO %s (", k->staging);
        add_staged_cols(&o, kind, "");
        add(&o, "%s, kept) SELECT ", k->keep_cols);
        add_staged_cols(&o, kind, "");
        add(&o, "%s, 1 FROM %s WHERE id = ?1", k->keep_values, t);
        break;
    case KSTMT_MERGE_UPDATE:
        add_merge_update(&o, kind, t);
        break;
    case KSTMT_MERGE_ADD:
        add_merge_insert(&o, kind, t, "'synced'", "''");
        add(&o, " ORDER BY p.id");
        break;
    case KSTMT_MERGE_STRAYS:
        if (!(d->traits & KIND_MARKED))
            return false; /* no marker: no strays */
        add_merge_strays(&o, kind, t);
        add(&o, " ORDER BY p.id");
        break;
    case KSTMT_PULL_ROW:
        /* A staged row as store_row_read reads it, then `kept`: what
         * store_edit_merge compares an edited row with. */
        add(&o, "SELECT ");
        add_cols(&o, kind, true);
        add(&o, ", kept FROM %s WHERE id = ?1", k->staging);
        break;
    case KSQL_COLS:
        add_cols(&o, kind, false);
        break;
    case KSQL_FILTER:
        add_filter(&o, kind);
        break;
    case KSQL_STAGING:
        add_staging(&o, kind);
        break;
    }
    return !o.cut;
}

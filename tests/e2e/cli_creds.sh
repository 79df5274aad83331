#!/bin/sh
# `rampart creds …` over a real database file, including bad input and tokens.
. "$(dirname "$0")/lib.sh"

run creds create --description "web agent" --acl 'bind:*.example.com' --acl bind:env=prod
check "create: exit 0" status_is 0
check "create: says how to get the token later" out_has "creds token local_"
id=$(sed -n 's/^created credential \(local_[0-9A-Za-z]*\),.*/\1/p' "$tmp/out")
check "create: prints a local id" [ -n "$id" ]

run creds create --acl '*' --acl bind:foo.example.com
check "'*' with other rules: refused" refused 2 "only"
run creds create --acl frob:x
check "malformed ACL rule: refused" refused 2 "bind:"
run creds create --owner org_123
check "bad owner: refused" refused 2 "usr_"
run creds create --owner usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a --json
check "create with an owner, --json" out_has '"owner_id": "usr_2VhYfCwqPkX0n4sF5nYfW3eJb1a"'
check "--json: token null" out_has '"token": null'
check "--json: acl empty array" out_has '"acl": \[\]'

run creds list
check "list: header and two rows" out_lines 3
check "list shows the ACL" out_has 'bind:\*.example.com, bind:env=prod'
run creds list --filter "WEB AGENT"
check "list --filter" out_lines 2
run creds list --json
check "list --json: array with tokens null" out_has '"token":null'

run creds get "$id"
check "get: ACL rules" out_has '^acl  *bind:\*.example.com'
run creds get "$id" --json
check "get --json: state new" out_has '"state": "new"'

run creds token "$id"
check "token of a never-synced credential: exit 3, says why" refused 3 "sync"
run creds token cr_nosuchthing
check "token of an unknown credential: exit 3" refused 3 "cr_nosuchthing"

run creds delete "$id"
check "delete a never-synced credential: removed" out_has "never synced: removed"
run creds get "$id"
check "deleted credential is gone" status_is 3
run creds frob
check "unknown creds subcommand" refused 2 "unknown command"
run creds token --help
check "creds token --help explains" out_has "hands a token out once"
checks_done

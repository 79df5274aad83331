/*
 * sync_report_summary: the one sentence both the command line and the console
 * say after a run (rampart/sync.h). Pure: a report in, text out.
 */
#include "rampart/sync.h"

#include <stddef.h>

#include "rampart/textcat.h"

const char *sync_report_summary(const sync_report *r, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (!r)
        return buf;
    textcat_add(buf, size, "%zu created, %zu deleted, %zu failed", r->created, r->deleted,
                r->failed);
    if (r->updated)
        textcat_add(buf, size, "; %zu updated", r->updated);
    if (r->conflicts)
        textcat_add(buf, size, "; %zu new conflict%s", r->conflicts,
                    r->conflicts == 1 ? "" : "s");
    if (r->pulled_rules || r->pulled_creds)
        textcat_add(buf, size, "; remote has %zu rules, %zu credentials", r->pulled_rules,
                    r->pulled_creds);
    if (r->remote_added || r->remote_deleted)
        textcat_add(buf, size, "; %zu new there, %zu deleted there", r->remote_added,
                    r->remote_deleted);
    if (r->refused)
        textcat_add(buf, size, "; %zu remote objects refused (see the warnings)", r->refused);
    if (r->adopted)
        textcat_add(buf, size, "; %zu unsure creates found remotely", r->adopted);
    if (r->orphans_deleted)
        textcat_add(buf, size,
                    "; %zu credentials without their token deleted and queued again",
                    r->orphans_deleted);
    if (r->pending)
        textcat_add(buf, size, "; %zu pending", r->pending);
    size_t conflicted = r->conflicted < r->attention ? r->conflicted : r->attention;
    size_t failed = r->attention - conflicted;
    if (conflicted)
        textcat_add(buf, size, "; %zu conflict%s to resolve", conflicted,
                    conflicted == 1 ? "" : "s");
    if (failed)
        textcat_add(buf, size, "; %zu failed row%s to fix", failed, failed == 1 ? "" : "s");
    return buf;
}

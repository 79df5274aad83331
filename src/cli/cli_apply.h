/*
 * cli_apply: `rampart apply`, internal to src/cli. apply.c reads the options and
 * the list, plans, queues and pushes; apply_show.c prints what it found and did
 * (the list's overlaps, the plan, the result), as text or as one JSON object.
 */
#ifndef RAMPART_CLI_APPLY_H
#define RAMPART_CLI_APPLY_H

#include <stdbool.h>

#include "rampart/apply.h"
#include "rampart/buf.h"
#include "rampart/sync.h"
#include "rampart/cidrset.h"
#include "rampart/cli.h"

struct cli_impact;

/* One entry of the list inside another (found before merging or deduping). */
typedef struct cli_apply_overlap {
    char inner[MODEL_CIDR_MAX + 1], outer[MODEL_CIDR_MAX + 1];
    size_t inner_line, outer_line;
    bool same; /* the same prefix twice */
} cli_apply_overlap;

/* What one apply run knows, for the printing half. */
typedef struct cli_apply_run {
    cli_ctx *ctx;
    const char *label;        /* the file as messages name it ("stdin" for -) */
    apply_request req;
    cidrset list;
    bool json, aggregate, dry_run, skip_conflicts, sync, allow_empty;
    size_t read;              /* entries read from the file */
    size_t merged_away;       /* --aggregate: how many fewer */
    size_t duplicates;        /* entries repeating an earlier one (counted once) */
    cli_apply_overlap *overlaps;
    size_t noverlaps;
    apply_plan plan;
    double pace;              /* requests per second the budget allows; 0: unpaced */
    size_t pull_pages;        /* GETs of the listing a sync pulls */
    bool queued;
    buf_t own;                /* sync_row_refs: the rules this apply owns that a
                                 sync has still to send or settle (after queueing) */
    size_t nown;
    struct cli_impact *impact; /* --impact (a dry run): its options; NULL: none */
} cli_apply_run;

/* The overlaps and duplicates of the list, on stderr (text) or kept for JSON. */
void cli_apply_show_overlaps(const cli_apply_run *run);

/* The plan (text: one line per op, a summary, the requests and their time). */
void cli_apply_show_plan(const cli_apply_run *run);

/* The JSON object of the whole run (after queueing or not). */
void cli_apply_show_json(const cli_apply_run *run);

#endif

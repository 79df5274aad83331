/*
 * Fuzz target: the --faults SPEC parser (emulator_faults_parse) and the
 * counter-based selection of a parsed SPEC. The input is the SPEC. Properties: a
 * refused SPEC leaves no fault; an accepted one holds at most EMULATOR_FAULTS_MAX
 * entries with values in their documented ranges, and selecting over the first
 * requests of every operation only returns entries of that operation or "any".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/emulator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entry(const emulator_fault *f)
{
    if ((unsigned)f->op >= EMULATOR_OP_COUNT || f->delay_ms > 60000 ||
        f->retry_after < -1 || f->retry_after > 86400)
        abort();
    if (f->kind == EMULATOR_FAULT_STATUS && f->status != 403 && f->status != 429 &&
        f->status != 500 && f->status != 502)
        abort();
    if (f->select == EMULATOR_SELECT_EVERY && f->every == 0)
        abort();
    if (f->select == EMULATOR_SELECT_RANGE && (f->first == 0 || (f->last && f->last < f->first)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    emulator_faults f;
    error_info err = {0};
    if (emulator_faults_parse(spec, &f, &err) != ERROR_OK) {
        if (f.count != 0 || !memchr(err.msg, '\0', sizeof err.msg))
            abort();
        free(spec);
        return 0;
    }
    if (f.count > EMULATOR_FAULTS_MAX)
        abort();
    for (size_t i = 0; i < f.count; i++) {
        check_entry(&f.items[i]);
        emulator_op_name(f.items[i].op);
    }
    for (int round = 0; round < 12; round++) {
        for (int op = 0; op < EMULATOR_OP_ANY; op++) {
            const emulator_fault *hit = emulator_faults_next(&f, (emulator_op)op);
            if (hit && hit->op != (emulator_op)op && hit->op != EMULATOR_OP_ANY)
                abort();
        }
    }
    free(spec);
    return 0;
}

/*
 * kind_same: whether two objects of one kind hold the same value in a field
 * (src/core/kind_same.c): text byte for byte, an action as itself, an ACL rule
 * by rule in order.
 */
#ifndef RAMPART_KIND_SAME_H
#define RAMPART_KIND_SAME_H

#include <stdbool.h>

#include "rampart/kind.h"

bool kind_field_same(const kind_field *f, const model_object *a, const model_object *b);

#endif

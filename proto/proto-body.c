/* SPDX-License-Identifier: ISC */
/*
 * proto-body.c: the codecs of the bodies proto-body.h declares by their
 * fields (PROTO_BODY, docs/decisions/096).  Including the header with
 * PROTO_BODY_DEFINE set expands each declaration into its table of
 * fields and its pack and unpack functions, which proto-field.c walks:
 * a body declared there needs no line here.
 */

#include <stddef.h>
#include <string.h>

#define PROTO_BODY_DEFINE
#include "proto.h"

/* SPDX-License-Identifier: ISC */
/*
 * proto-status.c: the run and cell statuses of EXEC_STATE (PROTOCOL.md,
 * "Runs").  The daemon sets them, the worker reads them and hands them
 * to clients as they are, and records in the store keep them across
 * incarnations: one list of names, so no end can spell one differently.
 */

#include <string.h>

#include "proto.h"

static const char *const proto_status_run[] = {
	"queued", "running", "done", "error", "interrupted", "kernel_died",
	"cancelled", "input_required"
};
static const char *const proto_status_cell[] = {
	"queued", "running", "ok", "error", "not_run", "interrupted",
	"kernel_died"
};

#define PROTO_STATUS_NITEMS(a)	(sizeof (a) / sizeof *(a))

static int	proto_status_find(const char *const *, size_t, const char *,
		    size_t);

/* The index of s in names, or -1. */
static int
proto_status_find(const char *const *names, size_t n, const char *s,
    size_t len)
{
	size_t	i;

	if (s == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return ((int)i);
	}
	return (-1);
}

const char *
proto_run_status_name(enum proto_run_status st)
{
	if ((size_t)st >= PROTO_STATUS_NITEMS(proto_status_run))
		return ("?");
	return (proto_status_run[st]);
}

/* 0 and the status, or -1 for a name that is not one. */
int
proto_run_status_parse(const char *s, size_t len, enum proto_run_status *out)
{
	int	i;

	i = proto_status_find(proto_status_run,
	    PROTO_STATUS_NITEMS(proto_status_run), s, len);
	if (i == -1)
		return (-1);
	*out = (enum proto_run_status)i;
	return (0);
}

/* Whether a run with this status has ended: it changes no more. */
int
proto_run_status_ended(enum proto_run_status st)
{
	return (st != PROTO_RUN_QUEUED && st != PROTO_RUN_RUNNING &&
	    st != PROTO_RUN_INPUT_REQUIRED);
}

const char *
proto_cell_status_name(enum proto_cell_status st)
{
	if ((size_t)st >= PROTO_STATUS_NITEMS(proto_status_cell))
		return ("?");
	return (proto_status_cell[st]);
}

int
proto_cell_status_parse(const char *s, size_t len,
    enum proto_cell_status *out)
{
	int	i;

	i = proto_status_find(proto_status_cell,
	    PROTO_STATUS_NITEMS(proto_status_cell), s, len);
	if (i == -1)
		return (-1);
	*out = (enum proto_cell_status)i;
	return (0);
}

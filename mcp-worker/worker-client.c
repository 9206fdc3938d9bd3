/* SPDX-License-Identifier: ISC */
/*
 * worker-client.c: who this worker serves, for the runs it asks for: the
 * MCP client's name and version (clientInfo of its initialize, or of a
 * stateless request's _meta) and the session (the handle tag its proxy
 * gives every worker of one connection), so a run's record can say which
 * agent ran a cell, and the live view who is connected (decision 025).
 */

#include <stdio.h>
#include <stdlib.h>

#include "worker.h"

static char	*worker_client_name;
static char	*worker_client_version;
static char	 worker_client_session[9];

/* Take name and version from a clientInfo object; others are ignored. */
void
worker_client_set(struct json_object *info)
{
	struct json_object	*name, *version;

	if (!json_object_object_get_ex(info, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return;
	free(worker_client_name);
	worker_client_name = xstrdup(json_object_get_string(name));
	free(worker_client_version);
	worker_client_version = NULL;
	if (json_object_object_get_ex(info, "version", &version) &&
	    json_object_is_type(version, json_type_string))
		worker_client_version = xstrdup(json_object_get_string(
		    version));
}

/* Fill an EXEC_RUN's who (pointers valid until the next set). */
void
worker_client_who(struct proto_exec_who *w)
{
	snprintf(worker_client_session, sizeof worker_client_session, "%08x",
	    worker_attach_tag());
	w->client_name = proto_str_make(worker_client_name);
	w->client_version = proto_str_make(worker_client_version);
	w->session = proto_str_make(worker_client_session);
}

/* Whose batch an edit is: for undo (decision 074). */
void
worker_client_edit_who(struct proto_room_edit *m)
{
	struct proto_exec_who	w;

	worker_client_who(&w);
	m->session = w.session;
	m->client_name = w.client_name;
}

/* The MCP client's name, or "" before an initialize names it. */
const char *
worker_client_name_get(void)
{
	return (worker_client_name != NULL ? worker_client_name : "");
}

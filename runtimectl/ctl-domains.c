/* SPDX-License-Identifier: ISC */
/*
 * ctl-domains.c: runtimectl domains, the remote Jupyter Servers named in
 * domains.json, each checked: its config and token file, whether it
 * answers, whether it takes the token, and who it says we are.  The
 * token itself is never printed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl.h"
#include "domain.h"

static struct json_object *ctl_domains_check(const char *);

/* One domain's findings as {name, url, reachable, authenticated, ...}. */
static struct json_object *
ctl_domains_check(const char *name)
{
	struct json_object	*o;
	struct domain		*d;
	struct domain_identity	 id;
	char			*cause = NULL;

	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(name));
	if ((d = domain_load(name, &cause)) == NULL) {
		json_object_object_add(o, "ok", json_object_new_boolean(0));
		json_object_object_add(o, "problem",
		    json_object_new_string(cause));
		free(cause);
		return (o);
	}
	json_object_object_add(o, "url", json_object_new_string(d->url));
	json_object_object_add(o, "token_file",
	    json_object_new_string(d->token_file));
	domain_whoami(d, &id);
	json_object_object_add(o, "ok",
	    json_object_new_boolean(id.authenticated));
	json_object_object_add(o, "reachable",
	    json_object_new_boolean(id.reachable));
	json_object_object_add(o, "authenticated",
	    json_object_new_boolean(id.authenticated));
	if (id.version != NULL)
		json_object_object_add(o, "server_version",
		    json_object_new_string(id.version));
	if (id.principal != NULL)
		json_object_object_add(o, "principal",
		    json_object_new_string(id.principal));
	if (id.evidence != NULL)
		json_object_object_add(o, "evidence",
		    json_object_new_string(id.evidence));
	if (id.problem != NULL)
		json_object_object_add(o, "problem",
		    json_object_new_string(id.problem));
	domain_identity_clear(&id);
	domain_free(d);
	return (o);
}

/* runtimectl domains: exit 0 when every domain is usable, else 1. */
int
ctl_domains(struct ctl_ctx *ctx)
{
	struct json_object	*cfg, *list, *o, *v;
	struct ctl_table	*t;
	char			*cause, *path;
	int			 bad = 0;
	size_t			 i;

	path = domain_config_path();
	if ((cfg = domain_config_load(&cause)) == NULL) {
		ctl_client_error("%s", cause);
		free(cause);
		free(path);
		return (CTL_EXIT_FAIL);
	}
	list = json_object_new_array();
	json_object_object_foreach(cfg, key, val) {
		(void)val;
		o = ctl_domains_check(key);
		if (!json_object_get_boolean(json_object_object_get(o, "ok")))
			bad = 1;
		json_object_array_add(list, o);
	}
	json_object_put(cfg);
	if (ctx->json) {
		o = json_object_new_object();
		json_object_object_add(o, "config",
		    json_object_new_string(path));
		json_object_object_add(o, "domains", list);
		ctl_term_json(json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
		json_object_put(o);
		free(path);
		return (bad ? CTL_EXIT_FAIL : CTL_EXIT_OK);
	}
	if (json_object_array_length(list) == 0 && !ctx->quiet)
		printf("no domains in %s (see runtimectl(1), DOMAINS)\n", path);
	t = ctl_table_create(4, "NAME", "URL", "STATE", "PRINCIPAL");
	for (i = 0; i < json_object_array_length(list); i++) {
		o = json_object_array_get_idx(list, i);
		v = json_object_object_get(o, "principal");
		ctl_table_add(t,
		    json_object_get_string(json_object_object_get(o, "name")),
		    json_object_object_get(o, "url") != NULL ?
		    json_object_get_string(json_object_object_get(o, "url")) :
		    "-",
		    json_object_get_boolean(json_object_object_get(o, "ok")) ?
		    "ok" : json_object_get_boolean(json_object_object_get(o,
		    "reachable")) ? "refused" : "unusable",
		    v != NULL ? json_object_get_string(v) : "-");
	}
	if (json_object_array_length(list) > 0)
		ctl_table_print(t, stdout);
	ctl_table_free(t);
	fflush(stdout);
	for (i = 0; i < json_object_array_length(list); i++) {
		o = json_object_array_get_idx(list, i);
		if ((v = json_object_object_get(o, "problem")) != NULL)
			fprintf(stderr, "runtimectl: %s: %s\n",
			    json_object_get_string(json_object_object_get(o,
			    "name")), json_object_get_string(v));
	}
	json_object_put(list);
	free(path);
	return (bad ? CTL_EXIT_FAIL : CTL_EXIT_OK);
}

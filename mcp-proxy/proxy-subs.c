/* SPDX-License-Identifier: ISC */
/*
 * proxy-subs.c: resource subscriptions as leases.  Each holder (the
 * client's session for resources/subscribe, or one subscriptions/listen
 * stream) holds at most one lease per URI; the worker is subscribed to a
 * URI once, while at least one lease on it exists.  So two listeners on
 * one URI make one worker subscription, and ending one listener never
 * unsubscribes another.
 *
 * When the worker is replaced, leases on a session URI (one that names a
 * notebook handle, which the new worker does not know) end: the client
 * gets a last notifications/resources/updated whose _meta carries
 * io.runtimed/attachmentExpired.  Other URIs are subscribed again on the
 * new worker.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "proxy.h"

#define PROXY_SUBS_SESSION_PREFIX	"runtimed://sessions/"

struct proxy_subs_lease {
	char			 *uri;
	char			**holders;
	u_int			  nholders;
	TAILQ_ENTRY(proxy_subs_lease) entry;
};
TAILQ_HEAD(proxy_subs_leases, proxy_subs_lease);

static struct proxy_subs_leases	proxy_subs_all =
    TAILQ_HEAD_INITIALIZER(proxy_subs_all);
static u_int			proxy_subs_n;

static struct proxy_subs_lease	*proxy_subs_find(const char *);
static int	proxy_subs_holder_index(struct proxy_subs_lease *,
		    const char *);
static void	proxy_subs_lease_free(struct proxy_subs_lease *);

static struct proxy_subs_lease *
proxy_subs_find(const char *uri)
{
	struct proxy_subs_lease	*l;

	TAILQ_FOREACH(l, &proxy_subs_all, entry) {
		if (strcmp(l->uri, uri) == 0)
			return (l);
	}
	return (NULL);
}

static int
proxy_subs_holder_index(struct proxy_subs_lease *l, const char *holder)
{
	u_int	i;

	for (i = 0; i < l->nholders; i++) {
		if (strcmp(l->holders[i], holder) == 0)
			return ((int)i);
	}
	return (-1);
}

static void
proxy_subs_lease_free(struct proxy_subs_lease *l)
{
	u_int	i;

	TAILQ_REMOVE(&proxy_subs_all, l, entry);
	proxy_subs_n--;
	for (i = 0; i < l->nholders; i++)
		free(l->holders[i]);
	free(l->holders);
	free(l->uri);
	free(l);
}

/* holder takes a lease on uri. */
enum proxy_subs_change
proxy_subs_add(const char *holder, const char *uri)
{
	struct proxy_subs_lease	*l;

	if ((l = proxy_subs_find(uri)) != NULL) {
		if (proxy_subs_holder_index(l, holder) == -1) {
			l->holders = xreallocarray(l->holders,
			    l->nholders + 1, sizeof *l->holders);
			l->holders[l->nholders++] = xstrdup(holder);
		}
		return (PROXY_SUBS_NONE);
	}
	if (proxy_subs_n >= PROTO_MAX_WATCHES)
		return (PROXY_SUBS_FULL);
	l = xcalloc(1, sizeof *l);
	l->uri = xstrdup(uri);
	l->holders = xcalloc(1, sizeof *l->holders);
	l->holders[0] = xstrdup(holder);
	l->nholders = 1;
	TAILQ_INSERT_TAIL(&proxy_subs_all, l, entry);
	proxy_subs_n++;
	return (PROXY_SUBS_FIRST);
}

/* holder gives up its lease on uri. */
enum proxy_subs_change
proxy_subs_remove(const char *holder, const char *uri)
{
	struct proxy_subs_lease	*l;
	int			 i;

	if ((l = proxy_subs_find(uri)) == NULL ||
	    (i = proxy_subs_holder_index(l, holder)) == -1)
		return (PROXY_SUBS_UNKNOWN);
	free(l->holders[i]);
	l->holders[i] = l->holders[--l->nholders];
	if (l->nholders > 0)
		return (PROXY_SUBS_NONE);
	proxy_subs_lease_free(l);
	return (PROXY_SUBS_LAST);
}

/* A holder ended (a listen stream cancelled): give up all its leases. */
void
proxy_subs_remove_holder(const char *holder, void (*last)(const char *))
{
	struct proxy_subs_lease	*l, *next;
	char			*uri;

	for (l = TAILQ_FIRST(&proxy_subs_all); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (proxy_subs_holder_index(l, holder) == -1)
			continue;
		uri = xstrdup(l->uri);
		if (proxy_subs_remove(holder, uri) == PROXY_SUBS_LAST &&
		    last != NULL)
			last(uri);
		free(uri);
	}
}

/*
 * The worker was replaced: leases on session URIs end (ended(uri) sends
 * the last update); the others stay, for proxy_subs_foreach to subscribe
 * the new worker to.
 */
void
proxy_subs_replaced(void (*ended)(const char *))
{
	struct proxy_subs_lease	*l, *next;

	for (l = TAILQ_FIRST(&proxy_subs_all); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (strncmp(l->uri, PROXY_SUBS_SESSION_PREFIX,
		    strlen(PROXY_SUBS_SESSION_PREFIX)) == 0) {
			ended(l->uri);
			proxy_subs_lease_free(l);
		}
	}
}

/* Every URI with a lease. */
void
proxy_subs_foreach(void (*fn)(const char *))
{
	struct proxy_subs_lease	*l;

	TAILQ_FOREACH(l, &proxy_subs_all, entry)
		fn(l->uri);
}

void
proxy_subs_free(void)
{
	struct proxy_subs_lease	*l;

	while ((l = TAILQ_FIRST(&proxy_subs_all)) != NULL)
		proxy_subs_lease_free(l);
}

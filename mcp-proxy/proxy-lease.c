/* SPDX-License-Identifier: ISC */
/*
 * proxy-lease.c: resource subscriptions as leases.  Each holder (the
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

#define PROXY_LEASE_SESSION_PREFIX	"runtimed://sessions/"

struct proxy_lease {
	char			 *uri;
	char			**holders;
	u_int			  nholders;
	TAILQ_ENTRY(proxy_lease) entry;
};
TAILQ_HEAD(proxy_leases, proxy_lease);

static struct proxy_leases	proxy_lease_all =
    TAILQ_HEAD_INITIALIZER(proxy_lease_all);
static u_int			proxy_lease_n;

static struct proxy_lease	*proxy_lease_find(const char *);
static int	proxy_lease_holder_index(struct proxy_lease *,
		    const char *);
static void	proxy_lease_free_one(struct proxy_lease *);

static struct proxy_lease *
proxy_lease_find(const char *uri)
{
	struct proxy_lease	*l;

	TAILQ_FOREACH(l, &proxy_lease_all, entry) {
		if (strcmp(l->uri, uri) == 0)
			return (l);
	}
	return (NULL);
}

static int
proxy_lease_holder_index(struct proxy_lease *l, const char *holder)
{
	u_int	i;

	for (i = 0; i < l->nholders; i++) {
		if (strcmp(l->holders[i], holder) == 0)
			return ((int)i);
	}
	return (-1);
}

static void
proxy_lease_free_one(struct proxy_lease *l)
{
	u_int	i;

	TAILQ_REMOVE(&proxy_lease_all, l, entry);
	proxy_lease_n--;
	for (i = 0; i < l->nholders; i++)
		free(l->holders[i]);
	free(l->holders);
	free(l->uri);
	free(l);
}

/* holder takes a lease on uri. */
enum proxy_lease_change
proxy_lease_add(const char *holder, const char *uri)
{
	struct proxy_lease	*l;

	if ((l = proxy_lease_find(uri)) != NULL) {
		if (proxy_lease_holder_index(l, holder) == -1) {
			l->holders = xreallocarray(l->holders,
			    l->nholders + 1, sizeof *l->holders);
			l->holders[l->nholders++] = xstrdup(holder);
		}
		return (PROXY_LEASE_NONE);
	}
	if (proxy_lease_n >= PROTO_MAX_WATCHES)
		return (PROXY_LEASE_FULL);
	l = xcalloc(1, sizeof *l);
	l->uri = xstrdup(uri);
	l->holders = xcalloc(1, sizeof *l->holders);
	l->holders[0] = xstrdup(holder);
	l->nholders = 1;
	TAILQ_INSERT_TAIL(&proxy_lease_all, l, entry);
	proxy_lease_n++;
	return (PROXY_LEASE_FIRST);
}

/* holder gives up its lease on uri. */
enum proxy_lease_change
proxy_lease_remove(const char *holder, const char *uri)
{
	struct proxy_lease	*l;
	int			 i;

	if ((l = proxy_lease_find(uri)) == NULL ||
	    (i = proxy_lease_holder_index(l, holder)) == -1)
		return (PROXY_LEASE_UNKNOWN);
	free(l->holders[i]);
	l->holders[i] = l->holders[--l->nholders];
	if (l->nholders > 0)
		return (PROXY_LEASE_NONE);
	proxy_lease_free_one(l);
	return (PROXY_LEASE_LAST);
}

/* A holder ended (a listen stream cancelled): give up all its leases. */
void
proxy_lease_remove_holder(const char *holder, void (*last)(const char *))
{
	struct proxy_lease	*l, *next;
	char			*uri;

	for (l = TAILQ_FIRST(&proxy_lease_all); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (proxy_lease_holder_index(l, holder) == -1)
			continue;
		uri = xstrdup(l->uri);
		if (proxy_lease_remove(holder, uri) == PROXY_LEASE_LAST &&
		    last != NULL)
			last(uri);
		free(uri);
	}
}

/*
 * The worker was replaced: leases on session URIs end (ended(uri) sends
 * the last update); the others stay, for proxy_lease_foreach to subscribe
 * the new worker to.
 */
void
proxy_lease_replaced(void (*ended)(const char *))
{
	struct proxy_lease	*l, *next;

	for (l = TAILQ_FIRST(&proxy_lease_all); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (strncmp(l->uri, PROXY_LEASE_SESSION_PREFIX,
		    strlen(PROXY_LEASE_SESSION_PREFIX)) == 0) {
			ended(l->uri);
			proxy_lease_free_one(l);
		}
	}
}

/* Every URI with a lease. */
void
proxy_lease_foreach(void (*fn)(const char *))
{
	struct proxy_lease	*l;

	TAILQ_FOREACH(l, &proxy_lease_all, entry)
		fn(l->uri);
}

void
proxy_lease_free(void)
{
	struct proxy_lease	*l;

	while ((l = TAILQ_FIRST(&proxy_lease_all)) != NULL)
		proxy_lease_free_one(l);
}

/* SPDX-License-Identifier: ISC */
/*
 * proxy-budget.c: when a dead worker may be started again.  Two limiters
 * with the same rule (PROXY_CRASH_LIMIT deaths inside
 * PROXY_CRASH_WINDOW_MS trip it for PROXY_TRIP_MS): one for crashes, and
 * one for upgrade handoffs (exit 75 or WORKER_UPGRADE), which do not
 * count as crashes but must not become a respawn loop either.
 *
 * A first death is answered by an immediate respawn, so a killed worker
 * is replaced in milliseconds; only deaths of workers that lived less
 * than PROXY_QUICK_MS in a row back off (100, 200, 400 ms ...).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "proxy.h"

#define PROXY_BUDGET_BACKOFF_MS	100
#define PROXY_BUDGET_BACKOFF_MAX 1600

struct proxy_budget {
	const char	*what;
	int64_t		 times[PROXY_CRASH_LIMIT];
	u_int		 n;
};

static struct proxy_budget	 proxy_budget_crash = { "crashed", { 0 }, 0 };
static struct proxy_budget	 proxy_budget_upgrade =
    { "exited for an upgrade", { 0 }, 0 };
static int64_t			 proxy_budget_until;	/* tripped till */
static char			*proxy_budget_reason;
static u_int			 proxy_budget_quick;	/* in a row */

static u_int	proxy_budget_count(struct proxy_budget *, int64_t);

/* Record one death now; how many fell inside the window. */
static u_int
proxy_budget_count(struct proxy_budget *b, int64_t now)
{
	u_int	i, n = 0;

	b->times[b->n++ % PROXY_CRASH_LIMIT] = now;
	for (i = 0; i < PROXY_CRASH_LIMIT && i < b->n; i++) {
		if (now - b->times[i] < PROXY_CRASH_WINDOW_MS)
			n++;
	}
	return (n);
}

/*
 * A worker that lived lived_ms died.  Returns the delay in ms before the
 * next one may start; when a limiter trips, that is PROXY_TRIP_MS and
 * proxy_budget_tripped() is true until then.
 */
int64_t
proxy_budget_note(enum proxy_budget_kind kind, int64_t lived_ms)
{
	struct proxy_budget	*b;
	int64_t			 now = util_mono_ms(), delay = 0;
	u_int			 recent;

	b = kind == PROXY_BUDGET_CRASH ? &proxy_budget_crash :
	    &proxy_budget_upgrade;
	recent = proxy_budget_count(b, now);
	if (recent >= PROXY_CRASH_LIMIT) {
		free(proxy_budget_reason);
		xasprintf(&proxy_budget_reason, "the worker %s %d times in "
		    "%d s", b->what, PROXY_CRASH_LIMIT,
		    PROXY_CRASH_WINDOW_MS / 1000);
		proxy_budget_until = now + PROXY_TRIP_MS;
		log_warnx("worker restarts stopped for %d s: %s",
		    PROXY_TRIP_MS / 1000, proxy_budget_reason);
		return (PROXY_TRIP_MS);
	}
	if (lived_ms >= PROXY_QUICK_MS) {
		proxy_budget_quick = 0;
		return (0);
	}
	if (proxy_budget_quick++ > 0) {
		delay = PROXY_BUDGET_BACKOFF_MS << (proxy_budget_quick - 2 > 4 ?
		    4 : proxy_budget_quick - 2);
		if (delay > PROXY_BUDGET_BACKOFF_MAX)
			delay = PROXY_BUDGET_BACKOFF_MAX;
	}
	return (delay);
}

/*
 * The worker could not even be started (not found, not executable):
 * retrying at once cannot help, so refuse with why until
 * PROXY_START_RETRY_MS from now.  Returns that delay.
 */
int64_t
proxy_budget_trip(const char *why)
{
	free(proxy_budget_reason);
	proxy_budget_reason = xstrdup(why);
	proxy_budget_until = util_mono_ms() + PROXY_START_RETRY_MS;
	return (PROXY_START_RETRY_MS);
}

int
proxy_budget_tripped(void)
{
	if (proxy_budget_until == 0)
		return (0);
	return (util_mono_ms() < proxy_budget_until);
}

/* Milliseconds until a tripped budget lets a worker start again. */
int64_t
proxy_budget_retry_in(void)
{
	int64_t	left;

	if (proxy_budget_until == 0)
		return (0);
	left = proxy_budget_until - util_mono_ms();
	return (left > 0 ? left : 0);
}

const char *
proxy_budget_why(void)
{
	return (proxy_budget_reason != NULL ? proxy_budget_reason :
	    "the worker is restarting");
}

/* The cooldown is over (or the client asked to reconnect): start over. */
void
proxy_budget_reset(void)
{
	memset(proxy_budget_crash.times, 0, sizeof proxy_budget_crash.times);
	proxy_budget_crash.n = 0;
	memset(proxy_budget_upgrade.times, 0,
	    sizeof proxy_budget_upgrade.times);
	proxy_budget_upgrade.n = 0;
	proxy_budget_until = 0;
	proxy_budget_quick = 0;
	free(proxy_budget_reason);
	proxy_budget_reason = NULL;
}

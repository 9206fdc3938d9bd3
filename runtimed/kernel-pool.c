/* SPDX-License-Identifier: ISC */
/*
 * kernel-pool.c: the warm pool.  N kernels of the default kernelspec are
 * kept started for no room, so the first run in a new notebook does not
 * wait the ~0.6 s a Python kernel takes to import.  room_kernel_start
 * takes one (room-kernel.c moves it to the notebook's directory) and the
 * pool is refilled a moment later, so the new kernel's imports do not
 * compete with the first cells of the notebook that took one.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtimed.h"
#include "kernelspec.h"

/* Delay before a refill; longer after a pooled kernel failed. */
#define KERNEL_POOL_REFILL_MS	1500
#define KERNEL_POOL_RETRY_MS	30000

static int			 kernel_pool_size = RUNTIMED_WARM_POOL;
static struct room_kernel	**kernel_pool;
static size_t			 kernel_pool_n;
static struct event		*kernel_pool_ev;
static int			 kernel_pool_stopped;
static int			 kernel_pool_filling;

static void	kernel_pool_fill_cb(evutil_socket_t, short, void *);
static void	kernel_pool_later(int64_t);
static int	kernel_pool_remove(struct room_kernel *);

static void
kernel_pool_fill_cb(evutil_socket_t fd, short events, void *arg)
{
	kernel_pool_fill();
}

/* Refill after ms, unless a refill is already due. */
static void
kernel_pool_later(int64_t ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	if (kernel_pool_stopped || runtimed_base == NULL)
		return;
	if (kernel_pool_ev == NULL)
		kernel_pool_ev = evtimer_new(runtimed_base, kernel_pool_fill_cb,
		    NULL);
	if (!evtimer_pending(kernel_pool_ev, NULL))
		evtimer_add(kernel_pool_ev, &tv);
}

void
kernel_pool_set_size(int n)
{
	kernel_pool_size = n < 0 ? 0 : n;
}

/* Start kernels until the pool has its size. */
void
kernel_pool_fill(void)
{
	struct room_kernel	*k;

	while (!kernel_pool_stopped &&
	    kernel_pool_n < (size_t)kernel_pool_size) {
		kernel_pool_filling = 1;
		k = room_kernel_spawn(NULL, KERNELSPEC_DEFAULT);
		kernel_pool_filling = 0;
		if (room_kernel_is_dead(k)) {
			room_kernel_detach(k, 0);
			kernel_pool_later(KERNEL_POOL_RETRY_MS);
			return;
		}
		kernel_pool = xreallocarray(kernel_pool, kernel_pool_n + 1,
		    sizeof *kernel_pool);
		kernel_pool[kernel_pool_n++] = k;
	}
}

static int
kernel_pool_remove(struct room_kernel *k)
{
	size_t	i;

	for (i = 0; i < kernel_pool_n; i++) {
		if (kernel_pool[i] != k)
			continue;
		memmove(&kernel_pool[i], &kernel_pool[i + 1],
		    (kernel_pool_n - i - 1) * sizeof *kernel_pool);
		kernel_pool_n--;
		return (1);
	}
	return (0);
}

/*
 * A pooled kernel for kernelspec name, or NULL.  A ready one is
 * preferred; one still starting is better than a cold start.
 */
struct room_kernel *
kernel_pool_take(const char *name)
{
	struct room_kernel	*k = NULL;
	size_t			 i;

	for (i = 0; i < kernel_pool_n; i++) {
		if (strcasecmp(room_kernel_name(kernel_pool[i]), name) != 0 ||
		    room_kernel_is_dead(kernel_pool[i]))
			continue;
		if (k == NULL || !room_kernel_is_starting(kernel_pool[i]))
			k = kernel_pool[i];
		if (!room_kernel_is_starting(k))
			break;
	}
	if (k == NULL)
		return (NULL);
	kernel_pool_remove(k);
	kernel_pool_later(KERNEL_POOL_REFILL_MS);
	return (k);
}

/* A pooled kernel died or failed to start: drop it, retry later. */
void
kernel_pool_lost(struct room_kernel *k)
{
	if (kernel_pool_filling)
		return;		/* kernel_pool_fill sees it dead */
	kernel_pool_remove(k);
	room_kernel_detach(k, 0);
	kernel_pool_later(KERNEL_POOL_RETRY_MS);
}

/* Stop refilling (the daemon is stopping); pooled agents are detached
 * by room_kernel_shutdown_all. */
void
kernel_pool_stop(void)
{
	kernel_pool_stopped = 1;
	kernel_pool_n = 0;
	free(kernel_pool);
	kernel_pool = NULL;
	if (kernel_pool_ev != NULL) {
		event_free(kernel_pool_ev);
		kernel_pool_ev = NULL;
	}
}

u_int
kernel_pool_size_get(void)
{
	return (kernel_pool_stopped ? 0 : (u_int)kernel_pool_size);
}

/* Pooled kernels ready to be taken. */
u_int
kernel_pool_ready(void)
{
	size_t	i;
	u_int	n = 0;

	for (i = 0; i < kernel_pool_n; i++) {
		if (!room_kernel_is_dead(kernel_pool[i]) &&
		    !room_kernel_is_starting(kernel_pool[i]))
			n++;
	}
	return (n);
}

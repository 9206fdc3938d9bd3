/* SPDX-License-Identifier: ISC */
/*
 * fuzz-runtimed.h: the daemon in a box for the fuzz targets that drive
 * runtimed code (fuzz-daemon, fuzz-agentframes): the globals runtimed.c
 * defines, a private state directory (on tmpfs where there is one:
 * SQLite syncs every commit), the store, and the rooms started as
 * runtimed.c starts them, with autosave and the warm pool off.
 */

#ifndef FUZZ_RUNTIMED_H
#define FUZZ_RUNTIMED_H

#include "runtimed/runtimed.h"
#include "runtimed/store.h"

/* The state directory (absolute; runtimed_state_dir is a copy). */
extern char	fuzz_runtimed_dir[64];

void	fuzz_runtimed_init(const char *, void (*)(void), void (*)(void));
void	fuzz_runtimed_cwd(int);
void	fuzz_runtimed_open_store(void);
void	fuzz_runtimed_close_store(void);
void	fuzz_runtimed_pass(void);
void	fuzz_runtimed_no_kernels(void);
void	fuzz_runtimed_empty(void);
void	fuzz_runtimed_no_kernels_cleanup(void);
int	fuzz_runtimed_drain(int);
void	fuzz_runtimed_frame(int, uint16_t, uint32_t, struct mpbuf *);
void	fuzz_runtimed_hello(int, const char *);
void	fuzz_runtimed_hangup(int, int);
void	fuzz_runtimed_reset(void (*)(void));

#endif

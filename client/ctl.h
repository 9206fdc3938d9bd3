/* SPDX-License-Identifier: ISC */
/*
 * ctl.h: the control client of libctl.a (ctl-client.c, ctl-status.c,
 * ctl-stop.c, ctl-table.c, ctl-term.c here: one client implementation,
 * which `runtimed status|stop` links too) and the commands of
 * runtimectl, the operator's command line (runtimectl/), which share
 * its context.
 */

#ifndef CTL_H
#define CTL_H

#include "common.h"

/* Exit codes (man/runtimectl.1, EXIT STATUS). */
#define CTL_EXIT_OK		0
#define CTL_EXIT_FAIL		1	/* not running, refused, failed */
#define CTL_EXIT_USAGE		2
#define CTL_EXIT_PROBLEMS	3	/* doctor found a problem */
#define CTL_EXIT_WORKER		4	/* call: the worker failed */

/* What every command is given. */
struct ctl_ctx {
	const char	*socket;
	const char	*state_dir;	/* -s, else $RUNTIMED_STATE_DIR */
	int		 json;
	int		 quiet;
	int		 verbose;
};

/* ctl-client.c */
void		 ctl_client_error(const char *, ...) printflike(1, 2);
int		 ctl_client_connect(const char *, int);
int		 ctl_client_request(int, uint16_t, const struct mpbuf *,
		     msgpack_unpacked *);
int		 ctl_client_status(const char *, int, msgpack_unpacked *,
		     struct proto_daemon_status_reply *);
void		 ctl_client_print_json(const msgpack_object *,
		     struct json_object *);

/* ctl-term.c: notebook text safe to print to a terminal. */
char		*ctl_term_safe(const char *, size_t);
void		 ctl_term_puts(const char *, FILE *);
void		 ctl_term_json(const char *, FILE *);

/* ctl-table.c: aligned columns for people. */
struct ctl_table;
struct ctl_table *ctl_table_create(u_int, ...);
void		 ctl_table_add(struct ctl_table *, ...);
void		 ctl_table_print(struct ctl_table *, FILE *);
void		 ctl_table_free(struct ctl_table *);
const char	*ctl_table_str(const msgpack_object *, const char *,
		     const char *);
char		*ctl_table_int(const msgpack_object *, const char *);

/* ctl-status.c */
int		 ctl_status(struct ctl_ctx *);
int		 ctl_status_kernels(struct ctl_ctx *);
int		 ctl_status_rooms(struct ctl_ctx *);

/* ctl-stop.c */
int		 ctl_stop(struct ctl_ctx *);

/* ctl-logs.c */
int		 ctl_logs(struct ctl_ctx *, int, char **);

/* ctl-doctor.c */
int		 ctl_doctor(struct ctl_ctx *);

/* ctl-open.c */
int		 ctl_open(struct ctl_ctx *, int, char **);
/* ctl-domains.c */
int		 ctl_domains(struct ctl_ctx *);

/* ctl-call.c */
int		 ctl_call(struct ctl_ctx *, int, char **);

#endif

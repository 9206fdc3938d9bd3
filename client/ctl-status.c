/* SPDX-License-Identifier: ISC */
/*
 * ctl-status.c: status, kernels and rooms, from DAEMON_STATUS and
 * ROOM_LIST.  --json prints the daemon's reply as it is (plus uptime);
 * people get lines and tables.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static void	ctl_status_duration(int64_t, char *, size_t);
static void	ctl_status_kernel_table(const msgpack_object *);
static int64_t	ctl_status_uptime(const struct proto_daemon_status_reply *);

/* "3d 4h", "2h 5m", "4m 10s", "7s". */
static void
ctl_status_duration(int64_t secs, char *buf, size_t len)
{
	if (secs >= 86400)
		snprintf(buf, len, "%lldd %lldh", (long long)secs / 86400,
		    (long long)secs % 86400 / 3600);
	else if (secs >= 3600)
		snprintf(buf, len, "%lldh %lldm", (long long)secs / 3600,
		    (long long)secs % 3600 / 60);
	else if (secs >= 60)
		snprintf(buf, len, "%lldm %llds", (long long)secs / 60,
		    (long long)secs % 60);
	else
		snprintf(buf, len, "%llds", (long long)(secs < 0 ? 0 : secs));
}

/* The kernel table of a kernel_list: one line per running agent. */
static void
ctl_status_kernel_table(const msgpack_object *list)
{
	struct ctl_table	*t;
	const msgpack_object	*k;
	const char		*nb;
	char			*pid, *apid, id[9];
	uint32_t		 i;

	t = ctl_table_create(6, "KERNEL", "NAME", "STATE", "PID", "AGENT",
	    "NOTEBOOK");
	for (i = 0; list != NULL && i < list->via.array.size; i++) {
		k = &list->via.array.ptr[i];
		snprintf(id, sizeof id, "%s", ctl_table_str(k, "kernel_id",
		    "-"));
		pid = ctl_table_int(k, "pid");
		apid = ctl_table_int(k, "agent_pid");
		if ((nb = ctl_table_str(k, "path", NULL)) == NULL)
			nb = ctl_table_str(k, "notebook_id", NULL);
		if (nb == NULL) {
			nb = proto_get(k, "pooled") != NULL &&
			    proto_get(k, "pooled")->type ==
			    MSGPACK_OBJECT_BOOLEAN &&
			    proto_get(k, "pooled")->via.boolean ?
			    "(warm pool)" : "(detached)";
		}
		ctl_table_add(t, id, ctl_table_str(k, "name", "-"),
		    ctl_table_str(k, "state", "-"), pid, apid, nb);
		free(pid);
		free(apid);
	}
	ctl_table_print(t, stdout);
	ctl_table_free(t);
}

static int64_t
ctl_status_uptime(const struct proto_daemon_status_reply *s)
{
	return ((util_now_us() - s->started_at) / 1000000);
}

/* status: the incarnation, what runs, the warm pool, the store. */
int
ctl_status(struct ctl_ctx *ctx)
{
	struct proto_daemon_status_reply	 s;
	struct json_object			*extra;
	msgpack_unpacked			 u;
	const msgpack_object			*w;
	time_t					 t;
	struct tm				 tm;
	char					 when[64], up[32];
	u_int					 i;

	if (ctl_client_status(ctx->socket, 0, &u, &s) != 0)
		return (CTL_EXIT_FAIL);
	if (ctx->json) {
		extra = json_object_new_object();
		json_object_object_add(extra, "uptime_s",
		    json_object_new_int64(ctl_status_uptime(&s)));
		ctl_client_print_json(&u.data, extra);
		msgpack_unpacked_destroy(&u);
		return (CTL_EXIT_OK);
	}
	t = (time_t)(s.started_at / 1000000);
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", &tm);
	ctl_status_duration(ctl_status_uptime(&s), up, sizeof up);
	printf("pid %lld\n", (long long)s.pid);
	printf("incarnation %lld@%lld\n", (long long)s.pid,
	    (long long)s.started_at);
	printf("started %s\n", when);
	printf("uptime %s\n", up);
	printf("version %.*s\n", (int)s.version.len, s.version.ptr);
	if (s.has_detail)
		printf("state %.*s\n", (int)s.state_dir.len, s.state_dir.ptr);
	printf("rooms %llu\n", (unsigned long long)s.rooms);
	/* The word --json and list_notebooks use. */
	printf("peers %llu\n", (unsigned long long)s.peers);
	if (s.view.ptr != NULL)
		printf("view %.*s\n", (int)s.view.len, s.view.ptr);
	if (s.has_detail)
		printf("agents %llu\n", (unsigned long long)s.agents);
	printf("kernels %llu\n", (unsigned long long)s.kernels);
	if (s.has_detail) {
		printf("warm pool %llu of %llu ready\n",
		    (unsigned long long)s.pool_ready,
		    (unsigned long long)s.pool_size);
		if (s.store_damage.ptr != NULL)
			printf("store recovered at start: %.*s\n",
			    (int)s.store_damage.len, s.store_damage.ptr);
		else if (s.store_write_error.ptr != NULL)
			printf("store failing: %.*s\n",
			    (int)s.store_write_error.len,
			    s.store_write_error.ptr);
		else
			printf("store ok\n");
	}
	if (s.has_fds)
		printf("descriptors %llu open of %llu: %llu more peers fit\n",
		    (unsigned long long)s.fds_open,
		    (unsigned long long)s.fds_limit,
		    (unsigned long long)s.peers_room);
	if ((w = s.warnings.obj) != NULL) {
		for (i = 0; i < w->via.array.size; i++) {
			if (w->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
				continue;
			printf("warning: %.*s\n",
			    (int)w->via.array.ptr[i].via.str.size,
			    w->via.array.ptr[i].via.str.ptr);
		}
	}
	if (s.has_detail && s.kernel_list.obj->via.array.size > 0 &&
	    !ctx->quiet) {
		printf("\n");
		ctl_status_kernel_table(s.kernel_list.obj);
	}
	msgpack_unpacked_destroy(&u);
	return (CTL_EXIT_OK);
}

/* kernels: every running kernel, pooled ones marked. */
int
ctl_status_kernels(struct ctl_ctx *ctx)
{
	struct proto_daemon_status_reply	 s;
	struct json_object			*j;
	msgpack_unpacked			 u;

	if (ctl_client_status(ctx->socket, 0, &u, &s) != 0)
		return (CTL_EXIT_FAIL);
	if (!s.has_detail) {
		ctl_client_error("the daemon (version %.*s) does not list its "
		    "kernels: restart it (runtimectl stop; runtimed)",
		    (int)s.version.len, s.version.ptr);
		msgpack_unpacked_destroy(&u);
		return (CTL_EXIT_FAIL);
	}
	if (ctx->json) {
		j = json_object_new_object();
		json_object_object_add(j, "kernels",
		    mpjson_unpack(s.kernel_list.obj));
		ctl_client_print_json(NULL, j);
	} else
		ctl_status_kernel_table(s.kernel_list.obj);
	msgpack_unpacked_destroy(&u);
	return (CTL_EXIT_OK);
}

/* rooms: every notebook the daemon holds, loaded or not. */
int
ctl_status_rooms(struct ctl_ctx *ctx)
{
	struct proto_room_list_reply	 l;
	struct ctl_table		*t;
	const msgpack_object		*r, *k, *w;
	msgpack_unpacked		 u;
	const char			*path;
	char				 err[256], id[9], *peers, *dirty;
	char				*loaded, *seq;
	uint32_t			 i;
	int				 fd;

	if ((fd = ctl_client_connect(ctx->socket, 0)) == -1)
		return (CTL_EXIT_FAIL);
	if (ctl_client_request(fd, PROTO_MSG_ROOM_LIST, NULL, &u) != 0) {
		close(fd);
		return (CTL_EXIT_FAIL);
	}
	close(fd);
	if (proto_room_list_reply_unpack(&u.data, &l, err, sizeof err) != 0) {
		ctl_client_error("%s", err);
		msgpack_unpacked_destroy(&u);
		return (CTL_EXIT_FAIL);
	}
	if (ctx->json) {
		ctl_client_print_json(&u.data, NULL);
		msgpack_unpacked_destroy(&u);
		return (CTL_EXIT_OK);
	}
	t = ctl_table_create(8, "NOTEBOOK", "KERNEL", "STATE", "PEERS",
	    "DIRTY", "LOADED", "SEQ", "PATH");
	for (i = 0; i < l.rooms.obj->via.array.size; i++) {
		r = &l.rooms.obj->via.array.ptr[i];
		k = proto_get_map(r, "kernel");
		snprintf(id, sizeof id, "%s", ctl_table_str(r, "notebook_id",
		    "-"));
		path = ctl_table_str(r, "path", "(untitled)");
		peers = ctl_table_int(r, "peers");
		dirty = ctl_table_int(r, "dirty");
		loaded = ctl_table_int(r, "loaded");
		seq = ctl_table_int(r, "seq");
		ctl_table_add(t, id, k != NULL ? ctl_table_str(k, "name",
		    "-") : "-", k != NULL ? ctl_table_str(k, "state", "-") :
		    "-", peers, dirty, loaded, seq, path);
		free(peers);
		free(dirty);
		free(loaded);
		free(seq);
	}
	ctl_table_print(t, stdout);
	ctl_table_free(t);
	if ((w = l.warnings.obj) != NULL) {
		for (i = 0; i < w->via.array.size; i++) {
			if (w->via.array.ptr[i].type == MSGPACK_OBJECT_STR)
				printf("warning: %.*s\n",
				    (int)w->via.array.ptr[i].via.str.size,
				    w->via.array.ptr[i].via.str.ptr);
		}
	}
	msgpack_unpacked_destroy(&u);
	return (CTL_EXIT_OK);
}

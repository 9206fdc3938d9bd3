/* SPDX-License-Identifier: ISC */
/*
 * ctl-client.c: a ctl connection to the daemon, one request at a time,
 * blocking.  runtimectl and `runtimed status|stop` both talk through it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

/* Milliseconds to wait for a reply. */
#define CTL_CLIENT_TIMEOUT	10000

/* "runtimectl: message" (or "runtimed: ...") on stderr. */
void
ctl_client_error(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A ctl connection past HELLO; -1 (said unless quiet) when none answers. */
int
ctl_client_connect(const char *sock, int quiet)
{
	struct proto_incarnation	 inc;
	char				*cause = NULL;
	int				 fd;

	if ((fd = sockdir_connect(sock)) == -1) {
		/* Say how to start one: "not running" alone left users stuck. */
		if (!quiet)
			ctl_client_error("not running: start it with runtimed "
			    "(it goes to the background), or have systemd start "
			    "it on demand with systemctl --user enable --now "
			    "runtimed.socket; an MCP client starts it too");
		return (-1);
	}
	if (frameio_hello(fd, PROTO_PEER_CTL, program_invocation_short_name,
	    &inc, &cause) != 0) {
		if (!quiet)
			ctl_client_error("%s", cause);
		free(cause);
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Send type with body (NULL: an empty map) and read the reply into u,
 * which the caller destroys.  An ERROR, or a reply of another type than
 * proto's table names for type, is said and returns -1 with u already
 * destroyed.
 */
int
ctl_client_request(int fd, uint16_t type, const struct mpbuf *body,
    msgpack_unpacked *u)
{
	struct proto_header	 hdr;
	struct proto_error	 e;
	struct mpbuf		 b;
	char			*cause = NULL, err[256];
	int			 r;

	if (body == NULL) {
		mpbuf_init(&b);
		proto_empty_pack(&b.pk);
		r = frameio_write(fd, type, 1, b.sb.data, b.sb.size);
		mpbuf_free(&b);
	} else
		r = frameio_write(fd, type, 1, body->sb.data, body->sb.size);
	if (r != 0) {
		ctl_client_error("sending %s: %s", proto_msg_name(type),
		    strerror(errno));
		return (-1);
	}
	if (frameio_read(fd, CTL_CLIENT_TIMEOUT, &hdr, u, &cause) != 0) {
		ctl_client_error("%s", cause);
		free(cause);
		return (-1);
	}
	if (hdr.type == proto_msg_reply(type))
		return (0);
	if (hdr.type == PROTO_MSG_ERROR &&
	    proto_error_unpack(&u->data, &e, err, sizeof err) == 0)
		ctl_client_error("%.*s (%.*s)", (int)e.message.len,
		    e.message.ptr, (int)e.code.len, e.code.ptr);
	else
		ctl_client_error("unexpected reply %s to %s",
		    proto_msg_name(hdr.type), proto_msg_name(type));
	msgpack_unpacked_destroy(u);
	return (-1);
}

/* DAEMON_STATUS: the reply in u (caller destroys) and decoded in s. */
int
ctl_client_status(const char *sock, int quiet, msgpack_unpacked *u,
    struct proto_daemon_status_reply *s)
{
	char	err[256];
	int	fd;

	if ((fd = ctl_client_connect(sock, quiet)) == -1)
		return (-1);
	if (ctl_client_request(fd, PROTO_MSG_DAEMON_STATUS, NULL, u) != 0) {
		close(fd);
		return (-1);
	}
	close(fd);
	if (proto_daemon_status_reply_unpack(&u->data, s, err,
	    sizeof err) != 0) {
		ctl_client_error("%s", err);
		msgpack_unpacked_destroy(u);
		return (-1);
	}
	return (0);
}

/*
 * Print obj (or, if NULL, nothing but extra) as pretty JSON, with the
 * keys of extra (consumed; may be NULL) added.
 */
void
ctl_client_print_json(const msgpack_object *obj, struct json_object *extra)
{
	struct json_object	*j;

	j = obj != NULL ? mpjson_unpack(obj) : NULL;
	if (j == NULL)
		j = json_object_new_object();
	if (extra != NULL) {
		json_object_object_foreach(extra, k, v)
			json_object_object_add(j, k, json_object_get(v));
		json_object_put(extra);
	}
	ctl_term_json(json_object_to_json_string_ext(j,
	    JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	json_object_put(j);
}

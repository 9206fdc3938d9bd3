/* SPDX-License-Identifier: ISC */
/*
 * ctl-open.c: runtimectl open [PATH]: the live view's URL for a notebook
 * (the daemon starts runtimed-web if it does not run), printed, and
 * given to $BROWSER when that is set (docs/decisions/025).
 */

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ctl.h"

extern char	**environ;

static void	ctl_open_browser(const char *, const char *);

/* Run the first program of $BROWSER (a colon-separated list) on url. */
static void
ctl_open_browser(const char *browser, const char *url)
{
	char	*prog, *colon, *argv[3];
	pid_t	 pid;

	prog = xstrdup(browser);
	if ((colon = strchr(prog, ':')) != NULL)
		*colon = '\0';
	if (*prog != '\0') {
		argv[0] = prog;
		argv[1] = (char *)url;
		argv[2] = NULL;
		if (posix_spawnp(&pid, prog, NULL, NULL, argv, environ) != 0)
			ctl_client_error("cannot run $BROWSER (%s); open the "
			    "address yourself", prog);
	}
	free(prog);
}

int
ctl_open(struct ctl_ctx *ctx, int argc, char **argv)
{
	struct proto_room_open		 om;
	struct proto_room_joined	 jm;
	struct proto_view_open		 vm;
	struct proto_view_url		 um;
	struct mpbuf			 b;
	msgpack_unpacked		 u, v;
	const char			*browser;
	char				*path = NULL, *id = NULL, *why, err[256];
	int				 fd, rc = CTL_EXIT_FAIL;

	if (argc > 2) {
		ctl_client_error("open takes one notebook path at most");
		return (CTL_EXIT_USAGE);
	}
	if ((fd = ctl_client_connect(ctx->socket, 0)) == -1)
		return (CTL_EXIT_FAIL);
	memset(&vm, 0, sizeof vm);
	if (argc == 2) {
		/* Another user's link in /tmp is never followed (sticky.c). */
		if (sticky_check(argv[1], &why) != 0) {
			ctl_client_error("%s", why);
			free(why);
			goto out;
		}
		if ((path = util_realpath_new(argv[1])) == NULL) {
			ctl_client_error("%s: no such notebook", argv[1]);
			goto out;
		}
		memset(&om, 0, sizeof om);
		om.path = proto_str_make(path);
		mpbuf_init(&b);
		proto_room_open_pack(&b.pk, &om);
		if (ctl_client_request(fd, PROTO_MSG_ROOM_OPEN, &b, &u) != 0) {
			mpbuf_free(&b);
			goto out;
		}
		mpbuf_free(&b);
		if (proto_room_joined_unpack(&u.data, &jm, err,
		    sizeof err) != 0) {
			ctl_client_error("%s", err);
			msgpack_unpacked_destroy(&u);
			goto out;
		}
		id = proto_str_dup(&jm.notebook_id);
		msgpack_unpacked_destroy(&u);
		vm.notebook_id = proto_str_make(id);
	}
	mpbuf_init(&b);
	proto_view_open_pack(&b.pk, &vm);
	if (ctl_client_request(fd, PROTO_MSG_VIEW_OPEN, &b, &v) != 0) {
		mpbuf_free(&b);
		goto out;
	}
	mpbuf_free(&b);
	if (proto_view_url_unpack(&v.data, &um, err, sizeof err) != 0) {
		ctl_client_error("%s", err);
		msgpack_unpacked_destroy(&v);
		goto out;
	}
	if (ctx->json)
		ctl_client_print_json(&v.data, NULL);
	else
		printf("%.*s\n", (int)um.url.len, um.url.ptr);
	fflush(stdout);
	if ((browser = getenv("BROWSER")) != NULL && *browser != '\0') {
		char	*url = proto_str_dup(&um.url);

		ctl_open_browser(browser, url);
		free(url);
	}
	msgpack_unpacked_destroy(&v);
	rc = CTL_EXIT_OK;
out:
	close(fd);
	free(path);
	free(id);
	return (rc);
}

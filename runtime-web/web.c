/* SPDX-License-Identifier: ISC */
/*
 * web.c: runtimed-web's main.  The daemon starts it (server-web.c) with
 * its link on fd 3; it reads the secret the daemon wrote, listens on
 * 127.0.0.1, says VIEW_READY {port} on fd 3, and exits when the daemon
 * closes fd 3 or when no page has been open for RUNTIMED_WEB_IDLE_SECS
 * (default WEB_IDLE_SECS).
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "web.h"

struct event_base	*web_base;
char			*web_socket_path;
int			 web_port;
char			 web_secret[WEB_SECRET_LEN + 1];
char			 web_prefix[WEB_PREFIX_LEN + 1];

static struct peer	*web_daemon;
static int		 web_ready;
static int64_t		 web_last_activity;
static int		 web_idle_secs = WEB_IDLE_SECS;
static void		(*web_list_cb)(const msgpack_object *, const char *,
			    void *);
static void		*web_list_arg;
static uint32_t		 web_list_id;

static __dead void	web_usage(int);
static int	web_read_secret(const char *, char **);
static void	web_dispatch(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static void	web_tick(evutil_socket_t, short, void *);

static __dead void
web_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-web [-hVv] -S socket -d state-dir\n"
	    "runtimed starts it on demand, with its link on fd 3; see "
	    "runtimed-web(8).\n");
	exit(status);
}

/* A page was served or a stream is open: not idle. */
void
web_activity(void)
{
	web_last_activity = util_mono_ms();
}

/* The secret: 0600, ours, a regular file, not through a link. */
static int
web_read_secret(const char *dir, char **cause)
{
	struct stat	 sb;
	unsigned char	 md[CRYPTO_SHA256_LEN];
	char		*path;
	ssize_t		 n;
	int		 fd;

	xasprintf(&path, "%s/web-secret", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1) {
		xasprintf(cause, "cannot open %s: %s", path, strerror(errno));
		free(path);
		return (-1);
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != getuid() || (sb.st_mode & 077) != 0) {
		xasprintf(cause, "%s is not a private file of ours; remove "
		    "it and open the view again", path);
		goto fail;
	}
	n = read(fd, web_secret, WEB_SECRET_LEN);
	if (n != WEB_SECRET_LEN || strspn(web_secret, "0123456789abcdef") !=
	    WEB_SECRET_LEN) {
		xasprintf(cause, "%s does not hold a secret", path);
		goto fail;
	}
	web_secret[WEB_SECRET_LEN] = '\0';
	/*
	 * The cookie's Path: a browser sends a cookie to any port of
	 * 127.0.0.1, but only under its path, which no other server's
	 * pages use (it names nothing of the secret but a hash).
	 */
	crypto_sha256(web_secret, WEB_SECRET_LEN, md);
	web_prefix[0] = '/';
	web_prefix[1] = 'v';
	util_hex(md, (WEB_PREFIX_LEN - 2) / 2, web_prefix + 2);
	close(fd);
	free(path);
	return (0);
fail:
	close(fd);
	free(path);
	return (-1);
}

/* ROOM_LIST on the daemon link, for the index page. */
void
web_list_rooms(void (*cb)(const msgpack_object *, const char *, void *),
    void *arg)
{
	if (web_list_cb != NULL || !web_ready) {
		cb(NULL, "the view is busy; reload the page", arg);
		return;
	}
	web_list_cb = cb;
	web_list_arg = arg;
	web_list_id = peer_next_id(web_daemon);
	peer_send_raw(web_daemon, PROTO_MSG_ROOM_LIST, web_list_id, "\x80", 1);
}

/* The daemon link: HELLO_OK, then VIEW_READY's OK, then room lists. */
static void
web_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct proto_view_ready	 m;
	struct mpbuf		 b;

	if (hdr == NULL) {
		log_info("the daemon closed the link; exiting");
		web_daemon = NULL;
		event_base_loopexit(web_base, NULL);
		return;
	}
	if (hdr->type == PROTO_MSG_HELLO_OK && !web_ready) {
		m.port = web_port;
		mpbuf_init(&b);
		proto_view_ready_pack(&b.pk, &m);
		peer_send(p, PROTO_MSG_VIEW_READY, peer_next_id(p), &b.sb);
		mpbuf_free(&b);
		return;
	}
	if (hdr->type == PROTO_MSG_OK && !web_ready) {
		web_ready = 1;
		return;
	}
	if (hdr->id == web_list_id && web_list_cb != NULL) {
		web_list_cb(hdr->type == PROTO_MSG_ROOM_LIST_REPLY ? body :
		    NULL, "the daemon did not list its notebooks",
		    web_list_arg);
		web_list_cb = NULL;
		return;
	}
	if (hdr->type == PROTO_MSG_ERROR || hdr->type ==
	    PROTO_MSG_VERSION_MISMATCH) {
		log_warnx("the daemon refused the view");
		event_base_loopexit(web_base, NULL);
	}
}

/* Once a second: pings, and the idle exit. */
static void
web_tick(evutil_socket_t fd, short events, void *arg)
{
	static u_int	n;

	if (++n % WEB_PING_SECS == 0)
		web_nb_ping();
	web_http_tick();
	if (web_nb_streams() > 0)
		web_activity();
	else if (util_mono_ms() - web_last_activity >
	    (int64_t)web_idle_secs * 1000) {
		log_info("no page open for %d s; exiting", web_idle_secs);
		event_base_loopexit(web_base, NULL);
	}
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct proto_hello	 hello;
	struct mpbuf		 b;
	struct event		*tick;
	struct timeval		 tv = { 1, 0 };
	const char		*s;
	char			*dir = NULL, *cause = NULL, *end;
	int			 ch, level = LOG_LEVEL_WARN;
	long			 v;

	while ((ch = getopt_long(argc, argv, "S:d:hVv", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'S':
			web_socket_path = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			web_usage(0);
		case 'V':
			printf("runtimed-web %s\n", RUNTIMED_VERSION);
			exit(0);
		case 'v':
			level++;
			break;
		default:
			web_usage(1);
		}
	}
	if (web_socket_path == NULL || dir == NULL)
		web_usage(1);
	log_open("runtimed-web", level, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((s = getenv("RUNTIMED_WEB_IDLE_SECS")) != NULL) {
		v = strtol(s, &end, 10);
		if (*s != '\0' && *end == '\0' && v > 0 && v <= 86400)
			web_idle_secs = (int)v;
	}
	if (web_read_secret(dir, &cause) != 0)
		fatalx("%s", cause);
	if (fcntl(3, F_GETFD) == -1)
		fatalx("no daemon link on fd 3: runtimed starts runtimed-web");
	util_set_cloexec(3);
	web_base = event_base_new();
	if (web_http_start(&cause) != 0)
		fatalx("%s", cause);
	web_activity();

	web_daemon = peer_create(web_base, 3, "daemon", web_dispatch, NULL);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_WEB);
	snprintf(hello.label, sizeof hello.label, "runtimed-web");
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	peer_send(web_daemon, PROTO_MSG_HELLO, peer_next_id(web_daemon),
	    &b.sb);
	mpbuf_free(&b);

	tick = event_new(web_base, -1, EV_PERSIST, web_tick, NULL);
	evtimer_add(tick, &tv);
	event_base_dispatch(web_base);
	web_http_stop();
	event_free(tick);
	return (0);
}

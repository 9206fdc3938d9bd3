/* SPDX-License-Identifier: ISC */
/*
 * test-lineread.c: the stdin line reader the proxy and the worker share,
 * on a real pipe and a real file.
 */

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common.h"

#define LINES_MAX	16

struct seen {
	char			*lines[LINES_MAX];
	size_t			 lens[LINES_MAX];
	int			 n;
	size_t			 overlong[LINES_MAX];
	char			*why;
	int			 noverlong;
	int			 eof;
	int			 pause_after;	/* pause after so many lines */
	struct lineread		*lr;
};

struct fixture;
static void	seen_line(const char *, size_t, void *);
static void	seen_overlong(size_t, const char *, void *);
static void	seen_eof(void *);
static void	seen_free(struct seen *);
static void	spin(struct event_base *);
static void	put(int, const char *, size_t);
static void	fixture_init(struct fixture *, size_t);
static void	fixture_free(struct fixture *);

static void
seen_line(const char *line, size_t len, void *arg)
{
	struct seen	*s = arg;

	cr_assert_lt(s->n, LINES_MAX);
	s->lines[s->n] = xstrndup(line, len);
	s->lens[s->n] = len;
	s->n++;
	if (s->pause_after > 0 && s->n == s->pause_after)
		lineread_pause(s->lr);
}

static void
seen_overlong(size_t len, const char *why, void *arg)
{
	struct seen	*s = arg;

	cr_assert_lt(s->noverlong, LINES_MAX);
	s->overlong[s->noverlong++] = len;
	free(s->why);
	s->why = xstrdup(why);
}

static void
seen_eof(void *arg)
{
	struct seen	*s = arg;

	s->eof++;
}

static const struct lineread_cbs seen_cbs = {
	seen_line, seen_overlong, seen_eof
};

static void
seen_free(struct seen *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->lines[i]);
	free(s->why);
	lineread_free(s->lr);
}

/* Run the loop until nothing is ready. */
static void
spin(struct event_base *base)
{
	int	i;

	for (i = 0; i < 50; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static void
put(int fd, const char *s, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(fd, s, len);
		cr_assert_gt(n, 0);
		s += n;
		len -= (size_t)n;
	}
}

struct fixture {
	struct event_base	*base;
	int			 p[2];
	struct seen		 s;
};

static void
fixture_init(struct fixture *f, size_t max)
{
	memset(f, 0, sizeof *f);
	f->base = event_base_new();
	cr_assert_not_null(f->base);
	cr_assert_eq(pipe(f->p), 0);
	f->s.lr = lineread_create(f->base, f->p[0], max, &seen_cbs, &f->s);
}

static void
fixture_free(struct fixture *f)
{
	seen_free(&f->s);
	close(f->p[0]);
	if (f->p[1] != -1)
		close(f->p[1]);
	event_base_free(f->base);
}

Test(lineread, a_line_split_across_reads)
{
	struct fixture	f;

	fixture_init(&f, 64);
	put(f.p[1], "{\"jsonrpc\":", 11);
	spin(f.base);
	cr_assert_eq(f.s.n, 0, "half a line is not a line");
	put(f.p[1], "\"2.0\"}\n{\"b\"", 11);
	spin(f.base);
	cr_assert_eq(f.s.n, 1);
	cr_assert_str_eq(f.s.lines[0], "{\"jsonrpc\":\"2.0\"}");
	put(f.p[1], ":1}\n", 4);
	spin(f.base);
	cr_assert_eq(f.s.n, 2);
	cr_assert_str_eq(f.s.lines[1], "{\"b\":1}");
	cr_assert_eq(f.s.eof, 0);
	fixture_free(&f);
}

Test(lineread, crlf_and_blank_lines)
{
	struct fixture	f;
	static const char in[] = "abc\r\n\n \r\n\t\n\r\ndef\n";

	fixture_init(&f, 64);
	put(f.p[1], in, sizeof in - 1);
	spin(f.base);
	cr_assert_eq(f.s.n, 2, "blank lines are skipped");
	cr_assert_str_eq(f.s.lines[0], "abc", "the \\r is dropped");
	cr_assert_str_eq(f.s.lines[1], "def");
	fixture_free(&f);
}

Test(lineread, a_line_at_the_cap_and_one_over)
{
	struct fixture	f;
	char		buf[200];

	fixture_init(&f, 64);
	memset(buf, 'x', sizeof buf);
	buf[64] = '\n';
	put(f.p[1], buf, 65);
	spin(f.base);
	cr_assert_eq(f.s.n, 1, "64 bytes with a cap of 64 is taken");
	cr_assert_eq(f.s.lens[0], 64);
	buf[64] = '\r';
	buf[65] = '\n';
	put(f.p[1], buf, 66);
	spin(f.base);
	cr_assert_eq(f.s.n, 2, "so is it with CRLF");
	cr_assert_eq(f.s.lens[1], 64);
	cr_assert_eq(f.s.noverlong, 0);

	buf[64] = 'x';
	buf[65] = '\n';
	put(f.p[1], buf, 66);
	put(f.p[1], "next\n", 5);
	spin(f.base);
	cr_assert_eq(f.s.noverlong, 1, "65 bytes is refused");
	cr_assert_eq(f.s.overlong[0], 65);
	cr_assert_str_eq(f.s.why, "message of 65 bytes exceeds the limit of "
	    "64 bytes and was dropped");
	cr_assert_eq(f.s.n, 3, "the line after it is taken");
	cr_assert_str_eq(f.s.lines[2], "next");
	fixture_free(&f);
}

Test(lineread, an_overlong_line_is_dropped_as_it_comes)
{
	struct fixture	f;
	char		buf[100];
	int		i;

	fixture_init(&f, 64);
	memset(buf, 'y', sizeof buf);
	for (i = 0; i < 10; i++) {
		put(f.p[1], buf, sizeof buf);
		spin(f.base);
	}
	cr_assert_eq(f.s.noverlong, 0, "refused once it ends");
	put(f.p[1], "yy\nok\n", 6);
	spin(f.base);
	cr_assert_eq(f.s.noverlong, 1);
	cr_assert_eq(f.s.overlong[0], 1002, "its whole length is told");
	cr_assert_eq(f.s.n, 1);
	cr_assert_str_eq(f.s.lines[0], "ok");
	fixture_free(&f);
}

Test(lineread, eof_mid_line)
{
	struct fixture	f;

	fixture_init(&f, 64);
	put(f.p[1], "one\ntwo", 7);
	spin(f.base);
	cr_assert_eq(f.s.n, 1);
	close(f.p[1]);
	f.p[1] = -1;
	spin(f.base);
	cr_assert_eq(f.s.n, 2, "a last line without its newline counts");
	cr_assert_str_eq(f.s.lines[1], "two");
	cr_assert_eq(f.s.eof, 1, "then end of input, once");
	fixture_free(&f);
}

Test(lineread, eof_in_an_overlong_line)
{
	struct fixture	f;
	char		buf[100];

	fixture_init(&f, 64);
	memset(buf, 'z', sizeof buf);
	put(f.p[1], buf, sizeof buf);
	close(f.p[1]);
	f.p[1] = -1;
	spin(f.base);
	cr_assert_eq(f.s.n, 0);
	cr_assert_eq(f.s.noverlong, 1);
	cr_assert_eq(f.s.overlong[0], 100);
	cr_assert_eq(f.s.eof, 1);
	fixture_free(&f);
}

Test(lineread, pause_holds_lines_until_resume)
{
	struct fixture	f;

	fixture_init(&f, 64);
	f.s.pause_after = 1;
	put(f.p[1], "a\nb\nc\n", 6);
	spin(f.base);
	cr_assert_eq(f.s.n, 1, "nothing after the pause");
	put(f.p[1], "d\n", 2);
	close(f.p[1]);
	f.p[1] = -1;
	spin(f.base);
	cr_assert_eq(f.s.n, 1, "nor is more read");
	cr_assert_eq(f.s.eof, 0);
	f.s.pause_after = 0;
	lineread_resume(f.s.lr);
	spin(f.base);
	cr_assert_eq(f.s.n, 4);
	cr_assert_str_eq(f.s.lines[3], "d");
	cr_assert_eq(f.s.eof, 1);
	fixture_free(&f);
}

Test(lineread, stop_reads_nothing_more)
{
	struct fixture	f;

	fixture_init(&f, 64);
	lineread_stop(f.s.lr);
	put(f.p[1], "a\n", 2);
	close(f.p[1]);
	f.p[1] = -1;
	spin(f.base);
	cr_assert_eq(f.s.n, 0);
	cr_assert_eq(f.s.eof, 0, "no end of input after a stop");
	fixture_free(&f);
}

/* A regular file (read from a timer) with the real cap. */
Test(lineread, a_file_at_the_mcp_request_cap)
{
	struct event_base	*base;
	struct seen		 s;
	char			 path[] = "/tmp/test-lineread.XXXXXX";
	char			*big;
	size_t			 cap = PROTO_MCP_REQUEST_CAP;
	int			 fd;

	fd = mkstemp(path);
	cr_assert_neq(fd, -1);
	unlink(path);
	big = xmalloc(cap + 2);
	memset(big, 'q', cap + 1);
	big[cap] = '\n';
	put(fd, big, cap + 1);		/* at the cap */
	big[cap] = 'q';
	big[cap + 1] = '\n';
	put(fd, big, cap + 2);		/* one over */
	put(fd, "end", 3);		/* and a last line, no newline */
	free(big);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);

	memset(&s, 0, sizeof s);
	base = event_base_new();
	s.lr = lineread_create(base, fd, cap, &seen_cbs, &s);
	while (!s.eof)
		event_base_loop(base, EVLOOP_ONCE);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.lens[0], cap);
	cr_assert_str_eq(s.lines[1], "end");
	cr_assert_eq(s.noverlong, 1);
	cr_assert_eq(s.overlong[0], cap + 1);
	seen_free(&s);
	close(fd);
	event_base_free(base);
}

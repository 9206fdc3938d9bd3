/* SPDX-License-Identifier: ISC */
/*
 * testclient.h: what the blocking C test clients of runtimed share
 * (tests/lib/testclient.c).  A client calls testclient_init once with its
 * name; every helper that cannot go on fails the test through
 * testclient_fail with that name.
 */

#ifndef TESTCLIENT_H
#define TESTCLIENT_H

#include "common.h"

void		 testclient_init(const char *, int);
__dead void	 testclient_fail(const char *, ...) printflike(1, 2);
int		 testclient_try_connect(const char *, int64_t *);
int		 testclient_connect(const char *);
uint32_t	 testclient_next_id(void);
struct mpbuf	*testclient_codec(struct mpbuf *);
struct mpbuf	*testclient_body(struct mpbuf *, size_t);
int		 testclient_send(int, uint16_t, struct mpbuf *, uint32_t *);
int		 testclient_wait_reply(int, uint32_t, int,
		    struct proto_header *, msgpack_unpacked *, char **);
uint16_t	 testclient_request(int, uint16_t, struct mpbuf *, uint16_t,
		    msgpack_unpacked *);
uint16_t	 testclient_request_wait(int, uint16_t, struct mpbuf *,
		    uint16_t, int, msgpack_unpacked *);
char		*testclient_expect_error(int, uint16_t, struct mpbuf *,
		    const char *);
char		*testclient_str(const msgpack_object *, const char *);
char		*testclient_create(int, const char *, const char *);
char		*testclient_open(int, const char *, const char *);
void		 testclient_insert(int, const char **, const size_t *, size_t,
		    char **, uint64_t *);
char		*testclient_insert1(int, const char *, uint64_t *);
void		 testclient_run(int, char **, size_t, int,
		    msgpack_unpacked *);
char		*testclient_submit(int, char **, size_t, int);
void		 testclient_exec_get(int, const char *, int64_t,
		    msgpack_unpacked *);

#endif

/* SPDX-License-Identifier: ISC */
/*
 * test-remote-ws.c: the kernel WebSocket's upgrade answer, read where a
 * server's bytes end: at the end of mapped memory, so a parse that reads
 * one byte past them (sscanf on a buffer that is not a C string, found
 * by fuzz-remote) crashes here rather than by chance.
 */

#include <sys/mman.h>

#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "agent-remote.h"

/* RFC 6455's sample key and the accept it gives. */
#define KEY	"dGhlIHNhbXBsZSBub25jZQ=="
#define ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

/* text copied to end at a page that cannot be read; parsed there. */
static int
parse_at_end(const char *text, size_t *hlen, char **proto, char **cause)
{
	long	 pg = sysconf(_SC_PAGESIZE);
	size_t	 len = strlen(text);
	char	*m;
	int	 rc;

	cr_assert_lt(len, (size_t)pg);
	m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memcpy(m + pg - len, text, len);
	*proto = *cause = NULL;
	rc = agent_remote_ws_handshake_parse(m + pg - len, len, KEY, hlen,
	    proto, cause);
	munmap(m, 2 * (size_t)pg);
	return (rc);
}

Test(remote_ws, upgrade_read_to_its_last_byte)
{
	static const char	 ok[] = "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: " ACCEPT "\r\n"
	    "Sec-WebSocket-Protocol: v1.kernel.websocket.jupyter.org\r\n\r\n";
	size_t			 hlen = 0;
	char			*proto, *cause;

	cr_assert_eq(parse_at_end(ok, &hlen, &proto, &cause), 1, "%s",
	    cause != NULL ? cause : "");
	cr_assert_eq(hlen, strlen(ok));
	cr_assert_str_eq(proto, "v1.kernel.websocket.jupyter.org");
	free(proto);

	/* Incomplete, then refused, then not a status at all. */
	cr_assert_eq(parse_at_end("HTTP/1.1 101 Switching", &hlen, &proto,
	    &cause), 0);
	cr_assert_eq(parse_at_end("HTTP/1.1 403 Forbidden\r\n\r\n", &hlen,
	    &proto, &cause), -1);
	cr_assert_not_null(strstr(cause, "token was refused"), "%s", cause);
	free(cause);
	cr_assert_eq(parse_at_end("HTTP/1.1 1x1 Odd\r\n\r\n", &hlen, &proto,
	    &cause), -1);
	cr_assert_str_eq(cause, "the server's answer is not HTTP/1.1");
	free(cause);
	cr_assert_eq(parse_at_end("HTTP/1.1 101\r\n\r\n", &hlen, &proto,
	    &cause), -1, "a 101 without its accept");
	free(cause);
}

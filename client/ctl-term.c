/* SPDX-License-Identifier: ISC */
/*
 * ctl-term.c: text from a notebook (a cell's source or output, a file
 * name) made safe to print to a terminal.  Such text is anyone's: an
 * escape sequence in it would write to the person's clipboard (OSC 52),
 * retitle or clear their terminal, or hide lines.  Control characters
 * but newline and tab are shown in caret notation, as cat -v does (ESC
 * as ^[, BEL as ^G), and C1 controls (U+0080 to U+009F, a CSI among
 * them) as the ESC sequence they stand for (U+009B as ^[[).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* len bytes of s, safe to print; caller frees. */
char *
ctl_term_safe(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			*out;
	size_t			 i, o = 0;

	out = xmalloc(len * 3 + 1);	/* at most 3 bytes for 1 (or 2) */
	for (i = 0; i < len; i++) {
		if (p[i] == '\n' || p[i] == '\t' ||
		    (p[i] >= 0x20 && p[i] != 0x7f && p[i] != 0xc2)) {
			out[o++] = (char)p[i];
			continue;
		}
		if (p[i] == 0xc2) {
			if (i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
				out[o++] = '^';
				out[o++] = '[';
				out[o++] = (char)(p[++i] - 0x40);
			} else
				out[o++] = (char)p[i];
			continue;
		}
		out[o++] = '^';
		out[o++] = (char)(p[i] ^ 0x40);
	}
	out[o] = '\0';
	return (out);
}

/* Print s and a newline to f, made safe (ctl_term_safe). */
void
ctl_term_puts(const char *s, FILE *f)
{
	char	*safe = ctl_term_safe(s, strlen(s));

	fprintf(f, "%s\n", safe);
	free(safe);
}

/*
 * Print JSON text and a newline to f with each C1 control written as
 * its \u escape: the same JSON value, but nothing a terminal obeys
 * (json-c escapes the C0 controls itself, not these).
 */
void
ctl_term_json(const char *json, FILE *f)
{
	const unsigned char	*p = (const unsigned char *)json;

	for (; *p != '\0'; p++) {
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(f, "\\u%04x", (unsigned)p[1]);
			p++;
		} else
			putc(*p, f);
	}
	putc('\n', f);
}

/* SPDX-License-Identifier: ISC */
/*
 * ctl-table.c: columns aligned for people, and the small readers of
 * msgpack maps the tables are filled from.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

struct ctl_table {
	u_int	  ncols;
	size_t	  nrows;
	char	**cells;	/* nrows * ncols, row 0 the headings */
};

/* A table of ncols columns named by the ncols strings that follow. */
struct ctl_table *
ctl_table_create(u_int ncols, ...)
{
	struct ctl_table	*t;
	va_list			 ap;
	u_int			 i;

	t = xcalloc(1, sizeof *t);
	t->ncols = ncols;
	t->cells = xreallocarray(NULL, ncols, sizeof *t->cells);
	va_start(ap, ncols);
	for (i = 0; i < ncols; i++)
		t->cells[i] = xstrdup(va_arg(ap, const char *));
	va_end(ap);
	t->nrows = 1;
	return (t);
}

/* A row of ncols strings (NULL shows as "-"); they are copied. */
void
ctl_table_add(struct ctl_table *t, ...)
{
	va_list		 ap;
	const char	*s;
	u_int		 i;

	t->cells = xreallocarray(t->cells, (t->nrows + 1) * t->ncols,
	    sizeof *t->cells);
	va_start(ap, t);
	for (i = 0; i < t->ncols; i++) {
		s = va_arg(ap, const char *);
		if (s == NULL)
			s = "-";
		/* A path or name may hold anything: no escapes printed. */
		t->cells[t->nrows * t->ncols + i] = ctl_term_safe(s,
		    strlen(s));
	}
	va_end(ap);
	t->nrows++;
}

void
ctl_table_print(struct ctl_table *t, FILE *f)
{
	size_t	*w, r, len;
	u_int	 i;

	w = xcalloc(t->ncols, sizeof *w);
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			len = strlen(t->cells[r * t->ncols + i]);
			if (len > w[i])
				w[i] = len;
		}
	}
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			if (i + 1 == t->ncols)
				fprintf(f, "%s\n", t->cells[r * t->ncols + i]);
			else
				fprintf(f, "%-*s  ", (int)w[i],
				    t->cells[r * t->ncols + i]);
		}
	}
	free(w);
}

void
ctl_table_free(struct ctl_table *t)
{
	size_t	i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

/*
 * The string at key of map o, or dflt when absent or not a string.  The
 * result points into a static buffer of a few (it is short-lived).
 */
const char *
ctl_table_str(const msgpack_object *o, const char *key, const char *dflt)
{
	static char	 bufs[4][512];
	static u_int	 next;
	const char	*s;
	char		*buf;
	size_t		 len;

	if ((s = proto_get_str(o, key, &len)) == NULL)
		return (dflt);
	buf = bufs[next++ % 4];
	snprintf(buf, sizeof bufs[0], "%.*s", (int)len, s);
	return (buf);
}

/* The integer (or boolean, as yes/no) at key as text, or NULL; caller
 * frees. */
char *
ctl_table_int(const msgpack_object *o, const char *key)
{
	const msgpack_object	*v;
	int64_t			 n;
	char			*s;

	if ((v = proto_get(o, key)) != NULL &&
	    v->type == MSGPACK_OBJECT_BOOLEAN)
		return (xstrdup(v->via.boolean ? "yes" : "no"));
	if (proto_get_int(o, key, &n) != 0)
		return (NULL);
	xasprintf(&s, "%lld", (long long)n);
	return (s);
}

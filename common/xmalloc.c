/* SPDX-License-Identifier: ISC */
/*
 * xmalloc.c: allocators that never return NULL.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		fatalx("xmalloc: zero size");
	if ((p = malloc(size)) == NULL)
		fatalx("xmalloc: allocating %zu bytes", size);
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		fatalx("xcalloc: zero size");
	if ((p = calloc(n, size)) == NULL)
		fatalx("xcalloc: allocating %zu * %zu bytes", n, size);
	return (p);
}

void *
xreallocarray(void *ptr, size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		fatalx("xreallocarray: zero size");
	if ((p = reallocarray(ptr, n, size)) == NULL)
		fatalx("xreallocarray: allocating %zu * %zu bytes", n, size);
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatalx("xstrdup: out of memory");
	return (p);
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatalx("xstrndup: out of memory");
	return (p);
}

int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	i;

	if ((i = vasprintf(ret, fmt, ap)) < 0)
		fatalx("xvasprintf: out of memory");
	return (i);
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	i;

	va_start(ap, fmt);
	i = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return (i);
}

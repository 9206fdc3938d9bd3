/* SPDX-License-Identifier: ISC */
/*
 * test-blob.c: the content-addressed output store.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common.h"

Test(blob, put_get_and_verify)
{
	char	 dir[] = "/tmp/test-blob-XXXXXX", hex[65], hex2[65];
	char	*data, *cause = NULL, *path, *cmd;
	size_t	 len;
	FILE	*f;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(blob_put(dir, "hello", 5, hex, &cause), 0, "%s", cause);
	/* SHA-256("hello") */
	cr_assert_str_eq(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e"
	    "1b161e5c1fa7425e73043362938b9824");
	cr_assert_eq(blob_put(dir, "hello", 5, hex2, &cause), 0);
	cr_assert_str_eq(hex, hex2);
	cr_assert_eq(blob_get(dir, hex, &data, &len, &cause), 0);
	cr_assert_eq(len, 5);
	cr_assert_eq(memcmp(data, "hello", 5), 0);
	free(data);

	/* A blob whose content no longer matches its name is refused. */
	path = blob_path(dir, hex);
	f = fopen(path, "w");
	fputs("jello", f);
	fclose(f);
	cr_assert_eq(blob_get(dir, hex, &data, &len, &cause), -1);
	cr_assert(strstr(cause, "corrupt") != NULL);
	free(cause);
	cause = NULL;
	/* Names that are not 64 hex digits never reach the file system. */
	cr_assert_eq(blob_get(dir, "../../etc/passwd", &data, &len, &cause),
	    -1);
	cr_assert_eq(blob_valid_name(hex, 64), 1);
	cr_assert_eq(blob_valid_name("ABCD", 4), 0);
	free(cause);
	free(path);
	xasprintf(&cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* SPDX-License-Identifier: ISC */
/*
 * blob.c: the content-addressed store for large outputs, shared by the
 * daemon and its agents: <state>/blobs/<2 hex>/<64 hex>, written once,
 * atomically, named by the SHA-256 of the content.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Lowercase hex SHA-256 of data into hex[65]. */
void
blob_hash(const void *data, size_t len, char hex[65])
{
	unsigned char	md[CRYPTO_SHA256_LEN];

	crypto_sha256(data, len, md);
	util_hex(md, CRYPTO_SHA256_LEN, hex);
}

/* Is s a blob name (64 lowercase hex digits)? */
int
blob_valid_name(const char *s, size_t len)
{
	size_t	i;

	if (len != 64)
		return (0);
	for (i = 0; i < len; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	}
	return (1);
}

/* Path of a blob; caller frees. */
char *
blob_path(const char *state_dir, const char *hex)
{
	char	*path;

	xasprintf(&path, "%s/blobs/%.2s/%s", state_dir, hex, hex);
	return (path);
}

/*
 * Store data; its name goes to hex.  A blob that exists already is not
 * written again: same name, same content.
 */
int
blob_put(const char *state_dir, const void *data, size_t len,
    char hex[65], char **cause)
{
	struct stat	 sb;
	char		*dir, *path;
	int		 r = 0;

	blob_hash(data, len, hex);
	path = blob_path(state_dir, hex);
	if (stat(path, &sb) == 0 && (size_t)sb.st_size == len) {
		free(path);
		return (0);
	}
	xasprintf(&dir, "%s/blobs/%.2s", state_dir, hex);
	if (util_mkdir_private(dir, cause) != 0)
		r = -1;
	else
		r = atomic_write(path, data, len, 0600, cause);
	free(dir);
	free(path);
	return (r);
}

/* Read a blob and check it against its name; caller frees *data. */
int
blob_get(const char *state_dir, const char *hex, char **data, size_t *len,
    char **cause)
{
	char	*path, check[65];

	if (!blob_valid_name(hex, strlen(hex))) {
		xasprintf(cause, "not a blob name: %.80s", hex);
		return (-1);
	}
	path = blob_path(state_dir, hex);
	if (util_read_file(path, data, len, cause) != 0) {
		free(path);
		return (-1);
	}
	free(path);
	blob_hash(*data, *len, check);
	if (strcmp(check, hex) != 0) {
		xasprintf(cause, "blob %s is corrupt", hex);
		free(*data);
		return (-1);
	}
	return (0);
}

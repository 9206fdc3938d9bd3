/* SPDX-License-Identifier: ISC */
/*
 * kernel-tidy.c: what an agent killed with SIGKILL leaves behind, removed
 * by the daemon when it reaps the agent.  An agent that exits removes its
 * kernel's connection file and its private ipc directory,
 * /tmp/rtdk-XXXXXX (decision 060); one killed outright cannot, and /tmp
 * kept a directory per kill.  The connection file in the kernel's runtime
 * directory names the ipc directory: the daemon removes the sockets the
 * file names in it and the directory if it is then empty, and only a
 * directory of ours (by its owner, never through a symbolic link: /tmp
 * is shared), then the file.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "runtimed.h"

/* As agent-kernel.c names them: "/tmp/rtdk-XXXXXX/k". */
#define KERNEL_TIDY_PREFIX	"/tmp/rtdk-"
#define KERNEL_TIDY_NAME	"k"
#define KERNEL_TIDY_FILE_MAX	(64 * 1024)	/* a connection file */

static void	kernel_tidy_ipc(const char *, struct json_object *);
static void	kernel_tidy_file(int, const char *, const char *);

/* The ipc directory a connection file names, its sockets, then it. */
static void
kernel_tidy_ipc(const char *path, struct json_object *conn)
{
	static const char	*ports[] = { "shell_port", "iopub_port",
				    "stdin_port", "control_port", "hb_port" };
	struct json_object	*v;
	struct stat		 sb;
	const char		*ip, *p;
	char			*dir, name[32];
	size_t			 i;
	int			 dfd;

	if (!json_object_object_get_ex(conn, "transport", &v) ||
	    strcmp(json_object_get_string(v), "ipc") != 0 ||
	    !json_object_object_get_ex(conn, "ip", &v) ||
	    (ip = json_object_get_string(v)) == NULL)
		return;
	/* Only a name mkdtemp gave: /tmp/rtdk-XXXXXX/k, nothing else. */
	if (strncmp(ip, KERNEL_TIDY_PREFIX, strlen(KERNEL_TIDY_PREFIX)) != 0)
		return;
	p = ip + strlen(KERNEL_TIDY_PREFIX);
	for (i = 0; i < 6; i++) {
		if (!(p[i] >= '0' && p[i] <= '9') &&
		    !(p[i] >= 'a' && p[i] <= 'z') &&
		    !(p[i] >= 'A' && p[i] <= 'Z'))
			return;
	}
	if (strcmp(p + 6, "/" KERNEL_TIDY_NAME) != 0)
		return;
	dir = xstrndup(ip, (size_t)(p + 6 - ip));
	/* Ours, a directory, not a link: else it is left alone. */
	if ((dfd = open(dir, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC)) ==
	    -1) {
		if (errno != ENOENT)
			log_warnx("%s: left %s: %s", path, dir,
			    strerror(errno));
		free(dir);
		return;
	}
	if (fstat(dfd, &sb) != 0 || sb.st_uid != getuid()) {
		log_warnx("%s: left %s: not ours", path, dir);
		close(dfd);
		free(dir);
		return;
	}
	for (i = 0; i < sizeof ports / sizeof ports[0]; i++) {
		if (!json_object_object_get_ex(conn, ports[i], &v) ||
		    !json_object_is_type(v, json_type_int))
			continue;
		snprintf(name, sizeof name, "%s-%d", KERNEL_TIDY_NAME,
		    json_object_get_int(v));
		/* A socket the kernel bound: nothing else is unlinked. */
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISSOCK(sb.st_mode) && sb.st_uid == getuid())
			unlinkat(dfd, name, 0);
	}
	close(dfd);
	if (rmdir(dir) == 0)
		log_info("removed %s, the ipc directory of a killed agent",
		    dir);
	else if (errno != ENOENT)
		log_warnx("%s: left %s: %s", path, dir, strerror(errno));
	free(dir);
}

/* One connection file left in the runtime directory (dfd). */
static void
kernel_tidy_file(int dfd, const char *rundir, const char *name)
{
	struct json_object	*conn;
	char			*path, *data, *cause;
	size_t			 len;

	xasprintf(&path, "%s/%s", rundir, name);
	if (util_read_file_max(path, UTIL_NOFOLLOW, KERNEL_TIDY_FILE_MAX,
	    &data, &len, &cause) != 0) {
		log_debug("%s", cause);
		free(cause);
		free(path);
		return;
	}
	if ((conn = json_tokener_parse(data)) != NULL &&
	    json_object_is_type(conn, json_type_object))
		kernel_tidy_ipc(path, conn);
	json_object_put(conn);
	free(data);
	/* It holds the dead kernel's key: no use to anyone now. */
	unlinkat(dfd, name, 0);
	free(path);
}

/*
 * The agent of runtime directory rundir was reaped: remove what it could
 * not (the connection files of its kernels and their ipc directories).
 */
void
kernel_tidy(const char *rundir)
{
	DIR		*dp;
	struct dirent	*de;
	size_t		 n;

	if ((dp = opendir(rundir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (strncmp(de->d_name, "kernel-", 7) == 0 && n > 12 &&
		    strcmp(de->d_name + n - 5, ".json") == 0)
			kernel_tidy_file(dirfd(dp), rundir, de->d_name);
	}
	closedir(dp);
}

/* SPDX-License-Identifier: ISC */
/*
 * kernelspec.h: Jupyter kernelspecs (kernelspec.c), shared by the agent,
 * which launches kernels from them, and the daemon, which lists and
 * checks them without starting anything.
 */

#ifndef KERNELSPEC_H
#define KERNELSPEC_H

#include <stddef.h>

#include <json-c/json.h>

struct kernelspec;

/* How a kernel wants to be interrupted. */
enum kernelspec_interrupt_mode {
	KERNELSPEC_INTERRUPT_SIGNAL,
	KERNELSPEC_INTERRUPT_MESSAGE,
};

/* The kernelspec a name-less notebook gets. */
#define KERNELSPEC_DEFAULT	"python3"
#define KERNELSPEC_JSON_MAX	(1024 * 1024)	/* a kernel.json read */

struct kernelspec	*kernelspec_find(const char *, char **);
struct kernelspec	*kernelspec_load(const char *, const char *, char **);
void			 kernelspec_free(struct kernelspec *);
const char		*kernelspec_name(struct kernelspec *);
const char		*kernelspec_display_name(struct kernelspec *);
const char		*kernelspec_language(struct kernelspec *);
const char		*kernelspec_resource_dir(struct kernelspec *);
enum kernelspec_interrupt_mode kernelspec_interrupt_mode(struct kernelspec *);
struct json_object	*kernelspec_metadata(struct kernelspec *);
char			**kernelspec_argv(struct kernelspec *, const char *);
void			 kernelspec_argv_free(char **);
size_t			 kernelspec_nenv(struct kernelspec *);
const char		*kernelspec_env_name(struct kernelspec *, size_t);
char			*kernelspec_env_value(struct kernelspec *, size_t);
char			**kernelspec_dirs(size_t *);
void			 kernelspec_dirs_free(char **, size_t);
struct json_object	*kernelspec_list(void);

#endif

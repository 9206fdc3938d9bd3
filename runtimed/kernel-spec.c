/* SPDX-License-Identifier: ISC */
/*
 * kernel-spec.c: kernelspecs as the daemon sees them: KERNEL_LIST,
 * KERNEL_SELECT and the check of a kernel name a client asks for, all
 * without starting anything (common/kernelspec.c reads the disk).
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtimed.h"
#include "kernelspec.h"

static void	kernel_spec_pack_list(msgpack_packer *, const void *);
static void	kernel_spec_listed(struct room *, struct peer *, uint32_t,
		    const char *, struct json_object *, const char *);
static void	kernel_spec_select_remote(struct room *, struct peer *,
		    uint32_t, const char *, struct json_object *,
		    const char *);
static void	kernel_spec_list(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	kernel_spec_select(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The requests this file answers: server-client.c tries this table, its
 * handlers given the room (NULL for KERNEL_LIST without one;
 * docs/decisions/096).  KERNEL_SELECT reads its body itself, to say
 * what a kernel must be.
 */
const struct peer_dispatch kernel_spec_table[] = {
	{ PROTO_MSG_KERNEL_LIST, 0, kernel_spec_list },
	{ PROTO_MSG_KERNEL_SELECT, 0, kernel_spec_select },
	{ 0, 0, NULL }
};

/*
 * Does kernelspec name exist?  0 if so; else -1 with a cause listing
 * what does (for kernel_unavailable).
 */
int
kernel_spec_check(const char *name, char **cause)
{
	struct kernelspec	*ks;

	if ((ks = kernelspec_find(name, cause)) == NULL)
		return (-1);
	kernelspec_free(ks);
	return (0);
}

/*
 * Name kernelspec `name` in a notebook's metadata, as its kernel.json
 * has it (display_name, language), unless the notebook names one.
 */
void
kernel_spec_metadata(struct room_nb *nb, const char *name)
{
	struct kernelspec	*ks;
	char			*cause = NULL;

	if ((ks = kernelspec_find(name, &cause)) == NULL) {
		free(cause);
		return;
	}
	room_ipynb_set_kernelspec(nb, kernelspec_name(ks),
	    kernelspec_display_name(ks), kernelspec_language(ks), NULL);
	kernelspec_free(ks);
}

/* KERNEL_LIST_REPLY's kernels: [{name, display_name, language}]. */
static void
kernel_spec_pack_list(msgpack_packer *pk, const void *arg)
{
	struct json_object	*list = (struct json_object *)arg, *item, *v;
	size_t			 i, n;
	const char		*keys[] = { "name", "display_name",
				    "language" };
	u_int			 j;

	n = json_object_array_length(list);
	msgpack_pack_array(pk, n);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		msgpack_pack_map(pk, 3);
		for (j = 0; j < 3; j++) {
			if (json_object_object_get_ex(item, keys[j], &v) &&
			    json_object_is_type(v, json_type_string))
				proto_pack_str(pk, keys[j],
				    json_object_get_string(v));
			else
				proto_pack_nil(pk, keys[j]);
		}
	}
}

/* KERNEL_LIST {} -> KERNEL_LIST_REPLY {default, kernels: [...]} */
static void
kernel_spec_list(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct json_object	*list;
	struct room		*r = arg;
	uint32_t		 id = hdr->id;

	/* A connection on a remote notebook lists its server's. */
	if (r != NULL && r->remote != NULL) {
		room_remote_kernels(r, NULL, p, id, kernel_spec_listed);
		return;
	}
	list = kernelspec_list();
	kernel_spec_listed(r, p, id, NULL, list, NULL);
	json_object_put(list);
}

/* KERNEL_LIST_REPLY of list, or the ERROR of cause. */
static void
kernel_spec_listed(struct room *r, struct peer *p, uint32_t id,
    const char *unused, struct json_object *list, const char *cause)
{
	struct proto_kernel_list_reply	 m;
	struct mpbuf			 b;

	if (cause != NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		return;
	}
	m.default_name = proto_str_make(KERNELSPEC_DEFAULT);
	m.kernels.obj = NULL;
	m.kernels.pack = kernel_spec_pack_list;
	m.kernels.arg = list;
	mpbuf_init(&b);
	proto_kernel_list_reply_pack(&b.pk, &m);
	peer_send(p, PROTO_MSG_KERNEL_LIST_REPLY, id, &b.sb);
	mpbuf_free(&b);
}

/*
 * KERNEL_SELECT on a remote notebook: one of its server's kernelspecs,
 * once the server has said which it has.
 */
static void
kernel_spec_select_remote(struct room *r, struct peer *p, uint32_t id,
    const char *name, struct json_object *list, const char *cause)
{
	const char	*why;

	if (cause != NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		return;
	}
	if (strcmp(r->kernel_name, name) == 0 && r->kernel != NULL &&
	    !room_kernel_dead(r, &why)) {
		peer_send_ok(p, id);
		return;
	}
	free(r->kernel_name);
	r->kernel_name = xstrdup(name);
	if (r->kernel == NULL) {
		r->kernel_facts = 1;
		room_changed(r, NULL, "kernel");
		peer_send_ok(p, id);
		return;
	}
	if (room_kernel_replace(r, NULL, 0, "kernel_changed") != 0) {
		peer_send_error(p, id, PROTO_E_BUSY,
		    "a restart is under way; select the kernel after it");
		return;
	}
	/* Once the old kernel's DELETE is answered: refused is said. */
	room_kernel_answer_retired(r, p, id);
}

/*
 * KERNEL_SELECT {kernel} -> OK: the room's kernel is replaced by one of
 * that kernelspec (runs end interrupted, reason kernel_changed); the
 * notebook's kernelspec metadata follows once it is ready.  The same
 * kernelspec, alive, is left alone.  With no kernel, none is started:
 * the metadata names the kernelspec at once (kernel.json).
 */
static void
kernel_spec_select(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct proto_kernel_select	 m;
	struct kernelspec		*ks;
	struct room			*r = arg;
	const char			*why;
	uint32_t			 id = hdr->id;
	char				*name, *cause, err[256];

	if (r == NULL) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "KERNEL_SELECT needs a notebook: send ROOM_CREATE or "
		    "ROOM_OPEN first");
		return;
	}
	if (proto_kernel_select_unpack(body, &m, err, sizeof err) != 0 ||
	    m.kernel.len == 0 || m.kernel.len > 255) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "kernel must be a kernelspec name");
		return;
	}
	name = xstrndup(m.kernel.ptr, m.kernel.len);
	if (r->remote != NULL) {
		room_remote_kernels(r, name, p, id, kernel_spec_select_remote);
		free(name);
		return;
	}
	if ((ks = kernelspec_find(name, &cause)) == NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		free(cause);
		free(name);
		return;
	}
	free(name);
	if (strcasecmp(r->kernel_name, kernelspec_name(ks)) == 0 &&
	    r->kernel != NULL && !room_kernel_dead(r, &why)) {
		kernelspec_free(ks);
		peer_send_ok(p, id);
		return;
	}
	log_info("room %s: kernel %s -> %s", r->id, r->kernel_name,
	    kernelspec_name(ks));
	free(r->kernel_name);
	r->kernel_name = xstrdup(kernelspec_name(ks));
	kernelspec_free(ks);
	if (r->kernel == NULL) {
		/* No kernel to replace: the next run starts this one. */
		mpvalue_del(&r->nb->metadata, room_ipynb_kernel_keys);
		kernel_spec_metadata(r->nb, r->kernel_name);
		r->kernel_facts = 1;
		room_changed(r, NULL, "metadata");
		room_changed(r, NULL, "kernel");
		peer_send_ok(p, id);
		return;
	}
	if (room_kernel_replace(r, NULL, 0, "kernel_changed") != 0) {
		peer_send_error(p, id, PROTO_E_BUSY,
		    "a restart is under way; select the kernel after it");
		return;
	}
	peer_send_ok(p, id);
}

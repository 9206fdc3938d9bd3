/* SPDX-License-Identifier: ISC */
/*
 * proto-body.h: the bodies of the messages proto.h numbers: the pieces
 * codecs are made of, and for each message its struct and its pack and
 * unpack functions (docs/decisions/014), by family, one proto-*.c each.
 * Included by proto.h; changing a body in a way an older peer cannot
 * read means bumping PROTO_VERSION there.
 */

#ifndef PROTO_BODY_H
#define PROTO_BODY_H

/* proto-pack.c: building bodies. */
void	proto_pack_key(msgpack_packer *, const char *);
void	proto_pack_str(msgpack_packer *, const char *, const char *);
void	proto_pack_strn(msgpack_packer *, const char *, const char *, size_t);
void	proto_pack_int(msgpack_packer *, const char *, int64_t);
void	proto_pack_uint(msgpack_packer *, const char *, uint64_t);
void	proto_pack_bool(msgpack_packer *, const char *, int);
void	proto_pack_nil(msgpack_packer *, const char *);
void	proto_pack_cstr(msgpack_packer *, const char *);

/*
 * proto-pack.c: a packer writing into a buffer of the exact size: a first
 * pass with p NULL only counts len; a second, p allocated and len 0,
 * copies (a 10 MB value is copied once, not grown by doubling).
 */
struct proto_fill {
	char	*p;
	size_t	 len;
};
int	proto_fill_write(void *, const char *, size_t);

/* proto-pack.c: a document inside a typed body. */

/* proto-pack.c: reading bodies.  Getters return NULL/-1 when absent or
 * of the wrong type, so callers can reject a bad peer in one place. */
const msgpack_object	*proto_get(const msgpack_object *, const char *);
const char		*proto_get_str(const msgpack_object *, const char *,
			     size_t *);
char			*proto_dup_str(const msgpack_object *, const char *);
int			 proto_get_int(const msgpack_object *, const char *,
			     int64_t *);
int			 proto_get_bool(const msgpack_object *, const char *,
			     int *);
const msgpack_object	*proto_get_map(const msgpack_object *, const char *);
const msgpack_object	*proto_get_array(const msgpack_object *,
			     const char *);
int			 proto_obj_streq(const msgpack_object *, const char *);

/*
 * proto-map.c: a map copied with keys set, added or dropped, in the
 * order json-c's object_add keeps.  A set with neither pack nor packed
 * drops its key.
 */
#define PROTO_MAP_SET_MAX	16
struct proto_map_set {
	const char	*key;
	void		(*pack)(msgpack_packer *, const msgpack_object *,
			    void *);
	void		*arg;
	const char	*packed;
	size_t		 packed_len;
};
typedef void (*proto_map_copy_cb)(msgpack_packer *, const msgpack_object *,
	    void *);
int	proto_map_copy(msgpack_packer *, const msgpack_object *,
	    const struct proto_map_set *, size_t, proto_map_copy_cb, void *);

/*
 * proto-outputs.c: a cell's outputs kept as the wire carries them, each
 * its own packed msgpack value (docs/decisions/097).  Functions that
 * allocate return -1 when memory runs out.
 */
struct proto_output {
	char	*data;
	size_t	 len;
};
struct proto_outputs {
	struct proto_output	*v;
	size_t			 n;
	size_t			 size;
	unsigned int		 refs;	/* proto_outputs_new's lists only */
};
void	 proto_outputs_init(struct proto_outputs *);
struct proto_outputs *proto_outputs_new(void);
struct proto_outputs *proto_outputs_ref(struct proto_outputs *);
void	 proto_outputs_unref(struct proto_outputs *);
void	 proto_outputs_clear(struct proto_outputs *);
void	 proto_outputs_free(struct proto_outputs *);
int	 proto_outputs_append(struct proto_outputs *, const msgpack_object *);
int	 proto_outputs_append_packed(struct proto_outputs *, const char *,
	     size_t);
int	 proto_outputs_append_take(struct proto_outputs *, char *, size_t);
int	 proto_outputs_set(struct proto_outputs *, size_t,
	     const msgpack_object *);
int	 proto_outputs_set_packed(struct proto_outputs *, size_t,
	     const char *, size_t);
void	 proto_outputs_truncate(struct proto_outputs *, size_t);
int	 proto_outputs_copy(struct proto_outputs *,
	     const struct proto_outputs *);
int	 proto_outputs_unpack(struct proto_outputs *, const msgpack_object *);
void	 proto_outputs_pack(msgpack_packer *, const struct proto_outputs *);
const msgpack_object *proto_outputs_get(const struct proto_outputs *, size_t,
	     msgpack_unpacked *);
int	 proto_outputs_equal(const struct proto_outputs *,
	     const struct proto_outputs *);
size_t	 proto_outputs_bytes(const struct proto_outputs *);
const char *proto_output_display_id(const msgpack_object *, size_t *);
int	 proto_outputs_update_display(struct proto_outputs *, const char *,
	     size_t, const msgpack_object *);

/*
 * proto-field.c: what codecs are made of (docs/decisions/014).  For a
 * message X, struct proto_X holds its fields; proto_X_pack writes it and
 * proto_X_unpack reads it, returning -1 with "X: field is not a string"
 * when a field is missing or mistyped.  Unpacking borrows from the
 * received frame and allocates nothing; unknown keys are ignored.
 */
struct proto_str {
	const char	*ptr;		/* not NUL-terminated; NULL: absent */
	size_t		 len;
};

/* A document (cells, outputs, metadata, edits) the codec does not type:
 * unpacked, obj; packed, pack(pk, arg) if set, else obj copied. */
typedef void (*proto_doc_cb)(msgpack_packer *, const void *);
struct proto_doc {
	const msgpack_object	*obj;
	proto_doc_cb		 pack;
	const void		*arg;
};
/* Texts a sender holds (cell ids), packed as a list of strings. */
struct proto_cstrs {
	const char *const	*v;
	size_t			 n;
};

#define PROTO_REQ	0x01	/* the field must be there (nil is not) */
#define PROTO_NONUL	0x02	/* a string without NUL */
#define PROTO_UNSIGNED	0x04	/* an integer >= 0 */
#define PROTO_MAP	0x08	/* a document that is a map */
#define PROTO_ARRAY	0x10	/* a document that is an array */

/* In a codec: give up on the first field that is wrong (err says why). */
#define PROTO_TRY(x) do {						\
	if ((x) != 0)							\
		return (-1);						\
} while (0)

int	proto_field_body(const msgpack_object *, const char *, char *,
	    size_t);
int	proto_field_str(const msgpack_object *, const char *, const char *,
	    int, struct proto_str *, char *, size_t);
int	proto_field_int(const msgpack_object *, const char *, const char *,
	    int, int64_t *, int *, char *, size_t);
int	proto_field_uint(const msgpack_object *, const char *, const char *,
	    int, uint64_t *, int *, char *, size_t);
int	proto_field_bool(const msgpack_object *, const char *, const char *,
	    int, int *, int *, char *, size_t);
int	proto_field_doc(const msgpack_object *, const char *, const char *,
	    int, struct proto_doc *, char *, size_t);
int	proto_field_enum(const msgpack_object *, const char *, const char *,
	    int, const char *const *, size_t, int *, char *, size_t);
void	proto_pack_pstr(msgpack_packer *, const char *,
	    const struct proto_str *);
void	proto_pack_opt_int(msgpack_packer *, const char *, int, int64_t);
void	proto_pack_doc(msgpack_packer *, const char *,
	    const struct proto_doc *);
void	proto_doc_pack(msgpack_packer *, const struct proto_doc *);
int	proto_doc_present(const struct proto_doc *);
struct proto_doc proto_doc_cstr(const char *);
struct proto_doc proto_doc_cstrs(const struct proto_cstrs *);
struct proto_str proto_str_make(const char *);
char	*proto_str_dup(const struct proto_str *);
int	 proto_str_eq(const struct proto_str *, const char *);

/*
 * Bodies declared by their fields (docs/decisions/096).  For a body X,
 * PROTO_FIELDS_X(F) lists F(kind, key, flags) in wire order, and
 * PROTO_BODY(X, "MSG") declares struct proto_X, proto_X_pack and
 * proto_X_unpack (PROTO_BODY_NAMED(X): an unpack told the message's
 * name, for a body two messages share).  proto-body.c defines them: one
 * table of fields per body, walked by proto_field_pack and
 * proto_field_unpack with the refusals of the proto_field_* above.
 * flags are PROTO_REQ, PROTO_NONUL, PROTO_UNSIGNED, PROTO_MAP and
 * PROTO_ARRAY as for those.  The kinds, the member(s) each gives and how
 * it is packed:
 *
 *	STR	struct proto_str key	nil when absent
 *	INT	int64_t key
 *	UINT	uint64_t key		an integer >= 0
 *	OPT_INT	int has_key, int64_t key	left out unless has_key
 *	BOOL	int key
 *	DOC	struct proto_doc key	its object or callback, else nil
 *	NIL_INT	int has_key, int64_t key	nil unless has_key
 *	NIL_UINT int has_key, uint64_t key	nil unless has_key
 *	STR_MAX(max) struct proto_str key	as STR; read, refused over
 *					max bytes
 *	OPT_STR	struct proto_str key	left out when absent
 *	OPT_DOC	struct proto_doc key	left out when absent
 *	FLAG	int key			left out unless set, then true
 *	ENUM(e)	enum proto_e key	its name in proto_e_names (a NULL-
 *					ended list), "unknown" past it; read,
 *					a name not there is refused
 *	RANGE(lo, hi) int64_t key	as INT; read, refused past lo-hi
 *
 * A body with more than these (a list of structs, a check with its own
 * words, a body read in two steps) keeps a hand-written codec.
 */
enum proto_field_kind {
	PROTO_FIELD_STR,
	PROTO_FIELD_INT,
	PROTO_FIELD_UINT,
	PROTO_FIELD_OPT_INT,
	PROTO_FIELD_BOOL,
	PROTO_FIELD_DOC,
	PROTO_FIELD_NIL_INT,
	PROTO_FIELD_OPT_STR,
	PROTO_FIELD_ENUM,
	PROTO_FIELD_RANGE,
	PROTO_FIELD_NIL_UINT,
	PROTO_FIELD_STR_MAX,
	PROTO_FIELD_OPT_DOC,
	PROTO_FIELD_FLAG,
};
struct proto_field {
	const char		*key;
	enum proto_field_kind	 kind;
	int			 flags;
	size_t			 off;	/* of the member in the struct */
	size_t			 has;	/* OPT_INT, NIL_INT: of has_key */
	const char *const	*names;	/* ENUM: NULL-ended */
	int64_t			 lo;	/* RANGE */
	int64_t			 hi;	/* RANGE, STR_MAX */
};
void	proto_field_pack(msgpack_packer *, const struct proto_field *,
	    size_t, const void *);
int	proto_field_unpack(const msgpack_object *, const char *,
	    const struct proto_field *, size_t, void *, char *, size_t);

#define PROTO_FIELD_MEMBER_STR(k)	struct proto_str k;
#define PROTO_FIELD_MEMBER_INT(k)	int64_t k;
#define PROTO_FIELD_MEMBER_UINT(k)	uint64_t k;
#define PROTO_FIELD_MEMBER_OPT_INT(k)	int has_##k; int64_t k;
#define PROTO_FIELD_MEMBER_BOOL(k)	int k;
#define PROTO_FIELD_MEMBER_DOC(k)	struct proto_doc k;
#define PROTO_FIELD_MEMBER_NIL_INT(k)	int has_##k; int64_t k;
#define PROTO_FIELD_MEMBER_OPT_STR(k)	struct proto_str k;
#define PROTO_FIELD_MEMBER_OPT_DOC(k)	struct proto_doc k;
#define PROTO_FIELD_MEMBER_FLAG(k)	int k;
#define PROTO_FIELD_MEMBER_NIL_UINT(k)	int has_##k; uint64_t k;
#define PROTO_FIELD_MEMBER_STR_MAX(max)	struct proto_str PROTO_FIELD_NAME
/* A kind with arguments, ENUM(e)(k): the member's type, then its name. */
#define PROTO_FIELD_MEMBER_ENUM(e)	enum proto_##e PROTO_FIELD_NAME
#define PROTO_FIELD_MEMBER_RANGE(lo, hi) int64_t PROTO_FIELD_NAME
#define PROTO_FIELD_NAME(k)		k;
#define PROTO_FIELD_MEMBER(kind, k, flags) PROTO_FIELD_MEMBER_##kind(k)

#define PROTO_BODY_STRUCT(n)						\
struct proto_##n {							\
	PROTO_FIELDS_##n(PROTO_FIELD_MEMBER)				\
};									\
void	proto_##n##_pack(msgpack_packer *, const struct proto_##n *);

#ifdef PROTO_BODY_DEFINE
/* proto-body.c: each body's table of fields and its two functions. */
#define PROTO_FIELD_ROW_STR(k)		.kind = PROTO_FIELD_STR
#define PROTO_FIELD_ROW_INT(k)		.kind = PROTO_FIELD_INT
#define PROTO_FIELD_ROW_UINT(k)		.kind = PROTO_FIELD_UINT
#define PROTO_FIELD_ROW_OPT_INT(k)	.kind = PROTO_FIELD_OPT_INT,	\
	.has = offsetof(proto_body_self, has_##k)
#define PROTO_FIELD_ROW_BOOL(k)		.kind = PROTO_FIELD_BOOL
#define PROTO_FIELD_ROW_DOC(k)		.kind = PROTO_FIELD_DOC
#define PROTO_FIELD_ROW_NIL_INT(k)	.kind = PROTO_FIELD_NIL_INT,	\
	.has = offsetof(proto_body_self, has_##k)
#define PROTO_FIELD_ROW_OPT_STR(k)	.kind = PROTO_FIELD_OPT_STR
#define PROTO_FIELD_ROW_ENUM(e)		.kind = PROTO_FIELD_ENUM,	\
	.names = proto_##e##_names PROTO_FIELD_ROW_END
#define PROTO_FIELD_ROW_RANGE(l, h)	.kind = PROTO_FIELD_RANGE,	\
	.lo = (l), .hi = (h) PROTO_FIELD_ROW_END
#define PROTO_FIELD_ROW_OPT_DOC(k)	.kind = PROTO_FIELD_OPT_DOC
#define PROTO_FIELD_ROW_FLAG(k)		.kind = PROTO_FIELD_FLAG
#define PROTO_FIELD_ROW_NIL_UINT(k)	.kind = PROTO_FIELD_NIL_UINT,	\
	.has = offsetof(proto_body_self, has_##k)
#define PROTO_FIELD_ROW_STR_MAX(max)	.kind = PROTO_FIELD_STR_MAX,	\
	.hi = (max) PROTO_FIELD_ROW_END
#define PROTO_FIELD_ROW_END(k)
#define PROTO_FIELD_ROW(kind_, k_, flags_)				\
	{ .key = #k_, .flags = (flags_),				\
	    .off = offsetof(proto_body_self, k_),			\
	    PROTO_FIELD_ROW_##kind_(k_) },
#define PROTO_BODY_FIELDS(n)						\
static const struct proto_field *					\
proto_##n##_fields(size_t *count)					\
{									\
	typedef struct proto_##n proto_body_self;			\
	static const struct proto_field f[] = {				\
		PROTO_FIELDS_##n(PROTO_FIELD_ROW)			\
	};								\
									\
	*count = sizeof f / sizeof f[0];				\
	return (f);							\
}									\
void									\
proto_##n##_pack(msgpack_packer *pk, const struct proto_##n *m)	\
{									\
	const struct proto_field	*f;				\
	size_t				 count;				\
									\
	f = proto_##n##_fields(&count);					\
	proto_field_pack(pk, f, count, m);				\
}
#define PROTO_BODY_UNPACK(n, msg)					\
{									\
	const struct proto_field	*f;				\
	size_t				 count;				\
									\
	memset(m, 0, sizeof *m);					\
	f = proto_##n##_fields(&count);					\
	return (proto_field_unpack(body, msg, f, count, m, err, errlen)); \
}
#define PROTO_BODY(n, msg)						\
PROTO_BODY_STRUCT(n)							\
int	proto_##n##_unpack(const msgpack_object *, struct proto_##n *,	\
	    char *, size_t);						\
PROTO_BODY_FIELDS(n)							\
int									\
proto_##n##_unpack(const msgpack_object *body, struct proto_##n *m,	\
    char *err, size_t errlen)						\
PROTO_BODY_UNPACK(n, msg)
#define PROTO_BODY_NAMED(n)						\
PROTO_BODY_STRUCT(n)							\
int	proto_##n##_unpack(const msgpack_object *, const char *,	\
	    struct proto_##n *, char *, size_t);			\
PROTO_BODY_FIELDS(n)							\
int									\
proto_##n##_unpack(const msgpack_object *body, const char *msg,	\
    struct proto_##n *m, char *err, size_t errlen)			\
PROTO_BODY_UNPACK(n, msg)
#else
#define PROTO_BODY(n, msg)						\
PROTO_BODY_STRUCT(n)							\
int	proto_##n##_unpack(const msgpack_object *, struct proto_##n *,	\
	    char *, size_t);
#define PROTO_BODY_NAMED(n)						\
PROTO_BODY_STRUCT(n)							\
int	proto_##n##_unpack(const msgpack_object *, const char *,	\
	    struct proto_##n *, char *, size_t);
#endif

/* proto-daemon.c: OK, ERROR, PING, PONG, DAEMON_*. */
struct proto_error {
	struct proto_str	 code;
	struct proto_str	 message;
	struct proto_str	 reason;	/* "too_large" or absent */
	int			 has_bytes;
	uint64_t		 bytes;
	int			 has_cap;
	uint64_t		 cap;
	int			 has_index;	/* the failing edit */
	int64_t			 index;
	/* edit_conflict: the cell as it is (source capped); else absent. */
	struct proto_str	 cell_id;
	struct proto_str	 version;
	struct proto_str	 source;
};
struct proto_daemon_status_reply {
	int64_t			 pid;
	int64_t			 started_at;
	struct proto_str	 version;
	uint64_t		 rooms;
	uint64_t		 peers;
	uint64_t		 kernels;
	int			 has_fds;
	uint64_t		 fds_open;
	uint64_t		 fds_limit;
	uint64_t		 peers_room;
	struct proto_doc	 warnings;	/* [string] */
	/* Added with runtimectl; has_detail when all are there. */
	int			 has_detail;
	uint64_t		 agents;	/* agent links, pooled too */
	uint64_t		 pool_size;
	uint64_t		 pool_ready;
	struct proto_str	 state_dir;
	struct proto_str	 store_damage;	/* nil: none found */
	struct proto_str	 store_write_error; /* nil: writes work */
	struct proto_doc	 kernel_list;	/* [kernel summary] */
	struct proto_str	 view;		/* the live view's address */
};
void	proto_empty_pack(msgpack_packer *);
void	proto_error_pack(msgpack_packer *, const struct proto_error *);
int	proto_error_unpack(const msgpack_object *, struct proto_error *,
	    char *, size_t);
void	proto_daemon_status_reply_pack(msgpack_packer *,
	    const struct proto_daemon_status_reply *);
int	proto_daemon_status_reply_unpack(const msgpack_object *,
	    struct proto_daemon_status_reply *, char *, size_t);

/* proto-room.c: ROOM_*, BLOB_*. */
struct proto_room_create {
	struct proto_str	 path;		/* absent: untitled */
	struct proto_str	 kernel;
	struct proto_str	 domain;	/* absent or "local": here */
};
struct proto_room_open {
	struct proto_str	 path;		/* exactly one of the two */
	struct proto_str	 notebook_id;
	struct proto_str	 domain;	/* with path: on that server */
};
/* ROOM_JOINED and ROOM_CONTENT (only it carries metadata). */
struct proto_room_joined {
	struct proto_str	 notebook_id;
	struct proto_str	 path;		/* absent: untitled */
	int			 dirty;
	uint64_t		 seq;
	int64_t			 nbformat;
	int64_t			 nbformat_minor;
	struct proto_str	 kernel_name;
	struct proto_str	 kernel_state;
	struct proto_doc	 metadata;
	struct proto_doc	 warnings;	/* [warning] or absent */
	struct proto_doc	 conflicts;	/* [conflict] or absent */
	struct proto_doc	 active;	/* [{cell_id, status}] or absent */
	struct proto_doc	 cells;		/* [cell] */
};
#define PROTO_FIELDS_room_list_reply(F)				\
	F(DOC, warnings, PROTO_ARRAY)		/* [string] */		\
	F(DOC, rooms, PROTO_REQ | PROTO_ARRAY)	/* [room summary] */
PROTO_BODY(room_list_reply, "ROOM_LIST_REPLY")
/*
 * edits or undo ({list?, batches?, batch_id?}: revert this session's
 * batches, decision 074), each read by the daemon; session and
 * client_name say whose batch it is (optional: runtimectl, the page).
 */
struct proto_room_edit {
	struct proto_doc	 edits;		/* [edit] */
	struct proto_doc	 undo;
	int			 has_if_seq;
	uint64_t		 if_seq;
	struct proto_str	 session;
	struct proto_str	 client_name;
};
/*
 * One edit of a ROOM_EDIT batch (proto-edit.c).  References (cell_id,
 * after, cell_ids' items) are documents: an id string or a zero-based
 * index, and after also "TOP" or "BOTTOM"; the daemon resolves them.
 * Strings and documents absent have a NULL pointer.  resolve is
 * rewritten by the daemon into the others before a batch is applied.
 */
enum proto_edit_op {
	PROTO_EDIT_INSERT,	/* after?, cell_type?, source?, metadata? */
	PROTO_EDIT_EDIT,	/* cell_id, source?, cell_type?, metadata? */
	PROTO_EDIT_DELETE,	/* cell_id */
	PROTO_EDIT_REPLACE,	/* cell_id, old_text, new_text */
	PROTO_EDIT_MOVE,	/* cell_ids (non-empty), after? */
	PROTO_EDIT_CLEAR_OUTPUTS, /* cell_ids? (none: every code cell) */
	PROTO_EDIT_NOTEBOOK_METADATA, /* metadata */
	PROTO_EDIT_RESOLVE,	/* cell_id, take: room | disk | both */
};
struct proto_edit {
	enum proto_edit_op	 op;
	struct proto_doc	 cell_id;
	struct proto_doc	 after;
	struct proto_doc	 cell_ids;	/* [reference] */
	struct proto_str	 cell_type;	/* code, markdown, raw */
	struct proto_str	 source;
	struct proto_doc	 metadata;	/* a map, merged */
	struct proto_str	 expect_version; /* edit, delete, replace */
	struct proto_str	 old_text;
	struct proto_str	 new_text;
	struct proto_str	 take;
};
struct proto_edits {
	const struct proto_edit	*v;
	size_t			 n;
};
#define PROTO_FIELDS_room_edit_reply(F)				\
	F(UINT, seq, PROTO_REQ)						\
	F(DOC, cells, PROTO_REQ | PROTO_ARRAY)	/* [{cell_id}] */	\
	F(OPT_DOC, undo, PROTO_MAP) /* {batch_id?, reverted?, batches?} */
PROTO_BODY(room_edit_reply, "ROOM_EDIT_REPLY")
#define PROTO_FIELDS_room_save(F)					\
	F(OPT_STR, path, PROTO_NONUL)					\
	F(FLAG, force, 0)
PROTO_BODY(room_save, "ROOM_SAVE")
#define PROTO_FIELDS_room_save_reply(F)				\
	F(STR, path, PROTO_REQ)						\
	F(UINT, seq, PROTO_REQ)
PROTO_BODY(room_save_reply, "ROOM_SAVE_REPLY")
/*
 * What a change changed (kinds of ROOM_CHANGED and of every change
 * ROOM_CHANGES_REPLY lists), as bits; proto_change_kind_name names them
 * for both ends.
 */
#define PROTO_KIND_CELLS	0x01
#define PROTO_KIND_OUTPUTS	0x02
#define PROTO_KIND_KERNEL	0x04
#define PROTO_KIND_SAVED	0x08
#define PROTO_KIND_METADATA	0x10
#define PROTO_KIND_RELOADED	0x20
#define PROTO_KIND_ALL		0x3f

/*
 * How one cell (or the kernel) changed: the details of a change, so a
 * reader can say "cell abc: source edited" without reading the notebook.
 * Fields: inserted and moved carry index (the cell's place after the
 * change), outputs carries outputs (how many the cell has now) and line
 * (the last line of its last output, at most PROTO_CHANGE_LINE_MAX
 * characters), kernel carries from (when known) and to.  A change lists
 * at most PROTO_CHANGE_MAX_DETAILS (then details_truncated; cell_ids
 * still names every cell).
 */
enum proto_change_how {
	PROTO_CHANGE_INSERTED,
	PROTO_CHANGE_DELETED,
	PROTO_CHANGE_MOVED,
	PROTO_CHANGE_SOURCE,
	PROTO_CHANGE_TYPE,
	PROTO_CHANGE_METADATA,
	PROTO_CHANGE_OUTPUTS,
	PROTO_CHANGE_CLEARED,
	PROTO_CHANGE_KERNEL,
	PROTO_CHANGE_CONFLICT,	/* a merge from disk left a conflict */
	PROTO_CHANGE_RESOLVED,	/* a conflict was resolved */
};
struct proto_change_detail {
	enum proto_change_how	 how;
	struct proto_str	 cell_id;	/* absent for kernel */
	int			 has_index;
	int64_t			 index;
	int			 has_outputs;
	int64_t			 outputs;
	struct proto_str	 line;
	struct proto_str	 from;
	struct proto_str	 to;
};
/* One change: ROOM_CHANGED's body (with notebook_id), or an entry of
 * ROOM_CHANGES_REPLY's changes. */
struct proto_room_changed {
	struct proto_str	 notebook_id;
	uint64_t		 seq;
	struct proto_doc	 kinds;		/* [string] */
	struct proto_doc	 cell_ids;	/* [string] */
	struct proto_doc	 execution_ids;	/* [string] */
	struct proto_doc	 details;	/* [detail]; absent: none */
	int			 details_truncated;
	struct proto_str	 by;		/* "disk": merged from the file */
	int			 has_at;
	int64_t			 at;		/* the file's mtime, ms */
	struct proto_str	 client;	/* a client's: its name */
	struct proto_str	 session;	/* and its session */
};
#define PROTO_FIELDS_room_changes(F)					\
	F(UINT, after, PROTO_REQ)
PROTO_BODY(room_changes, "ROOM_CHANGES")
#define PROTO_FIELDS_room_changes_reply(F)				\
	F(UINT, seq, PROTO_REQ)						\
	F(BOOL, resync, PROTO_REQ)					\
	F(DOC, changes, PROTO_REQ | PROTO_ARRAY) /* [{seq, kinds, ...}] */
PROTO_BODY(room_changes_reply, "ROOM_CHANGES_REPLY")
/*
 * ROOM_WAIT: the next change of these kinds comes with the content;
 * standing: every one does, until the next ROOM_WAIT; runs: held cells
 * may come as runs (docs/decisions/041).
 */
struct proto_room_wait {
	int			 kinds;		/* PROTO_KIND_*; 0: none */
	int			 has_have;
	uint64_t		 have;		/* the content held, by seq */
	int			 standing;
	int			 runs;
};
/*
 * A run of held cells [count, cell_id, digest] in a content by reference
 * (docs/decisions/041): digest folds each cell's hash (FNV-1a 64 of its
 * version, then of a NUL and each stale name) in order, from
 * PROTO_FNV64_INIT: d = (d ^ hash) * the FNV prime, mod 2^64.
 */
#define PROTO_FNV64_INIT	0xcbf29ce484222325ULL
/* ROOM_CHANGED_CONTENT: a change and the room's content just after it. */
struct proto_room_changed_content {
	struct proto_room_changed change;
	struct proto_doc	 content;	/* a ROOM_CONTENT body */
	int			 has_base;	/* cells by reference to: */
	uint64_t		 base;		/* the content at this seq */
};
#define PROTO_FIELDS_blob_get(F)					\
	F(STR, sha256, PROTO_REQ)
PROTO_BODY(blob_get, "BLOB_GET")
#define PROTO_FIELDS_blob_reply(F)					\
	F(STR, sha256, PROTO_REQ)					\
	F(STR, data, PROTO_REQ)
PROTO_BODY(blob_reply, "BLOB_REPLY")
void	proto_room_create_pack(msgpack_packer *,
	    const struct proto_room_create *);
int	proto_room_create_unpack(const msgpack_object *,
	    struct proto_room_create *, char *, size_t);
void	proto_room_open_pack(msgpack_packer *, const struct proto_room_open *);
int	proto_room_open_unpack(const msgpack_object *,
	    struct proto_room_open *, char *, size_t);
void	proto_room_joined_pack(msgpack_packer *,
	    const struct proto_room_joined *);
int	proto_room_joined_unpack(const msgpack_object *,
	    struct proto_room_joined *, char *, size_t);
void	proto_room_content_pack(msgpack_packer *,
	    const struct proto_room_joined *);
int	proto_room_content_unpack(const msgpack_object *,
	    struct proto_room_joined *, char *, size_t);
void	proto_room_edit_pack(msgpack_packer *, const struct proto_room_edit *);
int	proto_room_edit_unpack(const msgpack_object *,
	    struct proto_room_edit *, char *, size_t);
const char *proto_edit_op_name(enum proto_edit_op);
void	proto_edit_pack(msgpack_packer *, const struct proto_edit *);
void	proto_edit_pack_one(msgpack_packer *, const void *);
void	proto_edits_pack(msgpack_packer *, const void *);
size_t	proto_edits_size(const msgpack_object *);
int	proto_edit_op_find(const char *, size_t, enum proto_edit_op *);
int	proto_edit_unpack(const msgpack_object *, const char *,
	    struct proto_edit *, char *, size_t);
void	proto_room_changed_pack(msgpack_packer *,
	    const struct proto_room_changed *);
int	proto_room_changed_unpack(const msgpack_object *,
	    struct proto_room_changed *, char *, size_t);
int	proto_room_change_unpack(const msgpack_object *,
	    struct proto_room_changed *, char *, size_t);
int	proto_room_change_kinds(const struct proto_room_changed *);
void	proto_change_detail_pack(msgpack_packer *,
	    const struct proto_change_detail *);
int	proto_change_detail_unpack(const msgpack_object *,
	    struct proto_change_detail *, char *, size_t);
const char *proto_change_how_name(enum proto_change_how);
const char *proto_change_kind_name(int);
int	proto_change_kind_parse(const char *, size_t);
void	proto_room_wait_pack(msgpack_packer *, const struct proto_room_wait *);
int	proto_room_wait_unpack(const msgpack_object *,
	    struct proto_room_wait *, char *, size_t);
void	proto_room_changed_content_pack(msgpack_packer *,
	    const struct proto_room_changed_content *);
uint64_t proto_fnv64(uint64_t, const void *, size_t);
uint64_t proto_run_fold(uint64_t, uint64_t);
int	proto_room_changed_content_unpack(const msgpack_object *,
	    struct proto_room_changed_content *, char *, size_t);

/* proto-exec.c: EXEC_*, KERNEL_*. */
/* EXEC_STATE's status of a run and of each of its cells (proto-status.c). */
enum proto_run_status {
	PROTO_RUN_QUEUED,
	PROTO_RUN_RUNNING,
	PROTO_RUN_DONE,
	PROTO_RUN_ERROR,
	PROTO_RUN_INTERRUPTED,
	PROTO_RUN_KERNEL_DIED,
	PROTO_RUN_CANCELLED,
	PROTO_RUN_INPUT_REQUIRED,	/* running, waiting for send_input */
};
enum proto_cell_status {
	PROTO_CELL_QUEUED,
	PROTO_CELL_RUNNING,
	PROTO_CELL_OK,
	PROTO_CELL_ERROR,
	PROTO_CELL_NOT_RUN,
	PROTO_CELL_INTERRUPTED,
	PROTO_CELL_KERNEL_DIED,
};
/*
 * Who asked for a run: the MCP client (clientInfo of its initialize) and
 * the worker's session (its proxy's handle tag).  Each is optional (a
 * client that sent none, runtimectl, an older worker).
 */
struct proto_exec_who {
	struct proto_str	 client_name;
	struct proto_str	 client_version;
	struct proto_str	 session;
};
/*
 * EXEC_RUN's cells: the caller's cell_ids, or picked by the daemon in
 * notebook order when it queues the run (select: "all" | "stale").
 */
enum proto_run_select {
	PROTO_RUN_SELECT_IDS,		/* select absent: cell_ids */
	PROTO_RUN_SELECT_ALL,		/* every code cell */
	PROTO_RUN_SELECT_STALE,		/* the code cells a read shows stale */
};
struct proto_exec_run {
	struct proto_doc	 cell_ids;	/* [cell_id | index] */
	enum proto_run_select	 select;
	int			 has_stop_on_error;
	int			 stop_on_error;
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
	struct proto_str	 task_owner;	/* an MCP task's session */
	struct proto_exec_who	 who;
};
/* EXEC_GET and EXEC_CANCEL: a run, and how long to wait for it. */
#define PROTO_FIELDS_exec_id(F)						\
	F(STR, execution_id, PROTO_REQ)					\
	F(OPT_INT, timeout_ms, 0)
PROTO_BODY_NAMED(exec_id)
struct proto_exec_state {
	struct proto_str	 execution_id;
	int64_t			 daemon_started_at;
	struct proto_str	 notebook_id;
	struct proto_str	 status;
	struct proto_str	 message;	/* packed as nil when absent */
	struct proto_str	 reason;
	int			 outputs_omitted;
	struct proto_doc	 input;		/* {cell_id, prompt, password} */
	struct proto_doc	 cells;		/* [{cell_id, status, ...}] */
	struct proto_str	 task_owner;	/* absent: not a task */
	int64_t			 created_at;	/* ms since the epoch; 0: */
	int64_t			 updated_at;	/* unknown (older record) */
	/* Absent from records of older daemons. */
	struct proto_exec_who	 who;
	int			 has_submitted_at;
	int64_t			 submitted_at;	/* microseconds, epoch */
	struct proto_str	 kernel_session; /* the kernel it ran in */
};
#define PROTO_FIELDS_exec_tasks(F)					\
	F(STR, task_owner, PROTO_REQ)
PROTO_BODY(exec_tasks, "EXEC_TASKS")
/*
 * EXEC_TASKS_REPLY: [{execution_id, notebook_id, status, message,
 * created_at, updated_at}]; EXEC_LIST_REPLY: [{execution_id, status, ...}];
 * both newest first.
 */
#define PROTO_FIELDS_exec_runs(F)					\
	F(DOC, runs, PROTO_REQ | PROTO_ARRAY)
PROTO_BODY_NAMED(exec_runs)
/* EXEC_LIST: the notebook's kept runs, newest first, at most limit. */
#define PROTO_FIELDS_exec_list(F)					\
	F(OPT_INT, limit, PROTO_UNSIGNED)
PROTO_BODY(exec_list, "EXEC_LIST")
struct proto_kernel_info_reply {
	struct proto_str	 name;
	struct proto_str	 state;
	struct proto_str	 display_name;
	struct proto_str	 message;
	int			 has_pid;
	int64_t			 pid;
	int			 has_agent_pid;
	int64_t			 agent_pid;
	struct proto_doc	 language_info;
	int64_t			 execution_count;
	uint64_t		 queue;
	struct proto_doc	 capabilities;	/* a map, or absent */
};
struct proto_kernel_list_reply {
	struct proto_str	 default_name;	/* "default" */
	struct proto_doc	 kernels;	/* [{name, ...}] */
};
#define PROTO_FIELDS_kernel_select(F)					\
	F(STR, kernel, PROTO_REQ | PROTO_NONUL)
PROTO_BODY(kernel_select, "KERNEL_SELECT")
void	proto_exec_run_pack(msgpack_packer *, const struct proto_exec_run *);
int	proto_exec_run_unpack(const msgpack_object *, struct proto_exec_run *,
	    char *, size_t);
void	proto_exec_state_pack(msgpack_packer *,
	    const struct proto_exec_state *);
int	proto_exec_state_unpack(const msgpack_object *,
	    struct proto_exec_state *, char *, size_t);

/* proto-status.c */
const char *proto_run_status_name(enum proto_run_status);
int	proto_run_status_parse(const char *, size_t, enum proto_run_status *);
int	proto_run_status_ended(enum proto_run_status);
const char *proto_cell_status_name(enum proto_cell_status);
int	proto_cell_status_parse(const char *, size_t,
	    enum proto_cell_status *);
void	proto_kernel_info_reply_pack(msgpack_packer *,
	    const struct proto_kernel_info_reply *);
int	proto_kernel_info_reply_unpack(const msgpack_object *,
	    struct proto_kernel_info_reply *, char *, size_t);
void	proto_kernel_list_reply_pack(msgpack_packer *,
	    const struct proto_kernel_list_reply *);
int	proto_kernel_list_reply_unpack(const msgpack_object *,
	    struct proto_kernel_list_reply *, char *, size_t);

/* The live view (docs/decisions/025): declared by their fields. */
#define PROTO_FIELDS_view_open(F)					\
	F(STR, notebook_id, PROTO_NONUL)	/* the page to open */
PROTO_BODY(view_open, "VIEW_OPEN")
#define PROTO_FIELDS_view_url(F)					\
	F(STR, url, PROTO_REQ | PROTO_NONUL)	/* with the secret */	\
	F(STR, address, PROTO_REQ | PROTO_NONUL) /* http://127.0.0.1:PORT/ */ \
	F(INT, port, PROTO_REQ | PROTO_UNSIGNED)
PROTO_BODY(view_url, "VIEW_URL")
#define PROTO_FIELDS_view_ready(F)					\
	F(RANGE(1, 65535), port, PROTO_REQ | PROTO_UNSIGNED)
PROTO_BODY(view_ready, "VIEW_READY")
#define PROTO_FIELDS_view_state_reply(F)				\
	F(UINT, seq, PROTO_REQ)						\
	F(STR, kernel_state, PROTO_REQ)					\
	F(DOC, cells, PROTO_REQ | PROTO_ARRAY) /* [{cell_id, status}] */ \
	F(DOC, peers, PROTO_REQ | PROTO_ARRAY) /* [{kind, label, client}] */ \
	F(STR, last_client, 0)			/* nil: none known */
PROTO_BODY(view_state_reply, "VIEW_STATE_REPLY")

/* proto-hello.c: the handshake every connection opens with. */
struct proto_hello {
	int		 version;
	char		 kind[16];
	char		 label[128];
	int64_t		 pid;
	char		 client[128];	/* MCP clientInfo name, or "" */
};
struct proto_incarnation {
	int64_t		 pid;
	int64_t		 started_at;	/* microseconds since the epoch */
	char		 version[32];	/* package version string */
};
void	proto_hello_pack(msgpack_packer *, const struct proto_hello *);
int	proto_hello_unpack(const msgpack_object *, struct proto_hello *,
	    char *, size_t);
void	proto_hello_ok_pack(msgpack_packer *,
	    const struct proto_incarnation *);
int	proto_hello_ok_unpack(const msgpack_object *,
	    struct proto_incarnation *, char *, size_t);
/* VERSION_MISMATCH {version, message}: the answerer's version. */
struct proto_mismatch {
	int			 has_version;
	int64_t			 version;
	struct proto_str	 message;
};
void	proto_mismatch_pack(msgpack_packer *, int);
int	proto_mismatch_unpack(const msgpack_object *, struct proto_mismatch *,
	    char *, size_t);
int64_t	proto_mismatch_version(const msgpack_object *);
int	proto_hello_check(const struct proto_hello *, char *, size_t);

/* proto-agent.c: daemon <-> runtime agent (200-299), PROTOCOL.md. */
/* Names and paths the agent hands to C strings are refused with NUL. */
#define PROTO_FIELDS_agent_start(F)					\
	F(STR, kernel_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, kernel_name, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cwd, PROTO_REQ | PROTO_NONUL)				\
	F(STR, runtime_dir, PROTO_REQ | PROTO_NONUL)			\
	F(STR, state_dir, PROTO_NONUL)					\
	F(OPT_STR, transport, PROTO_NONUL)	/* "tcp": skip ipc */
PROTO_BODY(agent_start, "AGENT_START")
struct proto_agent_ready {
	int64_t			 pid;
	struct proto_str	 kernel_name;
	struct proto_str	 display_name;	/* optional */
	struct proto_str	 language;	/* optional */
	struct proto_doc	 language_info;	/* a map; optional */
	struct proto_str	 protocol_version; /* optional */
	struct proto_doc	 capabilities;	/* a map; optional */
	struct proto_str	 server_kernel_id; /* a server's; optional */
	struct proto_str	 transport;	/* "ipc", "tcp"; optional */
};
#define PROTO_FIELDS_agent_execute(F)					\
	F(STR, exec_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cell_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, code, PROTO_REQ)			/* may hold NUL */	\
	F(BOOL, stop_on_error, 0)					\
	F(BOOL, silent, 0)
PROTO_BODY(agent_execute, "AGENT_EXECUTE")
#define PROTO_FIELDS_agent_exec_started(F)				\
	F(STR, exec_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cell_id, PROTO_REQ | PROTO_NONUL)			\
	F(NIL_INT, execution_count, 0)
PROTO_BODY(agent_exec_started, "AGENT_EXEC_STARTED")
struct proto_agent_output {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	int			 update;
	struct proto_str	 display_id;	/* required with update */
	struct proto_doc	 output;	/* one nbformat output, a map */
};
#define PROTO_FIELDS_agent_clear_output(F)				\
	F(STR, exec_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cell_id, PROTO_REQ | PROTO_NONUL)			\
	F(BOOL, wait, 0)
PROTO_BODY(agent_clear_output, "AGENT_CLEAR_OUTPUT")
enum proto_agent_exec_status {
	PROTO_AGENT_EXEC_OK,
	PROTO_AGENT_EXEC_ERROR,
	PROTO_AGENT_EXEC_ABORTED,
};
extern const char *const proto_agent_exec_status_names[];
#define PROTO_FIELDS_agent_exec_done(F)				\
	F(STR, exec_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cell_id, PROTO_REQ | PROTO_NONUL)			\
	F(ENUM(agent_exec_status), status, PROTO_REQ)			\
	F(NIL_INT, execution_count, 0)
PROTO_BODY(agent_exec_done, "AGENT_EXEC_DONE")
#define PROTO_FIELDS_agent_shutdown(F)					\
	F(BOOL, restart, 0)
PROTO_BODY(agent_shutdown, "AGENT_SHUTDOWN")
enum proto_agent_state {
	PROTO_AGENT_IDLE,
	PROTO_AGENT_BUSY,
	PROTO_AGENT_UNRESPONSIVE,
	PROTO_AGENT_DEAD,
};
extern const char *const proto_agent_state_names[];
#define PROTO_FIELDS_agent_status(F)					\
	F(ENUM(agent_state), state, PROTO_REQ)				\
	F(OPT_STR, reason, 0)
PROTO_BODY(agent_status, "AGENT_STATUS")
void	proto_agent_ready_pack(msgpack_packer *,
	    const struct proto_agent_ready *);
int	proto_agent_ready_unpack(const msgpack_object *,
	    struct proto_agent_ready *, char *, size_t);
void	proto_agent_output_pack(msgpack_packer *,
	    const struct proto_agent_output *);
int	proto_agent_output_unpack(const msgpack_object *,
	    struct proto_agent_output *, char *, size_t);
void	proto_agent_interrupt_pack(msgpack_packer *);
int	proto_agent_interrupt_unpack(const msgpack_object *, char *, size_t);

/*
 * proto-introspect.c: KERNEL_VARIABLES, _COMPLETE, _INSPECT (a client
 * asks the daemon, the daemon asks the agent with AGENT_*, and one reply
 * type serves both links), EXEC_INPUT and the agent's stdin messages
 * (docs/decisions/022).
 */
/* KERNEL_ and AGENT_VARIABLES */
#define PROTO_FIELDS_variables(F)					\
	F(STR_MAX(PROTO_FILTER_MAX), filter, PROTO_NONUL) /* fnmatch(3) */ \
	F(NIL_UINT, max, 0)						\
	F(NIL_INT, timeout_ms, PROTO_UNSIGNED)
PROTO_BODY(variables, "KERNEL_VARIABLES")
#define PROTO_FIELDS_variables_reply(F)				\
	F(DOC, variables, PROTO_REQ | PROTO_ARRAY) /* [{name, type, ...}] */ \
	F(UINT, total, 0)		/* matching, before max */	\
	F(BOOL, while_busy, 0)						\
	F(STR, via, PROTO_NONUL)	/* "debugger" or "execute" */
PROTO_BODY(variables_reply, "KERNEL_VARIABLES_REPLY")
/*
 * KERNEL_ and AGENT_SEES: does the kernel read text from the file name
 * (relative to its working directory)?  A transfer's check that a
 * server's kernel shares its contents (decision 100).  Without name:
 * what this kernel answered before, or "unasked".  The reply's state is
 * "seen", "unseen", "unasked" or "unknown" (no silent way, busy: why).
 */
#define PROTO_FIELDS_sees(F)						\
	F(STR, name, PROTO_NONUL)					\
	F(STR, text, PROTO_NONUL)					\
	F(OPT_INT, timeout_ms, PROTO_UNSIGNED)
PROTO_BODY_NAMED(sees)
#define PROTO_FIELDS_sees_reply(F)					\
	F(STR, state, PROTO_REQ | PROTO_NONUL)				\
	F(STR, why, PROTO_NONUL)
PROTO_BODY(sees_reply, "KERNEL_SEES_REPLY")
struct proto_complete {			/* KERNEL_ and AGENT_COMPLETE */
	struct proto_str	 code;
	int			 has_cursor_pos;
	int64_t			 cursor_pos;	/* code points; absent: end */
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
#define PROTO_FIELDS_complete_reply(F)				\
	F(DOC, matches, PROTO_REQ | PROTO_ARRAY) /* [{text, type?}] */	\
	F(INT, cursor_start, 0)						\
	F(INT, cursor_end, 0)						\
	F(UINT, total, 0)						\
	F(BOOL, while_busy, 0)
PROTO_BODY(complete_reply, "KERNEL_COMPLETE_REPLY")
struct proto_inspect {			/* KERNEL_ and AGENT_INSPECT */
	struct proto_str	 code;
	int			 has_cursor_pos;
	int64_t			 cursor_pos;
	int64_t			 detail_level;	/* 0 or 1 */
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
#define PROTO_FIELDS_inspect_reply(F)					\
	F(BOOL, found, 0)						\
	F(STR, text, 0)			/* plain, ANSI removed, capped */ \
	F(BOOL, truncated, 0)						\
	F(BOOL, while_busy, 0)
PROTO_BODY(inspect_reply, "KERNEL_INSPECT_REPLY")
/* EXEC_INPUT, AGENT_INPUT_REPLY (errors never quote the value). */
#define PROTO_FIELDS_exec_input(F)					\
	F(STR, execution_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR_MAX(PROTO_INPUT_MAX), value, PROTO_REQ)
PROTO_BODY(exec_input, "EXEC_INPUT")
#define PROTO_FIELDS_agent_input_request(F)				\
	F(STR, exec_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, cell_id, PROTO_REQ | PROTO_NONUL)			\
	F(STR, prompt, 0)						\
	F(BOOL, password, 0)
PROTO_BODY(agent_input_request, "AGENT_INPUT_REQUEST")
void	proto_complete_pack(msgpack_packer *, const struct proto_complete *);
int	proto_complete_unpack(const msgpack_object *,
	    struct proto_complete *, char *, size_t);
void	proto_inspect_pack(msgpack_packer *, const struct proto_inspect *);
int	proto_inspect_unpack(const msgpack_object *,
	    struct proto_inspect *, char *, size_t);

/*
 * proto-mcp.c: proxy <-> worker.  MCP carries one JSON-RPC message as
 * its text; from the worker also the message's id (its exact JSON text),
 * method and error flag, so the proxy relays it without parsing it.
 * json is packed last, so a sender may pack the rest with
 * proto_mcp_pack_head and send json's bytes after it uncopied.
 */
struct proto_mcp {
	struct proto_str json;		/* the message, required */
	struct proto_str id;		/* its id as JSON text; worker only */
	struct proto_str method;	/* its method; worker only */
	int		 error;		/* a response with "error" */
};
struct proto_worker_ready {
	struct proto_str catalog;	/* tools/list result, JSON text */
};
void	proto_mcp_pack(msgpack_packer *, const struct proto_mcp *);
void	proto_mcp_pack_head(msgpack_packer *, const struct proto_mcp *);
int	proto_mcp_unpack(const msgpack_object *, struct proto_mcp *, char *,
	    size_t);
void	proto_worker_ready_pack(msgpack_packer *,
	    const struct proto_worker_ready *);
int	proto_worker_ready_unpack(const msgpack_object *,
	    struct proto_worker_ready *, char *, size_t);
/* WORKER_UPGRADE and WORKER_SHUTDOWN have empty bodies: no struct. */
void	proto_worker_upgrade_pack(msgpack_packer *);
int	proto_worker_upgrade_unpack(const msgpack_object *, char *, size_t);
void	proto_worker_shutdown_pack(msgpack_packer *);
int	proto_worker_shutdown_unpack(const msgpack_object *, char *, size_t);

#endif

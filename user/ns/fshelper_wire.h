/* SPDX-License-Identifier: MIT */
/*
 * The messages between dynprof and a per-target helper (fshelper.h), over
 * a SOCK_SEQPACKET socketpair: one header, then a payload (a path, a name
 * list, file data) of at most FSH_PAYLOAD_MAX bytes, one message per
 * record so no framing can be forged by content. Everything the helper
 * sends is untrusted on the host side: the helper runs as the target's
 * user, who may have found a way to run code in it.
 */
#ifndef DYNPROF_FSHELPER_WIRE_H
#define DYNPROF_FSHELPER_WIRE_H

#include <stdint.h>

#define FSH_PAYLOAD_MAX 65536

enum fsh_op {
	/* dynprof -> helper */
	FSH_REQ_READ = 1,   /* payload: path; a: byte limit. -> DATA..., DONE */
	FSH_REQ_RESULT_DIR, /* payload: "home\0sub\0sub\0": make and hold it. -> DONE */
	FSH_REQ_LIST,       /* the held folder's entries. -> ENTRY..., DONE */
	FSH_REQ_COPY,       /* payload: name in the held folder. -> DIR/FILE/DATA/SKIP..., DONE */
	FSH_REQ_REMOVE,     /* payload: name in the held folder. -> DONE */
	FSH_REQ_CANCEL,     /* during COPY or READ: stop sending, answer DONE -ECANCELED */
	FSH_REQ_DROP_RESULT_DIR, /* the held folder and its parent go when empty. -> DONE */
	/* helper -> dynprof */
	FSH_REP_READY = 32, /* status: 0, or the errno of a failed set-up */
	FSH_REP_DONE,       /* status: 0 or a negative errno */
	FSH_REP_DATA,       /* a: offset in the current file; payload: bytes */
	FSH_REP_ENTRY,      /* a: kind (FSH_KIND_*); payload: name */
	FSH_REP_DIR,        /* a: mode; payload: path relative to the copied folder */
	FSH_REP_FILE,       /* a: mode, b: size; payload: relative path. DATA follows */
	FSH_REP_SKIP,       /* status: why (negative errno), a: kind; payload: relative path */
};

enum fsh_kind {
	FSH_KIND_DIR = 1,
	FSH_KIND_FILE,
	FSH_KIND_SYMLINK,
	FSH_KIND_OTHER, /* FIFO, socket, device */
	FSH_KIND_MOUNT, /* on another mount than the copied folder */
};

struct fsh_msg {
	uint32_t op;
	int32_t status;
	uint64_t a, b;
};

#define FSH_MSG_MAX (sizeof(struct fsh_msg) + FSH_PAYLOAD_MAX)

/* Where the helper stops walking down (deeper folders are skipped, -ELOOP). */
#define FSH_MAX_DEPTH 64

#endif /* DYNPROF_FSHELPER_WIRE_H */

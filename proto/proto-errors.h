/* SPDX-License-Identifier: ISC */
/*
 * proto-errors.h: the error codes that cross between the processes in
 * ERROR {code, message} and reach a client as a tool error's code.
 * docs/errors.md says what each means and what a client does next;
 * tests/docs/docs-contract.sh checks that it lists every code here and
 * no other.  A code is part of the contract: never change one's text.
 */

#ifndef PROTO_ERRORS_H
#define PROTO_ERRORS_H

/* The target of a tool call. */
#define PROTO_E_INVALID_NOTEBOOK_TARGET	"invalid_notebook_target"
#define PROTO_E_NOT_ATTACHED		"not_attached"
#define PROTO_E_ATTACHMENT_EXPIRED	"attachment_expired"
#define PROTO_E_ATTACHMENT_UNAVAILABLE	"attachment_unavailable"
#define PROTO_E_ATTACHMENT_LIMIT	"attachment_limit"

/* The notebook, its cells and runs. */
#define PROTO_E_NOTEBOOK_UNAVAILABLE	"notebook_unavailable"
#define PROTO_E_CELL_NOT_FOUND		"cell_not_found"
#define PROTO_E_NO_MATCH		"no_match"
#define PROTO_E_AMBIGUOUS_MATCH		"ambiguous_match"
#define PROTO_E_EXECUTION_NOT_FOUND	"execution_not_found"
#define PROTO_E_EDIT_CONFLICT		"edit_conflict"
#define PROTO_E_CONFLICT		"conflict"
#define PROTO_E_UNDO_CONFLICT		"undo_conflict"

/* The kernel. */
#define PROTO_E_KERNEL_UNAVAILABLE	"kernel_unavailable"
#define PROTO_E_BUSY			"busy"
#define PROTO_E_INPUT_NOT_PENDING	"input_not_pending"
#define PROTO_E_REFUSED			"refused"
#define PROTO_E_NOT_SUPPORTED		"not_supported"

/* Files. */
#define PROTO_E_FILE_CHANGED_ON_DISK	"file_changed_on_disk"
#define PROTO_E_FILE_EXISTS		"file_exists"

/* A remote domain. */
#define PROTO_E_TLS_UNVERIFIED		"tls_unverified"

/* Any call. */
#define PROTO_E_INVALID_ARGUMENT	"invalid_argument"
#define PROTO_E_OUTCOME_UNKNOWN		"outcome_unknown"

/* Inside the worker only: its incarnation probe found no daemon. */
#define PROTO_E_DAEMON_ABSENT		"daemon_absent"

#endif

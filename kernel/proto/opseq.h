/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's opcode sequence rules (IBTA 9.8.3.1 and C9-71): a
 * multi-packet SEND or WRITE is FIRST, MIDDLE..., LAST of one kind, and
 * nothing else may start while one is in progress.  A MIDDLE or LAST
 * without its FIRST, or a new message inside another, is an Invalid
 * Request on RC (NAK, the QP fails, as rxe's check_op_seq and hardware
 * do) and loses the message in progress on UC.  Without this check a
 * WRITE FIRST in the middle of a SEND would move the SEND's receive
 * offset and complete its WQE as a WRITE with immediate.
 *
 * The check runs on packets at the expected PSN only: duplicates and gaps
 * are the PSN check's business.
 */
#ifndef SROCE_PROTO_OPSEQ_H
#define SROCE_PROTO_OPSEQ_H

#include "compat.h"
#include "opcode.h"

ROCE_EXTERN_C_BEGIN

/* The multi-packet message a responder is in the middle of. */
enum roce_msg_in_progress {
	ROCE_MSG_NONE,
	ROCE_MSG_SEND,
	ROCE_MSG_WRITE,
};

/* May a request with opcode flags @flags (ROCE_OPF_*) come now? */
static inline bool roce_opseq_ok(enum roce_msg_in_progress cur, u32 flags)
{
	u32 kind = flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE);

	if (flags & ROCE_OPF_FIRST)
		return cur == ROCE_MSG_NONE;
	if (!(flags & (ROCE_OPF_MIDDLE | ROCE_OPF_LAST)))
		return cur == ROCE_MSG_NONE;	/* READ, atomics, the rest */
	if (kind == ROCE_OPF_SEND)
		return cur == ROCE_MSG_SEND;
	if (kind == ROCE_OPF_WRITE)
		return cur == ROCE_MSG_WRITE;
	return false;
}

/* What is in progress once an acceptable request with @flags was taken. */
static inline enum roce_msg_in_progress
roce_opseq_next(enum roce_msg_in_progress cur, u32 flags)
{
	if (flags & ROCE_OPF_LAST)
		return ROCE_MSG_NONE;
	if (flags & ROCE_OPF_FIRST)
		return (flags & ROCE_OPF_SEND) ? ROCE_MSG_SEND :
		       (flags & ROCE_OPF_WRITE) ? ROCE_MSG_WRITE : ROCE_MSG_NONE;
	return cur;
}

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_OPSEQ_H */

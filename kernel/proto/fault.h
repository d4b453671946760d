/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fault injection rules: what a test asks the fabric to do to which
 * packets, written as one line of text (the device's debugfs file
 * `faults`, kernel/fault.c) and decided here, without kernel headers, so
 * the host tests and a fuzzer run the very parser and decisions the
 * module does.
 *
 *   ACTION [dir=tx|rx|both] [class=request,ack,read_resp,cnp|all]
 *          [qpn=N|any] [prob=P] [every=N] [after=N] [count=N]
 *          [delay_us=N] [seed=N]
 *
 * A rule selects packets by direction, opcode class and BTH destination
 * QP number.  Of the packets it selects (numbered from 0 in the order the
 * rule saw them), it lets the first `after` pass, then hits every
 * `every`-th one with probability `prob`, at most `count` times (0: no
 * limit).  Whether packet n is hit is a pure function of the seed and n,
 * so the same seed and the same traffic give the same decisions.
 */
#ifndef SROCE_PROTO_FAULT_H
#define SROCE_PROTO_FAULT_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

enum roce_fault_action {
	ROCE_FAULT_DROP,	/* the packet is lost */
	ROCE_FAULT_DELAY,	/* held for delay_us, then goes on */
	ROCE_FAULT_DUP,		/* goes on twice */
	ROCE_FAULT_CORRUPT,	/* one bit flipped after the ICRC was made */
	/* Answered by the responder instead of executed (RC requests
	 * arriving in sequence, direction rx only):
	 */
	ROCE_FAULT_RNR_NAK,	/* first packet of a SEND: receiver not ready */
	ROCE_FAULT_ACCESS_NAK,	/* first packet of an RDMA/atomic/FLUSH
				 * request: remote access error (the QP fails)
				 */
	ROCE_FAULT_NUM_ACTIONS
};

#define ROCE_FAULT_NAK_ACTIONS \
	((1u << ROCE_FAULT_RNR_NAK) | (1u << ROCE_FAULT_ACCESS_NAK))
#define ROCE_FAULT_PACKET_ACTIONS \
	((1u << ROCE_FAULT_NUM_ACTIONS) - 1 - ROCE_FAULT_NAK_ACTIONS)

/* Directions, seen from the device the rule is on. */
#define ROCE_FAULT_TX		(1u << 0)
#define ROCE_FAULT_RX		(1u << 1)

/* Opcode classes. */
#define ROCE_FAULT_REQUEST	(1u << 0)	/* SEND, WRITE, READ request,
						 * atomics, FLUSH, UD sends
						 */
#define ROCE_FAULT_ACK		(1u << 1)	/* ACK, NAK, ATOMIC ACK */
#define ROCE_FAULT_READ_RESP	(1u << 2)
#define ROCE_FAULT_CNP		(1u << 3)
#define ROCE_FAULT_ALL_CLASSES	0xf

#define ROCE_FAULT_ANY_QPN	0xffffffffu
#define ROCE_FAULT_PROB_ONE	1000000u	/* prob is in millionths */
#define ROCE_FAULT_MAX_DELAY_US	1000000u
/* Longest rule line the parser takes, newline included. */
#define ROCE_FAULT_MAX_LINE	256

struct roce_fault_rule {
	u8 action;		/* enum roce_fault_action */
	u8 dirs;		/* ROCE_FAULT_TX | ROCE_FAULT_RX */
	u8 classes;		/* ROCE_FAULT_REQUEST ... */
	bool seeded;		/* seed= was given; else the caller picks one */
	u32 qpn;		/* BTH destination QP, or ROCE_FAULT_ANY_QPN */
	u32 prob;		/* millionths, 0..ROCE_FAULT_PROB_ONE */
	u32 every;		/* >= 1 */
	u32 delay_us;		/* DELAY only: 1..ROCE_FAULT_MAX_DELAY_US */
	u64 after;
	u64 count;		/* injections at most; 0: no limit */
	u64 seed;
};

/* "drop", "delay", ...; NULL outside the enum. */
const char *roce_fault_action_name(unsigned int action);
/* The name of each ROCE_FAULT_* class bit, by bit number (4 of them). */
const char *roce_fault_class_name(unsigned int bit);

/*
 * Parses one rule (@len bytes of @text, a trailing newline allowed) into
 * @r.  NULL on success, else a short English reason (the rule is then
 * unusable).
 */
const char *roce_fault_parse(const char *text, size_t len,
			     struct roce_fault_rule *r);

/* The ROCE_FAULT_* class of @opcode; 0 for opcodes in none. */
u8 roce_fault_class_of(u8 opcode);

/*
 * Whether @r selects a packet going @dir (one ROCE_FAULT_TX/RX) with BTH
 * @opcode and destination @qpn.  The NAK actions select only RC requests
 * a responder could answer that way.
 */
bool roce_fault_selects(const struct roce_fault_rule *r, u8 dir, u8 opcode,
			u32 qpn);

/* Whether the @n-th packet @r selected (from 0) is hit (before `count`). */
bool roce_fault_hits(const struct roce_fault_rule *r, u64 n);

/* A number in [0, @span) for the @n-th selected packet, from the seed:
 * which bit CORRUPT flips.  @span must be > 0.
 */
u32 roce_fault_pick(const struct roce_fault_rule *r, u64 n, u32 span);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_FAULT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC requester's bookkeeping over its send queue: which PSNs each
 * message took, what an ACK (or a NAK's or a response's implied ACK)
 * completes, which message a response belongs to, and where go-back-N
 * resumes after a timeout or a NAK.
 *
 * The messages live in the module's shadow of the send queue, slots of
 * a ring whose size is a power of two; a roce_sq_view names where each
 * slot's roce_sq_msg is and which slots hold work (retire..fetch), so
 * that this file sees only PSNs and states.  Every loop here runs over
 * retire..fetch, which the module bounds by the ring's size.
 */
#ifndef SROCE_PROTO_SQTRACK_H
#define SROCE_PROTO_SQTRACK_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

enum roce_sq_state {
	ROCE_SQ_QUEUED,		/* not all packets sent yet */
	ROCE_SQ_SENT,		/* every packet sent, waiting for ACK */
	ROCE_SQ_DONE,		/* acknowledged or failed */
};

/* What the PSN bookkeeping knows of one send WQE. */
struct roce_sq_msg {
	u32 length;		/* payload bytes of the message */
	u32 first_psn;		/* of its first packet */
	u32 last_psn;		/* ... and of its last (a READ: last response) */
	u32 npsn;		/* PSNs it uses; 0 until it first goes out */
	u8 state;		/* enum roce_sq_state */
	bool rd_atomic;		/* READ or atomic: done only by its response */
};

struct roce_sq_view {
	u8 *base;		/* slot 0 */
	size_t stride;		/* bytes per slot */
	size_t off;		/* of the roce_sq_msg within a slot */
	u32 mask;		/* slots - 1 */
	u32 retire;		/* oldest slot not yet completed */
	u32 fetch;		/* one past the newest slot taken */
};

static inline struct roce_sq_msg *roce_sq_at(const struct roce_sq_view *v,
					     u32 i)
{
	return (struct roce_sq_msg *)(v->base + (size_t)(i & v->mask) * v->stride +
				      v->off);
}

/*
 * PSNs a message of @length bytes uses at @mtu: one per packet, at least
 * one; @one_packet (UD, atomics) one whatever the length.  A READ counts
 * the responses it asks for.
 */
u32 roce_sq_npsn(u32 length, u32 mtu, bool one_packet);

/*
 * An ACK through @psn arrived while @comp_psn was the first PSN not
 * acknowledged.  Marks DONE every message wholly through @psn, but none
 * past a READ or atomic whose response has not come (IBA's implied NAK:
 * that response was lost or is overtaken on the way; only what is
 * before it is acknowledged).  Returns the new first PSN not
 * acknowledged: @comp_psn for an old ACK.
 */
u32 roce_sq_ack_through(const struct roce_sq_view *v, u32 comp_psn, u32 psn);

/*
 * The slot of the message, not yet done, whose PSNs include @psn; false
 * if none.  Messages take PSNs in order, so the first one that never went
 * out ends the search.
 */
bool roce_sq_find(const struct roce_sq_view *v, u32 psn, u32 *slot);

/*
 * Does @psn name a request that was sent (comp_psn..sent_end) and is not
 * answered yet?  A response to anything else is a ghost.
 */
bool roce_sq_outstanding(const struct roce_sq_view *v, u32 comp_psn,
			 u32 sent_end, u32 psn);

/*
 * Where a READ response carrying @payload_len bytes at @psn goes in READ
 * @m, whose responses carry @mtu bytes each but the last: true and its
 * byte offset in @m's buffer, or false if no response of @m looks like
 * that (a bad response: it reaches past the message, a @last one does
 * not end it, another is not a full @mtu).  In 64 bits: a READ of up to
 * 2 GiB at a small MTU takes millions of PSNs, and an offset that
 * wrapped would place bytes where they do not belong.
 */
bool roce_sq_read_resp_offset(const struct roce_sq_msg *m, u32 psn, u32 mtu,
			      bool last, u32 payload_len, u32 *offset);

/* Where the requester goes on from (roce_sq_seek). */
struct roce_sq_pos {
	u32 cur;		/* slot to send from */
	u32 psn;		/* its next PSN */
	u32 offset;		/* its next payload byte */
	u32 rd_atomic;		/* READs and atomics before it, outstanding */
};

/*
 * Points the requester at @comp_psn, the first PSN not acknowledged: back
 * after a timeout or a sequence NAK (go-back-N), forward when an ACK
 * shows that packets sent before such a rewind arrived after all.
 * Messages from there on are QUEUED again.  Every message goes on at the
 * packet @comp_psn names: a READ whose first responses came asks for the
 * rest only (its RETH moved on by as many MTUs, as rxe's requester does
 * and responders take: a duplicate READ may start inside the original),
 * not all of it again.
 */
void roce_sq_seek(const struct roce_sq_view *v, u32 comp_psn, u32 mtu,
		  struct roce_sq_pos *pos);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_SQTRACK_H */

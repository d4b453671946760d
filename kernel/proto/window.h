/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC requester's send window: how many PSNs may be unacknowledged.
 *
 * Without loss it stays at its maximum.  A retransmit timeout means a
 * whole window's tail vanished, which on a software path is mostly a
 * receive backlog that overflowed (veth, loopback, a slow host): sending
 * the whole window again at once overflows it again, and after retry_cnt
 * such rounds the QP fails with RETRY_EXC.  So after a timeout the window
 * restarts at ROCE_WINDOW_MIN and grows back with the ACKs, as TCP does:
 * by one PSN per PSN acknowledged (doubling each round trip) up to half of
 * the window that timed out, then by one PSN per window's worth of ACKs.
 * A NAK (one lost packet, the rest arrived) leaves the window alone.
 */
#ifndef SROCE_PROTO_WINDOW_H
#define SROCE_PROTO_WINDOW_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_WINDOW_MIN 4

struct roce_window {
	u32 max;	/* the configured window */
	u32 cwnd;	/* current window, ROCE_WINDOW_MIN..max */
	u32 ssthresh;	/* doubling stops here */
	u32 credit;	/* PSNs ACKed towards the next step above ssthresh */
};

/* A full window of @max PSNs (at least ROCE_WINDOW_MIN). */
void roce_window_init(struct roce_window *w, u32 max);

/* A retransmit timeout: start small again. */
void roce_window_timeout(struct roce_window *w);

/* @npsn more PSNs were acknowledged. */
void roce_window_acked(struct roce_window *w, u32 npsn);

/* May another packet go with @unacked PSNs outstanding? */
static inline bool roce_window_open(const struct roce_window *w, u32 unacked)
{
	return unacked < w->cwnd;
}

/*
 * Should the packet sent with @unacked PSNs outstanding ask for an ACK?
 * While the window is below its maximum, the packet that fills it does:
 * a responder that coalesces ACKs would otherwise leave a small window
 * waiting for the retransmit timer.
 */
static inline bool roce_window_wants_ack(const struct roce_window *w, u32 unacked)
{
	return w->cwnd < w->max && unacked + 1 >= w->cwnd;
}

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_WINDOW_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Timer and retry *decisions* of the RC transport, free of any timer
 * mechanism: the kernel arms hrtimers with these nanosecond values, the
 * host tests check them against the IBTA tables.
 */
#ifndef SROCE_PROTO_TIMERS_H
#define SROCE_PROTO_TIMERS_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

/* Returned for "infinite": do not arm a timer at all. */
#define ROCE_TIMEOUT_NONE 0

#define ROCE_ACK_TIMEOUT_MAX 31
#define ROCE_RNR_TIMER_MAX 31

/*
 * Local ACK timeout from the 5-bit QP attribute: 4.096 us * 2^timeout,
 * 0 = infinite (ROCE_TIMEOUT_NONE).  Values above 31 cannot be set via
 * verbs; they are clamped to 31 (~2.4 h) rather than treated as
 * infinite, so a corrupted attribute can never disable retransmission.
 */
u64 roce_ack_timeout_ns(u8 timeout);

/*
 * Retransmit timer back-off.  After @in_row consecutive local ACK
 * timeouts with no acknowledgment in between, the next wait is the
 * QP's timeout doubled that many times, at most ROCE_RTO_BACKOFF_MAX_SHIFT
 * times (8x) and, by the doubling, never past ROCE_RTO_BACKOFF_CEIL_NS
 * (a timeout configured longer than that is kept as it is: IBTA's value
 * is the least a requester waits, so it is never shortened).
 *
 * Why back off at all: the send window already shrinks to a few PSNs
 * after a timeout, but a peer or path that stopped answering (a
 * congested switch, a peer under memory pressure) still gets the same
 * retransmission every timeout; doubling gives it room to recover, as
 * TCP's RTO does.  Why these caps: retry_cnt keeps IBTA's meaning (each
 * timeout spends one retry, the eighth failure at retry_cnt 7 ends in
 * RETRY_EXC_ERR), so the back-off only stretches how long a dead peer
 * takes to be declared dead.  With 8x and retry_cnt 7 that is
 * 1+2+4+8*5 = 47 timeouts' worth instead of 8: for the common timeout
 * 14 (67 ms), 3.2 s instead of 0.5 s.  The 1 s ceiling leaves a timeout
 * of a second or more (18 and up: UCX's default, and rdma_cm's on
 * ConnectX) as it is: one that long already gives a path room, and its
 * users count on (retry_cnt + 1) timeouts to find a dead peer, as on
 * ConnectX (8.6 s at 18, where a 4 s ceiling made it 27 s).  rdma_cm
 * gives sroce's QPs 17 (537 ms, from our local_ca_ack_delay 15): 7.5 s
 * to a dead peer (4.3 s without back-off, 23.8 s with the 4 s ceiling).
 * @timeout 0 (infinite) stays ROCE_TIMEOUT_NONE.
 */
#define ROCE_RTO_BACKOFF_MAX_SHIFT	3
#define ROCE_RTO_BACKOFF_CEIL_NS	1000000000ull
u64 roce_retrans_timeout_ns(u8 timeout, u8 in_row);

/*
 * RNR NAK timer code (AETH value / min_rnr_timer) to nanoseconds, per
 * the IBTA table: code 0 is the longest (655.36 ms), 1 the shortest
 * (10 us).  Code 25 is 61.44 ms (rxe's table has a 61.41 ms typo).
 * Only the low 5 bits of code are used.
 */
u64 roce_rnr_timer_ns(u8 code);

/*
 * Retry budgets.  Both counters are 3-bit QP attributes counting retries
 * *after* the first attempt.  IBTA makes rnr_retry == 7 infinite, but
 * retry_cnt == 7 is just seven retries (rxe gets this wrong).
 */
#define ROCE_RETRY_CNT_MAX 7
#define ROCE_RNR_RETRY_INFINITE 7

/*
 * Spend one transport retry (ACK timeout or PSN sequence error NAK).
 * Returns true and decrements *left if a retry is allowed; false means
 * the WQE completes with RETRY_EXC_ERR.
 */
bool roce_retry_consume(u8 *left);

/*
 * Spend one RNR retry.  *left == 7 never runs out and is not
 * decremented; false means RNR_RETRY_EXC_ERR.
 */
bool roce_rnr_retry_consume(u8 *left);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_TIMERS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a request stands in the responder's sequence, decided before
 * anything is executed: the PSN check (IBTA 9.7.4.1.2 for RC, 9.8.3.1
 * for UC) and the opcode sequence rules (opseq.h) in one place, so the
 * module and the host tests and fuzzers run the same decision.
 *
 * RC: ePSN is executed; the 2^23 PSNs behind it are duplicates, answered
 * again; anything ahead is a gap, NAKed (PSN sequence error) and
 * otherwise dropped until ePSN comes, NAKed again only after
 * ROCE_RESP_RENAK_DROPS drops; an opcode out of sequence at ePSN is an
 * Invalid Request that fails the QP.
 * UC: nothing is resent, so a gap or a broken sequence loses the message
 * in progress, and the responder drops until the next FIRST or ONLY,
 * which starts over wherever its PSN is.
 */
#ifndef SROCE_PROTO_RESPSEQ_H
#define SROCE_PROTO_RESPSEQ_H

#include "compat.h"
#include "opseq.h"

ROCE_EXTERN_C_BEGIN

/*
 * RC: a gap already NAKed is NAKed again once this many more requests
 * ahead of ePSN were dropped.  The NAK brings ePSN again, followed by
 * everything after it (go-back-N).  If that retransmission is lost too,
 * we drop what follows it silently, and without another NAK only the
 * requester's local ACK timeout ends the wait: tens of milliseconds at
 * the timeouts applications set (perftest's 14: 67 ms), the larger part
 * of what a 1% loss cost before this rule.  A requester keeps at most its
 * window unacknowledged, so fewer than a window's worth arrive behind
 * the first NAK before the retransmission does; sroce's window is 128
 * PSNs.  A requester with a wider window may get a second NAK it did not
 * need and resend from ePSN once more: bandwidth, not correctness.
 */
#define ROCE_RESP_RENAK_DROPS 128

struct roce_resp_seq {
	u32 epsn;		/* the PSN the next request must carry */
	u8 msg;			/* enum roce_msg_in_progress */
	bool nak_pending;	/* RC: a NAK for ePSN (sequence or RNR) went
				 * out; drop what is ahead until ePSN comes
				 */
	bool uc_drop;		/* UC: dropping up to the next FIRST */
	u32 renak_in;		/* RC: drops left before the sequence NAK is
				 * sent again; 0: never (after an RNR NAK)
				 */
};

enum roce_resp_verdict {
	ROCE_RESP_EXECUTE,	/* carry it out, then roce_resp_done() */
	ROCE_RESP_DUPLICATE,	/* RC, seen before: answer again, redo nothing */
	ROCE_RESP_NAK_PSN,	/* RC, first of a gap: NAK PSN sequence error
				 * at ePSN
				 */
	ROCE_RESP_DROP,		/* drop it and count the drop */
	ROCE_RESP_INVALID,	/* RC, out of sequence: NAK Invalid Request,
				 * the QP fails
				 */
};

/* A QP entering RTR expects @epsn, with nothing in progress. */
void roce_resp_seq_init(struct roce_resp_seq *s, u32 epsn);

/* Decides request @psn with opcode flags @flags (ROCE_OPF_*). */
enum roce_resp_verdict roce_resp_admit(struct roce_resp_seq *s, bool rc,
				       u32 psn, u32 flags);

/* The request roce_resp_admit() let through was carried out; it took
 * @npsn PSNs (a READ request takes one per response packet).
 */
void roce_resp_done(struct roce_resp_seq *s, u32 flags, u32 npsn);

/* RC: the request at ePSN was answered with an RNR NAK (no receive
 * posted); it was not carried out.
 */
void roce_resp_rnr(struct roce_resp_seq *s);

/* UC: the request at @psn could not be carried out (no receive buffer,
 * a bad key, a bad length): its message is lost.
 */
void roce_resp_uc_lost(struct roce_resp_seq *s, u32 psn);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_RESPSEQ_H */

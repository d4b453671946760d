// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the transport's bookkeeping: the requester's send
 * queue (kernel/proto/sqtrack.c) and the responder's READ/atomic resources
 * (kernel/proto/rdres.c), the code sroce.ko runs for every ACK, response,
 * rewind and duplicate.  The input is a program of 4-byte operations on
 * one RC QP's state, as a peer (honest, confused or hostile) and the
 * consumer could drive it:
 *
 *   byte 0   operation (mod 8): post, send, ACK, find, seek, READ request,
 *            atomic request, duplicate/answer
 *   bytes 1-3  its argument (a length, a PSN offset, a limit)
 *
 * The oracle is the invariants the module relies on: comp_psn only moves
 * forward; a message is DONE only if every PSN of it was acknowledged and
 * it is no READ or atomic (those complete by their response); what find returns contains the PSN; a seek resumes inside
 * or right after a message, never past its length; the resources never
 * exceed their limit or capacity and what find returns covers the PSN.
 */
#include <stdlib.h>
#include <string.h>

#include "psn.h"
#include "rdres.h"
#include "sqtrack.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define SLOTS 16		/* a power of two, as the module's */
#define MTU 256
#define RD_CAP 8

struct slot {
	u64 pad;		/* the message is not at the slot's start */
	struct roce_sq_msg msg;
};

static struct slot sq[SLOTS];
static struct roce_rd_res rd_mem[RD_CAP];

static struct roce_sq_view view(u32 retire, u32 fetch)
{
	return (struct roce_sq_view){
		.base = (u8 *)sq, .stride = sizeof(sq[0]),
		.off = offsetof(struct slot, msg), .mask = SLOTS - 1,
		.retire = retire, .fetch = fetch,
	};
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	u32 retire = 0xfffffff8u, fetch = retire, cur = retire;	/* indices wrap */
	u32 start = 0xfffff0, req_psn = start, comp_psn = start, epsn = 0x7ffff0;
	struct roce_rd_ring rd;
	size_t at;

	memset(sq, 0, sizeof(sq));
	roce_rd_init(&rd, rd_mem, RD_CAP);
	for (at = 0; at + 4 <= size; at += 4) {
		u32 arg = data[at + 1] << 16 | data[at + 2] << 8 | data[at + 3];
		struct roce_sq_view v = view(retire, fetch);
		struct roce_sq_msg *m;
		struct roce_rd_res *r;
		struct roce_sq_pos pos;
		u32 i, slot, psn, next;
		bool blocked;

		switch (data[at] & 7) {
		case 0:		/* the consumer posts a message */
			if (fetch - retire == SLOTS)
				break;
			m = roce_sq_at(&v, fetch++);
			memset(m, 0, sizeof(*m));
			m->length = arg & 0x3fff;
			m->rd_atomic = arg >> 23;
			break;
		case 1:		/* the requester sends the next message whole */
			if (cur == fetch)
				break;
			m = roce_sq_at(&v, cur++);
			if (!m->npsn) {
				m->first_psn = req_psn;
				m->npsn = roce_sq_npsn(m->length, MTU, arg & 1);
				m->last_psn = psn_add(m->first_psn, m->npsn - 1);
			}
			m->state = ROCE_SQ_SENT;
			if (psn_after(psn_add(m->last_psn, 1), req_psn))
				req_psn = psn_add(m->last_psn, 1);
			break;
		case 2:		/* an ACK at any PSN near the window */
			psn = psn_add(comp_psn, (arg & 0xff) - 0x80);
			next = roce_sq_ack_through(&v, comp_psn, psn);
			CHECK(psn_after_eq(next, comp_psn));
			/* Nothing unsent or unacknowledged is DONE, no READ or
			 * atomic (only their responses complete them), and
			 * nothing behind one that is unanswered.
			 */
			blocked = false;
			for (i = retire; i != fetch; i++) {
				m = roce_sq_at(&v, i);
				if (m->state != ROCE_SQ_DONE) {
					blocked |= m->rd_atomic;
					continue;
				}
				CHECK(m->npsn && !m->rd_atomic && !blocked);
				CHECK(psn_before(m->last_psn, next));
			}
			comp_psn = next;
			while (retire != fetch && roce_sq_at(&v, retire)->state == ROCE_SQ_DONE)
				retire++;
			if (psn_after(comp_psn, req_psn))
				req_psn = comp_psn;	/* as comp_advance seeks */
			if (cur - retire > fetch - retire)
				cur = retire;
			break;
		case 3:		/* which message does a response belong to? */
			psn = psn_add(comp_psn, arg & 0xff);
			if (roce_sq_find(&v, psn, &slot)) {
				m = roce_sq_at(&v, slot);
				CHECK(slot - retire < fetch - retire);
				CHECK(m->npsn && m->state != ROCE_SQ_DONE);
				CHECK(psn_in_range(psn, m->first_psn, psn_add(m->last_psn, 1)));
			}
			break;
		case 4:		/* a timeout or NAK: go back to comp_psn */
			roce_sq_seek(&v, comp_psn, MTU, &pos);
			CHECK(pos.cur - retire <= fetch - retire);
			CHECK(pos.rd_atomic <= fetch - retire);
			if (pos.cur != fetch && roce_sq_at(&v, pos.cur)->npsn) {
				m = roce_sq_at(&v, pos.cur);
				CHECK(psn_in_range(pos.psn, m->first_psn,
						   psn_add(m->last_psn, 1)));
				CHECK(pos.offset <= m->length);
				CHECK(!m->rd_atomic || pos.offset == 0);
			} else {
				CHECK(pos.psn == comp_psn && pos.offset == 0);
			}
			for (i = pos.cur; i != fetch; i++)
				CHECK(roce_sq_at(&v, i)->state != ROCE_SQ_SENT);
			cur = pos.cur;
			req_psn = pos.psn;
			break;
		case 5:		/* the responder takes a READ */
		case 6:		/* ... or an atomic */
			if (!roce_rd_make_room(&rd, arg & 0xff))
				break;
			CHECK(rd.count < RD_CAP);
			r = roce_rd_add(&rd);
			r->kind = (data[at] & 7) == 5 ? ROCE_RD_READ : ROCE_RD_ATOMIC;
			r->first_psn = r->next_psn = epsn;
			r->length = r->kind == ROCE_RD_READ ? (arg >> 8) & 0x3fff : 8;
			r->last_psn = psn_add(epsn, roce_sq_npsn(r->length, MTU,
							r->kind == ROCE_RD_ATOMIC) - 1);
			r->done = r->kind == ROCE_RD_ATOMIC;
			epsn = psn_add(r->last_psn, 1);
			break;
		default:	/* a duplicate request, or a READ answered */
			if (arg & 0x800000) {
				r = roce_rd_next_read(&rd);
				if (r) {
					CHECK(r->kind == ROCE_RD_READ && !r->done);
					r->done = true;
				}
				break;
			}
			psn = psn_sub(epsn, 1 + (arg & 0xfff));
			r = roce_rd_find(&rd, psn);
			if (!r)
				break;
			CHECK(psn_in_range(psn, r->first_psn, psn_add(r->last_psn, 1)));
			if (r->kind == ROCE_RD_READ) {
				roce_rd_restart_read(r, psn, MTU);
				CHECK(r->sent <= r->length && !r->done);
				CHECK(r->next_psn == psn);
			}
			break;
		}
		CHECK(fetch - retire <= SLOTS);
		CHECK(rd.count <= RD_CAP && rd.tail < RD_CAP);
	}
	return 0;
}

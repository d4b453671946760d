/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC responder's READ and atomic resources (IBA 9.7.5.1.x): one entry
 * per READ or atomic request accepted, kept so that a duplicate of it can
 * be answered again (a READ resent from the PSN asked for, an atomic's
 * original value replayed without executing it twice).  The peer may have
 * at most max_dest_rd_atomic such requests outstanding.
 *
 * A ring over an array of fixed capacity whose indices wrap at that
 * capacity, not at 2^32: a free-running counter taken modulo a limit that
 * is not a power of two jumps at its wrap, and the limit may change while
 * entries are live (modify_qp).
 */
#ifndef SROCE_PROTO_RDRES_H
#define SROCE_PROTO_RDRES_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

enum roce_rd_kind {
	ROCE_RD_READ = 1,
	ROCE_RD_ATOMIC,
	ROCE_RD_ATOMIC_WRITE,	/* IBTA 1.5: replayed, never stored twice */
};

struct roce_rd_res {
	u8 kind;			/* enum roce_rd_kind */
	bool done;			/* READ: every response sent */
	bool answered;			/* READ: ... at least once (a replay
					 * for a late duplicate may follow)
					 */
	u32 first_psn;
	u32 last_psn;
	/* READ: the request, and what is left to send of it */
	u64 va;
	u32 rkey;
	u32 length;			/* of the whole request */
	u32 sent;			/* bytes already sent */
	u32 next_psn;
	u32 xrc_srqn;			/* XRC: the SRQ whose PD it reads through */
	/* ATOMIC: the original value returned */
	u64 atomic_orig;
};

struct roce_rd_ring {
	struct roce_rd_res *res;	/* cap entries */
	u32 cap;
	u32 tail;			/* oldest entry, < cap */
	u32 count;			/* live entries from tail */
};

/* An empty ring over @res[0..@cap). */
void roce_rd_init(struct roce_rd_ring *ring, struct roce_rd_res *res, u32 cap);

/* Forgets every entry (the QP went through RESET). */
void roce_rd_reset(struct roce_rd_ring *ring);

/*
 * Makes room for one more request under a limit of @max outstanding
 * (max_dest_rd_atomic; 0 counts as 1): the oldest entries go while the
 * ring is at the limit and they are finished.  False if the limit is
 * reached and the oldest is a READ still being answered: the peer broke
 * the limit it negotiated.
 */
bool roce_rd_make_room(struct roce_rd_ring *ring, u32 max);

/* A zeroed newest entry; only after roce_rd_make_room() said yes. */
struct roce_rd_res *roce_rd_add(struct roce_rd_ring *ring);

/*
 * The entry whose PSNs include @psn, newest first (an old entry whose
 * range the PSN space has wrapped onto must not answer), or NULL.
 */
struct roce_rd_res *roce_rd_find(struct roce_rd_ring *ring, u32 psn);

/* The oldest READ with responses left to send, or NULL. */
struct roce_rd_res *roce_rd_next_read(struct roce_rd_ring *ring);

/*
 * A duplicate READ asked again from @psn (inside @r's range): resend from
 * there, @mtu bytes per PSN.
 */
void roce_rd_restart_read(struct roce_rd_res *r, u32 psn, u32 mtu);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_RDRES_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The responder's READ and atomic resources; see rdres.h. */
#include "rdres.h"
#include "psn.h"

/* Index @k entries after the tail. */
static u32 rd_index(const struct roce_rd_ring *ring, u32 k)
{
	u32 i = ring->tail + k;

	return i >= ring->cap ? i - ring->cap : i;
}

void roce_rd_init(struct roce_rd_ring *ring, struct roce_rd_res *res, u32 cap)
{
	ring->res = res;
	ring->cap = cap;
	roce_rd_reset(ring);
}

void roce_rd_reset(struct roce_rd_ring *ring)
{
	ring->tail = 0;
	ring->count = 0;
}

bool roce_rd_make_room(struct roce_rd_ring *ring, u32 max)
{
	if (!max)
		max = 1;
	if (max > ring->cap)
		max = ring->cap;
	/* A lowered limit may leave more than max live: bounded by count. */
	while (ring->count >= max) {
		const struct roce_rd_res *oldest = &ring->res[ring->tail];

		/*
		 * A READ still sending holds its slot: a request that needs
		 * it broke the requester's limit.  Not a replay of one that
		 * was answered in full: a duplicate request still in flight
		 * when the requester got every response restarted it, and
		 * the requester has used the credit again since.
		 */
		if (oldest->kind == ROCE_RD_READ && !oldest->done &&
		    !oldest->answered)
			return false;
		ring->tail = rd_index(ring, 1);
		ring->count--;
	}
	return true;
}

struct roce_rd_res *roce_rd_add(struct roce_rd_ring *ring)
{
	struct roce_rd_res *r = &ring->res[rd_index(ring, ring->count)];

	memset(r, 0, sizeof(*r));
	ring->count++;
	return r;
}

struct roce_rd_res *roce_rd_find(struct roce_rd_ring *ring, u32 psn)
{
	u32 k;

	for (k = ring->count; k-- > 0;) {
		struct roce_rd_res *r = &ring->res[rd_index(ring, k)];

		if (psn_in_range(psn, r->first_psn, psn_add(r->last_psn, 1)))
			return r;
	}
	return NULL;
}

struct roce_rd_res *roce_rd_next_read(struct roce_rd_ring *ring)
{
	u32 k;

	for (k = 0; k < ring->count; k++) {
		struct roce_rd_res *r = &ring->res[rd_index(ring, k)];

		if (r->kind == ROCE_RD_READ && !r->done)
			return r;
	}
	return NULL;
}

void roce_rd_restart_read(struct roce_rd_res *r, u32 psn, u32 mtu)
{
	s32 ahead = psn_diff(psn, r->first_psn);
	u64 offset = ahead > 0 ? (u64)ahead * mtu : 0;

	r->answered |= r->done;
	r->next_psn = psn;
	r->sent = offset < r->length ? (u32)offset : r->length;
	r->done = false;
}

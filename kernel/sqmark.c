// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SQ mark page of a user context: how one poller thread watches
 * thousands of send queues.  It used to look at each watched QP's
 * producer index in turn, so a WQE waited longer for it the more QPs
 * there were, and it watched at most 128.  Here a process that posts to
 * a QP whose engine is idle sets the QP's bit in a page it shares with
 * the kernel, and the poller reads the page a word (64 QPs) at a time.
 *
 * The page is the process's memory as much as ours: any bit may be set
 * at any time.  A mark only says "look at this QP's ring"; the engine
 * checks the ring as it would after a doorbell.  Reads stop at the words
 * marks were given in, and every pass is bounded by the page.
 *
 * The words are handled as an unsigned long bitmap: the same bits as the
 * ABI's u64 words on every little-endian and every 64-bit kernel.
 */
#include <linux/bitops.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"

static unsigned long *mark_bitmap(struct sroce_sq_marks *m)
{
	return (unsigned long *)m->page->marks;
}

void sroce_sq_marks_init(struct sroce_sq_marks *m, struct ib_ucontext *uctx,
			 struct sroce_alloc_ucontext_resp *resp)
{
	size_t bytes = PAGE_ALIGN(sizeof(*m->page));
	struct rdma_user_mmap_entry *entry;
	void *page;

	xa_init_flags(&m->qps, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&m->poll_node);
	m->sdev = to_sdev(uctx->device);
	m->page = NULL;
	m->words = 0;
	/* Without a page the context's QPs ring for every post that finds
	 * their engine idle, as with the poller off: worth no failure.
	 */
	page = vmalloc_user(bytes);	/* zeroed */
	if (!page)
		return;
	entry = sroce_shared_export(page, bytes, uctx);
	if (IS_ERR(entry)) {
		vfree(page);
		return;
	}
	m->page = page;
	m->mmap_entry = entry;
	resp->sq_marks_offset = rdma_user_mmap_get_offset(entry);
	resp->sq_marks_length = bytes;
}

void sroce_sq_marks_free(struct sroce_sq_marks *m)
{
	WARN_ON(!xa_empty(&m->qps));
	xa_destroy(&m->qps);
	if (m->page)
		/* mmap_free frees the page with the last mapping. */
		rdma_user_mmap_entry_remove(m->mmap_entry);
	m->page = NULL;
}

u32 sroce_sq_mark_get(struct sroce_sq_marks *m)
{
	u32 mark;

	/* Reserved (a NULL entry) until published. */
	if (!m->page ||
	    xa_alloc(&m->qps, &mark, NULL, XA_LIMIT(0, SROCE_SQ_MARKS - 1),
		     GFP_KERNEL))
		return SROCE_SQ_NO_MARK;
	/* Under the xarray's lock: QPs of one context are made in parallel. */
	xa_lock(&m->qps);
	if (mark / 64 >= m->words)
		WRITE_ONCE(m->words, mark / 64 + 1);
	xa_unlock(&m->qps);
	return mark;
}

void sroce_sq_mark_publish(struct sroce_sq_marks *m, u32 mark,
			   struct sroce_qp_handle *h)
{
	/* The slot is reserved: storing into it allocates nothing. */
	if (mark != SROCE_SQ_NO_MARK)
		xa_store(&m->qps, mark, h, GFP_KERNEL);
}

void sroce_sq_mark_put(struct sroce_sq_marks *m, u32 mark)
{
	if (mark != SROCE_SQ_NO_MARK)
		xa_erase(&m->qps, mark);
}

void sroce_sq_mark_set(struct sroce_sq_marks *m, u32 mark)
{
	set_bit(mark, mark_bitmap(m));
}

static unsigned int mark_longs(struct sroce_sq_marks *m)
{
	return BITS_TO_LONGS(READ_ONCE(m->words) * 64);
}

/*
 * Word @i's marks, cleared in the page.  Reading first spares the
 * exchange, a write to a line the process writes too, when it has none.
 */
static unsigned long take_word(unsigned long *bits, unsigned int i)
{
	return READ_ONCE(bits[i]) ? xchg(&bits[i], 0) : 0;
}

unsigned int sroce_sq_marks_take(struct sroce_sq_marks *m, struct sroce_qp **qps,
				 unsigned int max)
{
	unsigned long *bits = mark_bitmap(m);
	unsigned int longs = mark_longs(m), n = 0, seen, i;

	if (!longs)
		return 0;
	i = m->cursor < longs ? m->cursor : 0;
	for (seen = 0; seen < longs && n < max; seen++, i = (i + 1) % longs) {
		unsigned long word = take_word(bits, i), b;

		for_each_set_bit(b, &word, BITS_PER_LONG) {
			struct sroce_qp *qp;

			if (n == max) {
				/* Put back what this call has no room for. */
				atomic_long_or(word & ~(BIT(b) - 1),
					       (atomic_long_t *)&bits[i]);
				break;
			}
			qp = sroce_qp_lookup(&m->qps,
					     (unsigned long)i * BITS_PER_LONG + b);
			if (qp)
				qps[n++] = qp;
		}
	}
	m->cursor = i;
	return n;
}

void sroce_sq_marks_drain(struct sroce_sq_marks *m,
			  void (*fn)(struct sroce_qp *qp))
{
	unsigned long *bits = mark_bitmap(m);
	unsigned int longs = mark_longs(m), i;

	for (i = 0; i < longs; i++) {
		unsigned long word = take_word(bits, i), b;

		for_each_set_bit(b, &word, BITS_PER_LONG) {
			struct sroce_qp *qp = sroce_qp_lookup(&m->qps,
					(unsigned long)i * BITS_PER_LONG + b);

			if (qp) {
				fn(qp);
				sroce_qp_put(qp);
			}
		}
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packet payload: referenced in registered memory, or copied.
 *
 * Zero-copy.  A payload leaves as page fragments of the memory it was
 * registered in (a user MR's pinned pages, the pages behind a kernel MR
 * or a FAST MR's page list), each page's count raised until the skb is
 * freed, so deregistration or unpinning cannot free a page a queued
 * packet still reads.  Nothing is copied on the way out; net.c reads the
 * fragments once, for the ICRC.  The pad and the ICRC follow in a small
 * trailer fragment of their own, as they cannot go after fragments in the
 * linear part.
 *
 * Only where the memory may still be read after the packet is built: for
 * RC, whose WQE completes when the peer acknowledges the data, so the
 * application cannot reuse the buffer while the packet waits in a qdisc;
 * a retransmission reads the memory again, as the spec allows.  A
 * duplicate still queued when the application changes the buffer carries
 * new bytes under the old ICRC and is dropped by the peer, as it must be.
 * UC and UD complete once the packet is handed on, so they copy (as does
 * inline data, and a payload too short for a page reference to pay off).
 * So do READ responses: the requests behind a READ may overwrite its
 * bytes as soon as the response is built (resp_read.c), while a
 * referenced page is read only when the peer receives the packet.
 *
 * A page that a packet must not hold (slab memory, as kmalloc'd kernel
 * buffers are; vmalloc'd memory, outside the direct map) or a payload
 * spread over more than MAX_SKB_FRAGS pieces falls back to the copy, and
 * tx_copied_bytes says how often.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/skbuff.h>

#include "sroce.h"

/* Adds @n bytes at @off in @page to @skb, merging with the previous fragment. */
static int attach_page(struct sk_buff *skb, struct page *page, u32 off, u32 n)
{
	int i = skb_shinfo(skb)->nr_frags;

	if (!sendpage_ok(page))
		return -EMSGSIZE;
	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], n);
	} else {
		if (i >= MAX_SKB_FRAGS)
			return -EMSGSIZE;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, n);
	}
	skb->len += n;
	skb->data_len += n;
	skb->truesize += n;
	return 0;
}

/* A kernel virtual address range, page by page: direct-map memory only. */
static int attach_kernel_va(struct sk_buff *skb, unsigned long va, u32 len)
{
	while (len) {
		u32 in = offset_in_page(va);
		u32 n = min_t(u32, len, PAGE_SIZE - in);
		int err;

		if (!virt_addr_valid(va))
			return -EMSGSIZE;
		err = attach_page(skb, virt_to_page((void *)va), in, n);
		if (err)
			return err;
		va += n;
		len -= n;
	}
	return 0;
}

/*
 * Attaches @len bytes at @iova of @mr (checked by the caller, under RCU).
 * Walks the MR's pages as sroce_mr_copy() does, with the same bounds.
 */
static int attach_mr(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 len)
{
	u64 off;

	if (mr->kind == SROCE_MR_DMA)
		return attach_kernel_va(skb, (unsigned long)iova, len);
	/* Its pages are ours only under its lock: copied, never referenced. */
	if (mr->kind == SROCE_MR_ODP)
		return -EMSGSIZE;

	off = sroce_mr_offset(mr, iova);
	while (len) {
		u64 index = off >> PAGE_SHIFT;
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in);
		int err;

		if (mr->kind == SROCE_MR_USER) {
			if (WARN_ON_ONCE(index >= mr->npages))
				return -EFAULT;
			err = attach_page(skb, mr->pages[index], in, n);
		} else {
			/* A racing re-registration: as in sroce_mr_copy(). */
			if (index >= READ_ONCE(mr->fast_npages))
				return -EFAULT;
			err = attach_kernel_va(skb, READ_ONCE(mr->fast_pages[index]) + in, n);
		}
		if (err)
			return err;
		len -= n;
		off += n;
	}
	return 0;
}

static int attach_piece(struct sroce_mr *mr, u64 addr, u32 n, void *skb)
{
	return attach_mr(mr, addr, skb, n);
}

/* The pad (zeros) and room for the ICRC, as the last fragment. */
static int attach_trailer(struct sk_buff *skb, u32 pad)
{
	int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	void *t;

	if (i >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	t = netdev_alloc_frag(pad + ROCE_ICRC_LEN);
	if (!t)
		return -ENOMEM;
	memset(t, 0, pad + ROCE_ICRC_LEN);
	page = virt_to_head_page(t);
	skb_fill_page_desc(skb, i, page, t - page_address(page),
			   pad + ROCE_ICRC_LEN);
	skb->len += pad + ROCE_ICRC_LEN;
	skb->data_len += pad + ROCE_ICRC_LEN;
	skb->truesize += SKB_DATA_ALIGN(pad + ROCE_ICRC_LEN);
	return 0;
}

static struct sk_buff *payload_by_reference(struct sroce_dev *sdev,
					    u32 hdr_len,
					    const struct sroce_payload *p,
					    int *err)
{
	struct sk_buff *skb = sroce_skb_alloc(sdev, hdr_len);

	if (!skb) {
		*err = -ENOBUFS;
		return NULL;
	}
	if (p->mr) {
		*err = attach_mr(p->mr, p->mr_va, skb, p->len);
	} else {
		*err = sroce_sgl_walk(&p->sgl, p->offset, p->len, 0,
				      attach_piece, skb);
	}
	if (!*err)
		*err = attach_trailer(skb, roce_pad_len(p->len));
	if (*err) {
		kfree_skb(skb);	/* drops the page references taken so far */
		return NULL;
	}
	return skb;
}

static struct sk_buff *payload_by_copy(struct sroce_dev *sdev, u32 hdr_len,
				       const struct sroce_payload *p, int *err)
{
	u32 pad = roce_pad_len(p->len);
	struct sk_buff *skb = sroce_skb_alloc(sdev, hdr_len + p->len + pad);
	u8 *dst;

	if (!skb) {
		*err = -ENOBUFS;
		return NULL;
	}
	dst = skb->data + hdr_len;
	*err = 0;
	if (p->inline_data)
		memcpy(dst, p->inline_data, p->len);
	else if (p->mr)
		*err = sroce_mr_copy(p->mr, p->mr_va, dst, p->len, SROCE_FROM_MR);
	else
		*err = sroce_sgl_copy(&p->sgl, p->offset, dst, p->len, 0,
				      SROCE_FROM_MR);
	if (*err) {
		kfree_skb(skb);
		return NULL;
	}
	memset(dst + p->len, 0, pad);
	return skb;
}

struct sk_buff *sroce_skb_payload(struct sroce_dev *sdev, u32 hdr_len,
				  const struct sroce_payload *p, int *err)
{
	struct sk_buff *skb = NULL;

	if (p->by_reference && !p->inline_data && p->len >= SROCE_ZCOPY_MIN) {
		skb = payload_by_reference(sdev, hdr_len, p, err);
		if (skb) {
			sroce_count(sdev, SROCE_CNT_TX_ZCOPY_BYTES, p->len);
			return skb;
		}
		/* A bad key, right or range is final.  What a reference
		 * cannot hold (a page, fragments, the trailer's memory, a
		 * FAST list remapped under us) is the copy's to try.
		 */
		if (*err != -EMSGSIZE && *err != -ENOMEM && *err != -EFAULT)
			return NULL;
	}
	skb = payload_by_copy(sdev, hdr_len, p, err);
	if (skb && p->len)
		sroce_count(sdev, SROCE_CNT_TX_COPIED_BYTES, p->len);
	return skb;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "icrc.h"
#include "opcode.h"

/*
 * OR-masks of the variant fields, covering each header only up to its
 * last variant byte; the rest of the header is CRCed in place.
 */
static const u8 ipv4_ones[12] = {
	[1] = 0xFF,			/* TOS (DSCP + ECN) */
	[8] = 0xFF,			/* TTL */
	[10] = 0xFF, [11] = 0xFF,	/* header checksum */
};

static const u8 ipv6_ones[8] = {
	[0] = 0x0F,			/* traffic class, high nibble */
	[1] = 0xFF,			/* traffic class low, flow label high */
	[2] = 0xFF, [3] = 0xFF,		/* flow label */
	[7] = 0xFF,			/* hop limit */
};

static const u8 udp_ones[8] = {
	[6] = 0xFF, [7] = 0xFF,		/* checksum */
};

static const u8 bth_ones[5] = {
	[4] = 0xFF,			/* FECN, BECN, resv6 */
};

#define MAX_MASK_LEN 12

/* CRC n bytes of p, the first ones_len of them ORed with ones. */
static u32 crc_masked(u32 st, const u8 *p, size_t n, const u8 *ones,
		      size_t ones_len)
{
	u8 tmp[MAX_MASK_LEN];
	size_t k = n < ones_len ? n : ones_len;
	size_t i;

	for (i = 0; i < k; i++)
		tmp[i] = p[i] | ones[i];
	st = roce_crc32_update(st, tmp, k);
	return roce_crc32_update(st, p + k, n - k);
}

static u32 crc_ip(u32 st, const u8 *ip, size_t len, bool ipv6)
{
	if (ipv6)
		return crc_masked(st, ip, len, ipv6_ones, sizeof(ipv6_ones));
	return crc_masked(st, ip, len, ipv4_ones, sizeof(ipv4_ones));
}

u32 roce_icrc_begin(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		    const u8 *udp_hdr, const u8 *bth)
{
	u32 st = crc_ip(ROCE_ICRC_SEED, ip_hdr, ip_hdr_len, ipv6);

	st = crc_masked(st, udp_hdr, ROCE_UDP_HDR_LEN, udp_ones,
			sizeof(udp_ones));
	return crc_masked(st, bth, ROCE_BTH_LEN, bth_ones, sizeof(bth_ones));
}

u32 roce_icrc_compute(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		      const u8 *udp_and_payload, size_t len_without_icrc)
{
	const u8 *p = udp_and_payload;
	size_t n = len_without_icrc;
	size_t k = n < ROCE_UDP_HDR_LEN ? n : ROCE_UDP_HDR_LEN;
	u32 st = crc_ip(ROCE_ICRC_SEED, ip_hdr, ip_hdr_len, ipv6);

	st = crc_masked(st, p, k, udp_ones, sizeof(udp_ones));
	p += k;
	n -= k;
	/* BTH mask reaches only byte 4, so the rest streams straight on. */
	st = crc_masked(st, p, n, bth_ones, sizeof(bth_ones));
	return roce_icrc_finish(st);
}

u32 roce_icrc_rxe_flush(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
			const u8 *udp_hdr)
{
	const u8 *bth = udp_hdr + ROCE_UDP_HDR_LEN;
	u32 st = roce_icrc_begin(ip_hdr, ip_hdr_len, ipv6, udp_hdr, bth);

	st = roce_crc32_update(st, bth + ROCE_BTH_LEN, ROCE_FETH_LEN + ROCE_RETH_LEN);
	st = roce_crc32_update(st, bth, ROCE_BTH_LEN + ROCE_FETH_LEN + ROCE_RETH_LEN);
	return roce_icrc_finish(st);
}

bool roce_icrc_verify(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		      const u8 *udp_hdr, size_t udp_len)
{
	size_t n;
	u32 icrc;

	if (udp_len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	n = udp_len - ROCE_ICRC_LEN;
	icrc = roce_icrc_get(udp_hdr + n);
	if (roce_icrc_compute(ip_hdr, ip_hdr_len, ipv6, udp_hdr, n) == icrc)
		return true;
	/* Only a FLUSH exactly as long as its headers, as rxe sends it. */
	return udp_hdr[ROCE_UDP_HDR_LEN] == ROCE_OP_RC_FLUSH &&
	       n == ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_FETH_LEN + ROCE_RETH_LEN &&
	       roce_icrc_rxe_flush(ip_hdr, ip_hdr_len, ipv6, udp_hdr) == icrc;
}

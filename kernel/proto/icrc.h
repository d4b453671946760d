/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCE v2 invariant CRC (ICRC).
 *
 * ICRC = ~CRC-32 over: 8 bytes of 0xFF (the masked LRH RoCE v2 replaces),
 * the IP header, the UDP header, the BTH and everything after it up to the
 * ICRC, with the fields routers may rewrite replaced by ones:
 *   IPv4: TOS, TTL, header checksum;  IPv6: traffic class, flow label,
 *   hop limit;  UDP: checksum;  BTH: the FECN/BECN/resv6 byte.
 * It is sent least-significant byte first (like the Ethernet FCS).
 *
 * Streaming use, for payload spread over pages (see crc32.h for the state
 * convention; the state is the raw crc32_le() register):
 *	st = roce_icrc_begin(ip, ip_len, ipv6, udp, bth);
 *	st = roce_crc32_update(st, ext_hdrs_and_payload_piece, n);  ...
 *	roce_icrc_put(trailer, roce_icrc_finish(st));
 */
#ifndef SROCE_PROTO_ICRC_H
#define SROCE_PROTO_ICRC_H

#include "compat.h"
#include "crc32.h"

ROCE_EXTERN_C_BEGIN

/* The CRC register after 8 x 0xFF from ROCE_CRC32_INIT (rxe's seed). */
#define ROCE_ICRC_SEED 0xDEBB20E3u

#define ROCE_IPV4_HDR_LEN 20
#define ROCE_IPV6_HDR_LEN 40
#define ROCE_UDP_HDR_LEN 8

/*
 * Start an ICRC: covers the pseudo-LRH, ip_hdr_len bytes of IP header,
 * 8 bytes of UDP header and the 12-byte BTH, masked as above.  The three
 * pointers need not be contiguous.  Pass the real IP header length (IPv4
 * options, if any, are covered unmasked; IPv6 extension headers are the
 * caller's choice - RoCE v2 peers do not send them).
 */
u32 roce_icrc_begin(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		    const u8 *udp_hdr, const u8 *bth);

/* Turn a running state into the ICRC value. */
static inline u32 roce_icrc_finish(u32 state)
{
	return ~state;
}

/*
 * One-shot ICRC.  udp_and_payload starts at the UDP header and
 * len_without_icrc stops just before the ICRC trailer.  Short inputs
 * (less than UDP + BTH) are handled, masking what is present.
 */
u32 roce_icrc_compute(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		      const u8 *udp_and_payload, size_t len_without_icrc);

/*
 * Check the trailer of a linear packet: udp_len covers UDP header through
 * ICRC.  False if too short to hold a UDP header, a BTH and an ICRC.
 * An RDMA FLUSH also passes with the ICRC Linux's rxe gives it (below).
 */
bool roce_icrc_verify(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
		      const u8 *udp_hdr, size_t udp_len);

/*
 * The ICRC Linux's rxe (6.2 on) puts on an RDMA FLUSH, which is not
 * IBTA's: its opcode table gives FLUSH no payload offset, so after the
 * headers it also covers the packet from the BTH on, unmasked, as if that
 * were the payload (FETH and RETH twice, the BTH once more).  sroce sends
 * IBTA's ICRC, which rxe drops; it accepts rxe's on receive, so that
 * rxe's FLUSH reaches it.  @udp_hdr: UDP header, BTH, FETH, RETH.
 */
u32 roce_icrc_rxe_flush(const u8 *ip_hdr, size_t ip_hdr_len, bool ipv6,
			const u8 *udp_hdr);

/* The trailer is little-endian on the wire. */
static inline void roce_icrc_put(u8 *p, u32 icrc)
{
	roce_put_le32(p, icrc);
}

static inline u32 roce_icrc_get(const u8 *p)
{
	return roce_get_le32(p);
}

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_ICRC_H */

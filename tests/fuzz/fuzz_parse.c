// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the receive-side codec.  The input is a UDP payload
 * (BTH..ICRC), exactly what the kernel hands to roce_parse().
 *
 * Checks, beyond "no crash / no sanitizer report":
 *  - the error code is one of ours;
 *  - on success the geometry adds up, and re-encoding the parsed headers
 *    reproduces the input header bytes (reserved fields masked);
 *  - the ICRC (one-shot, streamed at an input-chosen split, and a
 *    bit-at-a-time reference) agree for any bytes, over IPv4 and IPv6.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icrc.h"
#include "wire.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const u8 ipv4_hdr[ROCE_IPV4_HDR_LEN] = {
	0x45, 0x02, 0x00, 0x00, 0x12, 0x34, 0x40, 0x00,
	0x40, 0x11, 0xAB, 0xCD, 10, 0, 0, 1, 10, 0, 0, 2,
};

static const u8 ipv6_hdr[ROCE_IPV6_HDR_LEN] = {
	0x6E, 0x21, 0xFA, 0xCE, 0x00, 0x00, 0x11, 0x40,
	0x20, 0x22, [23] = 0x01, 0x20, 0x23, [39] = 0x02,
};

static u32 ref_crc(u32 reg, const u8 *p, size_t n)
{
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		reg ^= p[i];
		for (b = 0; b < 8; b++)
			reg = (reg & 1) ? (reg >> 1) ^ 0xEDB88320u : reg >> 1;
	}
	return reg;
}

/* Reference ICRC: mask a copy by hand, prepend 8 x 0xFF, CRC bit by bit. */
static u32 ref_icrc(const u8 *ip, size_t ip_len, int v6, const u8 *udp,
		    size_t n)
{
	u8 *all = malloc(8 + ip_len + n + 1);
	u8 *q = all + 8 + ip_len;
	u32 crc;

	memset(all, 0xFF, 8);
	memcpy(all + 8, ip, ip_len);
	if (v6) {
		all[8] |= 0x0F;
		all[9] = all[10] = all[11] = all[15] = 0xFF;
	} else {
		all[9] = all[16] = all[18] = all[19] = 0xFF;
	}
	memcpy(q, udp, n);
	if (n > 6)
		q[6] = 0xFF;
	if (n > 7)
		q[7] = 0xFF;
	if (n > 12)
		q[12] = 0xFF;
	crc = ~ref_crc(0xFFFFFFFF, all, 8 + ip_len + n);
	free(all);
	return crc;
}

static void check_roundtrip(const u8 *data, size_t size,
			    const struct roce_pkt_info *pi)
{
	const struct roce_opcode_info *op = pi->op;
	u8 hdr[64], want[64];
	int n;

	CHECK(op == roce_opcode_get(data[0]));
	CHECK(op->status == ROCE_OPCODE_SUPPORTED);
	CHECK(size % 4 == 0);
	CHECK(pi->payload_off == op->hdr_len);
	CHECK(pi->icrc_off == size - ROCE_ICRC_LEN);
	CHECK((size_t)pi->payload_off + pi->payload_len + pi->bth.padcnt +
	      ROCE_ICRC_LEN == size);
	CHECK(pi->bth.tver == 0);
	if (!(op->flags & ROCE_OPF_PAYLOAD))
		CHECK(pi->payload_len == 0 && pi->bth.padcnt == 0);

	n = roce_build_headers(pi, hdr, sizeof(hdr));
	CHECK(n == op->hdr_len);
	CHECK(roce_build_headers(pi, hdr, (size_t)n - 1) == -ROCE_PERR_NO_SPACE);

	/* Reserved bits are ignored on receive and written as zero. */
	memcpy(want, data, (size_t)n);
	want[4] &= 0xC0;	/* BTH resv6 */
	want[8] &= 0x80;	/* BTH resv7 */
	if (op->hdrs & ROCE_HDR_DETH)
		want[op->off[ROCE_EXT_DETH] + 4] = 0;
	if (op->hdrs & ROCE_HDR_FETH) {	/* all but bits 5..0 */
		memset(want + op->off[ROCE_EXT_FETH], 0, 3);
		want[op->off[ROCE_EXT_FETH] + 3] &= 0x3F;
	}
	if (op->hdrs & ROCE_HDR_XRCETH)	/* reserved(8) | SRQ number(24) */
		want[op->off[ROCE_EXT_XRCETH]] = 0;
	if (op->hdrs & ROCE_HDR_CNP_PAD)
		memset(want + op->off[ROCE_EXT_CNP_PAD], 0, ROCE_CNP_PAD_LEN);
	CHECK(memcmp(hdr, want, (size_t)n) == 0);
}

static void check_icrc(const u8 *data, size_t size)
{
	int v6 = size & 1;
	const u8 *ip = v6 ? ipv6_hdr : ipv4_hdr;
	size_t ip_len = v6 ? sizeof(ipv6_hdr) : sizeof(ipv4_hdr);
	size_t n = ROCE_UDP_HDR_LEN + size;
	u8 *udp = malloc(n);
	u32 one, st;
	size_t tail, cut;

	memset(udp, 0, ROCE_UDP_HDR_LEN);
	udp[0] = 0xC0;
	udp[2] = 0x12;
	udp[3] = 0xB7;
	udp[4] = (u8)(n >> 8);
	udp[5] = (u8)n;
	memcpy(udp + ROCE_UDP_HDR_LEN, data, size);

	one = roce_icrc_compute(ip, ip_len, v6, udp, n);
	CHECK(one == ref_icrc(ip, ip_len, v6, udp, n));
	if (size >= ROCE_BTH_LEN) {
		tail = size - ROCE_BTH_LEN;
		cut = data[size - 1] % (tail + 1);
		st = roce_icrc_begin(ip, ip_len, v6, udp, udp + 8);
		st = roce_crc32_update(st, udp + 20, cut);
		st = roce_crc32_update(st, udp + 20 + cut, tail - cut);
		CHECK(roce_icrc_finish(st) == one);
	}
	free(udp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt_info pi;
	int err = roce_parse(data, size, &pi);

	CHECK(err <= 0 && err > -ROCE_PERR_COUNT && err != -ROCE_PERR_NO_SPACE);
	CHECK(roce_parse_err_name(err) != NULL);
	if (err == 0)
		check_roundtrip(data, size, &pi);
	check_icrc(data, size);
	return 0;
}

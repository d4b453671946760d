// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ICRC known answers come from scapy's test/contrib/roce.uts (secdev/scapy):
//  - "RoCE CNP captured on ConnectX-4 Lx": a real hardware IPv4 CNP, so it
//    pins us to what NICs put on the wire;
//  - "RoCE layer" and "RoCE over IPv6": UC SEND_ONLY packets whose ICRC scapy
//    computes (zlib crc32).  The frames were rebuilt from the scapy field
//    values; their IP checksum and the UDP checksums scapy asserts (0xaca2,
//    0xe7c5, which cover the ICRC bytes) match, so the bytes are exact.
// On top, every ICRC is cross-checked against a bit-at-a-time CRC over an
// independently masked copy of the packet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "icrc.h"
#include "opcode.h"
#include "test_util.hpp"
#include "wire.h"
// The generated tables themselves, to check them entry by entry.
#include "crc32_table.h"

namespace {

using sroce_test::hex;
using sroce_test::ref_crc32;
using sroce_test::Rng;

// An Ethernet-less RoCE v2 packet: IP header, then UDP..ICRC.
struct Pkt {
	std::vector<u8> ip;
	std::vector<u8> udp; // UDP header through ICRC
	bool ipv6;
};

Pkt connectx4_cnp()
{
	auto f = hex("e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2"
		     "003c 718c 4000 4011 9161 0a00 1101 0a00"
		     "1201 0000 12b7 0028 0000 8100 ffff 4000"
		     "0118 0000 0000 0000 0000 0000 0000 0000"
		     "0000 0000 0000 82fd 002a");
	return {{f.begin() + 14, f.begin() + 34}, {f.begin() + 34, f.end()}, false};
}

const char kScapyBthPayload[] = "2460ffff000000d300cf1710"
				"4630818be28935d90e9a95505401be885e500000";

Pkt scapy_uc_ipv4()
{
	return {hex("45010040047840004011b4d5c0a80007c0a80007"),
		hex(std::string("c00012b7002caca2") + kScapyBthPayload + "78f353f3"),
		false};
}

Pkt scapy_uc_ipv6()
{
	return {hex("6e21face002c11ff"
		    "20220000000000000000000000001023"
		    "20230000000000000000000000001024"),
		hex(std::string("c00012b7002ce7c5") + kScapyBthPayload + "3e5b743b"),
		true};
}

// Independent reference: mask a copy field by field, prepend 8 x 0xFF,
// bitwise CRC-32, invert.
u32 ref_icrc(const Pkt &p, size_t udp_len_without_icrc)
{
	std::vector<u8> ip = p.ip, rest(p.udp.begin(),
					p.udp.begin() + udp_len_without_icrc);
	if (p.ipv6) {
		ip[0] |= 0x0F;		// traffic class (high nibble)
		ip[1] = 0xFF;		// traffic class (low) + flow label
		ip[2] = ip[3] = 0xFF;	// flow label
		ip[7] = 0xFF;		// hop limit
	} else {
		ip[1] = 0xFF;		// TOS
		ip[8] = 0xFF;		// TTL
		ip[10] = ip[11] = 0xFF;	// checksum
	}
	for (size_t i : {6, 7, 12}) // UDP checksum, BTH FECN/BECN/resv6
		if (i < rest.size())
			rest[i] = 0xFF;
	std::vector<u8> all(8, 0xFF);
	all.insert(all.end(), ip.begin(), ip.end());
	all.insert(all.end(), rest.begin(), rest.end());
	return ~ref_crc32(0xFFFFFFFF, all);
}

u32 lib_icrc(const Pkt &p)
{
	return roce_icrc_compute(p.ip.data(), p.ip.size(), p.ipv6, p.udp.data(),
				 p.udp.size() - ROCE_ICRC_LEN);
}

u32 trailer(const Pkt &p)
{
	return roce_icrc_get(p.udp.data() + p.udp.size() - 4);
}

TEST(Crc32, StandardCheckValue)
{
	const char *s = "123456789";
	EXPECT_EQ(~roce_crc32_update(ROCE_CRC32_INIT, s, 9), 0xCBF43926u);
	EXPECT_EQ(roce_crc32_update(0x12345678, s, 0), 0x12345678u);
}

TEST(Crc32, IcrcSeedIsStateAfterEightOnes)
{
	const u8 ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	EXPECT_EQ(roce_crc32_update(ROCE_CRC32_INIT, ones, 8), ROCE_ICRC_SEED);
	EXPECT_EQ(ref_crc32(ROCE_CRC32_INIT, ones, 8), ROCE_ICRC_SEED);
}

TEST(Crc32, GeneratedTablesMatchDefinition)
{
	for (u32 b = 0; b < 256; b++) {
		// Table k: byte b followed by k zero bytes, from a zero register.
		u8 buf[8] = {static_cast<u8>(b)};
		for (int k = 0; k < 8; k++)
			ASSERT_EQ(roce_crc32_table[k][b], ref_crc32(0, buf, k + 1))
				<< "table " << k << " entry " << b;
	}
}

TEST(Crc32, MatchesBitwiseAtEveryLengthAndAlignment)
{
	Rng rng(17);
	auto data = rng.bytes(600);

	for (size_t align = 0; align < 8; align++) {
		for (size_t n = 0; n + align <= 520; n++) {
			u32 seed = rng.u32v();
			ASSERT_EQ(roce_crc32_update(seed, data.data() + align, n),
				  ref_crc32(seed, data.data() + align, n))
				<< "align " << align << " len " << n;
		}
	}
}

TEST(Crc32, ChainingEqualsOneShot)
{
	Rng rng(23);
	auto data = rng.bytes(300);
	u32 whole = roce_crc32_update(ROCE_CRC32_INIT, data.data(), data.size());

	for (size_t cut = 0; cut <= data.size(); cut++) {
		u32 st = roce_crc32_update(ROCE_CRC32_INIT, data.data(), cut);
		st = roce_crc32_update(st, data.data() + cut, data.size() - cut);
		ASSERT_EQ(st, whole) << cut;
	}
}

class KnownAnswer : public ::testing::TestWithParam<int> {
protected:
	Pkt pkt() const
	{
		switch (GetParam()) {
		case 0: return connectx4_cnp();
		case 1: return scapy_uc_ipv4();
		default: return scapy_uc_ipv6();
		}
	}
};

TEST_P(KnownAnswer, OneShotMatchesWire)
{
	Pkt p = pkt();
	EXPECT_EQ(lib_icrc(p), trailer(p));
	EXPECT_TRUE(roce_icrc_verify(p.ip.data(), p.ip.size(), p.ipv6,
				     p.udp.data(), p.udp.size()));
}

TEST_P(KnownAnswer, ReferenceMatchesWire)
{
	Pkt p = pkt();
	EXPECT_EQ(ref_icrc(p, p.udp.size() - 4), trailer(p));
}

TEST_P(KnownAnswer, StreamingMatchesWire)
{
	Pkt p = pkt();
	const u8 *bth = p.udp.data() + ROCE_UDP_HDR_LEN;
	const u8 *rest = bth + ROCE_BTH_LEN;
	size_t n = p.udp.size() - ROCE_UDP_HDR_LEN - ROCE_BTH_LEN - 4;

	// Feed the tail in every possible two-piece split.
	for (size_t cut = 0; cut <= n; cut++) {
		u32 st = roce_icrc_begin(p.ip.data(), p.ip.size(), p.ipv6,
					 p.udp.data(), bth);
		st = roce_crc32_update(st, rest, cut);
		st = roce_crc32_update(st, rest + cut, n - cut);
		ASSERT_EQ(roce_icrc_finish(st), trailer(p)) << cut;
	}
}

TEST_P(KnownAnswer, ParsesAndTrailerIsLittleEndian)
{
	Pkt p = pkt();
	roce_pkt_info pi;
	std::vector<u8> out(4);
	const u8 *udp_payload = p.udp.data() + ROCE_UDP_HDR_LEN;
	size_t len = p.udp.size() - ROCE_UDP_HDR_LEN;

	ASSERT_EQ(roce_parse(udp_payload, len, &pi), 0);
	roce_icrc_put(out.data(), lib_icrc(p));
	EXPECT_TRUE(std::equal(out.begin(), out.end(), udp_payload + pi.icrc_off));
}

TEST_P(KnownAnswer, DetectsCorruptionOfCoveredBytes)
{
	Pkt p = pkt();

	for (size_t i = 0; i < p.udp.size() - 4; i++) {
		Pkt q = p;
		q.udp[i] ^= 0x01;
		bool masked = i == 6 || i == 7 || (i == 12);
		if (masked) {
			EXPECT_EQ(lib_icrc(q), trailer(p)) << i;
		} else {
			EXPECT_NE(lib_icrc(q), trailer(p)) << i;
		}
	}
	Pkt q = p;
	q.udp.back() ^= 0x80;
	EXPECT_FALSE(roce_icrc_verify(q.ip.data(), q.ip.size(), q.ipv6,
				      q.udp.data(), q.udp.size()));
}

std::string vector_name(const ::testing::TestParamInfo<int> &info)
{
	static const char *const names[] = {"ConnectX4LxCnpIpv4", "ScapyUcIpv4",
					    "ScapyUcIpv6"};
	return names[info.param];
}

INSTANTIATE_TEST_SUITE_P(Vectors, KnownAnswer, ::testing::Values(0, 1, 2),
			 vector_name);

TEST(Icrc, VariantIpFieldsAreMaskedOthersAreNot)
{
	for (Pkt p : {scapy_uc_ipv4(), scapy_uc_ipv6()}) {
		std::set<size_t> variant = p.ipv6 ?
			std::set<size_t>{1, 2, 3, 7} :	 // + low nibble of byte 0
			std::set<size_t>{1, 8, 10, 11};
		u32 want = trailer(p);

		for (size_t i = 0; i < p.ip.size(); i++) {
			for (u8 bit = 1; bit; bit = static_cast<u8>(bit << 1)) {
				Pkt q = p;
				q.ip[i] ^= bit;
				bool masked = variant.count(i) ||
					      (p.ipv6 && i == 0 && bit < 0x10);
				ASSERT_EQ(lib_icrc(q) == want, masked)
					<< (p.ipv6 ? "v6" : "v4") << " byte " << i
					<< " bit " << int(bit);
			}
		}
	}
}

TEST(Icrc, EcnRemarkingKeepsIcrc)
{
	Pkt p = scapy_uc_ipv4();
	u32 want = trailer(p);

	p.ip[1] = static_cast<u8>((p.ip[1] & ~3) | 3); // CE
	p.ip[8] = 1;				      // TTL decremented
	p.udp[12] |= 0xC0;			      // FECN + BECN
	p.udp[6] = p.udp[7] = 0;		      // checksum cleared
	EXPECT_EQ(lib_icrc(p), want);
}

Pkt random_packet(Rng &rng, bool ipv6, size_t udp_len)
{
	Pkt p;
	p.ipv6 = ipv6;
	p.ip = rng.bytes(ipv6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN);
	p.udp = rng.bytes(udp_len);
	return p;
}

TEST(Icrc, RandomPacketsMatchReference)
{
	Rng rng(99);

	for (int i = 0; i < 3000; i++) {
		bool v6 = rng.coin();
		size_t udp_len = 24 + rng.u32v() % 4200;
		Pkt p = random_packet(rng, v6, udp_len);
		ASSERT_EQ(lib_icrc(p), ref_icrc(p, udp_len - 4)) << i;
	}
}

TEST(Icrc, ShortInputsAreSafeAndConsistent)
{
	Rng rng(5);

	// Fewer bytes than UDP + BTH: still masks what is there, never reads
	// beyond (exact-size heap buffers for ASan).
	for (size_t n = 0; n < 24; n++) {
		Pkt p = random_packet(rng, n & 1, n);
		std::unique_ptr<u8[]> ip(new u8[p.ip.size()]);
		std::unique_ptr<u8[]> udp(new u8[n]);
		std::memcpy(ip.get(), p.ip.data(), p.ip.size());
		if (n)
			std::memcpy(udp.get(), p.udp.data(), n);
		u32 got = roce_icrc_compute(ip.get(), p.ip.size(), p.ipv6,
					    udp.get(), n);
		ASSERT_EQ(got, ref_icrc(p, n)) << n;
		ASSERT_FALSE(roce_icrc_verify(ip.get(), p.ip.size(), p.ipv6,
					      udp.get(), n)) << n;
	}
}

TEST(Icrc, Ipv4OptionsAreCoveredUnmasked)
{
	Pkt p = scapy_uc_ipv4();
	std::vector<u8> ip = p.ip;
	ip[0] = 0x46;
	ip.insert(ip.end(), {0x01, 0x01, 0x01, 0x00}); // NOP NOP NOP EOL
	u32 base = roce_icrc_compute(ip.data(), ip.size(), false, p.udp.data(),
				     p.udp.size() - 4);
	ip[21] = 0x02;
	EXPECT_NE(roce_icrc_compute(ip.data(), ip.size(), false, p.udp.data(),
				    p.udp.size() - 4), base);
}

TEST(Icrc, TrailerByteOrder)
{
	u8 b[4];
	roce_icrc_put(b, 0x2A00FD82);
	EXPECT_EQ(std::vector<u8>(b, b + 4), hex("82fd002a"));
	EXPECT_EQ(roce_icrc_get(b), 0x2A00FD82u);
}

} // namespace

// An RDMA FLUSH as Linux 7.2's rxe sent it (captured on veth0 in a sid
// guest): IPv4, BTH + FETH (global, range) + RETH, no payload.  rxe's
// ICRC covers the headers and then BTH..RETH again, unmasked.
Pkt rxe_flush()
{
	return {hex("45000040d33d400040111305c6336401c6336402"),
		hex("c11012b7002c0000"
		    "1c00ffff000000108000002000000001"
		    "0000564feaa2d00002dff9f300008000"
		    "0632ce61"),
		false};
}

TEST(Icrc, RxeFlushIsAcceptedWithRxesIcrc)
{
	Pkt p = rxe_flush();
	const size_t n = p.udp.size() - ROCE_ICRC_LEN;

	EXPECT_NE(lib_icrc(p), trailer(p)) << "not IBTA's ICRC";
	// rxe's, recomputed independently: the masked headers, then the
	// bytes from the BTH on once more, as its missing payload offset has it.
	std::vector<u8> twice(p.udp.begin(), p.udp.begin() + n);
	twice.insert(twice.end(), p.udp.begin() + 8, p.udp.begin() + n);
	Pkt q{p.ip, twice, false};
	EXPECT_EQ(ref_icrc(q, twice.size()), trailer(p));
	EXPECT_EQ(roce_icrc_rxe_flush(p.ip.data(), p.ip.size(), false, p.udp.data()),
		  trailer(p));
	EXPECT_TRUE(roce_icrc_verify(p.ip.data(), p.ip.size(), false, p.udp.data(),
				     p.udp.size()));

	// Any other bit changed: rejected either way.
	Pkt bad = p;
	bad.udp[8 + 12 + 4 + 7] ^= 1; // the RETH's VA
	EXPECT_FALSE(roce_icrc_verify(bad.ip.data(), bad.ip.size(), false,
				      bad.udp.data(), bad.udp.size()));
}

TEST(Icrc, OnlyAFlushMayCarryRxesFlushIcrc)
{
	Pkt p = rxe_flush();
	const size_t n = p.udp.size() - ROCE_ICRC_LEN;

	// IBTA's ICRC on the same FLUSH is accepted too (what sroce sends).
	roce_icrc_put(p.udp.data() + n, lib_icrc(p));
	EXPECT_TRUE(roce_icrc_verify(p.ip.data(), p.ip.size(), false, p.udp.data(),
				     p.udp.size()));

	// A WRITE ONLY of the same length (RETH + 4 bytes) with rxe's FLUSH
	// ICRC: rejected.
	p.udp[8] = ROCE_OP_RC_WRITE_ONLY;
	roce_icrc_put(p.udp.data() + n,
		      roce_icrc_rxe_flush(p.ip.data(), p.ip.size(), false, p.udp.data()));
	EXPECT_FALSE(roce_icrc_verify(p.ip.data(), p.ip.size(), false, p.udp.data(),
				      p.udp.size()));

	// A longer FLUSH (it has no payload) with the same trick: rejected.
	Pkt longer = rxe_flush();
	longer.udp.insert(longer.udp.begin() + n, 4, 0);
	roce_icrc_put(longer.udp.data() + n + 4,
		      roce_icrc_rxe_flush(longer.ip.data(), longer.ip.size(), false,
					  longer.udp.data()));
	EXPECT_FALSE(roce_icrc_verify(longer.ip.data(), longer.ip.size(), false,
				      longer.udp.data(), longer.udp.size()));
}

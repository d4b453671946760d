// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The opcode table checked against an independent transcription of the
// IBTA/RoCE v2 opcode list (roce-and-anchors.md 1.2-1.3).
#include <gtest/gtest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <algorithm>
#include <vector>

#include "opcode.h"

namespace {

enum Kind { SEND, WRITE, READ_REQ, READ_RESP, ATOMIC, ACK, ATOMIC_ACK, CNP,
	    FLUSH, ATOMIC_WRITE };
enum Pos { NONE, FIRST, MIDDLE, LAST, ONLY };

struct Expect {
	u8 op;
	std::string name;
	roce_qpt qpt;
	Kind kind;
	Pos pos;
	std::vector<roce_ext> hdrs; // wire order
	bool supported = true;
};

const std::vector<Expect> &expected()
{
	static const std::vector<Expect> e = [] {
		std::vector<Expect> v;
		auto add = [&](u8 op, std::string n, roce_qpt t, Kind k, Pos p,
			       std::vector<roce_ext> h, bool sup = true) {
			v.push_back({op, std::move(n), t, k, p, std::move(h), sup});
		};
		// RC and UC share SEND/WRITE; UC has no invalidate, READ, atomics.
		struct Transport {
			int base;
			roce_qpt qpt;
			const char *prefix;
		};
		for (const Transport &tr : {Transport{0x00, ROCE_QPT_RC, "RC_"},
					    Transport{0x20, ROCE_QPT_UC, "UC_"}}) {
			auto sw = [&](int off, const char *n, Kind k, Pos p,
				      std::vector<roce_ext> h) {
				add(static_cast<u8>(tr.base + off),
				    std::string(tr.prefix) + n, tr.qpt, k, p,
				    std::move(h));
			};
			sw(0x00, "SEND_FIRST", SEND, FIRST, {});
			sw(0x01, "SEND_MIDDLE", SEND, MIDDLE, {});
			sw(0x02, "SEND_LAST", SEND, LAST, {});
			sw(0x03, "SEND_LAST_IMM", SEND, LAST, {ROCE_EXT_IMM});
			sw(0x04, "SEND_ONLY", SEND, ONLY, {});
			sw(0x05, "SEND_ONLY_IMM", SEND, ONLY, {ROCE_EXT_IMM});
			sw(0x06, "WRITE_FIRST", WRITE, FIRST, {ROCE_EXT_RETH});
			sw(0x07, "WRITE_MIDDLE", WRITE, MIDDLE, {});
			sw(0x08, "WRITE_LAST", WRITE, LAST, {});
			sw(0x09, "WRITE_LAST_IMM", WRITE, LAST, {ROCE_EXT_IMM});
			sw(0x0A, "WRITE_ONLY", WRITE, ONLY, {ROCE_EXT_RETH});
			sw(0x0B, "WRITE_ONLY_IMM", WRITE, ONLY,
			   {ROCE_EXT_RETH, ROCE_EXT_IMM});
		}
		const roce_qpt RC = ROCE_QPT_RC;
		add(0x0C, "RC_READ_REQ", RC, READ_REQ, ONLY, {ROCE_EXT_RETH});
		add(0x0D, "RC_READ_RESP_FIRST", RC, READ_RESP, FIRST,
		    {ROCE_EXT_AETH});
		add(0x0E, "RC_READ_RESP_MIDDLE", RC, READ_RESP, MIDDLE, {});
		add(0x0F, "RC_READ_RESP_LAST", RC, READ_RESP, LAST,
		    {ROCE_EXT_AETH});
		add(0x10, "RC_READ_RESP_ONLY", RC, READ_RESP, ONLY,
		    {ROCE_EXT_AETH});
		add(0x11, "RC_ACK", RC, ACK, ONLY, {ROCE_EXT_AETH});
		add(0x12, "RC_ATOMIC_ACK", RC, ATOMIC_ACK, ONLY,
		    {ROCE_EXT_AETH, ROCE_EXT_ATMACK});
		add(0x13, "RC_CMP_SWAP", RC, ATOMIC, ONLY, {ROCE_EXT_ATMETH});
		add(0x14, "RC_FETCH_ADD", RC, ATOMIC, ONLY, {ROCE_EXT_ATMETH});
		add(0x16, "RC_SEND_LAST_INV", RC, SEND, LAST, {ROCE_EXT_IETH});
		add(0x17, "RC_SEND_ONLY_INV", RC, SEND, ONLY, {ROCE_EXT_IETH});
		// XRC (IBTA A14): RC's opcodes 0x00-0x17 at 0xA0; requests
		// carry an XRCETH right after the BTH, responses do not.
		// ATOMIC WRITE and FLUSH have no XRC form here.
		for (size_t i = 0, n = v.size(); i < n; i++) {
			Expect x = v[i];

			if (x.qpt != RC)
				continue;
			x.op = static_cast<u8>(0xA0 | x.op);
			x.name = "XRC_" + x.name.substr(3);
			x.qpt = ROCE_QPT_XRC;
			if (x.kind != READ_RESP && x.kind != ACK &&
			    x.kind != ATOMIC_ACK)
				x.hdrs.insert(x.hdrs.begin(), ROCE_EXT_XRCETH);
			v.push_back(x);
		}
		add(0x1C, "RC_FLUSH", RC, FLUSH, ONLY,
		    {ROCE_EXT_FETH, ROCE_EXT_RETH});
		add(0x1D, "RC_ATOMIC_WRITE", RC, ATOMIC_WRITE, ONLY,
		    {ROCE_EXT_RETH});
		add(0x64, "UD_SEND_ONLY", ROCE_QPT_UD, SEND, ONLY,
		    {ROCE_EXT_DETH});
		add(0x65, "UD_SEND_ONLY_IMM", ROCE_QPT_UD, SEND, ONLY,
		    {ROCE_EXT_DETH, ROCE_EXT_IMM});
		add(0x81, "CNP", ROCE_QPT_CNP, CNP, NONE, {ROCE_EXT_CNP_PAD});
		return v;
	}();
	return e;
}

const Expect *find(u8 op)
{
	for (const auto &e : expected())
		if (e.op == op)
			return &e;
	return nullptr;
}

unsigned ext_size(roce_ext e)
{
	switch (e) {
	case ROCE_EXT_DETH: return 8;
	case ROCE_EXT_XRCETH: return 4;
	case ROCE_EXT_FETH: return 4;
	case ROCE_EXT_RETH: return 16;
	case ROCE_EXT_ATMETH: return 28;
	case ROCE_EXT_AETH: return 4;
	case ROCE_EXT_ATMACK: return 8;
	case ROCE_EXT_IMM: return 4;
	case ROCE_EXT_IETH: return 4;
	case ROCE_EXT_CNP_PAD: return 16;
	default: return 0;
	}
}

u32 kind_flag(Kind k)
{
	switch (k) {
	case SEND: return ROCE_OPF_SEND;
	case WRITE: return ROCE_OPF_WRITE;
	case READ_REQ: return ROCE_OPF_READ_REQ;
	case READ_RESP: return ROCE_OPF_READ_RESP;
	case ATOMIC: return ROCE_OPF_ATOMIC;
	case ACK: return ROCE_OPF_ACK;
	case ATOMIC_ACK: return ROCE_OPF_ACK | ROCE_OPF_ATOMIC;
	case CNP: return ROCE_OPF_CNP;
	case FLUSH: return ROCE_OPF_FLUSH;
	case ATOMIC_WRITE: return ROCE_OPF_ATOMIC_WRITE;
	}
	return 0;
}

constexpr u32 kKindMask = ROCE_OPF_SEND | ROCE_OPF_WRITE | ROCE_OPF_READ_REQ |
			  ROCE_OPF_READ_RESP | ROCE_OPF_ATOMIC | ROCE_OPF_ACK |
			  ROCE_OPF_CNP | ROCE_OPF_FLUSH | ROCE_OPF_ATOMIC_WRITE;
constexpr u32 kPosMask = ROCE_OPF_FIRST | ROCE_OPF_MIDDLE | ROCE_OPF_LAST;

TEST(Opcode, EveryByteHasTheExpectedStatus)
{
	int supported = 0, unsupported = 0, unknown = 0;

	for (int i = 0; i < 256; i++) {
		const roce_opcode_info *info = roce_opcode_get(static_cast<u8>(i));
		const Expect *e = find(static_cast<u8>(i));

		SCOPED_TRACE(i);
		if (!e) {
			EXPECT_EQ(info->status, ROCE_OPCODE_UNKNOWN);
			EXPECT_EQ(info->name, nullptr);
			EXPECT_STREQ(roce_opcode_name(static_cast<u8>(i)), "UNKNOWN");
			EXPECT_FALSE(roce_opcode_supported(static_cast<u8>(i)));
			unknown++;
			continue;
		}
		EXPECT_EQ(info->status, e->supported ? ROCE_OPCODE_SUPPORTED
						     : ROCE_OPCODE_UNSUPPORTED);
		EXPECT_EQ(roce_opcode_supported(static_cast<u8>(i)), e->supported);
		(e->supported ? supported : unsupported)++;
	}
	// RC 25 + UC 12 + XRC 23 + UD 2 + CNP 1.
	EXPECT_EQ(supported, 63);
	EXPECT_EQ(unsupported, 0);
	EXPECT_EQ(unknown, 256 - 63);
}

TEST(Opcode, ReservedRcOpcodesAreUnknown)
{
	for (u8 op : {0x15, 0x18, 0x19, 0x1A, 0x1B, 0x1E, 0x1F, 0x2C, 0x40,
		      0x63, 0x66, 0x80, 0x82, 0xB5, 0xB8, 0xBC, 0xBD, 0xFF})
		EXPECT_EQ(roce_opcode_get(op)->status, ROCE_OPCODE_UNKNOWN) << int(op);
}

TEST(Opcode, HeadersLayoutAndLengthMatchIbta)
{
	for (const auto &e : expected()) {
		const roce_opcode_info *info = roce_opcode_get(e.op);
		unsigned off = ROCE_BTH_LEN;
		u16 mask = 0;

		SCOPED_TRACE(int(e.op));
		EXPECT_EQ(roce_opcode_name(e.op), e.name);
		EXPECT_EQ(info->qpt, e.qpt);
		for (roce_ext x : e.hdrs) {
			mask |= static_cast<u16>(1u << x);
			EXPECT_EQ(info->off[x], off) << "ext " << x;
			EXPECT_EQ(roce_ext_len(x), ext_size(x));
			off += ext_size(x);
		}
		EXPECT_EQ(info->hdrs, mask);
		EXPECT_EQ(info->hdr_len, off);
		for (int x = 0; x < ROCE_EXT_COUNT; x++) {
			if (!(mask & (1u << x))) {
				EXPECT_EQ(info->off[x], 0) << "absent ext " << x;
			}
		}
	}
}

TEST(Opcode, WellKnownHeaderLengths)
{
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_SEND_MIDDLE)->hdr_len, 12);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_WRITE_ONLY_IMM)->hdr_len, 32);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_READ_REQ)->hdr_len, 28);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_ACK)->hdr_len, 16);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_ATOMIC_ACK)->hdr_len, 24);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_CMP_SWAP)->hdr_len, 40);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_SEND_ONLY_INV)->hdr_len, 16);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_UD_SEND_ONLY_IMM)->hdr_len, 24);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_CNP)->hdr_len, 28);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_RC_FLUSH)->hdr_len, 32);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_XRC_SEND_ONLY)->hdr_len, 16);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_XRC_WRITE_ONLY_IMM)->hdr_len, 36);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_XRC_CMP_SWAP)->hdr_len, 44);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_XRC_ACK)->hdr_len, 16);
	EXPECT_EQ(roce_opcode_get(ROCE_OP_XRC_READ_RESP_MIDDLE)->hdr_len, 12);
}

TEST(Opcode, MaxHeaderLengthBoundsEverySupportedOpcode)
{
	unsigned max = 0;

	for (int i = 0; i < 256; i++)
		if (roce_opcode_supported(static_cast<u8>(i)))
			max = std::max<unsigned>(max, roce_opcode_get(static_cast<u8>(i))->hdr_len);
	EXPECT_EQ(max, static_cast<unsigned>(ROCE_MAX_HDR_LEN));
}

TEST(Opcode, FlagsDescribeKindPositionAndContents)
{
	for (const auto &e : expected()) {
		u32 f = roce_opcode_get(e.op)->flags;
		const auto &h = e.hdrs;
		auto has = [&](roce_ext x) {
			return std::find(h.begin(), h.end(), x) != h.end();
		};

		SCOPED_TRACE(int(e.op));
		EXPECT_EQ(f & kKindMask, kind_flag(e.kind));

		u32 pos = e.pos == FIRST ? ROCE_OPF_FIRST :
			  e.pos == MIDDLE ? ROCE_OPF_MIDDLE :
			  e.pos == LAST ? ROCE_OPF_LAST :
			  e.pos == ONLY ? ROCE_OPF_ONLY : 0;
		EXPECT_EQ(f & kPosMask, pos);

		bool payload = e.kind == SEND || e.kind == WRITE ||
			       e.kind == READ_RESP || e.kind == ATOMIC_WRITE;
		EXPECT_EQ(!!(f & ROCE_OPF_PAYLOAD), payload);
		EXPECT_EQ(!!(f & ROCE_OPF_IMM), has(ROCE_EXT_IMM));
		EXPECT_EQ(!!(f & ROCE_OPF_INV), has(ROCE_EXT_IETH));

		bool resp = e.kind == READ_RESP || e.kind == ACK ||
			    e.kind == ATOMIC_ACK;
		EXPECT_EQ(!!(f & ROCE_OPF_RESPONSE), resp);
		EXPECT_EQ(!!(f & ROCE_OPF_REQUEST), !resp && e.kind != CNP);
	}
}

TEST(Opcode, NamesAreUniqueAndMatchTransport)
{
	std::set<std::string> seen;

	for (const auto &e : expected()) {
		const char *n = roce_opcode_name(e.op);
		std::string s(n);

		SCOPED_TRACE(int(e.op));
		EXPECT_TRUE(seen.insert(s).second) << s;
		if (e.qpt == ROCE_QPT_RC) {
			EXPECT_EQ(s.rfind("RC_", 0), 0u) << s;
		}
		if (e.qpt == ROCE_QPT_UC) {
			EXPECT_EQ(s.rfind("UC_", 0), 0u) << s;
		}
		if (e.qpt == ROCE_QPT_UD) {
			EXPECT_EQ(s.rfind("UD_", 0), 0u) << s;
		}
	}
	EXPECT_STREQ(roce_opcode_name(0x00), "RC_SEND_FIRST");
	EXPECT_STREQ(roce_opcode_name(0x17), "RC_SEND_ONLY_INV");
	EXPECT_STREQ(roce_opcode_name(0x2B), "UC_WRITE_ONLY_IMM");
	EXPECT_STREQ(roce_opcode_name(0x65), "UD_SEND_ONLY_IMM");
	EXPECT_STREQ(roce_opcode_name(0x81), "CNP");
	EXPECT_STREQ(roce_opcode_name(0x1C), "RC_FLUSH");
}

TEST(Opcode, TransportMatchesTopBits)
{
	for (const auto &e : expected()) {
		if (e.qpt == ROCE_QPT_CNP)
			continue;
		u8 top = e.op & 0xE0;
		roce_qpt want = top == 0x00 ? ROCE_QPT_RC :
				top == 0x20 ? ROCE_QPT_UC :
				top == 0xA0 ? ROCE_QPT_XRC : ROCE_QPT_UD;
		EXPECT_EQ(roce_opcode_get(e.op)->qpt, want) << int(e.op);
	}
}

} // namespace

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Fault injection rules (kernel/proto/fault.c): the rule language a test
// writes into debugfs, which packets a rule selects, and that its
// decisions depend on nothing but the seed and the packet's number.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fault.h"
#include "opcode.h"

namespace {

roce_fault_rule parse_ok(const std::string &text)
{
	roce_fault_rule r;
	const char *err = roce_fault_parse(text.data(), text.size(), &r);

	EXPECT_EQ(err, nullptr) << text << ": " << (err ? err : "");
	return r;
}

std::string parse_error(const std::string &text)
{
	roce_fault_rule r;
	const char *err = roce_fault_parse(text.data(), text.size(), &r);

	return err ? err : "";
}

TEST(FaultRule, DefaultsSelectEverythingEveryTime)
{
	roce_fault_rule r = parse_ok("drop\n");

	EXPECT_EQ(r.action, ROCE_FAULT_DROP);
	EXPECT_EQ(r.dirs, ROCE_FAULT_TX | ROCE_FAULT_RX);
	EXPECT_EQ(r.classes, ROCE_FAULT_ALL_CLASSES);
	EXPECT_EQ(r.qpn, ROCE_FAULT_ANY_QPN);
	EXPECT_EQ(r.prob, ROCE_FAULT_PROB_ONE);
	EXPECT_EQ(r.every, 1u);
	EXPECT_EQ(r.after, 0u);
	EXPECT_EQ(r.count, 0u);
	EXPECT_FALSE(r.seeded);
	for (u64 n = 0; n < 100; n++)
		EXPECT_TRUE(roce_fault_hits(&r, n));
}

TEST(FaultRule, EverySettingIsRead)
{
	roce_fault_rule r = parse_ok(
		"delay  dir=rx class=ack,read_resp qpn=0x11 prob=0.25 every=3 "
		"after=7 count=100 delay_us=2500 seed=18446744073709551615");

	EXPECT_EQ(r.action, ROCE_FAULT_DELAY);
	EXPECT_EQ(r.dirs, ROCE_FAULT_RX);
	EXPECT_EQ(r.classes, ROCE_FAULT_ACK | ROCE_FAULT_READ_RESP);
	EXPECT_EQ(r.qpn, 0x11u);
	EXPECT_EQ(r.prob, 250000u);
	EXPECT_EQ(r.every, 3u);
	EXPECT_EQ(r.after, 7u);
	EXPECT_EQ(r.count, 100u);
	EXPECT_EQ(r.delay_us, 2500u);
	EXPECT_TRUE(r.seeded);
	EXPECT_EQ(r.seed, ~0ull);
}

TEST(FaultRule, NaksDefaultToIncomingRequests)
{
	for (const char *text : { "rnr_nak", "access_nak" }) {
		roce_fault_rule r = parse_ok(text);

		EXPECT_EQ(r.dirs, ROCE_FAULT_RX) << text;
		EXPECT_EQ(r.classes, ROCE_FAULT_REQUEST) << text;
	}
}

TEST(FaultRule, ProbabilitiesToTheMillionth)
{
	EXPECT_EQ(parse_ok("drop prob=1").prob, ROCE_FAULT_PROB_ONE);
	EXPECT_EQ(parse_ok("drop prob=1.0").prob, ROCE_FAULT_PROB_ONE);
	EXPECT_EQ(parse_ok("drop prob=0").prob, 0u);
	EXPECT_EQ(parse_ok("drop prob=.5").prob, 500000u);
	EXPECT_EQ(parse_ok("drop prob=0.000001").prob, 1u);
	for (const char *bad : { "drop prob=", "drop prob=1.01", "drop prob=2",
				 "drop prob=0.0000001", "drop prob=-0.5",
				 "drop prob=0.5%", "drop prob=.", "drop prob=10" })
		EXPECT_NE(parse_error(bad), "") << bad;
}

TEST(FaultRule, BadRulesSayWhy)
{
	const std::vector<std::string> bad = {
		"", "\n", "lose", "drop dir=up", "drop class=", "drop class=acks",
		"drop class=all,ack", "drop qpn=0x1000000", "drop qpn=-1",
		"drop every=0", "drop every=4294967296", "drop after=x",
		"drop count=1e3", "drop seed=18446744073709551616", "drop seed",
		"drop =1", "drop dir=tx dir=rx", "drop colour=red",
		"delay", "delay delay_us=0", "delay delay_us=1000001",
		"drop delay_us=10", "rnr_nak dir=tx", "rnr_nak dir=both",
		"access_nak class=ack", "rnr_nak class=request,ack",
		"drop\ndup", "drop\tqpn=1\x01", std::string(300, 'x'),
	};

	for (const std::string &text : bad)
		EXPECT_NE(parse_error(text), "") << '"' << text << '"';
}

TEST(FaultRule, TabsAndRunsOfBlanksSeparate)
{
	roce_fault_rule r = parse_ok("\t dup \t qpn=17   dir=tx \n");

	EXPECT_EQ(r.action, ROCE_FAULT_DUP);
	EXPECT_EQ(r.qpn, 17u);
	EXPECT_EQ(r.dirs, ROCE_FAULT_TX);
}

TEST(FaultClass, EveryOpcodeKind)
{
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_SEND_ONLY), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_WRITE_MIDDLE), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_READ_REQ), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_FETCH_ADD), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_FLUSH), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_UC_WRITE_ONLY), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_UD_SEND_ONLY), ROCE_FAULT_REQUEST);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_ACK), ROCE_FAULT_ACK);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_ATOMIC_ACK), ROCE_FAULT_ACK);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_READ_RESP_FIRST), ROCE_FAULT_READ_RESP);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_RC_READ_RESP_ONLY), ROCE_FAULT_READ_RESP);
	EXPECT_EQ(roce_fault_class_of(ROCE_OP_CNP), ROCE_FAULT_CNP);
	EXPECT_EQ(roce_fault_class_of(0xff), 0u);	// unknown: in no class
}

TEST(FaultSelect, DirectionClassAndQpn)
{
	roce_fault_rule r = parse_ok("drop dir=tx class=ack qpn=42");

	EXPECT_TRUE(roce_fault_selects(&r, ROCE_FAULT_TX, ROCE_OP_RC_ACK, 42));
	EXPECT_FALSE(roce_fault_selects(&r, ROCE_FAULT_RX, ROCE_OP_RC_ACK, 42));
	EXPECT_FALSE(roce_fault_selects(&r, ROCE_FAULT_TX, ROCE_OP_RC_ACK, 43));
	EXPECT_FALSE(roce_fault_selects(&r, ROCE_FAULT_TX, ROCE_OP_RC_SEND_ONLY, 42));
	r = parse_ok("drop class=all");
	EXPECT_FALSE(roce_fault_selects(&r, ROCE_FAULT_RX, 0xff, 1));
}

TEST(FaultSelect, NaksOnlyWhereAResponderWouldSendThem)
{
	roce_fault_rule rnr = parse_ok("rnr_nak");
	roce_fault_rule acc = parse_ok("access_nak");
	auto rx = [](const roce_fault_rule &r, u8 op) {
		return roce_fault_selects(&r, ROCE_FAULT_RX, op, 5);
	};

	EXPECT_TRUE(rx(rnr, ROCE_OP_RC_SEND_ONLY));
	EXPECT_TRUE(rx(rnr, ROCE_OP_RC_SEND_FIRST));
	EXPECT_FALSE(rx(rnr, ROCE_OP_RC_SEND_MIDDLE));
	EXPECT_FALSE(rx(rnr, ROCE_OP_RC_WRITE_ONLY));
	EXPECT_FALSE(rx(rnr, ROCE_OP_UC_SEND_ONLY));	// UC has no NAKs
	EXPECT_FALSE(rx(rnr, ROCE_OP_UD_SEND_ONLY));
	EXPECT_FALSE(roce_fault_selects(&rnr, ROCE_FAULT_TX,
					ROCE_OP_RC_SEND_ONLY, 5));
	EXPECT_TRUE(rx(acc, ROCE_OP_RC_WRITE_FIRST));
	EXPECT_TRUE(rx(acc, ROCE_OP_RC_READ_REQ));
	EXPECT_TRUE(rx(acc, ROCE_OP_RC_CMP_SWAP));
	EXPECT_TRUE(rx(acc, ROCE_OP_RC_FLUSH));
	EXPECT_FALSE(rx(acc, ROCE_OP_RC_WRITE_LAST));
	EXPECT_FALSE(rx(acc, ROCE_OP_RC_SEND_ONLY));
}

TEST(FaultHits, EveryNthAfterTheFirstK)
{
	roce_fault_rule r = parse_ok("drop every=3 after=2");
	std::vector<u64> hit;

	for (u64 n = 0; n < 12; n++)
		if (roce_fault_hits(&r, n))
			hit.push_back(n);
	EXPECT_EQ(hit, (std::vector<u64>{ 4, 7, 10 }));
}

std::vector<bool> decisions(const std::string &text, unsigned n)
{
	roce_fault_rule r = parse_ok(text);
	std::vector<bool> d;

	for (u64 i = 0; i < n; i++)
		d.push_back(roce_fault_hits(&r, i));
	return d;
}

TEST(FaultHits, TheSeedDecidesAndOnlyTheSeed)
{
	auto a = decisions("drop prob=0.3 seed=7", 4000);

	EXPECT_EQ(a, decisions("drop prob=0.3 seed=7 dir=rx qpn=99", 4000));
	EXPECT_NE(a, decisions("drop prob=0.3 seed=8", 4000));
	EXPECT_EQ(a, decisions("drop prob=0.3 seed=0x7", 4000));	// 0x7 is 7
}

TEST(FaultHits, ProbabilityIsKept)
{
	for (const char *text : { "drop prob=0.01 seed=1", "drop prob=0.3 seed=2",
				  "drop prob=0.9 seed=3" }) {
		roce_fault_rule r = parse_ok(text);
		unsigned hits = 0, n = 100000;

		for (u64 i = 0; i < n; i++)
			hits += roce_fault_hits(&r, i);
		// Binomial: the mean is n*p with sd sqrt(n*p*(1-p)) <= 158;
		// 5 sd is a bound a correct generator never reaches.
		double want = double(n) * r.prob / ROCE_FAULT_PROB_ONE;
		EXPECT_NEAR(hits, want, 800) << text;
	}
	EXPECT_EQ(decisions("drop prob=0 seed=1", 1000),
		  std::vector<bool>(1000, false));
}

TEST(FaultHits, ProbabilityAppliesToTheEveryNthOnly)
{
	roce_fault_rule r = parse_ok("drop every=2 prob=0.5 seed=11");
	unsigned hits = 0;

	for (u64 n = 0; n < 20000; n++) {
		bool h = roce_fault_hits(&r, n);

		EXPECT_FALSE(h && n % 2 == 0) << n;
		hits += h;
	}
	EXPECT_NEAR(hits, 5000, 400);
}

TEST(FaultPick, InRangeAndSpread)
{
	roce_fault_rule r = parse_ok("corrupt seed=5");
	std::vector<unsigned> seen(37);

	for (u64 n = 0; n < 37000; n++) {
		u32 p = roce_fault_pick(&r, n, 37);

		ASSERT_LT(p, 37u);
		seen[p]++;
	}
	for (unsigned c : seen)
		EXPECT_GT(c, 700u);	// ~1000 each
	EXPECT_EQ(roce_fault_pick(&r, 3, 1), 0u);
}

TEST(FaultNames, EveryActionAndClass)
{
	for (unsigned a = 0; a < ROCE_FAULT_NUM_ACTIONS; a++) {
		const char *name = roce_fault_action_name(a);

		ASSERT_NE(name, nullptr);
		EXPECT_EQ(parse_ok(std::string(name) +
				   (a == ROCE_FAULT_DELAY ? " delay_us=1" : "")).action, a);
	}
	EXPECT_EQ(roce_fault_action_name(ROCE_FAULT_NUM_ACTIONS), nullptr);
	for (unsigned b = 0; b < 4; b++)
		EXPECT_EQ(parse_ok(std::string("drop class=") +
				   roce_fault_class_name(b)).classes, 1u << b);
	EXPECT_EQ(roce_fault_class_name(4), nullptr);
}

} // namespace

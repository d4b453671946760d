// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The PMA attributes, read back the way ib_core's sysfs reads them: at
// the bit offsets and widths of its port_pma_attr tables (drivers/
// infiniband/core/sysfs.c), which follow IBTA's layout.
#include <gtest/gtest.h>

#include <array>

#include "pma.h"

namespace {

using Data = std::array<u8, ROCE_PMA_DATA_LEN>;

// A field as sysfs's show_pma_counter() decodes it: big-endian, starting
// at byte offset_bits / 8.
u64 field(const Data &d, unsigned offset_bits, unsigned width)
{
	u64 v = 0;

	for (unsigned i = 0; i < width / 8; i++)
		v = v << 8 | d[offset_bits / 8 + i];
	return v;
}

Data get(u16 attr, const roce_pma_counts &c, u8 port = 1)
{
	Data d;

	d.fill(0xA5);	// every byte must be written
	EXPECT_TRUE(roce_pma_get(attr, port, &c, d.data()));
	return d;
}

roce_pma_counts some_counts()
{
	roce_pma_counts c{};

	c.xmit_bytes = 4000;
	c.rcv_bytes = 8003;		// not a multiple of 4: rounds down
	c.xmit_packets = 50;
	c.rcv_packets = 70;
	c.mcast_xmit_packets = 5;
	c.mcast_rcv_packets = 7;
	c.rcv_errors = 3;
	c.xmit_discards = 2;
	c.link_downed = 1;
	return c;
}

TEST(Pma, ClassPortInfoOffersTheExtendedCounters)
{
	const Data d = get(ROCE_PMA_ATTR_CLASS_PORT_INFO, some_counts());

	EXPECT_EQ(d[0], 1);			// BaseVersion
	EXPECT_EQ(d[1], 1);			// ClassVersion
	EXPECT_EQ(field(d, 16, 16), 1u << 9);	// CapabilityMask: EXT_WIDTH only
	for (size_t i = 4; i < d.size(); i++)
		EXPECT_EQ(d[i], 0) << i;
}

TEST(Pma, PortCountersAtSysfsOffsets)
{
	const Data d = get(ROCE_PMA_ATTR_PORT_COUNTERS, some_counts(), 1);

	EXPECT_EQ(d[1], 1);			// PortSelect echoed
	EXPECT_EQ(field(d, 32, 16), 0u);	// symbol_error
	EXPECT_EQ(field(d, 56, 8), 1u);		// link_downed
	EXPECT_EQ(field(d, 64, 16), 3u);	// port_rcv_errors
	EXPECT_EQ(field(d, 112, 16), 2u);	// port_xmit_discards
	EXPECT_EQ(field(d, 176, 16), 0u);	// VL15_dropped
	EXPECT_EQ(field(d, 192, 32), 1000u);	// port_xmit_data, 4-byte units
	EXPECT_EQ(field(d, 224, 32), 2000u);	// port_rcv_data
	EXPECT_EQ(field(d, 256, 32), 50u);	// port_xmit_packets
	EXPECT_EQ(field(d, 288, 32), 70u);	// port_rcv_packets
	EXPECT_EQ(field(d, 320, 32), 0u);	// port_xmit_wait
	for (size_t i = 44; i < d.size(); i++)
		EXPECT_EQ(d[i], 0) << i;
}

TEST(Pma, PortCountersStopAtAllOnes)
{
	roce_pma_counts c{};

	c.link_downed = 300;
	c.rcv_errors = 70000;
	c.xmit_discards = 1ull << 40;
	c.xmit_bytes = 4ull << 32;		// 2^32 words: one past 32 bits
	c.rcv_bytes = (4ull << 32) - 4;		// exactly all ones in words
	c.xmit_packets = ~0ull;
	c.rcv_packets = 1ull << 32;
	const Data d = get(ROCE_PMA_ATTR_PORT_COUNTERS, c);

	EXPECT_EQ(field(d, 56, 8), 0xFFu);
	EXPECT_EQ(field(d, 64, 16), 0xFFFFu);
	EXPECT_EQ(field(d, 112, 16), 0xFFFFu);
	EXPECT_EQ(field(d, 192, 32), 0xFFFFFFFFu);
	EXPECT_EQ(field(d, 224, 32), 0xFFFFFFFFu);
	EXPECT_EQ(field(d, 256, 32), 0xFFFFFFFFu);
	EXPECT_EQ(field(d, 288, 32), 0xFFFFFFFFu);
}

TEST(Pma, ExtendedCountersAtSysfsOffsets)
{
	const Data d = get(ROCE_PMA_ATTR_PORT_COUNTERS_EXT, some_counts(), 1);

	EXPECT_EQ(d[1], 1);
	EXPECT_EQ(field(d, 64, 64), 1000u);	// port_xmit_data
	EXPECT_EQ(field(d, 128, 64), 2000u);	// port_rcv_data
	EXPECT_EQ(field(d, 192, 64), 50u);	// port_xmit_packets
	EXPECT_EQ(field(d, 256, 64), 70u);	// port_rcv_packets
	EXPECT_EQ(field(d, 320, 64), 45u);	// unicast_xmit_packets
	EXPECT_EQ(field(d, 384, 64), 63u);	// unicast_rcv_packets
	EXPECT_EQ(field(d, 448, 64), 5u);	// multicast_xmit_packets
	EXPECT_EQ(field(d, 512, 64), 7u);	// multicast_rcv_packets
	for (size_t i = 72; i < d.size(); i++)
		EXPECT_EQ(d[i], 0) << i;
}

TEST(Pma, ExtendedCountersDoNotWrapOrGoNegative)
{
	roce_pma_counts c{};

	c.xmit_bytes = ~0ull;
	c.xmit_packets = 3;
	c.mcast_xmit_packets = 5;	// read a moment apart: may exceed the total
	const Data d = get(ROCE_PMA_ATTR_PORT_COUNTERS_EXT, c);

	EXPECT_EQ(field(d, 64, 64), ~0ull / 4);
	EXPECT_EQ(field(d, 320, 64), 0u);
}

TEST(Pma, OtherAttributesAreNotAnswered)
{
	const roce_pma_counts c = some_counts();
	Data d;

	d.fill(0xA5);
	for (u16 attr : {0x0000, 0x0010, 0x0011, 0x001E, 0xFFFF})
		EXPECT_FALSE(roce_pma_get(attr, 1, &c, d.data())) << attr;
	for (u8 b : d)
		EXPECT_EQ(b, 0xA5);	// and nothing written
}

}  // namespace

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PMA attribute encoding (pma.h).  Byte offsets are IBTA vol 1's
 * (chapter 16.1, PortCounters and PortCountersExtended), the ones
 * ib_core's sysfs reads them at.
 */
#include "pma.h"

static u64 saturate(u64 v, u64 max)
{
	return v < max ? v : max;
}

static void class_port_info(u8 *out)
{
	out[0] = 1;			/* BaseVersion */
	out[1] = 1;			/* ClassVersion */
	roce_put_be16(out + 2, ROCE_PMA_CAP_EXT_WIDTH);
}

/* No symbol, link-recovery, relay, constraint, integrity, overrun or
 * VL15 errors exist on a RoCE port: those stay 0, as on ConnectX.
 * PortXmitWait stays 0 too: IBTA counts it in sample ticks this port
 * has no clock for (the time sending was held back is tx_pause_us).
 */
static void port_counters(u8 port_select, const struct roce_pma_counts *c,
			  u8 *out)
{
	out[1] = port_select;
	out[7] = (u8)saturate(c->link_downed, 0xFF);
	roce_put_be16(out + 8, (u16)saturate(c->rcv_errors, 0xFFFF));
	roce_put_be16(out + 14, (u16)saturate(c->xmit_discards, 0xFFFF));
	roce_put_be32(out + 24, (u32)saturate(c->xmit_bytes / 4, 0xFFFFFFFFu));
	roce_put_be32(out + 28, (u32)saturate(c->rcv_bytes / 4, 0xFFFFFFFFu));
	roce_put_be32(out + 32, (u32)saturate(c->xmit_packets, 0xFFFFFFFFu));
	roce_put_be32(out + 36, (u32)saturate(c->rcv_packets, 0xFFFFFFFFu));
}

static u64 unicast(u64 all, u64 mcast)
{
	return all > mcast ? all - mcast : 0;
}

static void port_counters_ext(u8 port_select, const struct roce_pma_counts *c,
			      u8 *out)
{
	out[1] = port_select;
	roce_put_be64(out + 8, c->xmit_bytes / 4);
	roce_put_be64(out + 16, c->rcv_bytes / 4);
	roce_put_be64(out + 24, c->xmit_packets);
	roce_put_be64(out + 32, c->rcv_packets);
	roce_put_be64(out + 40, unicast(c->xmit_packets, c->mcast_xmit_packets));
	roce_put_be64(out + 48, unicast(c->rcv_packets, c->mcast_rcv_packets));
	roce_put_be64(out + 56, c->mcast_xmit_packets);
	roce_put_be64(out + 64, c->mcast_rcv_packets);
}

bool roce_pma_get(u16 attr_id, u8 port_select,
		  const struct roce_pma_counts *c, u8 *out)
{
	switch (attr_id) {
	case ROCE_PMA_ATTR_CLASS_PORT_INFO:
		memset(out, 0, ROCE_PMA_DATA_LEN);
		class_port_info(out);
		return true;
	case ROCE_PMA_ATTR_PORT_COUNTERS:
		memset(out, 0, ROCE_PMA_DATA_LEN);
		port_counters(port_select, c, out);
		return true;
	case ROCE_PMA_ATTR_PORT_COUNTERS_EXT:
		memset(out, 0, ROCE_PMA_DATA_LEN);
		port_counters_ext(port_select, c, out);
		return true;
	default:
		return false;
	}
}

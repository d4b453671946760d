/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Performance Management attributes a RoCE port answers (IBTA vol 1,
 * 16.1.3-16.1.4): ClassPortInfo, PortCounters and PortCountersExtended,
 * encoded from the device's counters.  ib_core reads them through the
 * driver's process_mad for /sys/class/infiniband/DEV/ports/N/counters/,
 * and a PMA GET arriving on QP1 gets the same answer.
 */
#ifndef SROCE_PROTO_PMA_H
#define SROCE_PROTO_PMA_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_PMA_ATTR_CLASS_PORT_INFO	0x0001
#define ROCE_PMA_ATTR_PORT_COUNTERS	0x0012
#define ROCE_PMA_ATTR_PORT_COUNTERS_EXT	0x001D

/* A PMA MAD's attribute data: the 192 bytes after its 40 reserved ones. */
#define ROCE_PMA_DATA_LEN		192
/* ClassPortInfo.CapabilityMask: PortCountersExtended with the unicast
 * and multicast packet counts (what sysfs calls the "ext" table).
 */
#define ROCE_PMA_CAP_EXT_WIDTH		(1u << 9)

/* What the device counted since it was created. */
struct roce_pma_counts {
	u64 xmit_bytes;		/* RoCE packets, BTH to ICRC */
	u64 rcv_bytes;
	u64 xmit_packets;
	u64 rcv_packets;
	u64 mcast_xmit_packets;	/* of the packets above */
	u64 mcast_rcv_packets;
	u64 rcv_errors;		/* malformed or failing their ICRC */
	u64 xmit_discards;	/* given up on: the port could not send them */
	u64 link_downed;	/* times the port went from ACTIVE to DOWN */
};

/*
 * Writes attribute @attr_id for @port_select into @out (ROCE_PMA_DATA_LEN
 * bytes, all written).  PortCounters' fields are as narrow as IBTA made
 * them and stop at all ones instead of wrapping (16.1.3.5); data is in
 * units of 4 bytes, as IBTA counts it.  Returns false (and writes
 * nothing) for an attribute this port does not answer.
 */
bool roce_pma_get(u16 attr_id, u8 port_select,
		  const struct roce_pma_counts *c, u8 *out);

ROCE_EXTERN_C_END

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The port's Performance Management agent: ib_core asks it (process_mad)
 * for the standard counters under ports/1/counters/, and a PMA GET that
 * arrives on QP1 gets the same answer, as from a ConnectX port.  The
 * encoding is proto's (kernel/proto/pma.c); here the counters are read.
 */
#include <rdma/ib_mad.h>

#include "sroce.h"
#include "proto/pma.h"

static void pma_counts(struct sroce_dev *sdev, struct roce_pma_counts *c)
{
#define v(cnt) sroce_counter_read(sdev, cnt)
	*c = (struct roce_pma_counts) {
		.xmit_bytes = v(SROCE_CNT_TX_BYTES),
		.rcv_bytes = v(SROCE_CNT_RX_BYTES),
		.xmit_packets = v(SROCE_CNT_TX_PACKETS),
		.rcv_packets = v(SROCE_CNT_RX_PACKETS),
		.mcast_xmit_packets = v(SROCE_CNT_TX_MCAST_PACKETS),
		.mcast_rcv_packets = v(SROCE_CNT_RX_MCAST_PACKETS),
		.rcv_errors = v(SROCE_CNT_RX_MALFORMED) + v(SROCE_CNT_ICRC_ERRORS),
		.xmit_discards = v(SROCE_CNT_TX_ERRORS),
		.link_downed = v(SROCE_CNT_LINK_DOWNED),
	};
#undef v
}

/* ops.process_mad.  Anything but a PMA GET is not ours: IB_MAD_RESULT_SUCCESS
 * without REPLY passes it on to the MAD agents (the CM's on QP1) untouched.
 */
int sroce_process_mad(struct ib_device *ib, int flags, u32 port_num,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	const struct ib_mad_hdr *hdr = &in->mad_hdr;
	struct roce_pma_counts c;

	BUILD_BUG_ON(sizeof(out->data) < 40 + ROCE_PMA_DATA_LEN);
	if (port_num != SROCE_PORT)
		return IB_MAD_RESULT_FAILURE;
	if (hdr->mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    hdr->method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;

	memset(out, 0, sizeof(*out));
	out->mad_hdr = *hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	pma_counts(to_sdev(ib), &c);
	/* PortSelect: the first byte of the attribute after the reserved 40. */
	if (!roce_pma_get(be16_to_cpu(hdr->attr_id), in->data[41], &c,
			  out->data + 40))
		out->mad_hdr.status =
			cpu_to_be16(IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

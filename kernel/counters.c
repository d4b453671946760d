// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Port counters, shown by `rdma statistic show link DEV/1` and in sysfs
 * under ports/1/hw_counters.  The data path bumps per-device atomics with
 * sroce_count(); here they only get names and are read out.  The same
 * atomics answer the standard PMA counters (ports/1/counters, pma.c).
 */
#include "sroce.h"

static const struct rdma_stat_desc sroce_stat_descs[] = {
	[SROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SROCE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[SROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SROCE_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[SROCE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[SROCE_CNT_TIMEOUTS] = { .name = "timeouts" },
	[SROCE_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[SROCE_CNT_RNR_NAK_RCVD] = { .name = "rnr_nak_rcvd" },
	[SROCE_CNT_SEQ_ERR_SENT] = { .name = "seq_err_sent" },
	[SROCE_CNT_SEQ_ERR_RCVD] = { .name = "seq_err_rcvd" },
	[SROCE_CNT_ICRC_ERRORS] = { .name = "rx_icrc_errors" },
	[SROCE_CNT_DUP_REQUESTS] = { .name = "dup_requests" },
	[SROCE_CNT_RX_MALFORMED] = { .name = "rx_malformed" },
	[SROCE_CNT_RX_NO_QP] = { .name = "rx_no_qp" },
	[SROCE_CNT_RX_DROPPED] = { .name = "rx_dropped" },
	[SROCE_CNT_TX_ERRORS] = { .name = "tx_errors" },
	[SROCE_CNT_REMOTE_ACCESS_ERR] = { .name = "remote_access_errors" },
	[SROCE_CNT_COMPLETION_ERRORS] = { .name = "completion_errors" },
	[SROCE_CNT_CNP_SENT] = { .name = "cnp_sent" },
	[SROCE_CNT_CNP_RCVD] = { .name = "cnp_rcvd" },
	[SROCE_CNT_ECN_MARKED_RCVD] = { .name = "ecn_marked_rcvd" },
	[SROCE_CNT_TX_REFUSED] = { .name = "tx_refused" },
	[SROCE_CNT_TX_PAUSE_US] = { .name = "tx_pause_us" },
	[SROCE_CNT_TX_RESENT] = { .name = "tx_resent" },
	[SROCE_CNT_TX_QUEUE_STOPPED] = { .name = "tx_queue_stopped" },
	[SROCE_CNT_TX_MCAST_PACKETS] = { .name = "tx_multicast_packets" },
	[SROCE_CNT_RX_MCAST_PACKETS] = { .name = "rx_multicast_packets" },
	[SROCE_CNT_LINK_DOWNED] = { .name = "link_downed" },
	[SROCE_CNT_TX_ZCOPY_BYTES] = { .name = "tx_zero_copy_bytes" },
	[SROCE_CNT_TX_COPIED_BYTES] = { .name = "tx_copied_bytes" },
	[SROCE_CNT_RX_STEERED] = { .name = "rx_steered" },
	[SROCE_CNT_RX_HELD_FOR_READ] = { .name = "rx_held_for_read" },
	[SROCE_CNT_SQ_DOORBELLS] = { .name = "sq_doorbells" },
	[SROCE_CNT_SQ_POLLED] = { .name = "sq_polled" },
	[SROCE_CNT_XRC_BAD_SRQ] = { .name = "rx_xrc_bad_srq" },
	[SROCE_CNT_ODP_FAULTS] = { .name = "odp_page_faults" },
	[SROCE_CNT_ODP_FAULT_ERRORS] = { .name = "odp_fault_errors" },
	[SROCE_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
	[SROCE_CNT_FAULT_DROP] = { .name = "fault_drop" },
	[SROCE_CNT_FAULT_DELAY] = { .name = "fault_delay" },
	[SROCE_CNT_FAULT_DUP] = { .name = "fault_dup" },
	[SROCE_CNT_FAULT_CORRUPT] = { .name = "fault_corrupt" },
	[SROCE_CNT_FAULT_RNR_NAK] = { .name = "fault_rnr_nak" },
	[SROCE_CNT_FAULT_ACCESS_NAK] = { .name = "fault_access_nak" },
	[SROCE_CNT_FAULT_LINK_FLAPS] = { .name = "fault_link_flaps" },
	[SROCE_CNT_FAULT_LINK_DOWN] = { .name = "fault_link_down_drop" },
};

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ib, u32 port)
{
	int i;

	/* One name per counter: a new enum entry without one fails here... */
	BUILD_BUG_ON(ARRAY_SIZE(sroce_stat_descs) != SROCE_CNT_NUM);
	/* ...unless it is not the last, which leaves a hole instead. */
	for (i = 0; i < SROCE_CNT_NUM; i++)
		if (WARN_ON_ONCE(!sroce_stat_descs[i].name))
			return NULL;

	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * The sum over every CPU.  A CPU adding meanwhile is counted or not; a
 * u64 is read whole on the 64-bit machines sroce builds for.
 */
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->counters, cpu)->v[c]);
	return sum;
}

int sroce_get_hw_stats(struct ib_device *ib, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ib);
	int i;

	for (i = 0; i < SROCE_CNT_NUM; i++)
		stats->value[i] = sroce_counter_read(sdev, i);
	return SROCE_CNT_NUM;
}

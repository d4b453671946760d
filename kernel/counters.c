// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Port counters, shown by `rdma statistic show link DEV/1` and in sysfs
 * under ports/1/hw_counters.  The data path bumps per-device atomics with
 * sroce_count(); here they only get names and are read out.  The same
 * atomics answer the standard PMA counters (ports/1/counters, pma.c).
 */
#include "sroce.h"

#define SROCE_STAT(cnt, str) [SROCE_CNT_##cnt] = { .name = str }

static const struct rdma_stat_desc sroce_stat_descs[] = {
	SROCE_STAT(TX_PACKETS,		"tx_packets"),
	SROCE_STAT(TX_BYTES,		"tx_bytes"),
	SROCE_STAT(RX_PACKETS,		"rx_packets"),
	SROCE_STAT(RX_BYTES,		"rx_bytes"),
	SROCE_STAT(RETRANSMITS,		"retransmits"),
	SROCE_STAT(TIMEOUTS,		"timeouts"),
	SROCE_STAT(RNR_NAK_SENT,	"rnr_nak_sent"),
	SROCE_STAT(RNR_NAK_RCVD,	"rnr_nak_rcvd"),
	SROCE_STAT(SEQ_ERR_SENT,	"seq_err_sent"),
	SROCE_STAT(SEQ_ERR_RCVD,	"seq_err_rcvd"),
	SROCE_STAT(ICRC_ERRORS,		"rx_icrc_errors"),
	SROCE_STAT(DUP_REQUESTS,	"dup_requests"),
	SROCE_STAT(RX_MALFORMED,	"rx_malformed"),
	SROCE_STAT(RX_NO_QP,		"rx_no_qp"),
	SROCE_STAT(RX_DROPPED,		"rx_dropped"),
	SROCE_STAT(TX_ERRORS,		"tx_errors"),
	SROCE_STAT(REMOTE_ACCESS_ERR,	"remote_access_errors"),
	SROCE_STAT(COMPLETION_ERRORS,	"completion_errors"),
	SROCE_STAT(CNP_SENT,		"cnp_sent"),
	SROCE_STAT(CNP_RCVD,		"cnp_rcvd"),
	SROCE_STAT(ECN_MARKED_RCVD,	"ecn_marked_rcvd"),
	SROCE_STAT(TX_REFUSED,		"tx_refused"),
	SROCE_STAT(TX_PAUSE_US,		"tx_pause_us"),
	SROCE_STAT(TX_RESENT,		"tx_resent"),
	SROCE_STAT(TX_QUEUE_STOPPED,	"tx_queue_stopped"),
	SROCE_STAT(TX_MCAST_PACKETS,	"tx_multicast_packets"),
	SROCE_STAT(RX_MCAST_PACKETS,	"rx_multicast_packets"),
	SROCE_STAT(LINK_DOWNED,		"link_downed"),
	SROCE_STAT(TX_ZCOPY_BYTES,	"tx_zero_copy_bytes"),
	SROCE_STAT(TX_COPIED_BYTES,	"tx_copied_bytes"),
	SROCE_STAT(RX_STEERED,		"rx_steered"),
	SROCE_STAT(SQ_DOORBELLS,	"sq_doorbells"),
	SROCE_STAT(SQ_POLLED,		"sq_polled"),
	SROCE_STAT(XRC_BAD_SRQ,		"rx_xrc_bad_srq"),
	SROCE_STAT(ODP_FAULTS,		"odp_page_faults"),
	SROCE_STAT(ODP_FAULT_ERRORS,	"odp_fault_errors"),
	SROCE_STAT(ODP_INVALIDATIONS,	"odp_invalidations"),
	SROCE_STAT(FAULT_DROP,		"fault_drop"),
	SROCE_STAT(FAULT_DELAY,		"fault_delay"),
	SROCE_STAT(FAULT_DUP,		"fault_dup"),
	SROCE_STAT(FAULT_CORRUPT,	"fault_corrupt"),
	SROCE_STAT(FAULT_RNR_NAK,	"fault_rnr_nak"),
	SROCE_STAT(FAULT_ACCESS_NAK,	"fault_access_nak"),
	SROCE_STAT(FAULT_LINK_FLAPS,	"fault_link_flaps"),
	SROCE_STAT(FAULT_LINK_DOWN,	"fault_link_down_drop"),
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

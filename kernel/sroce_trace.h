/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tracepoints (system "sroce").  cc.c defines CREATE_TRACE_POINTS.
 *
 *   echo 1 > /sys/kernel/tracing/events/sroce/rate_change/enable
 *
 * rate_change fires whenever the rate a QP's pacer enforces changes,
 * with what changed it, so a DCQCN run can be followed cut by cut;
 * retrans_timeout at every local ACK timeout, with the back-off.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>

/*
 * Why a QP's rate changed.  The DCQCN ones are the reaction point's
 * events (PUSHBACK: a cut for a local refusal instead of a CNP);
 * USER_LIMIT is IB_QP_RATE_LIMIT, CONFIG a cc/ setting.
 */
#define SROCE_RATE_REASONS(X)						\
	X(SROCE_RATE_CNP, "cnp_cut")					\
	X(SROCE_RATE_PUSHBACK, "local_pushback")			\
	X(SROCE_RATE_TIMER, "rate_timer")				\
	X(SROCE_RATE_BYTES, "byte_counter")				\
	X(SROCE_RATE_USER_LIMIT, "user_limit")				\
	X(SROCE_RATE_CONFIG, "config")

#define SROCE_STAGES(X)							\
	X(ROCE_DCQCN_UNLIMITED, "unlimited")				\
	X(ROCE_DCQCN_FAST_RECOVERY, "fast_recovery")			\
	X(ROCE_DCQCN_ADDITIVE, "additive")				\
	X(ROCE_DCQCN_HYPER, "hyper")

#ifndef SROCE_RATE_REASON_ENUM
#define SROCE_RATE_REASON_ENUM
#define SROCE_ENUM_ENTRY(e, s) e,
enum sroce_rate_reason { SROCE_RATE_REASONS(SROCE_ENUM_ENTRY) };
#undef SROCE_ENUM_ENTRY
#endif

/* Symbolic names in the trace output, also for user-space parsers. */
#undef SROCE_EXPORT_ENUM
#define SROCE_EXPORT_ENUM(e, s) TRACE_DEFINE_ENUM(e);
SROCE_RATE_REASONS(SROCE_EXPORT_ENUM)
SROCE_STAGES(SROCE_EXPORT_ENUM)
#undef SROCE_SYMBOL
#define SROCE_SYMBOL(e, s) { e, s },

TRACE_EVENT(rate_change,
	TP_PROTO(const char *dev, u32 qpn, u32 old_kbps, u32 new_kbps,
		 int reason, int stage, u32 alpha),
	TP_ARGS(dev, qpn, old_kbps, new_kbps, reason, stage, alpha),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, old_kbps)
		__field(u32, new_kbps)
		__field(int, reason)
		__field(int, stage)
		__field(u32, alpha)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->old_kbps = old_kbps;
		__entry->new_kbps = new_kbps;
		__entry->reason = reason;
		__entry->stage = stage;
		__entry->alpha = alpha;
	),
	/* Rates in kbit/s, 0 = unpaced; alpha in Q20 (1048576 = 1.0). */
	TP_printk("dev=%s qpn=%u old_kbps=%u new_kbps=%u reason=%s stage=%s alpha=%u",
		  __entry->dev, __entry->qpn, __entry->old_kbps,
		  __entry->new_kbps,
		  __print_symbolic(__entry->reason, SROCE_RATE_REASONS(SROCE_SYMBOL)
				   { -1, NULL }),
		  __print_symbolic(__entry->stage, SROCE_STAGES(SROCE_SYMBOL)
				   { -1, NULL }),
		  __entry->alpha)
);

/*
 * An RC QP's local ACK timer expired with @psn (comp_psn) unacknowledged:
 * @in_row such expiries since the last progress, @retry_left retries
 * before this one was spent (0: this one fails the QP), @next_ns the
 * wait the timer uses from now on (the back-off, proto/timers.h).
 */
TRACE_EVENT(retrans_timeout,
	TP_PROTO(const char *dev, u32 qpn, u32 psn, u8 in_row, u8 retry_left,
		 u64 next_ns),
	TP_ARGS(dev, qpn, psn, in_row, retry_left, next_ns),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, in_row)
		__field(u8, retry_left)
		__field(u64, next_ns)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->in_row = in_row;
		__entry->retry_left = retry_left;
		__entry->next_ns = next_ns;
	),
	TP_printk("dev=%s qpn=%u psn=%u in_row=%u retry_left=%u next_ns=%llu",
		  __entry->dev, __entry->qpn, __entry->psn, __entry->in_row,
		  __entry->retry_left, __entry->next_ns)
);

#endif /* SROCE_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/kernel. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for test_transport.py::test_ud_datagrams_arrive_whole_and_in_order:
 * two UD QPs on one device send each other numbered datagrams at once,
 * each from its own thread, as UCX's UD transport does between two
 * workers of one process (its gtest runs that way on one device).  UCX's
 * UD layer drops any packet whose sequence number is not the next one and
 * resends, so a datagram a device loses, duplicates or reorders costs it a
 * resend round; UD itself promises none of that, but ConnectX and rxe
 * deliver datagrams of one QP to another whole and in order when a
 * receive is posted for each.
 *
 *   ud_order DEV GID_INDEX COUNT
 *
 * Each side sends COUNT datagrams, their sizes cycling through inline and
 * gathered ones up to the port's MTU, and never has more in flight than
 * the peer has receives posted, so no datagram may be dropped for want of
 * a receive.  Each received datagram is checked: its number (the next
 * one), its length, its source QP, the addresses in front of it and every
 * byte.  A side that makes no
 * progress for 10 s ends the run.  Plain verbs, so it runs on rxe too.
 */
#include "rc_loopback.hpp"

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <vector>

namespace {

using namespace rc_loopback;

constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kGrh = 40;		/* a UD receive starts with the GRH */
constexpr int kSendDepth = 64;
constexpr int kRecvDepth = 256;
constexpr int kInline = 128;		/* asked for; the QP may give less */
constexpr auto kStall = std::chrono::seconds(10);

/* The payload sizes, in turn: header-sized, inline, gathered, MTU-sized. */
uint32_t size_of(uint64_t seq, uint32_t max_payload)
{
	static const uint32_t sizes[] = {8, 60, 120, 200, 512, 4096};
	return std::min(sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))], max_payload);
}

/* Byte @i of datagram @seq (the first 8 bytes are @seq itself). */
uint8_t pattern(uint64_t seq, uint32_t i)
{
	return static_cast<uint8_t>(seq * 7 + i * 13 + 1);
}

struct Side {
	const char *name;
	ibv_qp *qp = nullptr;
	ibv_cq *send_cq = nullptr, *recv_cq = nullptr;
	ibv_ah *ah = nullptr;
	uint8_t *send_buf = nullptr, *recv_buf = nullptr;	/* in the MR */
	uint32_t max_inline = 0;
	std::atomic<uint64_t> consumed{0};	/* receives taken and posted again */
	/* What this side saw, read by main() after the threads end. */
	uint64_t received = 0, sent = 0, bad = 0;
	uint64_t next = 0;	/* the number the next datagram should carry */
	std::string described;	/* the first three wrong ones */
};

/* Bytes per buffer slot: the GRH and the largest RoCE MTU. */
constexpr uint32_t kSlot = kGrh + 4096;

struct Run {
	Setup s;
	uint64_t count;
	uint32_t max_payload;	/* the port's active MTU */
};

void post_recv_slot(Run &r, Side &me, uint64_t slot)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(me.recv_buf + slot * kSlot), kSlot,
		    r.s.mr->lkey};
	ibv_recv_wr wr{}, *bad;
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int err = ibv_post_recv(me.qp, &wr, &bad))
		die("ibv_post_recv", err);
}

/* Counts a wrong datagram; the first three are described. */
void note_bad(Side &me, const std::string &what)
{
	if (me.bad++ < 3)
		me.described += (me.described.empty() ? "" : "; ") + what;
}

/*
 * The 40 bytes before a UD payload: a GRH, or for RoCE v2 over IPv4 the
 * IPv4 header in its last 20 bytes.  UCX drops a datagram whose
 * destination there is none of its GIDs (uct_ud_iface_check_grh), so a
 * device that writes it wrong loses datagrams without counting them.
 * Both ends are this device's GID here.
 */
bool addressed_here(const Run &r, const uint8_t *grh)
{
	static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const uint8_t *gid = r.s.gid.raw;
	if (!std::memcmp(gid, v4_mapped, sizeof(v4_mapped)))
		/* IPv4 source and destination: the header's bytes 12-19. */
		return !std::memcmp(grh + 32, gid + 12, 4) && !std::memcmp(grh + 36, gid + 12, 4);
	/* IPv6 or a GRH: the source GID at 8, the destination at 24. */
	return !std::memcmp(grh + 8, gid, 16) && !std::memcmp(grh + 24, gid, 16);
}

/*
 * Checks receive @wc: the next datagram, whole.  A gap, a late or a
 * repeated datagram counts once, and the count goes on from the number
 * it carried, so one fault is one wrong datagram.
 */
void check_datagram(Run &r, Side &me, const Side &peer, const ibv_wc &wc)
{
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
		note_bad(me, "a receive after datagram " + std::to_string(me.next) +
				     " completed with status " + ibv_wc_status_str(wc.status));
		return;
	}
	const uint8_t *grh = me.recv_buf + wc.wr_id * kSlot;
	const uint8_t *p = grh + kGrh;
	uint64_t seq;
	std::memcpy(&seq, p, sizeof(seq));
	const uint32_t len = size_of(seq, r.max_payload);
	std::string what;
	if (seq > me.next)
		what = std::to_string(seq - me.next) + " datagrams missing before " +
		       std::to_string(seq);
	else if (seq < me.next)
		what = "datagram " + std::to_string(seq) + " arrived again or late, after " +
		       std::to_string(me.next - 1);
	else if (wc.byte_len != kGrh + len)
		what = "datagram " + std::to_string(seq) + " is " +
		       std::to_string(wc.byte_len - kGrh) + " bytes, not " + std::to_string(len);
	else if (wc.src_qp != peer.qp->qp_num)
		what = "datagram " + std::to_string(seq) + " names source QP " +
		       std::to_string(wc.src_qp);
	else if (!(wc.wc_flags & IBV_WC_GRH) || !addressed_here(r, grh))
		what = "datagram " + std::to_string(seq) + " has no GRH naming this GID";
	for (uint32_t i = sizeof(seq); what.empty() && i < len; i++)
		if (p[i] != pattern(seq, i))
			what = "datagram " + std::to_string(seq) + " differs at byte " +
			       std::to_string(i);
	if (!what.empty())
		note_bad(me, what);
	if (seq >= me.next && seq < r.count)
		me.next = seq + 1;
}

/* Takes what the receive CQ holds, checks it and posts each receive again. */
bool drain_receives(Run &r, Side &me, const Side &peer)
{
	ibv_wc wc[16];
	const int n = ibv_poll_cq(me.recv_cq, 16, wc);
	if (n < 0)
		die("ibv_poll_cq", EIO);
	for (int i = 0; i < n; i++) {
		check_datagram(r, me, peer, wc[i]);
		if (wc[i].wr_id >= kRecvDepth)
			die("a receive completion with a wr_id never posted", EIO);
		post_recv_slot(r, me, wc[i].wr_id);
		me.received++;
	}
	/* Posted again before the count says so: the peer never sends into
	 * an empty receive queue. */
	me.consumed.store(me.received, std::memory_order_release);
	return n > 0;
}

/* Send completions come in order: the oldest outstanding send's slot. */
bool drain_sends(Side &me, uint64_t &completed)
{
	ibv_wc wc[16];
	const int n = ibv_poll_cq(me.send_cq, 16, wc);
	if (n < 0)
		die("ibv_poll_cq", EIO);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			note_bad(me, "send " + std::to_string(wc[i].wr_id) + " completed with " +
					     ibv_wc_status_str(wc[i].status));
		else if (wc[i].wr_id != completed)
			note_bad(me, "send " + std::to_string(wc[i].wr_id) +
					     " completed where " + std::to_string(completed) +
					     " was next");
		completed++;
	}
	return n > 0;
}

void post_datagram(Run &r, Side &me, const Side &peer)
{
	const uint64_t seq = me.sent;
	const uint32_t len = size_of(seq, r.max_payload);
	uint8_t *p = me.send_buf + (seq % kSendDepth) * kSlot;
	std::memcpy(p, &seq, sizeof(seq));
	for (uint32_t i = sizeof(seq); i < len; i++)
		p[i] = pattern(seq, i);
	ibv_sge sge{reinterpret_cast<uintptr_t>(p), len, r.s.mr->lkey};
	ibv_send_wr wr{}, *bad;
	wr.wr_id = seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= me.max_inline ? IBV_SEND_INLINE : 0);
	wr.wr.ud.ah = peer.ah;
	wr.wr.ud.remote_qpn = peer.qp->qp_num;
	wr.wr.ud.remote_qkey = kQkey;
	if (int err = ibv_post_send(me.qp, &wr, &bad))
		die("ibv_post_send", err);
	me.sent++;
}

/* One side's thread: sends its datagrams and takes the peer's. */
void run_side(Run &r, Side &me, Side &peer)
{
	uint64_t completed = 0;
	auto last = std::chrono::steady_clock::now();

	while (me.received < r.count || completed < r.count) {
		bool moved = drain_receives(r, me, peer);
		moved |= drain_sends(me, completed);
		const uint64_t room = peer.consumed.load(std::memory_order_acquire) + kRecvDepth;
		while (me.sent < r.count && me.sent - completed < kSendDepth && me.sent < room) {
			post_datagram(r, me, peer);
			moved = true;
		}
		const auto now = std::chrono::steady_clock::now();
		if (moved)
			last = now;
		else if (now - last > kStall)
			return;	/* main() reports how far it got */
	}
}

void make_side(Run &r, Side &me, size_t offset)
{
	me.send_cq = ibv_create_cq(r.s.ctx, kSendDepth, nullptr, nullptr, 0);
	me.recv_cq = ibv_create_cq(r.s.ctx, kRecvDepth, nullptr, nullptr, 0);
	if (!me.send_cq || !me.recv_cq)
		die("ibv_create_cq", errno);
	ibv_qp_init_attr init{};
	init.send_cq = me.send_cq;
	init.recv_cq = me.recv_cq;
	init.cap.max_send_wr = kSendDepth;
	init.cap.max_recv_wr = kRecvDepth;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = kInline;
	init.qp_type = IBV_QPT_UD;
	me.qp = ibv_create_qp(r.s.pd, &init);
	if (!me.qp)
		die("ibv_create_qp (UD)", errno);
	me.max_inline = init.cap.max_inline_data;

	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = kQkey;
	if (int err = ibv_modify_qp(me.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						       IBV_QP_PORT | IBV_QP_QKEY))
		die("UD to INIT", err);
	a.qp_state = IBV_QPS_RTR;
	if (int err = ibv_modify_qp(me.qp, &a, IBV_QP_STATE))
		die("UD to RTR", err);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (int err = ibv_modify_qp(me.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD to RTS", err);

	ibv_ah_attr ah{};
	ah.is_global = 1;
	ah.port_num = 1;
	ah.grh.dgid = r.s.gid;
	ah.grh.sgid_index = r.s.gid_index;
	ah.grh.hop_limit = 64;
	me.ah = ibv_create_ah(r.s.pd, &ah);
	if (!me.ah)
		die("ibv_create_ah", errno);

	me.send_buf = mem(r.s, offset);
	me.recv_buf = mem(r.s, offset + kSendDepth * kSlot);
	for (int i = 0; i < kRecvDepth; i++)
		post_recv_slot(r, me, i);
}

/* The port's active MTU in bytes: the largest UD payload. */
uint32_t port_mtu(ibv_context *ctx)
{
	ibv_port_attr pa{};
	if (int err = ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port", err);
	return 128u << pa.active_mtu;
}

void report(const Run &r, const Side &me, const Side &peer)
{
	check(me.received == r.count && !me.bad,
	      std::string(me.name) + " received " + std::to_string(me.received) + " of " +
		      std::to_string(r.count) + " datagrams from " + peer.name +
		      ", each whole and in order" +
		      (me.bad ? " (" + std::to_string(me.bad) + " wrong: " +
					me.described + ")"
			      : "") +
		      (me.received < r.count ? std::string(" (") + peer.name + " had sent " +
						       std::to_string(peer.sent) + ")"
					     : std::string()));
}

} // namespace

int main(int argc, char **argv)
{
	const long long count = argc == 4 ? std::atoll(argv[3]) : 0;
	if (count <= 0) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX COUNT\n", argv[0]);
		return 2;
	}
	tool_name = "ud_order";
	Run r{};
	r.count = count;
	const size_t per_side = static_cast<size_t>(kSendDepth + kRecvDepth) * kSlot;
	r.s = open_setup(argv[1], std::atoi(argv[2]), 2 * per_side, IBV_ACCESS_LOCAL_WRITE);
	r.max_payload = port_mtu(r.s.ctx);

	Side a, b;
	a.name = "A";
	b.name = "B";
	make_side(r, a, 0);
	make_side(r, b, per_side);

	const auto start = std::chrono::steady_clock::now();
	std::thread ta([&] { run_side(r, a, b); });
	std::thread tb([&] { run_side(r, b, a); });
	ta.join();
	tb.join();
	const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
				    .count();

	std::printf("%lld datagrams each way, up to %u bytes (inline up to %u), in %.2f s\n",
		    count, r.max_payload, a.max_inline, secs);
	report(r, a, b);
	report(r, b, a);
	return finish();
}

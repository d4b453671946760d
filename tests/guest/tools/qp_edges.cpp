// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for tests/guest/test_qp_edges.py: the edges of a QP's life
 * that well-behaved libraries never reach.  A process that writes bogus
 * indices straight into the rings it shares with the kernel, the way any
 * local user can: the kernel must fail that one QP (error state,
 * QP_FATAL, its WQEs completed with errors) and stay responsive.  And
 * transitions to the error state that a consumer asks for, which real
 * devices carry out quietly.
 *
 *   qp_edges DEV GID_INDEX SCENARIO
 *
 * SCENARIO:
 *   sq-behind-fetch  an RC QP with 8 sends in flight (its peer never
 *                    answers) moves its SQ producer back behind the WQEs
 *                    the kernel has already taken, but ahead of the ones
 *                    it has retired; then rings the doorbell.
 *   sq-past-ring     the SQ producer more than a ring ahead of the
 *                    consumer; doorbell.
 *   rq-behind        the RQ producer behind the kernel's consumer, then a
 *                    peer QP sends to it.
 *   modify-to-err    an RC QP in RTS with a receive posted is moved to ERR
 *                    (what rdma_disconnect and ib_drain_qp do): the receive
 *                    is flushed, no asynchronous event is raised.
 *   flush-access     an RC QP moved to INIT with the RDMA FLUSH access flags
 *                    (rdma_cm and pyverbs ask for them on every RC QP): taken
 *                    and reported back, as on ConnectX and rxe; an unknown
 *                    access bit is still EINVAL.
 *   cq-overflow      an RC QP whose send CQ is never polled completes more
 *                    sends than the CQ holds: IBV_EVENT_CQ_ERR for the CQ,
 *                    and the QP that lost a completion goes to ERR with
 *                    IBV_EVENT_QP_FATAL, as IBTA has it.
 *   sqd-drain        an RC QP paced to 1 Mbit/s with a 64 KiB SEND on the
 *                    wire and another queued is moved to SQD: it reports
 *                    sq_draining, finishes the first SEND, raises
 *                    IBV_EVENT_SQ_DRAINED, leaves the second alone until it
 *                    is moved back to RTS, and then sends it.
 *   recv-mid-message an RC QP that is receiving a 64 KiB SEND (its peer
 *                    paced to 1 Mbit/s, so the message takes half a second)
 *                    is moved to ERR halfway: the receive WQE the SEND took
 *                    completes with a flush error like any other.
 *   srq-resize       an SRQ with 10 receives posted grows from 16 to 64
 *                    entries (the kernel describes the new ring in the old
 *                    one's control block, never through a user pointer),
 *                    takes 20 more, refuses to shrink below what is
 *                    pending, and a peer's 30 SENDs land in all 30, in
 *                    order.
 *   reset-to-err     a QP in RESET asked to move to ERR: EINVAL, as every
 *                    device answers (ib_core's state table has no such
 *                    transition), and the QP stays in RESET.
 *   srq-last-wqe     an RC QP receiving through an SRQ raises
 *                    IBV_EVENT_QP_LAST_WQE_REACHED once when it enters
 *                    ERR, whether asked to or failing on its own (its
 *                    send's retries exhausted), and flushes none of the
 *                    SRQ's receives: another QP on the SRQ takes them.
 *   caps-fit-cqs     for requests of 1 to 4096 WRs, what an SRQ, a QP's
 *                    receive and send queues report is at least the
 *                    request and no more than a CQ made for the same
 *                    request holds; and an SRQ of 15 filled to what it
 *                    reports, every receive completing unpolled, fits its
 *                    CQ of 15 (UCX fills its SRQ so, and one of 4095
 *                    reporting 4096 overflowed its CQ of 4095).
 *   write-imm-length RDMA WRITEs with immediate of 1000 bytes (one
 *                    packet), 3000 bytes (three) and none: the receive each
 *                    consumes completes with the WRITE's length as its
 *                    byte_len, as on ConnectX and rxe (libfabric's
 *                    fi_cq_data checks it).
 *   iova-top         an MR whose last byte is the last of the 64-bit
 *                    address space (iova 2^64 - 8 KiB, 8 KiB long), where
 *                    a sum of an address and a length wraps (rxe's 7.2
 *                    fixes): a WRITE, a READ and an atomic that end exactly
 *                    at 2^64 succeed with their data where it belongs; one
 *                    that runs past 2^64, and one that starts a byte below
 *                    the MR, fail with a remote access error and leave the
 *                    MR's bytes as they were.
 *   stale-mmap       a CQ's, an SRQ's and a QP's ring offsets in the uverbs
 *                    fd (read from /proc/self/maps) after the queue is gone
 *                    or (a CQ) resized (the 2026 rxe mmap use-after-free
 *                    class): a second mapping made while the queue lived
 *                    stays the process's memory through the destroy
 *                    (written after it, unmapped), the offset maps no more
 *                    (EINVAL), nor does a resized ring's old one; a thread
 *                    mapping the offset in a loop while the queue is
 *                    destroyed, 100 times for each kind, sees each mmap
 *                    succeed or fail with EINVAL; the device then carries
 *                    a WRITE.
 *   rq-bad-wqe       an RC QP with 8 receives posted, the fourth's SGE count
 *                    then written as 2^32 - 1, is sent 4 SENDs: the first
 *                    three receives complete, the QP fails on the fourth
 *                    (QP_FATAL, ERR), and the last five, the corrupt one
 *                    first, complete with a flush error: none is lost.
 *   srq-bad-wqe      an SRQ with 8 receives, the fourth's SGE count written
 *                    as 2^32 - 1, shared by two RC QPs: the one whose SEND
 *                    meets it fails (QP_FATAL), the SRQ fails once
 *                    (SRQ_ERR, as a NIC's SRQ catastrophic error), the
 *                    other QP fails at its next SEND; the three receives
 *                    before it completed and none after (no SRQ flush).
 *   ring-flip        while 64 SENDs go from one RC QP to another, a thread
 *                    keeps flipping the counts and lengths of every slot of
 *                    the sender's SQ and the receiver's RQ between sane
 *                    values and 2^32 - 1 (the 2026 rxe TOCTOU class: WQEs
 *                    read from memory the process changes under the
 *                    kernel); 4 rounds.  Each posted WR completes exactly
 *                    once, with success or an error, within the time limit;
 *                    a successful receive holds its 64 bytes.
 *   srq-flip         the same flipping on the slots of an SRQ two RC QPs
 *                    receive from while their peers send 32 SENDs each;
 *                    4 rounds.  Each WR completes at most once (every send
 *                    exactly once), no send succeeds without a receive that
 *                    did, and the SRQ raises SRQ_ERR at most once (its
 *                    receives are not flushed, IBTA).
 *   cq-resize-posted a UD QP posts 6 signaled sends and at once asks to
 *                    shrink its send CQ to 1, 200 times: each time EINVAL,
 *                    the 6 completions counted although the send queue
 *                    poller may not have taken the WQEs yet (rdma-core's
 *                    test_resize_cq expects it, as on a device completing
 *                    inline); every completion arrives, and the emptied
 *                    CQ then shrinks.
 *   lkey-after-dereg a 4 KiB SEND (four packets) goes from one RC QP to
 *                    another, so each side has just used its MR's lkey for
 *                    every packet; the sender's MR is then deregistered
 *                    and a SEND posted with the old lkey: it fails with a local
 *                    protection error.  The same on a new pair with the
 *                    receiver's MR: the receive completes with a local
 *                    protection error and the SEND does not succeed.  The
 *                    kernel keeps the last MR each side found across
 *                    packets; a deregistered one must never be used again.
 *
 * It reaches the rings through the provider's own view of the QP (the
 * tool is built from the same headers as the provider it runs with).
 * Prints one line per check; exits 0 only if every check held, 1 if one
 * failed, 2 on a usage or set-up error.  Each wait is bounded.
 */
#include "cq.hpp"
#include "qp.hpp"
#include "srq.hpp"
#include "rc_loopback.hpp"

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <poll.h>
#include <sys/mman.h>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace rc_loopback;

constexpr int kSends = 8;
constexpr uint32_t kMsg = 64;
/* Long enough for any kernel reaction; far shorter than a soft lockup. */
constexpr auto kLimit = std::chrono::milliseconds(10000);
/* wait_event(): any event at all for that QP. */
constexpr auto kAnyEvent = static_cast<ibv_event_type>(-1);

/* @n signaled SENDs of kMsg bytes, wr_id @first on; the number posted
 * before the first refusal (a QP that failed refuses), its error in @err.
 */
int try_post_sends(Setup &s, ibv_qp *qp, int n, int *err = nullptr, uint64_t first = 100)
{
	for (int i = 0; i < n; i++) {
		ibv_sge sge{reinterpret_cast<uintptr_t>(s.mr->addr), kMsg, s.mr->lkey};
		ibv_send_wr wr{}, *bad;
		wr.wr_id = first + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (int e = ibv_post_send(qp, &wr, &bad)) {
			if (err)
				*err = e;
			return i;
		}
	}
	return n;
}

void post_sends(Setup &s, ibv_qp *qp, int n)
{
	int err = 0;

	if (try_post_sends(s, qp, n, &err) != n)
		die("ibv_post_send", err);
}

/* An SRQ for @max_wr receives of one SGE; @reported gets its max_wr. */
ibv_srq *make_srq(Setup &s, uint32_t max_wr = 16, uint32_t *reported = nullptr)
{
	ibv_srq_init_attr init{};
	init.attr.max_wr = max_wr;
	init.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(s.pd, &init);
	if (!srq)
		die("ibv_create_srq", errno);
	if (reported)
		*reported = init.attr.max_wr;
	return srq;
}

sroce_ring_ctrl *sq_ctrl(ibv_qp *qp) { return sroce::to_qp(qp)->sq.ring.ctrl(); }
sroce_ring_ctrl *rq_ctrl(ibv_qp *qp) { return sroce::to_qp(qp)->rq.ring.ctrl(); }

void store(__u32 &word, uint32_t v)
{
	std::atomic_ref<uint32_t>(word).store(v, std::memory_order_release);
}
uint32_t load(__u32 &word)
{
	return std::atomic_ref<uint32_t>(word).load(std::memory_order_acquire);
}

/* The doorbell the provider rings when the kernel asks for one. */
void ring_doorbell(ibv_qp *qp)
{
	int err = sroce::to_qp(qp)->sq.doorbell.ring();

	std::printf("doorbell: %s\n", err ? std::strerror(err) : "ok");
}

ibv_qp_state qp_state(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr init{};

	if (int err = ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		die("ibv_query_qp", err);
	return a.qp_state;
}

bool wait_state(ibv_qp *qp, ibv_qp_state want)
{
	const auto end = std::chrono::steady_clock::now() + kLimit;

	while (qp_state(qp) != want) {
		if (std::chrono::steady_clock::now() > end)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	return true;
}

/*
 * Completions of `qp` with wr_id in [lo, lo + n) and the status wanted
 * (success, or any error): counted.  Prints every completion it polls.
 */
enum class Want { success, error };
int wait_completions(Setup &s, ibv_qp *qp, uint64_t lo, int n, Want want,
		     std::chrono::milliseconds limit = kLimit)
{
	const auto end = std::chrono::steady_clock::now() + limit;
	int got = 0;

	while (got < n && std::chrono::steady_clock::now() < end) {
		ibv_wc wc;
		int r = ibv_poll_cq(s.cq, 1, &wc);

		if (r < 0)
			die("ibv_poll_cq", EIO);
		if (r == 0) {
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
			continue;
		}
		std::printf("completion: wr_id %llu %s\n", (unsigned long long)wc.wr_id,
			    ibv_wc_status_str(wc.status));
		if (wc.qp_num == qp->qp_num && wc.wr_id >= lo && wc.wr_id < lo + n &&
		    (wc.status == IBV_WC_SUCCESS) == (want == Want::success))
			got++;
	}
	return got;
}

int wait_error_completions(Setup &s, ibv_qp *qp, uint64_t lo, int n)
{
	return wait_completions(s, qp, lo, n, Want::error);
}

/* The next async event within 100 ms into @ev (printed), or false. */
bool next_event(Setup &s, ibv_async_event &ev)
{
	pollfd p{s.ctx->async_fd, POLLIN, 0};
	if (poll(&p, 1, 100) <= 0)
		return false;
	if (ibv_get_async_event(s.ctx, &ev))
		die("ibv_get_async_event", errno);
	std::printf("async event: %s\n", ibv_event_type_str(ev.event_type));
	return true;
}

/* True if `type` arrives for `qp` within `limit`; prints every event. */
bool wait_event(Setup &s, ibv_qp *qp, ibv_event_type type,
		std::chrono::milliseconds limit = kLimit)
{
	const auto end = std::chrono::steady_clock::now() + limit;

	while (std::chrono::steady_clock::now() < end) {
		ibv_async_event ev;
		if (!next_event(s, ev))
			continue;
		/* CQ events name a CQ, not a QP: asked for with qp == nullptr. */
		const bool hit = (ev.event_type == type || type == kAnyEvent) &&
				 (qp ? ev.element.qp == qp : ev.event_type == IBV_EVENT_CQ_ERR);
		ibv_ack_async_event(&ev);
		if (hit)
			return true;
	}
	return false;
}

void sq_behind_fetch(Setup &s)
{
	ibv_qp *qp = make_rc(s), *mute = make_rc(s);

	/* `mute` stays in INIT: it drops what it gets, so nothing is ACKed. */
	connect(s, qp, mute->qp_num);
	post_sends(s, qp, kSends);
	/* The engine takes WQEs when it runs, not as they are posted: run it
	 * once more so it holds all of them (fetch = 8, retire = 0).
	 */
	ring_doorbell(qp);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	sroce_ring_ctrl *c = sq_ctrl(qp);
	const uint32_t prod = load(c->producer), cons = load(c->consumer);
	std::printf("sq producer %u consumer %u\n", prod, cons);
	check(prod - cons == kSends, "all sends still outstanding before the abuse");
	store(c->producer, cons + kSends / 2);
	const auto t0 = std::chrono::steady_clock::now();
	ring_doorbell(qp);
	const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
		std::chrono::steady_clock::now() - t0).count();
	check(ms < 2000, "doorbell returned in " + std::to_string(ms) + " ms");
	check(wait_state(qp, IBV_QPS_ERR), "QP in the error state");
	check(wait_event(s, qp, IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL raised");
	check(wait_error_completions(s, qp, 100, kSends) == kSends,
	      "every WQE the kernel held completed with an error");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(mute);
}

void sq_past_ring(Setup &s)
{
	ibv_qp *qp = make_rc(s), *mute = make_rc(s);

	connect(s, qp, mute->qp_num);
	post_sends(s, qp, 2);
	ring_doorbell(qp);	/* the kernel takes both (see sq_behind_fetch) */
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	sroce_ring_ctrl *c = sq_ctrl(qp);
	const uint32_t slots = sroce::to_qp(qp)->sq.ring.num_slots();
	store(c->producer, load(c->consumer) + slots + 1);
	ring_doorbell(qp);
	check(wait_state(qp, IBV_QPS_ERR), "QP in the error state");
	check(wait_event(s, qp, IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL raised");
	check(wait_error_completions(s, qp, 100, 2) == 2,
	      "both WQEs the kernel held completed with an error");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(mute);
}

void rq_behind(Setup &s)
{
	ibv_qp *sender = make_rc(s), *victim = make_rc(s);

	connect(s, sender, victim->qp_num);
	connect(s, victim, sender->qp_num);
	post_recvs(s, victim, 4);
	sroce_ring_ctrl *c = rq_ctrl(victim);
	store(c->producer, load(c->consumer) - 1);
	post_sends(s, sender, 1);
	check(wait_state(victim, IBV_QPS_ERR), "receiving QP in the error state");
	check(wait_event(s, victim, IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL raised");
	ibv_destroy_qp(sender);
	ibv_destroy_qp(victim);
}

void modify_to_err(Setup &s)
{
	ibv_qp *qp = make_rc(s), *peer = make_rc(s);

	connect(s, qp, peer->qp_num);
	connect(s, peer, qp->qp_num);
	post_recvs(s, qp, 1);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("to ERR", err);
	check(qp_state(qp) == IBV_QPS_ERR, "QP in the error state");
	check(wait_error_completions(s, qp, 200, 1) == 1,
	      "the posted receive completed with a flush error");
	check(!wait_event(s, qp, kAnyEvent, std::chrono::milliseconds(2000)),
	      "no asynchronous event for a transition the consumer asked for");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
}

void cq_overflow(Setup &s)
{
	ibv_cq *small = ibv_create_cq(s.ctx, 4, nullptr, nullptr, 0);
	if (!small)
		die("ibv_create_cq", errno);
	ibv_qp_init_attr init{};
	init.send_cq = small;
	init.recv_cq = s.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 64;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_RC;
	ibv_qp *qp = ibv_create_qp(s.pd, &init), *peer = make_rc(s);
	if (!qp)
		die("ibv_create_qp", errno);
	rc_to_init(qp, 0);
	connect(s, qp, peer->qp_num);
	connect(s, peer, qp->qp_num);
	const int n = small->cqe + 4;
	std::printf("CQ holds %d, sending %d\n", small->cqe, n);
	post_recvs(s, peer, n);
	post_sends(s, qp, n);
	check(wait_event(s, nullptr, IBV_EVENT_CQ_ERR), "IBV_EVENT_CQ_ERR raised");
	check(wait_state(qp, IBV_QPS_ERR), "the QP that lost a completion is in ERR");
	check(wait_event(s, qp, IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL raised for it");
	check(qp_state(peer) == IBV_QPS_RTS, "its peer, whose CQ had room, is not");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
	ibv_destroy_cq(small);
}

/*
 * Two connected RC QPs and a buffer for two long messages, the sender
 * paced to 1 Mbit/s: a 64 KiB SEND (64 packets of 1 KiB) is on the wire
 * for about half a second, long enough to act on the QPs meanwhile.
 */
struct PacedPair {
	static constexpr uint32_t kLong = 64 * 1024;
	ibv_qp *sender = nullptr, *receiver = nullptr;
	void *buf = nullptr;
	ibv_mr *mr = nullptr;

	explicit PacedPair(Setup &s)
		: sender(make_rc(s)), receiver(make_rc(s)), buf(std::calloc(2, kLong))
	{
		mr = buf ? ibv_reg_mr(s.pd, buf, 2 * kLong, IBV_ACCESS_LOCAL_WRITE) : nullptr;
		if (!mr)
			die("64 KiB MR", errno);
		connect(s, sender, receiver->qp_num);
		connect(s, receiver, sender->qp_num);
		ibv_qp_rate_limit_attr rl{};
		rl.rate_limit = 1000;	/* kbit/s */
		if (int err = ibv_modify_qp_rate_limit(sender, &rl))
			die("ibv_modify_qp_rate_limit", err);
	}
	~PacedPair()
	{
		ibv_destroy_qp(sender);
		ibv_destroy_qp(receiver);
		ibv_dereg_mr(mr);
		std::free(buf);
	}

	void post_recv(uint64_t wr_id)
	{
		ibv_sge sge{reinterpret_cast<uintptr_t>(buf), kLong, mr->lkey};
		ibv_recv_wr wr{}, *bad;
		wr.wr_id = wr_id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int err = ibv_post_recv(receiver, &wr, &bad))
			die("ibv_post_recv", err);
	}
	void post_send(uint64_t wr_id)
	{
		post_one_send(sender, wr_id, static_cast<uint8_t *>(buf) + kLong, kLong, mr->lkey);
	}
};

void sqd_drain(Setup &s)
{
	PacedPair p(s);
	ibv_qp *qp = p.sender;

	for (int i = 0; i < 2; i++) {
		p.post_recv(500 + i);
		p.post_send(600 + i);
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(100));

	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY))
		die("to SQD", err);
	ibv_qp_attr q{};
	ibv_qp_init_attr qi{};
	if (int err = ibv_query_qp(qp, &q, IBV_QP_STATE, &qi))
		die("ibv_query_qp", err);
	check(q.qp_state == IBV_QPS_SQD && q.sq_draining,
	      "in SQD and draining while the first SEND is on the wire");
	check(wait_event(s, qp, IBV_EVENT_SQ_DRAINED), "IBV_EVENT_SQ_DRAINED raised");
	check(wait_completions(s, qp, 600, 1, Want::success, std::chrono::milliseconds(500)) == 1,
	      "the SEND begun before SQD completed");
	check(wait_completions(s, qp, 601, 1, Want::success, std::chrono::milliseconds(1500)) == 0,
	      "the queued SEND waits while the QP is in SQD");
	if (int err = ibv_query_qp(qp, &q, IBV_QP_STATE, &qi))
		die("ibv_query_qp", err);
	check(!q.sq_draining, "no longer draining once drained");
	a.qp_state = IBV_QPS_RTS;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("SQD to RTS", err);
	check(wait_completions(s, qp, 601, 1, Want::success) == 1, "back in RTS it is sent");
}

void recv_mid_message(Setup &s)
{
	PacedPair p(s);

	p.post_recv(300);
	p.post_send(400);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	if (int err = ibv_modify_qp(p.receiver, &a, IBV_QP_STATE))
		die("to ERR", err);
	check(wait_error_completions(s, p.receiver, 300, 1) == 1,
	      "the receive the SEND had taken completed with a flush error");
}

void srq_resize(Setup &s)
{
	constexpr int kBefore = 10, kAfter = 20;
	ibv_srq *srq = make_srq(s);
	auto post = [&](int from, int n) { post_recvs(s, nullptr, n, srq, 700 + from); };
	post(0, kBefore);
	ibv_srq_attr a{};
	a.max_wr = 64;
	check(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == 0, "grown from 16 to 64");
	post(kBefore, kAfter);
	a.max_wr = 4;
	check(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == EINVAL,
	      "not shrunk below the 30 receives pending (EINVAL)");
	if (int err = ibv_query_srq(srq, &a))
		die("ibv_query_srq", err);
	check(a.max_wr >= 64, "ibv_query_srq reports " + std::to_string(a.max_wr));

	ibv_qp *receiver = make_rc(s, srq), *sender = make_rc(s, nullptr, 64);
	connect(s, sender, receiver->qp_num);
	connect(s, receiver, sender->qp_num);
	post_sends(s, sender, kBefore + kAfter);
	int in_order = 0;
	const auto end = std::chrono::steady_clock::now() + kLimit;
	while (in_order < kBefore + kAfter && std::chrono::steady_clock::now() < end) {
		ibv_wc wc;
		const int r = ibv_poll_cq(s.cq, 1, &wc);
		if (r < 0)
			die("ibv_poll_cq", EIO);
		if (r == 0 || wc.qp_num != receiver->qp_num)
			continue;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != uint64_t(700 + in_order))
			break;
		in_order++;
	}
	check(in_order == kBefore + kAfter,
	      std::to_string(in_order) + " of 30 receives completed, in order");
	ibv_destroy_qp(sender);
	ibv_destroy_qp(receiver);
	ibv_destroy_srq(srq);
}

void flush_access(Setup &s)
{
	ibv_qp *qp = create_rc(s);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	/* IBV_ACCESS_FLUSH_GLOBAL | _PERSISTENT, by value (rdma-core 44 names). */
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (1 << 8) | (1 << 9);
	const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS;
	const unsigned int asked = a.qp_access_flags;
	a.qp_access_flags |= 1u << 10;	/* no access bit at all */
	int err = ibv_modify_qp(qp, &a, mask);
	check(err == EINVAL, std::string("an unknown access bit is EINVAL (got ") +
				     std::strerror(err) + ")");
	a.qp_access_flags = asked;
	err = ibv_modify_qp(qp, &a, mask);
	check(err == 0, std::string("FLUSH access taken (got ") + std::strerror(err) + ")");
	ibv_qp_attr q{};
	ibv_qp_init_attr init{};
	check(ibv_query_qp(qp, &q, IBV_QP_ACCESS_FLAGS, &init) == 0 &&
		      q.qp_access_flags == asked,
	      "query_qp reports the FLUSH access bits");
	ibv_destroy_qp(qp);
}

void reset_to_err(Setup &s)
{
	ibv_qp *qp = create_rc(s);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	const int err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	check(err == EINVAL, std::string("RESET to ERR refused with EINVAL (got ") +
				     std::strerror(err) + ")");
	check(qp_state(qp) == IBV_QPS_RESET, "QP still in RESET");
	check(!wait_event(s, qp, kAnyEvent, std::chrono::milliseconds(1000)),
	      "no asynchronous event");
	ibv_destroy_qp(qp);
}

void cq_resize_posted(Setup &s)
{
	constexpr int kPosted = 6, kRounds = 200;
	constexpr uint32_t kQkey = 0x11111111;
	ibv_cq *cq = ibv_create_cq(s.ctx, 16, nullptr, nullptr, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	ibv_qp_init_attr init{};
	init.send_cq = cq;
	init.recv_cq = s.cq;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_UD;
	ibv_qp *qp = ibv_create_qp(s.pd, &init);
	if (!qp)
		die("ibv_create_qp", errno);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = kQkey;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						    IBV_QP_PORT | IBV_QP_QKEY))
		die("to INIT", err);
	a.qp_state = IBV_QPS_RTR;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("to RTR", err);
	a.qp_state = IBV_QPS_RTS;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("to RTS", err);
	ibv_ah_attr ah_attr{};
	ah_attr.is_global = 1;
	ah_attr.grh.dgid = s.gid;
	ah_attr.grh.sgid_index = s.gid_index;
	ah_attr.grh.hop_limit = 64;
	ah_attr.port_num = 1;
	ibv_ah *ah = ibv_create_ah(s.pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah", errno);

	int round = 0, shrunk = 0, missing = 0;
	for (; round < kRounds && !shrunk && !missing; round++) {
		for (int i = 0; i < kPosted; i++) {
			ibv_sge sge{reinterpret_cast<uintptr_t>(s.mr->addr), kMsg, s.mr->lkey};
			ibv_send_wr wr{}, *bad;
			wr.wr_id = i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_SEND;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = qp->qp_num;	/* no receive posted: dropped there */
			wr.wr.ud.remote_qkey = kQkey;
			if (int err = ibv_post_send(qp, &wr, &bad))
				die("ibv_post_send", err);
		}
		const int err = ibv_resize_cq(cq, 1);
		if (err != EINVAL) {
			std::printf("round %d: resize to 1 with %d sends posted: %s\n", round,
				    kPosted, err ? std::strerror(err) : "done");
			shrunk++;
		}
		int got = 0;
		const auto end = std::chrono::steady_clock::now() + kLimit;
		while (got < kPosted && std::chrono::steady_clock::now() < end) {
			ibv_wc wc[kPosted];
			const int n = ibv_poll_cq(cq, kPosted, wc);
			if (n < 0)
				die("ibv_poll_cq", EIO);
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					die("send completion", EIO);
			got += n;
		}
		missing += kPosted - got;
	}
	check(!shrunk, "resize to 1 refused (EINVAL) right after 6 posts, in " +
			       std::to_string(round) + " rounds");
	check(!missing, std::to_string(missing) + " completions missing");
	check(ibv_resize_cq(cq, 1) == 0, "the emptied CQ shrinks to 1");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/*
 * The receiver of a SEND destroys its QP the moment it sees the receive
 * completion, from a thread of its own, while the packet's receive batch
 * may still be running on another CPU: the ACK for that SEND must still
 * leave (as a HCA's has by then), or the sender retries into a QP that
 * is gone and fails its last send (ibv_rc_pingpong's server hung so
 * against rxe in CI).  Each round is a fresh pair; the sender's timeout
 * (index 12, ~17 ms) keeps a lost ACK's cost small.
 */
void destroy_after_last_recv(Setup &s)
{
	constexpr int kRounds = 500;
	ibv_cq *scq = ibv_create_cq(s.ctx, 4, nullptr, nullptr, 0);
	ibv_cq *rcq = ibv_create_cq(s.ctx, 4, nullptr, nullptr, 0);
	if (!scq || !rcq)
		die("ibv_create_cq", errno);
	int lost = 0, other = 0;

	for (int round = 0; round < kRounds; round++) {
		Setup sender = s, receiver = s;
		sender.cq = scq;
		receiver.cq = rcq;
		ibv_qp *a = make_rc(sender), *b = make_rc(receiver);
		to_rtr(sender, a, b->qp_num, s.gid);
		to_rts(a, 1, 12);
		connect(receiver, b, a->qp_num);
		post_recvs(s, b, 1);
		std::atomic<int> destroyed{-1};
		std::thread receiver_thread([&] {
			/* Spinning, not next_completion()'s naps: destroy at once. */
			const auto end = std::chrono::steady_clock::now() + kLimit;
			ibv_wc wc{};
			int n = 0;
			while (!n && std::chrono::steady_clock::now() < end)
				n = ibv_poll_cq(rcq, 1, &wc);
			destroyed = ibv_destroy_qp(b) ? 2 :
				    n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : 1;
		});
		post_sends(s, a, 1);
		const ibv_wc wc = next_completion(sender);
		receiver_thread.join();
		if (destroyed != 0)
			die("the receive or the receiver's destroy", EIO);
		if (wc.status == IBV_WC_RETRY_EXC_ERR)
			lost++;
		else if (wc.status != IBV_WC_SUCCESS)
			other++;
		ibv_destroy_qp(a);
	}
	check(!lost, std::to_string(lost) + " of " + std::to_string(kRounds) +
			     " sends whose receiver was destroyed at once failed for "
			     "want of its ACK");
	check(!other, std::to_string(other) + " sends failed otherwise");
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

void srq_last_wqe(Setup &s)
{
	constexpr int kRecvs = 4;
	ibv_srq *srq = make_srq(s);
	post_recvs(s, nullptr, kRecvs, srq, 800);
	ibv_qp *asked = make_rc(s, srq), *peer = make_rc(s);

	connect(s, asked, peer->qp_num);
	connect(s, peer, asked->qp_num);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	if (int err = ibv_modify_qp(asked, &a, IBV_QP_STATE))
		die("to ERR", err);
	check(wait_event(s, asked, IBV_EVENT_QP_LAST_WQE_REACHED),
	      "Last WQE Reached for the QP moved to ERR");
	check(!wait_event(s, asked, kAnyEvent, std::chrono::milliseconds(1000)),
	      "and no second event");

	/* `mute` stays in INIT and drops the SEND: with timeout index 12
	 * (~17 ms) and 7 retries the QP fails on its own well within kLimit.
	 */
	ibv_qp *failing = make_rc(s, srq), *mute = make_rc(s);
	to_rtr(s, failing, mute->qp_num, s.gid);
	to_rts(failing, 1, 12);
	post_sends(s, failing, 1);
	check(wait_error_completions(s, failing, 100, 1) == 1,
	      "the unanswered SEND failed");
	check(wait_event(s, failing, IBV_EVENT_QP_LAST_WQE_REACHED),
	      "Last WQE Reached for the QP that failed");

	ibv_qp *taker = make_rc(s, srq), *sender = make_rc(s);
	connect(s, taker, sender->qp_num);
	connect(s, sender, taker->qp_num);
	post_sends(s, sender, kRecvs);
	check(wait_completions(s, taker, 800, kRecvs, Want::success) == kRecvs,
	      "another QP on the SRQ received into all of its receives");
	for (ibv_qp *qp : {asked, peer, failing, mute, taker, sender})
		ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
}

/* What queues report against what a CQ of the same request holds. */
void caps_fit_cqs(Setup &s)
{
	for (uint32_t req : {1u, 3u, 16u, 3000u, 4095u, 4096u}) {
		ibv_cq *cq = ibv_create_cq(s.ctx, req, nullptr, nullptr, 0);
		if (!cq)
			die("ibv_create_cq", errno);
		const uint32_t cqe = cq->cqe;
		uint32_t srq_wr;
		ibv_srq *srq = make_srq(s, req, &srq_wr);
		ibv_qp_init_attr qi{};
		qi.send_cq = qi.recv_cq = cq;
		qi.cap.max_send_wr = qi.cap.max_recv_wr = req;
		qi.cap.max_send_sge = qi.cap.max_recv_sge = 1;
		qi.qp_type = IBV_QPT_RC;
		ibv_qp *qp = ibv_create_qp(s.pd, &qi);
		if (!qp)
			die("ibv_create_qp", errno);
		const std::string of = " for " + std::to_string(req) + " (CQ " +
				       std::to_string(cqe) + ")";
		check(srq_wr >= req && srq_wr <= cqe,
		      "SRQ reports " + std::to_string(srq_wr) + of);
		check(qi.cap.max_recv_wr >= req && qi.cap.max_recv_wr <= cqe,
		      "RQ reports " + std::to_string(qi.cap.max_recv_wr) + of);
		check(qi.cap.max_send_wr >= req && qi.cap.max_send_wr <= cqe,
		      "SQ reports " + std::to_string(qi.cap.max_send_wr) + of);
		ibv_srq_attr qa{};
		if (int err = ibv_query_srq(srq, &qa))
			die("ibv_query_srq", err);
		check(qa.max_wr == srq_wr, "SRQ query says the same");
		ibv_destroy_qp(qp);
		ibv_destroy_srq(srq);
		ibv_destroy_cq(cq);
	}

	constexpr int kReq = 15;
	ibv_cq *rcq = ibv_create_cq(s.ctx, kReq, nullptr, nullptr, 0);
	if (!rcq)
		die("ibv_create_cq", errno);
	uint32_t srq_wr;
	ibv_srq *srq = make_srq(s, kReq, &srq_wr);
	const int filled = static_cast<int>(srq_wr);
	post_recvs(s, nullptr, filled, srq, 800);
	Setup r = s;
	r.cq = rcq;
	ibv_qp *receiver = make_rc(r, srq), *sender = make_rc(s, nullptr, filled);
	connect(r, receiver, sender->qp_num);
	connect(s, sender, receiver->qp_num);
	post_sends(s, sender, filled);
	check(wait_completions(s, sender, 100, filled, Want::success) == filled,
	      "all " + std::to_string(filled) + " SENDs delivered");
	check(!wait_event(s, nullptr, kAnyEvent, std::chrono::milliseconds(1000)),
	      "no CQ error");
	check(wait_completions(r, receiver, 800, filled, Want::success) == filled,
	      "every receive completed into the CQ of " + std::to_string(kReq));
	ibv_destroy_qp(receiver);
	ibv_destroy_qp(sender);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(rcq);
}

/* @len bytes WRITTEN with immediate from @a into @b's half of @mr, and
 * the receive of @b the WRITE consumed: its byte_len, opcode and
 * immediate.
 */
void write_imm_once(Setup &s, ibv_qp *a, ibv_qp *b, ibv_mr *mr, uint32_t len)
{
	const uint64_t recv_id = 300 + len, send_id = 400 + len;
	auto *buf = static_cast<char *>(mr->addr);

	post_recvs(s, b, 1, nullptr, recv_id);
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf), len, mr->lkey};
	ibv_send_wr wr{}, *bad;
	wr.wr_id = send_id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(len);
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(buf + mr->length / 2);
	wr.wr.rdma.rkey = mr->rkey;
	if (int err = ibv_post_send(a, &wr, &bad))
		die("ibv_post_send", err);
	ibv_wc recv{};
	bool sent = false, received = false;
	for (int i = 0; i < 2; i++) {
		const ibv_wc wc = next_completion(s);
		if (wc.wr_id == recv_id) {
			recv = wc;
			received = true;
		} else if (wc.wr_id == send_id) {
			sent = wc.status == IBV_WC_SUCCESS;
		}
	}
	check(sent && received && recv.status == IBV_WC_SUCCESS &&
		      recv.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      be32toh(recv.imm_data) == len && recv.byte_len == len,
	      "a WRITE with immediate of " + std::to_string(len) +
		      " B completes its receive with byte_len " +
		      (received ? std::to_string(recv.byte_len) : "(none)"));
}

void write_imm_length(Setup &s)
{
	constexpr size_t kHalf = 4096;
	void *buf = std::aligned_alloc(4096, 2 * kHalf);
	ibv_mr *mr = buf ? ibv_reg_mr(s.pd, buf, 2 * kHalf,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) :
			   nullptr;
	if (!mr)
		die("ibv_reg_mr", errno);
	ibv_qp *a = make_rc(s), *b = make_rc(s);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);
	/* One packet, three packets (MTU 1024), and none. */
	for (uint32_t len : {1000u, 3000u, 0u})
		write_imm_once(s, a, b, mr, len);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	std::free(buf);
}

constexpr uint32_t kGoneLen = 4096;	/* four packets at MTU 1024 */

struct GoneBuffers {
	void *send = std::aligned_alloc(4096, kGoneLen);
	void *recv = std::aligned_alloc(4096, kGoneLen);
	ibv_mr *smr = nullptr, *rmr = nullptr;
};

/* The completions of send @sid and receive @rid on @s's CQ, each ~0
 * (IBV_WC_GENERAL_ERR) if it did not come within 10 s.
 */
std::pair<ibv_wc_status, ibv_wc_status> gone_wait(Setup &s, uint64_t sid, uint64_t rid,
						  bool want_recv)
{
	ibv_wc_status st[2] = {IBV_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR};
	bool seen[2] = {false, !want_recv};

	while (!seen[0] || !seen[1]) {
		const ibv_wc wc = next_completion(s);
		if (wc.wr_id == ~0ull)
			break;
		const int i = wc.wr_id == sid ? 0 : wc.wr_id == rid ? 1 : -1;
		if (i >= 0) {
			st[i] = wc.status;
			seen[i] = true;
		}
	}
	return {st[0], st[1]};
}

/* A SEND of kGoneLen from @a to @b with these lkeys; the two statuses. */
std::pair<ibv_wc_status, ibv_wc_status> gone_send(Setup &s, ibv_qp *a, ibv_qp *b,
						  GoneBuffers &g, uint32_t slkey,
						  uint32_t rlkey, uint64_t id, bool want_recv)
{
	ibv_sge rsge{reinterpret_cast<uintptr_t>(g.recv), kGoneLen, rlkey};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.wr_id = id + 1;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	if (int err = ibv_post_recv(b, &rwr, &rbad))
		die("ibv_post_recv", err);

	post_one_send(a, id, g.send, kGoneLen, slkey);
	return gone_wait(s, id, id + 1, want_recv);
}

void gone_side(Setup &s, GoneBuffers &g, bool sender)
{
	const char *who = sender ? "the sender's" : "the receiver's";
	ibv_qp *a = make_rc(s), *b = make_rc(s);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);

	auto first = gone_send(s, a, b, g, g.smr->lkey, g.rmr->lkey, 10, true);
	check(first.first == IBV_WC_SUCCESS && first.second == IBV_WC_SUCCESS,
	      std::string("a 4 KiB SEND before ") + who + " MR is deregistered succeeds (" +
		      ibv_wc_status_str(first.first) + ", " + ibv_wc_status_str(first.second) + ")");

	/* Nothing registered after it, so that its memory is not reused at
	 * once: what a stale pointer to it would find is the old MR.
	 */
	ibv_mr *&gone = sender ? g.smr : g.rmr;
	const uint32_t old_lkey = gone->lkey;
	if (int err = ibv_dereg_mr(gone))
		die("ibv_dereg_mr", err);
	gone = nullptr;
	if (sender) {
		auto st = gone_send(s, a, b, g, old_lkey, g.rmr->lkey, 20, false);
		check(st.first == IBV_WC_LOC_PROT_ERR,
		      std::string("a SEND from the deregistered MR's lkey fails with a local "
				  "protection error (") + ibv_wc_status_str(st.first) + ")");
	} else {
		auto st = gone_send(s, a, b, g, g.smr->lkey, old_lkey, 20, true);
		check(st.second == IBV_WC_LOC_PROT_ERR && st.first != IBV_WC_SUCCESS,
		      std::string("a receive into the deregistered MR's lkey fails with a local "
				  "protection error and its SEND does not succeed (") +
			      ibv_wc_status_str(st.second) + ", " + ibv_wc_status_str(st.first) + ")");
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

void lkey_after_dereg(Setup &s)
{
	GoneBuffers g;
	if (!g.send || !g.recv)
		die("aligned_alloc", ENOMEM);
	std::memset(g.send, 0x5a, kGoneLen);
	g.smr = ibv_reg_mr(s.pd, g.send, kGoneLen, IBV_ACCESS_LOCAL_WRITE);
	g.rmr = ibv_reg_mr(s.pd, g.recv, kGoneLen, IBV_ACCESS_LOCAL_WRITE);
	if (!g.smr || !g.rmr)
		die("ibv_reg_mr", errno);
	gone_side(s, g, true);
	g.smr = ibv_reg_mr(s.pd, g.send, kGoneLen, IBV_ACCESS_LOCAL_WRITE);
	if (!g.smr)
		die("ibv_reg_mr", errno);
	gone_side(s, g, false);
	ibv_dereg_mr(g.smr);
	std::free(g.send);
	std::free(g.recv);
}

constexpr uint64_t kTopLen = 8192;
constexpr uint64_t kTopIova = ~0ull - kTopLen + 1;

/* Posts @wr alone on a new connected pair and returns its completion's
 * status (IBV_WC_GENERAL_ERR if none came): a failed request leaves its
 * QPs in ERR, so every request has fresh ones.
 */
ibv_wc_status post_on_new_pair(Setup &s, ibv_send_wr &wr)
{
	const int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;
	ibv_qp *a = make_rc(s, nullptr, 16, 0, access);
	ibv_qp *b = make_rc(s, nullptr, 16, 0, access);
	ibv_send_wr *bad = nullptr;

	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);
	wr.send_flags = IBV_SEND_SIGNALED;
	if (int err = ibv_post_send(a, &wr, &bad))
		die("ibv_post_send", err);
	const ibv_wc wc = next_completion(s);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	return wc.wr_id == wr.wr_id ? wc.status : IBV_WC_GENERAL_ERR;
}

void iova_top(Setup &s)
{
	auto *top = static_cast<uint8_t *>(std::aligned_alloc(4096, kTopLen));
	auto *local = static_cast<uint8_t *>(std::aligned_alloc(4096, kTopLen));
	if (!top || !local)
		die("aligned_alloc", ENOMEM);
	std::memset(top, 0x11, kTopLen);
	ibv_mr *mr = ibv_reg_mr_iova(s.pd, top, kTopLen, kTopIova,
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC);
	check(mr != nullptr, std::string("an MR of 8 KiB at iova 2^64 - 8 KiB registers (") +
				     (mr ? "yes" : std::strerror(errno)) + ")");
	ibv_mr *lmr = ibv_reg_mr(s.pd, local, kTopLen, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !lmr)
		die("ibv_reg_mr", errno);

	ibv_sge sge{reinterpret_cast<uintptr_t>(local), 100, lmr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.rkey = mr->rkey;

	/* The last 100 bytes, written. */
	std::memset(local, 0x22, 100);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = ~0ull - 99;
	ibv_wc_status st = post_on_new_pair(s, wr);
	check(st == IBV_WC_SUCCESS && top[kTopLen - 100] == 0x22 &&
		      top[kTopLen - 1] == 0x22 && top[kTopLen - 101] == 0x11,
	      std::string("a WRITE of the last 100 bytes below 2^64 lands there (") +
		      ibv_wc_status_str(st) + ")");

	/* The last 4 KiB, read back. */
	sge.length = 4096;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = ~0ull - 4095;
	st = post_on_new_pair(s, wr);
	check(st == IBV_WC_SUCCESS && !std::memcmp(local, top + kTopLen - 4096, 4096),
	      std::string("a READ of the last 4 KiB below 2^64 returns them (") +
		      ibv_wc_status_str(st) + ")");

	/* The last 8 bytes, an atomic add. */
	uint64_t last;
	std::memcpy(&last, top + kTopLen - 8, 8);
	sge.length = 8;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = ~0ull - 7;
	wr.wr.atomic.rkey = mr->rkey;
	wr.wr.atomic.compare_add = 5;
	st = post_on_new_pair(s, wr);
	uint64_t fetched, now;
	std::memcpy(&fetched, local, 8);
	std::memcpy(&now, top + kTopLen - 8, 8);
	check(st == IBV_WC_SUCCESS && fetched == last && now == last + 5,
	      std::string("a FETCH_AND_ADD on the last 8 bytes below 2^64 adds (") +
		      ibv_wc_status_str(st) + ")");

	/* Past 2^64 (the end wraps to 100) and a byte below the MR. */
	std::memset(local, 0x33, 200);
	const std::pair<uint64_t, const char *> refused[] = {
		{~0ull - 99, "a WRITE of 200 bytes at 2^64 - 100 (past 2^64)"},
		{kTopIova - 1, "a WRITE of 200 bytes a byte below the MR"},
	};
	for (const auto &[addr, what] : refused) {
		std::vector<uint8_t> before(top, top + kTopLen);
		sge.length = 200;
		wr = ibv_send_wr{};
		wr.wr_id = 2;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = addr;
		wr.wr.rdma.rkey = mr->rkey;
		st = post_on_new_pair(s, wr);
		check(st == IBV_WC_REM_ACCESS_ERR &&
			      !std::memcmp(before.data(), top, kTopLen),
		      std::string(what) + " fails with a remote access error, the MR untouched (" +
			      ibv_wc_status_str(st) + ")");
	}
	ibv_dereg_mr(lmr);
	ibv_dereg_mr(mr);
	std::free(local);
	std::free(top);
}

/* The offset in the uverbs fd of the mapping that starts at @addr (from
 * /proc/self/maps), or ~0 if there is none.
 */
uint64_t mapping_offset(const void *addr)
{
	FILE *f = std::fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t off = ~0ull;

	while (f && std::fgets(line, sizeof(line), f)) {
		unsigned long start, end, pgoff;
		char perms[8];
		if (std::sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &pgoff) == 4 &&
		    start == reinterpret_cast<uintptr_t>(addr)) {
			off = pgoff;
			break;
		}
	}
	if (f)
		std::fclose(f);
	return off;
}

/* mmap of @len bytes of the uverbs fd at @off: 0 or the errno. */
int map_at(Setup &s, uint64_t off, size_t len, void **out = nullptr)
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s.ctx->cmd_fd, static_cast<off_t>(off));
	if (p == MAP_FAILED)
		return errno;
	if (out)
		*out = p;
	else
		munmap(p, len);
	return 0;
}

/* A queue whose ring the process maps: where, and how it goes. */
struct Ringed {
	std::function<void()> destroy;
	uint64_t off;
	size_t len;
};

/* A CQ, given back in @out too when the caller needs it. */
Ringed cq_with_ring(Setup &s, int cqe, ibv_cq **out = nullptr)
{
	ibv_cq *cq = ibv_create_cq(s.ctx, cqe, nullptr, nullptr, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	if (out)
		*out = cq;
	const sroce::Mapping &m = sroce::to_cq(cq)->map;
	return {[cq] { ibv_destroy_cq(cq); }, mapping_offset(m.get()), m.size()};
}

Ringed srq_with_ring(Setup &s)
{
	ibv_srq_init_attr a{};
	a.attr.max_wr = 16;
	a.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(s.pd, &a);
	if (!srq)
		die("ibv_create_srq", errno);
	const sroce::Mapping &m = sroce::to_srq(srq)->map;
	return {[srq] { ibv_destroy_srq(srq); }, mapping_offset(m.get()), m.size()};
}

/* An RC QP, offering its send ring's offset, or its receive ring's. */
Ringed qp_with_ring(Setup &s, bool send_ring)
{
	ibv_qp *qp = create_rc(s);
	const sroce::Qp *q = sroce::to_qp(qp);
	const sroce::Mapping &m = send_ring ? q->sq_map : q->rq_map;
	return {[qp] { ibv_destroy_qp(qp); }, mapping_offset(m.get()), m.size()};
}

/*
 * @r's offset maps a second time while its queue lives, and no more once
 * it is destroyed; the second mapping stays the process's memory.
 */
void check_offset_dies_with(Setup &s, Ringed r, const std::string &what)
{
	check(r.off != ~0ull, what + " is a mapping of the uverbs fd");
	void *extra = nullptr;
	int err = map_at(s, r.off, r.len, &extra);
	check(!err, what + ": its offset maps a second time while it lives (" +
			    std::strerror(err) + ")");
	r.destroy();
	err = map_at(s, r.off, r.len);
	check(err == EINVAL, what + ": after the destroy its offset maps no more (" +
				     std::strerror(err) + ")");
	if (extra) {
		/* Still ours: the pages outlive the queue until this unmap. */
		std::memset(extra, 0xa5, r.len);
		munmap(extra, r.len);
	}
}

/*
 * A hundred queues made by @make, each destroyed while a thread maps its
 * ring's offset in a loop (after its first mmap): every mmap succeeds or
 * fails with EINVAL.
 */
void destroy_under_mapper(Setup &s, const std::function<Ringed(int)> &make,
			  const std::string &what)
{
	int odd = 0;
	for (int round = 0; round < 100; round++) {
		Ringed r = make(round);
		std::atomic<bool> mapped{false}, stop{false};
		std::thread mapper([&] {
			/* Until the destroy has been seen, and a bounded while. */
			for (int i = 0; i < 100000; i++) {
				const int e = map_at(s, r.off, r.len);
				if (!e)
					mapped.store(true);
				else if (e != EINVAL)
					odd++;
				if (e && stop.load())
					break;
			}
		});
		/* The destroy comes while the thread is mapping. */
		for (int i = 0; i < 10000 && !mapped.load(); i++)
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		if (!mapped.load())
			odd++;
		r.destroy();
		stop.store(true);
		mapper.join();
	}
	check(odd == 0, "a hundred destroys of " + what + " under a thread mapping its "
			"offset, each after its first mmap: every mmap succeeded or failed "
			"with EINVAL (" + std::to_string(odd) + " otherwise)");
}

void stale_mmap(Setup &s)
{
	check_offset_dies_with(s, cq_with_ring(s, 16), "a CQ's ring");
	check_offset_dies_with(s, srq_with_ring(s), "an SRQ's ring");
	check_offset_dies_with(s, qp_with_ring(s, true), "a QP's send ring");
	check_offset_dies_with(s, qp_with_ring(s, false), "a QP's receive ring");

	ibv_cq *cq;
	Ringed resized = cq_with_ring(s, 16, &cq);
	if (ibv_resize_cq(cq, 200))
		die("ibv_resize_cq", errno);
	const int err = map_at(s, resized.off, resized.len);
	check(err == EINVAL, std::string("a resized CQ's old ring offset maps no more (") +
				     std::strerror(err) + ")");
	resized.destroy();

	destroy_under_mapper(s, [&](int) { return cq_with_ring(s, 16); }, "a CQ");
	destroy_under_mapper(s, [&](int) { return srq_with_ring(s); }, "an SRQ");
	destroy_under_mapper(s, [&](int round) { return qp_with_ring(s, round % 2); },
			     "a QP (its send ring and its receive ring in turn)");

	auto *buf = static_cast<uint8_t *>(std::aligned_alloc(4096, 4096));
	ibv_mr *mr = buf ? ibv_reg_mr(s.pd, buf, 4096,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) :
			   nullptr;
	if (!mr)
		die("ibv_reg_mr", errno);
	std::memset(buf, 0, 4096);
	std::memset(buf + 2048, 0x5a, 100);
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf + 2048), 100, mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(buf);
	wr.wr.rdma.rkey = mr->rkey;
	const ibv_wc_status st = post_on_new_pair(s, wr);
	check(st == IBV_WC_SUCCESS && buf[0] == 0x5a && buf[99] == 0x5a,
	      std::string("the device then carries a WRITE (") + ibv_wc_status_str(st) + ")");
	ibv_dereg_mr(mr);
	std::free(buf);
}

void rq_bad_wqe(Setup &s)
{
	ibv_qp *sender = make_rc(s), *victim = make_rc(s);

	connect(s, sender, victim->qp_num);
	connect(s, victim, sender->qp_num);
	post_recvs(s, victim, 8);
	const sroce::Ring &rq = sroce::to_qp(victim)->rq.ring;
	auto *wqe = reinterpret_cast<sroce_recv_wqe *>(rq.slot(rq.consumer(std::memory_order_acquire) + 3));
	std::atomic_ref<uint32_t>(wqe->num_sge).store(~0u, std::memory_order_release);
	post_sends(s, sender, 4);	/* the fourth meets the corrupt WQE */
	check(wait_state(victim, IBV_QPS_ERR), "the receiving QP is in the error state");
	check(wait_event(s, victim, IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL raised");
	int ok = 0, flushed = 0, other = 0;
	std::vector<int> seen(8, 0);
	const auto end = std::chrono::steady_clock::now() + kLimit;
	while (ok + flushed + other < 8 && std::chrono::steady_clock::now() < end) {
		ibv_wc wc;
		if (ibv_poll_cq(s.cq, 1, &wc) <= 0) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
			continue;
		}
		if (wc.wr_id < 200 || wc.wr_id >= 208)
			continue;	/* the sender's */
		if (seen[wc.wr_id - 200]++)
			other++;
		else if (wc.wr_id < 203 && wc.status == IBV_WC_SUCCESS)
			ok++;
		else if (wc.wr_id >= 203 && wc.status == IBV_WC_WR_FLUSH_ERR)
			flushed++;
		else
			other++;
	}
	check(ok == 3 && flushed == 5 && !other,
	      std::to_string(ok) + " of 3 receives before the corrupt one completed, " +
		      std::to_string(flushed) + " of 5 from it on flushed, " +
		      std::to_string(other) + " otherwise or twice");
	ibv_destroy_qp(sender);
	ibv_destroy_qp(victim);
}

/* The async events that arrive within @limit: (type, element) pairs. */
std::vector<std::pair<ibv_event_type, void *>> collect_events(Setup &s,
							      std::chrono::milliseconds limit)
{
	std::vector<std::pair<ibv_event_type, void *>> got;
	const auto end = std::chrono::steady_clock::now() + limit;

	while (std::chrono::steady_clock::now() < end) {
		ibv_async_event ev;
		if (!next_event(s, ev))
			continue;
		const bool on_srq = ev.event_type == IBV_EVENT_SRQ_ERR ||
				    ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
		got.emplace_back(ev.event_type, on_srq ? static_cast<void *>(ev.element.srq) :
							 static_cast<void *>(ev.element.qp));
		ibv_ack_async_event(&ev);
	}
	return got;
}

int count_events(const std::vector<std::pair<ibv_event_type, void *>> &evs,
		 ibv_event_type type, void *element)
{
	int n = 0;

	for (const auto &[t, e] : evs)
		n += t == type && e == element;
	return n;
}

/*
 * An SRQ whose fourth receive WQE the process corrupted: the QP that
 * reaches it fails (QP_FATAL), the SRQ fails as a whole (SRQ_ERR, once,
 * as a NIC's SRQ catastrophic error), and a second QP on it fails as soon
 * as a request needs a receive; the receives before the corrupt one
 * completed, none from it on (an SRQ is not flushed).
 */
void srq_bad_wqe(Setup &s)
{
	ibv_srq *srq = make_srq(s);
	post_recvs(s, nullptr, 8, srq, 600);
	ibv_qp *first = make_rc(s, srq), *second = make_rc(s, srq);
	ibv_qp *to_first = make_rc(s), *to_second = make_rc(s);

	connect(s, first, to_first->qp_num);
	connect(s, to_first, first->qp_num);
	connect(s, second, to_second->qp_num);
	connect(s, to_second, second->qp_num);
	const sroce::Ring &ring = sroce::to_srq(srq)->rq.ring;
	auto *wqe = reinterpret_cast<sroce_recv_wqe *>(
		ring.slot(ring.consumer(std::memory_order_acquire) + 3));
	std::atomic_ref<uint32_t>(wqe->num_sge).store(~0u, std::memory_order_release);
	post_sends(s, to_first, 4);	/* the fourth meets the corrupt WQE */
	check(wait_state(first, IBV_QPS_ERR), "the QP that met the corrupt WQE is in ERR");
	post_sends(s, to_second, 1);
	check(wait_state(second, IBV_QPS_ERR), "the second QP on the failed SRQ is in ERR");
	const auto evs = collect_events(s, std::chrono::milliseconds(1500));
	check(count_events(evs, IBV_EVENT_SRQ_ERR, srq) == 1, "IBV_EVENT_SRQ_ERR once for the SRQ");
	check(count_events(evs, IBV_EVENT_QP_FATAL, first) == 1 &&
		      count_events(evs, IBV_EVENT_QP_FATAL, second) == 1,
	      "IBV_EVENT_QP_FATAL once for each QP");
	int ok = 0, later = 0;
	ibv_wc wc;
	while (ibv_poll_cq(s.cq, 1, &wc) > 0) {
		if (wc.wr_id >= 600 && wc.wr_id < 603 && wc.status == IBV_WC_SUCCESS)
			ok++;
		else if (wc.wr_id >= 603 && wc.wr_id < 608)
			later++;
	}
	check(ok == 3 && !later, std::to_string(ok) + " of 3 receives before the corrupt one "
		      "completed, " + std::to_string(later) + " from it on (none: not flushed)");
	for (ibv_qp *qp : {first, second, to_first, to_second})
		ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
}

/* Flips, until @stop, the SGE count and first SGE length of every slot of
 * @ring between @sane/@len and 2^32 - 1, at offsets @count_at and
 * @sge_at of a slot.
 */
void flip_slots(const sroce::Ring &ring, size_t count_at, size_t sge_at, uint32_t len,
		const std::atomic<bool> &stop)
{
	for (uint32_t round = 0; !stop.load(std::memory_order_relaxed); round++) {
		for (uint32_t i = 0; i < ring.num_slots(); i++) {
			unsigned char *slot = ring.slot(i);
			const bool wild = (round + i) & 1;
			auto *count = reinterpret_cast<uint32_t *>(slot + count_at);
			auto *length = reinterpret_cast<uint32_t *>(
				slot + sge_at + offsetof(sroce_sge, length));
			std::atomic_ref<uint32_t>(*count).store(wild ? ~0u : 1,
								std::memory_order_relaxed);
			std::atomic_ref<uint32_t>(*length).store(wild ? ~0u : len,
								 std::memory_order_relaxed);
		}
	}
}

/* What a round of flipped slots completed: by status, and how many
 * completions were for no WR, came twice or had the wrong length. */
struct FlipTally {
	std::map<std::string, int> statuses;
	int sends = 0, recvs = 0, wrong = 0;
};

/*
 * Polls @s's CQ until @posted sends and @want receives completed.  Once
 * nothing comes for a while, @stop is set and every QP of @qps goes to
 * ERR, which flushes what is left.  @srq_keeps: the receives are an SRQ's,
 * which a QP's failure does not flush, so fewer than @want may come and
 * the round ends when, after the flush, nothing more does.
 */
FlipTally drain_flipped(Setup &s, std::initializer_list<ibv_qp *> qps, int posted, int want,
			bool srq_keeps, std::atomic<bool> &stop)
{
	FlipTally t;
	std::vector<int> seen(400, 0);
	auto end = std::chrono::steady_clock::now() + kLimit;
	auto last = std::chrono::steady_clock::now();
	bool flushing = false;

	while (t.sends < posted || t.recvs < want) {
		const auto now = std::chrono::steady_clock::now();
		/* Every send answered and nothing new for a while: what is
		 * left waits for messages that will not come.
		 */
		const bool settled = t.sends == posted && now - last > std::chrono::milliseconds(300);
		if (now >= end || settled) {
			if (flushing && (now >= end || srq_keeps))
				break;
			if (!flushing) {
				/* The slots keep whatever the flippers left. */
				stop.store(true);
				for (ibv_qp *qp : qps) {
					ibv_qp_attr a{};
					a.qp_state = IBV_QPS_ERR;
					if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE))
						die("to ERR", err);
				}
				flushing = true;
				last = now;
				end = now + kLimit;
			}
		}
		ibv_wc wc;
		if (ibv_poll_cq(s.cq, 1, &wc) <= 0) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
			continue;
		}
		last = std::chrono::steady_clock::now();
		if (wc.wr_id >= seen.size() || seen[wc.wr_id]++) {
			t.wrong++;
			continue;
		}
		const bool recv = wc.wr_id >= 200;
		t.statuses[std::string(recv ? "recv " : "send ") + ibv_wc_status_str(wc.status)]++;
		if (!recv) {
			t.sends++;
			continue;
		}
		t.recvs++;
		if (wc.status == IBV_WC_SUCCESS && wc.byte_len != kMsg)
			t.wrong++;
	}
	stop.store(true);
	return t;
}

void print_tally(const char *what, int round, const FlipTally &t)
{
	std::printf("%s round %d: statuses:", what, round);
	for (const auto &[st, n] : t.statuses)
		std::printf(" %s %d", st.c_str(), n);
	std::printf("\n");
}

void ring_flip_round(Setup &s, int round)
{
	constexpr int kN = 64;
	ibv_qp *sender = make_rc(s, nullptr, kN), *victim = make_rc(s, nullptr, kN);
	/* A short retry timeout: a receiver that failed drops what comes. */
	to_rtr(s, sender, victim->qp_num, s.gid);
	to_rts(sender, 1, 12);
	to_rtr(s, victim, sender->qp_num, s.gid);
	to_rts(victim, 1, 12);
	std::memset(s.mr->addr, 0, kMsg);
	post_recvs(s, victim, kN);
	std::memset(s.mr->addr, 0x6b, kMsg);

	std::atomic<bool> stop{false};
	const sroce::Ring &sq = sroce::to_qp(sender)->sq.ring;
	const sroce::Ring &rq = sroce::to_qp(victim)->rq.ring;
	std::thread sq_flipper(flip_slots, std::cref(sq), offsetof(sroce_send_wqe, num_sge),
			       sizeof(sroce_send_wqe), kMsg, std::cref(stop));
	std::thread rq_flipper(flip_slots, std::cref(rq), offsetof(sroce_recv_wqe, num_sge),
			       sizeof(sroce_recv_wqe), kMsg, std::cref(stop));
	const int posted = try_post_sends(s, sender, kN);
	const FlipTally t = drain_flipped(s, {sender, victim}, posted, kN, false, stop);
	sq_flipper.join();
	rq_flipper.join();
	std::printf("victim in state %d, sender %d; ", int(qp_state(victim)),
		    int(qp_state(sender)));
	print_tally("ring-flip", round, t);
	check(t.sends == posted && t.recvs == kN && !t.wrong,
	      "round " + std::to_string(round) + ": " + std::to_string(t.sends) + " of " +
		      std::to_string(posted) + " sends and " + std::to_string(t.recvs) + " of " +
		      std::to_string(kN) + " receives completed once each, " +
		      std::to_string(t.wrong) + " completions wrong or twice");
	ibv_destroy_qp(sender);
	ibv_destroy_qp(victim);
	ibv_wc wc;
	while (ibv_poll_cq(s.cq, 1, &wc) > 0)
		;
}

/*
 * The same flipping on an SRQ's slots, which two QPs take from while
 * their peers send: every WR completes once, a send that succeeded had its
 * receive complete with success (none lost), the SRQ fails at most once.
 */
void srq_flip_round(Setup &s, int round)
{
	constexpr int kN = 64, kEach = kN / 2;
	ibv_srq *srq = make_srq(s, kN);
	ibv_qp *senders[2], *victims[2];

	std::memset(s.mr->addr, 0, kMsg);
	post_recvs(s, nullptr, kN, srq);
	std::memset(s.mr->addr, 0x6b, kMsg);
	for (int i = 0; i < 2; i++) {
		senders[i] = make_rc(s, nullptr, kEach);
		victims[i] = make_rc(s, srq, kEach);
		to_rtr(s, senders[i], victims[i]->qp_num, s.gid);
		to_rts(senders[i], 1, 12);
		to_rtr(s, victims[i], senders[i]->qp_num, s.gid);
		to_rts(victims[i], 1, 12);
	}
	std::atomic<bool> stop{false};
	const sroce::Ring &ring = sroce::to_srq(srq)->rq.ring;
	std::thread flipper(flip_slots, std::cref(ring), offsetof(sroce_recv_wqe, num_sge),
			    sizeof(sroce_recv_wqe), kMsg, std::cref(stop));
	const int posted = try_post_sends(s, senders[0], kEach, nullptr, 100) +
			   try_post_sends(s, senders[1], kEach, nullptr, 150);
	const FlipTally t = drain_flipped(s, {senders[0], senders[1], victims[0], victims[1]},
					  posted, kN, true, stop);
	flipper.join();
	const auto evs = collect_events(s, std::chrono::milliseconds(300));
	std::printf("SRQ_ERR %d; ", count_events(evs, IBV_EVENT_SRQ_ERR, srq));
	print_tally("srq-flip", round, t);
	const auto count = [&t](const char *what) {
		const auto it = t.statuses.find(what);
		return it == t.statuses.end() ? 0 : it->second;
	};
	const int sent = count("send success"), received = count("recv success");
	check(t.sends == posted && !t.wrong && sent <= received,
	      "round " + std::to_string(round) + ": " + std::to_string(t.sends) + " of " +
		      std::to_string(posted) + " sends completed once each (" +
		      std::to_string(sent) + " with success, against " + std::to_string(received) +
		      " receives), " + std::to_string(t.wrong) + " completions wrong or twice");
	check(count_events(evs, IBV_EVENT_SRQ_ERR, srq) <= 1,
	      "round " + std::to_string(round) + ": IBV_EVENT_SRQ_ERR at most once");
	for (int i = 0; i < 2; i++) {
		ibv_destroy_qp(senders[i]);
		ibv_destroy_qp(victims[i]);
	}
	if (int err = ibv_destroy_srq(srq))
		die("ibv_destroy_srq", err);
	ibv_wc wc;
	while (ibv_poll_cq(s.cq, 1, &wc) > 0)
		;
}

void srq_flip(Setup &s)
{
	for (int round = 0; round < 4; round++)
		srq_flip_round(s, round);
}

void ring_flip(Setup &s)
{
	for (int round = 0; round < 4; round++)
		ring_flip_round(s, round);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 4) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX sq-behind-fetch|sq-past-ring|rq-behind|"
			     "modify-to-err|cq-overflow|sqd-drain|recv-mid-message|srq-resize|"
			     "reset-to-err|flush-access|cq-resize-posted|destroy-after-last-recv|"
			     "srq-last-wqe|caps-fit-cqs|write-imm-length|iova-top|stale-mmap|rq-bad-wqe|ring-flip|"
			     "srq-bad-wqe|srq-flip|lkey-after-dereg\n",
			     argv[0]);
		return 2;
	}
	tool_name = "qp_edges";
	Setup s = open_setup(argv[1], std::atoi(argv[2]), kMsg, IBV_ACCESS_LOCAL_WRITE);

	const std::string scenario = argv[3];
	if (scenario == "sq-behind-fetch")
		sq_behind_fetch(s);
	else if (scenario == "sq-past-ring")
		sq_past_ring(s);
	else if (scenario == "rq-behind")
		rq_behind(s);
	else if (scenario == "modify-to-err")
		modify_to_err(s);
	else if (scenario == "cq-overflow")
		cq_overflow(s);
	else if (scenario == "sqd-drain")
		sqd_drain(s);
	else if (scenario == "recv-mid-message")
		recv_mid_message(s);
	else if (scenario == "flush-access")
		flush_access(s);
	else if (scenario == "srq-resize")
		srq_resize(s);
	else if (scenario == "reset-to-err")
		reset_to_err(s);
	else if (scenario == "cq-resize-posted")
		cq_resize_posted(s);
	else if (scenario == "destroy-after-last-recv")
		destroy_after_last_recv(s);
	else if (scenario == "srq-last-wqe")
		srq_last_wqe(s);
	else if (scenario == "caps-fit-cqs")
		caps_fit_cqs(s);
	else if (scenario == "write-imm-length")
		write_imm_length(s);
	else if (scenario == "iova-top")
		iova_top(s);
	else if (scenario == "stale-mmap")
		stale_mmap(s);
	else if (scenario == "rq-bad-wqe")
		rq_bad_wqe(s);
	else if (scenario == "ring-flip")
		ring_flip(s);
	else if (scenario == "srq-bad-wqe")
		srq_bad_wqe(s);
	else if (scenario == "srq-flip")
		srq_flip(s);
	else if (scenario == "lkey-after-dereg")
		lkey_after_dereg(s);
	else
		die("unknown scenario", EINVAL);
	return finish();
}

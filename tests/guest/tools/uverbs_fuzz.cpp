// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uverbs_fuzz: hostile user space against sroce's kernel side.  Any local
 * user can open /dev/infiniband/uverbs*; whatever such a process does, the
 * kernel must answer each call (an errno is fine), stay responsive, keep
 * its log clean, and free everything when the process goes.
 *
 *   uverbs_fuzz DEV GID_INDEX SEED SECONDS [THREADS]
 *
 * THREADS threads (default 4) share two device contexts and run, each
 * from its own generator seeded with (SEED, thread), random sequences of:
 *   - create / modify / destroy of PDs, CQs, QPs (RC, UC, UD and invalid
 *     types), SRQs, MRs, MWs and AHs with hostile attributes (edge and
 *     random sizes, masks, states, access flags, addresses, GID indices),
 *     destroying objects still in use;
 *   - QP pairs connected properly over the device's own GID, so traffic
 *     flows, then destroyed with sends and READs in flight;
 *   - XRC: a domain, XRC SRQs and a receive QP, a send QP towards it,
 *     sends naming real, random and out-of-range SRQ numbers, SRQs
 *     destroyed with that traffic in flight, the rest torn down in a
 *     random order;
 *   - posts with random opcodes, flags, SGEs, keys and lengths;
 *   - random bytes written straight into the shared SQ, RQ and SRQ slots
 *     and random producer / consumer indices into the rings, then the
 *     doorbell;
 *   - fork(): a child with the mapped rings and the inherited device fd
 *     scribbles on the rings and sends random raw uverbs write() commands
 *     (random command numbers, lengths and handles), then exits;
 *   - a child that opens its own context, drives it from two threads and
 *     close()s the device fd under them.
 * One thread's sequence is fixed by (SEED, thread); the interleaving of
 * threads is not, so a replay with the same arguments repeats every
 * thread's choices but not their timing.
 *
 * A watchdog fails the run if any call (or a child) takes longer than
 * kHang: the kernel hung.  Exit 0: the time ran out with every call
 * answered; 1: a hang; 2: a usage or set-up error.  The guest test
 * checks the kernel log and that the device still works afterwards.
 */
#include "provider.hpp"
#include "qp.hpp"
#include "srq.hpp"

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/* Far beyond any honest verbs call; far below the test's timeout. */
constexpr auto kHang = std::chrono::seconds(30);
/* A child gets less, so the watchdog never mistakes our wait for a hang. */
constexpr auto kChildHang = std::chrono::seconds(20);
constexpr size_t kMaxEach = 12;		/* live objects of one kind, per thread */
constexpr size_t kBuf = 1 << 16;	/* each thread's registrable memory */

[[noreturn]] void die(const char *what, int err)
{
	std::fprintf(stderr, "uverbs_fuzz: %s: %s\n", what, std::strerror(err));
	std::exit(2);
}

/* What each thread is doing and since when, for the watchdog. */
struct Progress {
	std::atomic<int64_t> since_ms{0};
	std::atomic<const char *> op{"start"};
};

int64_t now_ms()
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(
		Clock::now().time_since_epoch()).count();
}

/* Waits for a child at most kChildHang; one that does not exit hung in the kernel. */
bool reap(pid_t pid)
{
	const auto end = Clock::now() + kChildHang;
	int status;

	while (Clock::now() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	kill(pid, SIGKILL);
	return false;
}

struct Device {
	ibv_context *ctx = nullptr;
	union ibv_gid gid {};
	int gid_index = 0;
	std::string name;
};

ibv_context *open_device(const std::string &name)
{
	ibv_context *ctx = nullptr;
	ibv_device **list = ibv_get_device_list(nullptr);

	for (int i = 0; list && list[i] && !ctx; i++)
		if (name == ibv_get_device_name(list[i]))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

class Fuzzer {
public:
	/* @forks: may start child processes (not in a child: no chains). */
	Fuzzer(Device &dev, uint64_t seed, Progress &progress, bool forks = true)
		: dev_(dev), forks_(forks), rng_(seed), progress_(progress),
		  buf_(static_cast<char *>(std::aligned_alloc(4096, kBuf)))
	{
		if (!buf_)
			die("buffer", ENOMEM);
		std::memset(buf_, 0x5a, kBuf);
	}
	~Fuzzer()
	{
		std::free(buf_);
		if (xrcd_fd_ >= 0)
			close(xrcd_fd_);
	}

	void run(Clock::time_point end, std::atomic<bool> &failed)
	{
		while (Clock::now() < end && !failed)
			step();
		teardown();
	}

	uint64_t ops = 0;

private:
	Device &dev_;
	bool forks_;
	std::mt19937_64 rng_;
	Progress &progress_;
	char *buf_;
	std::vector<ibv_pd *> pds_;
	std::vector<ibv_cq *> cqs_;
	std::vector<ibv_qp *> qps_;
	std::vector<ibv_srq *> srqs_;
	std::vector<ibv_mr *> mrs_;
	std::vector<ibv_mw *> mws_;
	std::vector<ibv_ah *> ahs_;
	int xrcd_fd_ = -1;		/* the file our XRC domains hang on */
	std::vector<uint32_t> xrc_srqns_;	/* this XRC round's SRQs */

	uint64_t pick(uint64_t n) { return n ? rng_() % n : 0; }
	bool chance(int percent) { return pick(100) < uint64_t(percent); }

	/* Edge values first, then anything. */
	uint64_t wild()
	{
		static constexpr uint64_t edges[] = {
			0, 1, 2, 3, 4, 7, 8, 16, 63, 64, 255, 256, 1023, 1024, 4096,
			65535, 65536, 0x7fffffff, 0x80000000, 0xffffffff,
			0x100000000ull, ~0ull, ~0ull >> 1};
		return chance(70) ? edges[pick(std::size(edges))] : rng_();
	}
	uint32_t wild32() { return static_cast<uint32_t>(wild()); }

	template <typename T> T *any(std::vector<T *> &v) { return v.empty() ? nullptr : v[pick(v.size())]; }

	void mark(const char *op)
	{
		progress_.op = op;
		progress_.since_ms = now_ms();
		ops++;
	}

	ibv_pd *pd()
	{
		if (pds_.empty() || (pds_.size() < kMaxEach && chance(5))) {
			mark("alloc_pd");
			if (ibv_pd *p = ibv_alloc_pd(dev_.ctx))
				pds_.push_back(p);
		}
		return any(pds_);
	}

	ibv_cq *cq()
	{
		if (cqs_.empty() || (cqs_.size() < kMaxEach && chance(5))) {
			mark("create_cq");
			const int cqe = chance(60) ? int(1 + pick(512)) : int(wild32());
			if (ibv_cq *c = ibv_create_cq(dev_.ctx, cqe, nullptr, nullptr, 0))
				cqs_.push_back(c);
		}
		return any(cqs_);
	}

	ibv_qp *create_qp(ibv_qp_type type, bool hostile)
	{
		ibv_pd *p = pd();
		ibv_cq *c = cq();
		if (!p || !c)
			return nullptr;
		ibv_qp_init_attr init{};
		init.qp_type = type;
		init.send_cq = c;
		init.recv_cq = chance(80) ? c : any(cqs_);
		init.srq = chance(15) ? any(srqs_) : nullptr;
		init.sq_sig_all = chance(50);
		init.cap.max_send_wr = hostile && chance(30) ? wild32() : 1 + pick(64);
		init.cap.max_recv_wr = hostile && chance(30) ? wild32() : 1 + pick(64);
		init.cap.max_send_sge = hostile && chance(30) ? wild32() : 1 + pick(4);
		init.cap.max_recv_sge = hostile && chance(30) ? wild32() : 1 + pick(4);
		init.cap.max_inline_data = hostile && chance(30) ? wild32() : pick(128);
		mark("create_qp");
		ibv_qp *qp = ibv_create_qp(p, &init);
		if (qp)
			qps_.push_back(qp);
		return qp;
	}

	void random_ah_attr(ibv_ah_attr &ah, bool sane)
	{
		ah = {};
		ah.is_global = sane || chance(80);
		ah.port_num = sane ? 1 : uint8_t(pick(3));
		ah.grh.dgid = dev_.gid;
		if (!sane && chance(30))
			for (auto &b : ah.grh.dgid.raw)
				b = uint8_t(rng_());
		ah.grh.sgid_index = sane ? dev_.gid_index : uint8_t(chance(50) ? pick(8) : rng_());
		ah.grh.hop_limit = uint8_t(sane ? 64 : rng_());
		ah.grh.traffic_class = uint8_t(rng_());
		ah.grh.flow_label = uint32_t(rng_());
		ah.sl = uint8_t(pick(16));
		ah.dlid = uint16_t(rng_());
	}

	/* RESET -> INIT -> RTR -> RTS towards `dest` on our own GID. */
	bool connect(ibv_qp *qp, uint32_t dest)
	{
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mark("modify_qp(INIT)");
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS))
			return false;
		a = {};
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		random_ah_attr(a.ah_attr, true);
		mark("modify_qp(RTR)");
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
			return false;
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 8;
		a.retry_cnt = uint8_t(pick(8));
		a.rnr_retry = uint8_t(pick(8));
		a.max_rd_atomic = 4;
		mark("modify_qp(RTS)");
		return !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						      IBV_QP_MAX_QP_RD_ATOMIC);
	}

	void modify_hostile(ibv_qp *qp)
	{
		ibv_qp_attr a{};
		a.qp_state = ibv_qp_state(pick(9));
		a.cur_qp_state = ibv_qp_state(pick(9));
		a.path_mtu = ibv_mtu(pick(8));
		a.qkey = wild32();
		a.rq_psn = wild32();
		a.sq_psn = wild32();
		a.dest_qp_num = wild32();
		a.qp_access_flags = unsigned(wild32());
		a.pkey_index = uint16_t(pick(3));
		a.port_num = uint8_t(pick(3));
		a.timeout = uint8_t(rng_());
		a.retry_cnt = uint8_t(rng_());
		a.rnr_retry = uint8_t(rng_());
		a.min_rnr_timer = uint8_t(rng_());
		a.max_rd_atomic = uint8_t(rng_());
		a.max_dest_rd_atomic = uint8_t(rng_());
		a.sq_draining = uint8_t(rng_());
		a.en_sqd_async_notify = uint8_t(rng_());
		a.rate_limit = wild32();
		a.cap.max_send_wr = wild32();
		a.cap.max_recv_wr = wild32();
		random_ah_attr(a.ah_attr, chance(50));
		const int mask = chance(70) ? int(IBV_QP_STATE | (rng_() & 0x1ffffff)) : int(rng_());
		mark("modify_qp(hostile)");
		ibv_modify_qp(qp, &a, mask);
	}

	void make_pair()
	{
		const ibv_qp_type type = chance(75) ? IBV_QPT_RC : IBV_QPT_UC;
		ibv_qp *a = create_qp(type, false), *b = a ? create_qp(type, false) : nullptr;
		if (!a || !b)
			return;
		if (connect(a, b->qp_num) && connect(b, a->qp_num)) {
			post_recvs(b, 8);
			post_sends(a, 8, true);
		}
	}

	/*
	 * One XRC round: everything it makes it destroys (the domain last,
	 * once nothing of it is left), so the per-kind lists never hold XRC
	 * objects.  SRQs go first half the time, with the sends just posted
	 * to them still in flight.
	 */
	void xrc_round()
	{
		ibv_pd *p = pd();
		ibv_cq *c = cq();
		if (!p || !c)
			return;
		if (xrcd_fd_ < 0)
			xrcd_fd_ = open("/tmp", O_RDWR | O_TMPFILE, 0600);
		if (xrcd_fd_ < 0)
			return;
		ibv_xrcd_init_attr xa{};
		xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
		xa.fd = xrcd_fd_;
		xa.oflags = O_CREAT;
		mark("open_xrcd");
		ibv_xrcd *x = ibv_open_xrcd(dev_.ctx, &xa);
		if (!x)
			return;
		std::vector<ibv_srq *> srqs;
		for (int i = int(1 + pick(3)); i > 0; i--) {
			ibv_srq_init_attr_ex a{};
			a.attr.max_wr = chance(80) ? uint32_t(1 + pick(64)) : wild32();
			a.attr.max_sge = chance(80) ? uint32_t(1 + pick(4)) : wild32();
			a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
				      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
			a.srq_type = IBV_SRQT_XRC;
			a.xrcd = x;
			a.cq = chance(80) ? c : any(cqs_);
			a.pd = chance(80) ? p : any(pds_);
			mark("create_srq(XRC)");
			if (ibv_srq *s = ibv_create_srq_ex(dev_.ctx, &a)) {
				uint32_t n = 0;
				if (!ibv_get_srq_num(s, &n))
					xrc_srqns_.push_back(n);
				srqs.push_back(s);
				post_srq_recvs(s, int(1 + pick(4)));
			}
		}
		ibv_qp_init_attr_ex ti{};
		ti.qp_type = IBV_QPT_XRC_RECV;
		ti.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		ti.xrcd = x;
		mark("create_qp(XRC_RECV)");
		ibv_qp *tgt = ibv_create_qp_ex(dev_.ctx, &ti);
		ibv_qp_init_attr_ex si{};
		si.qp_type = IBV_QPT_XRC_SEND;
		si.send_cq = c;
		si.cap.max_send_wr = uint32_t(1 + pick(32));
		si.cap.max_send_sge = uint32_t(1 + pick(4));
		si.comp_mask = IBV_QP_INIT_ATTR_PD;
		si.pd = p;
		mark("create_qp(XRC_SEND)");
		ibv_qp *ini = ibv_create_qp_ex(dev_.ctx, &si);
		if (tgt && ini) {
			connect(tgt, ini->qp_num);	/* a receive QP stops at RTR */
			if (connect(ini, tgt->qp_num))
				post_sends(ini, int(1 + pick(4)), chance(50));
		}
		if (chance(50) && !srqs.empty()) {
			mark("destroy_srq(XRC, in flight)");
			ibv_destroy_srq(srqs.back());
			srqs.pop_back();
		}
		mark("destroy_qp(XRC)");
		if (chance(50) && ini)
			ibv_destroy_qp(std::exchange(ini, nullptr));
		if (tgt)
			ibv_destroy_qp(tgt);
		if (ini)
			ibv_destroy_qp(ini);
		for (auto *s : srqs) {
			mark("destroy_srq(XRC)");
			ibv_destroy_srq(s);
		}
		xrc_srqns_.clear();
		mark("close_xrcd");
		ibv_close_xrcd(x);
	}

	/*
	 * On-demand paging from a hostile process: our memory taken away
	 * under whatever MRs (ODP among them) cover it, while the QPs use
	 * them; prefetch requests with random keys, ranges, advice and flags.
	 */
	void odp_round()
	{
		const size_t first = pick(kBuf / 4096), n = 1 + pick(kBuf / 4096 - first);
		mark("madvise(DONTNEED)");
		madvise(buf_ + first * 4096, n * 4096, MADV_DONTNEED);
		ibv_pd *p = pd();
		if (!p)
			return;
		ibv_sge sge[4];
		const int nsge = int(pick(5));
		fill_sges(sge, std::min(nsge, 4));
		const auto advice = chance(80) ? ibv_advise_mr_advice(pick(3))
					       : ibv_advise_mr_advice(wild32());
		mark("advise_mr");
		ibv_advise_mr(p, advice, chance(80) ? uint32_t(pick(2)) : wild32(), sge,
			      uint32_t(std::min(nsge, 4)));
	}

	void post_srq_recvs(ibv_srq *srq, int n)
	{
		for (int i = 0; i < n; i++) {
			ibv_sge sge[4];
			const int nsge = int(pick(5));
			fill_sges(sge, std::min(nsge, 4));
			ibv_recv_wr wr{}, *bad;
			wr.wr_id = rng_();
			wr.sg_list = sge;
			wr.num_sge = std::min(nsge, 4);
			mark("post_srq_recv");
			ibv_post_srq_recv(srq, &wr, &bad);
		}
	}

	ibv_mr *mr()
	{
		if (mrs_.empty() || (mrs_.size() < kMaxEach && chance(5))) {
			ibv_pd *p = pd();
			if (!p)
				return nullptr;
			size_t off = pick(kBuf), len = pick(kBuf - off) + 1;
			void *addr = buf_ + off;
			if (chance(10)) {	/* memory that is not ours, lengths that wrap */
				addr = reinterpret_cast<void *>(wild());
				len = size_t(wild());
			}
			int access = chance(80) ? int(IBV_ACCESS_LOCAL_WRITE |
						      (rng_() & 0xe)) : int(wild32());
			if (chance(30))
				access |= IBV_ACCESS_ON_DEMAND;
			mark("reg_mr");
			if (ibv_mr *m = ibv_reg_mr(p, addr, len, access))
				mrs_.push_back(m);
		}
		return any(mrs_);
	}

	void fill_sges(ibv_sge *sge, int n)
	{
		for (int i = 0; i < n; i++) {
			ibv_mr *m = chance(80) ? mr() : nullptr;
			if (m && chance(85)) {
				const uint64_t base = reinterpret_cast<uintptr_t>(m->addr);
				const uint64_t off = pick(m->length + 1);
				sge[i] = {base + off, uint32_t(pick(m->length - off + 64)), m->lkey};
			} else {
				sge[i] = {wild(), wild32(), wild32()};
			}
		}
	}

	void post_sends(ibv_qp *qp, int n, bool sane)
	{
		ibv_sge sge[4][4];
		ibv_send_wr wr[4]{};
		n = std::min(n, 4);
		for (int i = 0; i < n; i++) {
			const int nsge = int(pick(5));
			fill_sges(sge[i], std::min(nsge, 4));
			wr[i].wr_id = rng_();
			wr[i].sg_list = sge[i];
			wr[i].num_sge = sane ? std::min(nsge, 1) : nsge;
			wr[i].opcode = sane ? (chance(50) ? IBV_WR_SEND : IBV_WR_RDMA_READ)
					    : ibv_wr_opcode(pick(17));
			/* Opcodes whose WR carries pointers get real objects or none. */
			if (wr[i].opcode == IBV_WR_TSO)
				wr[i].opcode = IBV_WR_SEND;
			if (wr[i].opcode == IBV_WR_BIND_MW) {
				ibv_mw *w = any(mws_);
				if (!w)
					return;
				wr[i].bind_mw.mw = w;
				wr[i].bind_mw.rkey = wild32();
				wr[i].bind_mw.bind_info.mr = any(mrs_);
				wr[i].bind_mw.bind_info.addr = wild();
				wr[i].bind_mw.bind_info.length = wild();
				wr[i].bind_mw.bind_info.mw_access_flags = unsigned(rng_());
				if (!wr[i].bind_mw.bind_info.mr)
					return;
			}
			wr[i].send_flags = sane ? unsigned(IBV_SEND_SIGNALED) : unsigned(rng_() & 0x1f);
			/* Inline data is read by the provider in this process: it
			 * must be our memory (anything else is the caller's bug).
			 */
			if (wr[i].send_flags & IBV_SEND_INLINE)
				for (int k = 0; k < std::min(nsge, 4); k++) {
					const size_t off = pick(kBuf);
					sge[i][k].addr = reinterpret_cast<uintptr_t>(buf_ + off);
					sge[i][k].length = uint32_t(pick(kBuf - off));
				}
			wr[i].imm_data = uint32_t(rng_());
			ibv_mr *m = any(mrs_);
			wr[i].wr.rdma.remote_addr = m && chance(60) ? reinterpret_cast<uintptr_t>(m->addr) : wild();
			wr[i].wr.rdma.rkey = m && chance(60) ? m->rkey : wild32();
			if (qp->qp_type == IBV_QPT_UD) {
				ibv_ah *ah = any(ahs_);
				if (!ah)
					return;	/* a NULL AH is the caller's bug, not the kernel's */
				wr[i].wr.ud.ah = ah;
				wr[i].wr.ud.remote_qpn = wild32();
				wr[i].wr.ud.remote_qkey = wild32();
			}
			if (qp->qp_type == IBV_QPT_XRC_SEND)
				wr[i].qp_type.xrc.remote_srqn =
					!xrc_srqns_.empty() && chance(60) ? xrc_srqns_[pick(xrc_srqns_.size())]
					: chance(50) ? uint32_t(pick(1u << 24)) : wild32();
			wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
		}
		ibv_send_wr *bad;
		mark("post_send");
		ibv_post_send(qp, wr, &bad);
	}

	void post_recvs(ibv_qp *qp, int n)
	{
		ibv_sge sge[4][4];
		ibv_recv_wr wr[4]{};
		n = std::min(n, 4);
		for (int i = 0; i < n; i++) {
			const int nsge = int(pick(5));
			fill_sges(sge[i], std::min(nsge, 4));
			wr[i].wr_id = rng_();
			wr[i].sg_list = sge[i];
			wr[i].num_sge = nsge;
			wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
		}
		ibv_recv_wr *bad;
		mark("post_recv");
		if (!qp->srq)
			ibv_post_recv(qp, wr, &bad);
		else if (std::find(srqs_.begin(), srqs_.end(), qp->srq) != srqs_.end())
			ibv_post_srq_recv(qp->srq, wr, &bad);	/* only while it is ours */
	}

	/* Random bytes into slots and random indices into a ring, then the doorbell. */
	void scribble(sroce::Ring &ring, const sroce::Doorbell &db)
	{
		if (!ring.attached())
			return;
		for (int k = int(pick(4)); k > 0; k--) {
			unsigned char *s = ring.slot(uint32_t(rng_()));
			for (uint32_t i = 0; i < ring.slot_size(); i++)
				if (chance(30))
					s[i] = uint8_t(rng_());
		}
		sroce_ring_ctrl *c = ring.ctrl();
		const uint32_t cons = std::atomic_ref<uint32_t>(c->consumer).load();
		const uint32_t v = chance(50) ? cons + uint32_t(pick(ring.num_slots() + 3)) - 1
					      : wild32();
		std::atomic_ref<uint32_t>(chance(80) ? c->producer : c->consumer).store(v);
		mark("doorbell");
		db.ring();
	}

	/*
	 * Random words into the context's SQ mark page: marks of QPs that
	 * posted nothing, of QPs that do not exist, words past the last mark
	 * given, `watching` flipped.  The kernel takes them as hints only.
	 */
	void scribble_marks()
	{
		sroce_sq_mark_page *page = sroce::to_context(dev_.ctx)->sq_marks;
		if (!page)
			return;
		for (int k = int(pick(8)); k > 0; k--)
			std::atomic_ref<__u64>(page->marks[pick(SROCE_SQ_MARK_WORDS)])
				.fetch_or(chance(50) ? ~__u64(0) : rng_());
		if (chance(20))
			std::atomic_ref<__u32>(page->watching).store(wild32());
	}

	void scribble_some()
	{
		if (chance(15))
			scribble_marks();
		if (chance(60)) {
			if (ibv_qp *qp = any(qps_)) {
				sroce::Qp *q = sroce::to_qp(qp);
				if (chance(60))
					scribble(q->sq.ring, q->sq.doorbell);
				else
					scribble(q->rq.ring, q->sq.doorbell);
			}
		} else if (ibv_srq *srq = any(srqs_)) {
			sroce::Srq *s = sroce::to_srq(srq);
			scribble(s->rq.ring, any(qps_) ? sroce::to_qp(any(qps_))->sq.doorbell
						       : sroce::Doorbell{});
		}
	}

	/* A child with our mappings and fd: rings scribbled, raw commands. */
	void fork_child(std::atomic<bool> &failed)
	{
		mark("fork");
		const pid_t pid = fork();
		if (pid < 0)
			return;
		if (pid == 0) {
			for (int i = 0; i < 8; i++)
				scribble_some();
			raw_commands(16);
			_exit(0);
		}
		if (!reap(pid)) {
			std::printf("HANG: forked child with the device's rings did not exit\n");
			failed = true;
		}
	}

	/* write() commands with random numbers, lengths and handles (child only). */
	void raw_commands(int n)
	{
		static uint64_t scratch[512];
		for (int i = 0; i < n; i++) {
			uint32_t words[128];
			const size_t len = 8 + 4 * pick(120);
			for (auto &w : words)
				w = chance(50) ? uint32_t(pick(16)) : uint32_t(rng_());
			auto *hdr = reinterpret_cast<ib_uverbs_cmd_hdr *>(words);
			hdr->command = uint32_t(chance(90) ? pick(64) : rng_());
			hdr->in_words = uint16_t(chance(80) ? len / 4 : rng_());
			hdr->out_words = uint16_t(pick(64));
			/* Most commands start with their response pointer: ours. */
			const uint64_t resp = reinterpret_cast<uintptr_t>(scratch);
			std::memcpy(&words[2], &resp, sizeof(resp));
			mark("raw write");
			if (write(dev_.ctx->cmd_fd, words, len) < 0 && errno == EBADF)
				return;
		}
	}

	/*
	 * A process of its own (exec'd: a fork of a threaded process may only
	 * make async-signal-safe calls) with a context driven by two threads
	 * while it close()s the device fd under them (close_under_use_child).
	 */
	void close_under_use(std::atomic<bool> &failed)
	{
		mark("fork(close)");
		char seed[32], gid[16];
		std::snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rng_());
		std::snprintf(gid, sizeof(gid), "%d", dev_.gid_index);
		const char *argv[] = {"uverbs_fuzz", dev_.name.c_str(), gid, seed, "close", nullptr};
		const pid_t pid = fork();
		if (pid < 0)
			return;
		if (pid == 0) {
			execv("/proc/self/exe", const_cast<char **>(argv));
			_exit(0);
		}
		if (!reap(pid)) {
			std::printf("HANG: a child that closed its device fd did not exit\n");
			failed = true;
		}
	}

	void destroy_some()
	{
		switch (pick(7)) {
		case 0:
			destroy(qps_, ibv_destroy_qp, "destroy_qp");
			break;
		case 1:
			destroy(cqs_, ibv_destroy_cq, "destroy_cq");
			break;
		case 2:
			destroy(mrs_, ibv_dereg_mr, "dereg_mr");
			break;
		case 3:
			destroy(mws_, ibv_dealloc_mw, "dealloc_mw");
			break;
		case 4:
			destroy(ahs_, ibv_destroy_ah, "destroy_ah");
			break;
		case 5:
			destroy(srqs_, ibv_destroy_srq, "destroy_srq");
			break;
		default:
			destroy(pds_, ibv_dealloc_pd, "dealloc_pd");
		}
	}

	/*
	 * Objects still in use refuse (EBUSY), and ones a child destroyed
	 * behind the provider's back fail; either way the provider keeps its
	 * struct, so it leaves our list all the same (the kernel frees what is
	 * left when the process goes; the provider's struct is never touched
	 * after a destroy that may have freed it).
	 */
	template <typename T, typename F> void destroy(std::vector<T *> &v, F f, const char *op)
	{
		if (v.empty())
			return;
		const size_t i = pick(v.size());
		mark(op);
		f(v[i]);
		v.erase(v.begin() + long(i));
	}

	void step()
	{
		switch (pick(21)) {
		case 0:
			if (qps_.size() < kMaxEach)
				create_qp(chance(80) ? ibv_qp_type(IBV_QPT_RC + pick(3))
						     : ibv_qp_type(rng_() & 0xff), true);
			break;
		case 1:
			if (ibv_qp *qp = any(qps_))
				modify_hostile(qp);
			break;
		case 2:
			if (qps_.size() + 2 <= kMaxEach)
				make_pair();
			break;
		case 3:
		case 4:
			if (ibv_qp *qp = any(qps_))
				post_sends(qp, int(1 + pick(4)), chance(30));
			break;
		case 5:
			if (ibv_qp *qp = any(qps_))
				post_recvs(qp, int(1 + pick(4)));
			break;
		case 6:
			if (ibv_cq *c = any(cqs_)) {
				ibv_wc wc[16];
				mark("poll_cq");
				ibv_poll_cq(c, int(pick(17)), wc);
				mark("req_notify_cq");
				ibv_req_notify_cq(c, int(pick(2)));
			}
			break;
		case 7:
			mr();
			break;
		case 8:
			if (ibv_pd *p = pd(); p && mws_.size() < kMaxEach) {
				mark("alloc_mw");
				if (ibv_mw *w = ibv_alloc_mw(p, chance(50) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
					mws_.push_back(w);
			}
			break;
		case 9:
			if (ibv_pd *p = pd(); p && ahs_.size() < kMaxEach) {
				ibv_ah_attr a;
				random_ah_attr(a, chance(50));
				mark("create_ah");
				if (ibv_ah *ah = ibv_create_ah(p, &a))
					ahs_.push_back(ah);
			}
			break;
		case 10:
			if (ibv_pd *p = pd(); p && srqs_.size() < kMaxEach) {
				ibv_srq_init_attr a{};
				a.attr.max_wr = chance(70) ? uint32_t(1 + pick(128)) : wild32();
				a.attr.max_sge = chance(70) ? uint32_t(1 + pick(4)) : wild32();
				a.attr.srq_limit = wild32();
				mark("create_srq");
				if (ibv_srq *s = ibv_create_srq(p, &a))
					srqs_.push_back(s);
			}
			break;
		case 11:
			if (ibv_srq *s = any(srqs_)) {
				ibv_srq_attr a{};
				a.max_wr = chance(50) ? uint32_t(1 + pick(256)) : wild32();
				a.srq_limit = wild32();
				mark("modify_srq");
				ibv_modify_srq(s, &a, int(rng_() & 3));
			}
			break;
		case 12:
		case 13:
			scribble_some();
			break;
		case 14:
			if (forks_ && chance(20))
				fork_child(failed_);
			break;
		case 15:
			if (forks_ && chance(10))
				close_under_use(failed_);
			break;
		case 16:
			if (ibv_qp *qp = any(qps_)) {
				ibv_qp_attr a;
				ibv_qp_init_attr init;
				mark("query_qp");
				ibv_query_qp(qp, &a, int(rng_()), &init);
			}
			break;
		case 17:
			if (chance(25))
				xrc_round();
			break;
		case 18:
			odp_round();
			break;
		default:
			destroy_some();
		}
	}

	void teardown()
	{
		for (auto *q : qps_)
			ibv_destroy_qp(q);
		for (auto *s : srqs_)
			ibv_destroy_srq(s);
		for (auto *a : ahs_)
			ibv_destroy_ah(a);
		for (auto *w : mws_)
			ibv_dealloc_mw(w);
		for (auto *m : mrs_)
			ibv_dereg_mr(m);
		for (auto *c : cqs_)
			ibv_destroy_cq(c);
		for (auto *p : pds_)
			ibv_dealloc_pd(p);
	}

public:
	std::atomic<bool> failed_{false};
};

/* The exec'd child of close_under_use: never returns. */
[[noreturn]] void close_under_use_child(Device &dev, uint64_t seed)
{
	dev.ctx = open_device(dev.name);
	if (!dev.ctx)
		_exit(0);
	if (ibv_query_gid(dev.ctx, 1, dev.gid_index, &dev.gid))
		_exit(0);
	Progress p1, p2;
	std::atomic<bool> stop{false};
	const auto end = Clock::now() + std::chrono::milliseconds(300);
	std::thread a([&] { Fuzzer f(dev, seed, p1, false); f.run(end, stop); });
	std::thread b([&] { Fuzzer f(dev, seed + 1, p2, false); f.run(end, stop); });
	std::this_thread::sleep_for(std::chrono::milliseconds(seed % 200));
	close(dev.ctx->cmd_fd);
	a.join();
	b.join();
	_exit(0);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX SEED SECONDS [THREADS]\n", argv[0]);
		return 2;
	}
	const uint64_t seed = std::strtoull(argv[3], nullptr, 0);
	if (argc == 5 && !std::strcmp(argv[4], "close")) {
		Device dev;
		dev.name = argv[1];
		dev.gid_index = std::atoi(argv[2]);
		close_under_use_child(dev, seed);
	}
	const int seconds = std::atoi(argv[4]);
	const int nthreads = argc == 6 ? std::atoi(argv[5]) : 4;
	if (nthreads < 1 || nthreads > 64 || seconds < 1)
		die("threads 1-64, seconds >= 1", EINVAL);
	signal(SIGPIPE, SIG_IGN);

	Device devs[2];
	for (auto &d : devs) {
		d.name = argv[1];
		d.gid_index = std::atoi(argv[2]);
		d.ctx = open_device(d.name);
		if (!d.ctx)
			die("no such device", ENODEV);
		if (int err = ibv_query_gid(d.ctx, 1, d.gid_index, &d.gid))
			die("ibv_query_gid", err);
	}
	std::printf("uverbs_fuzz %s seed %llu, %d s, %d threads\n", argv[1],
		    (unsigned long long)seed, seconds, nthreads);
	std::fflush(stdout);

	const auto end = Clock::now() + std::chrono::seconds(seconds);
	std::vector<Progress> progress(static_cast<size_t>(nthreads));
	for (auto &p : progress)
		p.since_ms = now_ms();
	std::atomic<bool> failed{false};
	std::atomic<uint64_t> total{0};
	std::vector<std::thread> threads;
	for (int t = 0; t < nthreads; t++)
		threads.emplace_back([&, t] {
			Fuzzer f(devs[t % 2], seed * 1000003 + uint64_t(t), progress[size_t(t)]);
			f.run(end, failed);
			if (f.failed_)
				failed = true;
			total += f.ops;
			progress[size_t(t)].since_ms = 0;	/* done */
		});

	/* The watchdog: a call that does not return is a hung kernel. */
	bool hung = false;
	while (!hung) {
		bool all_done = true;
		for (auto &p : progress) {
			const int64_t since = p.since_ms;
			if (since)
				all_done = false;
			if (since && now_ms() - since > kHang.count() * 1000) {
				std::printf("HANG: %s has not returned for %lld s\n", p.op.load(),
					    (long long)((now_ms() - since) / 1000));
				hung = true;
			}
		}
		if (all_done || (Clock::now() > end + kHang + kHang))
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	}
	if (hung) {
		std::fflush(stdout);
		_exit(1);
	}
	for (auto &t : threads)
		t.join();
	for (auto &d : devs)
		ibv_close_device(d.ctx);
	std::printf("%llu operations, %s\n", (unsigned long long)total.load(),
		    failed ? "a child hung" : "every call answered");
	return failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the guest tools that test one device against itself share: a PD,
 * a CQ and an MR on the device named on the command line, RC QPs
 * connected to each other through the device's own GID, and the way they
 * report (one line per check; exit 0 only if every check held, 1 if one
 * failed, 2 on a usage or set-up error).
 */
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace rc_loopback {

inline const char *tool_name = "tool";
inline int failures;

[[noreturn]] inline void die(const char *what, int err)
{
	std::fprintf(stderr, "%s: %s: %s\n", tool_name, what, std::strerror(err));
	std::exit(2);
}

inline void check(bool ok, const std::string &what)
{
	std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
	std::fflush(stdout);	/* a tool killed at its time limit says how far it got */
	if (!ok)
		failures++;
}

/* The summary line and the exit status. */
inline int finish()
{
	std::printf("%d checks failed\n", failures);
	return failures ? 1 : 0;
}

struct Setup {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	union ibv_gid gid {};
	int gid_index = 0;
};

/* Opens @dev and makes the PD, a CQ of @cq_entries and an MR of @mr_bytes
 * with @access.
 */
inline Setup open_setup(const char *dev, int gid_index, size_t mr_bytes,
			int access, int cq_entries = 256)
{
	Setup s;
	s.gid_index = gid_index;
	ibv_device **list = ibv_get_device_list(nullptr);
	for (int i = 0; list && list[i]; i++)
		if (!std::strcmp(ibv_get_device_name(list[i]), dev))
			s.ctx = ibv_open_device(list[i]);
	if (!s.ctx)
		die("no such device", ENODEV);
	if (int err = ibv_query_gid(s.ctx, 1, s.gid_index, &s.gid))
		die("ibv_query_gid", err);
	s.pd = ibv_alloc_pd(s.ctx);
	s.cq = ibv_create_cq(s.ctx, cq_entries, nullptr, nullptr, 0);
	void *buf = std::aligned_alloc(4096, (mr_bytes + 4095) / 4096 * 4096);
	if (buf)
		std::memset(buf, 0, mr_bytes);
	s.mr = s.pd && buf ? ibv_reg_mr(s.pd, buf, mr_bytes, access) : nullptr;
	if (!s.pd || !s.cq || !s.mr)
		die("PD/CQ/MR", errno);
	return s;
}

/* A QP of @type in RESET, 16 WRs of one SGE each way, completing sends
 * on @send_cq and receives on @recv_cq.
 */
inline ibv_qp *create_qp_on(Setup &s, ibv_qp_type type, ibv_cq *send_cq, ibv_cq *recv_cq)
{
	ibv_qp_init_attr init{};
	init.send_cq = send_cq;
	init.recv_cq = recv_cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = type;
	ibv_qp *qp = ibv_create_qp(s.pd, &init);
	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

/*
 * An RC QP in RESET, receiving through @srq if there is one; with
 * @send_ops, created extended with those ibv_wr_* operations.
 */
inline ibv_qp *create_rc(Setup &s, ibv_srq *srq = nullptr, uint32_t depth = 16,
			 uint64_t send_ops = 0)
{
	ibv_qp_init_attr_ex init{};
	init.send_cq = init.recv_cq = s.cq;
	init.srq = srq;
	init.cap.max_send_wr = depth;
	init.cap.max_recv_wr = srq ? 0 : depth;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_RC;
	init.pd = s.pd;
	init.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = send_ops;
	}
	ibv_qp *qp = ibv_create_qp_ex(s.ctx, &init);
	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

/* RC QP @qp from RESET to INIT, granting the peer @access. */
inline void rc_to_init(ibv_qp *qp, int access = IBV_ACCESS_REMOTE_WRITE)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("to INIT", err);
}

/* An RC QP in INIT granting the peer @access. */
inline ibv_qp *make_rc(Setup &s, ibv_srq *srq = nullptr, uint32_t depth = 16,
		       uint64_t send_ops = 0, int access = IBV_ACCESS_REMOTE_WRITE)
{
	ibv_qp *qp = create_rc(s, srq, depth, send_ops);
	rc_to_init(qp, access);
	return qp;
}

/* INIT -> RTR towards `dest_qpn` at @dgid, taking @rd_atomic READs or
 * atomics from the peer at once, packets of @mtu.
 */
inline void to_rtr(Setup &s, ibv_qp *qp, uint32_t dest_qpn, const ibv_gid &dgid,
		   uint8_t rd_atomic = 1, ibv_mtu mtu = IBV_MTU_1024)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = s.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
						    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
						    IBV_QP_MIN_RNR_TIMER))
		die("to RTR", err);
}

/* RTR -> RTS with @rd_atomic READs or atomics outstanding and @timeout. */
inline void to_rts(ibv_qp *qp, uint8_t rd_atomic = 1, uint8_t timeout = 18)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atomic;
	if (int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
						    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("to RTS", err);
}

/* INIT -> RTR -> RTS towards `dest_qpn` at @dgid (default: the same
 * device), one READ or atomic outstanding each way; a timeout of ~1 s:
 * nothing is retransmitted meanwhile.
 */
inline void connect(Setup &s, ibv_qp *qp, uint32_t dest_qpn,
		    const ibv_gid *dgid = nullptr)
{
	to_rtr(s, qp, dest_qpn, dgid ? *dgid : s.gid);
	to_rts(qp);
}

/* One signaled SEND of @len bytes at @addr (lkey @lkey) on @qp, with
 * @more_flags (IBV_SEND_SOLICITED, say).
 */
inline void post_one_send(ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
			  uint32_t lkey, unsigned int more_flags = 0)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(addr), len, lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | more_flags;
	if (int err = ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send", err);
}

/* @n receives of @len bytes at the start of @s's MR, wr_id @first on: to
 * @srq if given, else to @qp's receive queue.
 */
inline void post_recvs(Setup &s, ibv_qp *qp, int n, ibv_srq *srq = nullptr,
		       uint64_t first = 200, uint32_t len = 64)
{
	for (int i = 0; i < n; i++) {
		ibv_sge sge{reinterpret_cast<uintptr_t>(s.mr->addr), len, s.mr->lkey};
		ibv_recv_wr wr{}, *bad;
		wr.wr_id = first + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int err = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad))
			die(srq ? "ibv_post_srq_recv" : "ibv_post_recv", err);
	}
}

/* The next completion on @s's CQ, or a wc with wr_id ~0 after 10 s. */
inline ibv_wc next_completion(Setup &s)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	ibv_wc wc{};

	while (std::chrono::steady_clock::now() < end) {
		const int r = ibv_poll_cq(s.cq, 1, &wc);
		if (r < 0)
			die("ibv_poll_cq", EIO);
		if (r == 1)
			return wc;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	wc.wr_id = ~0ull;
	return wc;
}

/* Checks that a UC QP asking for @send_ops (RC-only ones) is refused
 * with EOPNOTSUPP, as by ConnectX and rxe.
 */
inline void check_uc_refuses(Setup &s, uint64_t send_ops, const char *what)
{
	ibv_qp_init_attr_ex init{};
	init.send_cq = init.recv_cq = s.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_UC;
	init.pd = s.pd;
	init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	init.send_ops_flags = send_ops;
	ibv_qp *uc = ibv_create_qp_ex(s.ctx, &init);
	const int err = errno;
	check(!uc && err == EOPNOTSUPP,
	      std::string("a UC QP with ") + what + ": EOPNOTSUPP (got " +
		      (uc ? "a QP" : std::strerror(err)) + ")");
	if (uc)
		ibv_destroy_qp(uc);
}

/* Byte @off of @s's MR. */
inline uint8_t *mem(Setup &s, size_t off)
{
	return static_cast<uint8_t *>(s.mr->addr) + off;
}

} // namespace rc_loopback

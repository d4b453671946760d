// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc INI_DEV INI_GID TGT_DEV TGT_GID DOMAIN_FILE: eXtended Reliable
 * Connection, checked as an application sees it.  XRC send QPs on INI_DEV,
 * an XRC domain (shared through DOMAIN_FILE) with its SRQs and receive QPs
 * on TGT_DEV (the same device works: loopback):
 *
 *   - a 64 KiB SEND (64 packets) and a SEND with immediate, each to the SRQ
 *     its WQE names, completing on that SRQ's CQ with the receive QP's
 *     number; RDMA WRITE (with immediate too), READ of 256 KiB, both
 *     atomics, through the PD of the SRQ the request names; the ibv_wr_*
 *     API with ibv_wr_set_xrc_srqn; every byte compared;
 *   - the domain shared: a second open of TGT_DEV opens the domain through
 *     the same file and the receive QP by number (ibv_open_qp), queries
 *     it, closes it; the QP goes on receiving;
 *   - refused, the send QP failing as RC does (IBV_WC_REM_INV_REQ_ERR),
 *     the receive QP in ERR: an SRQ number that names nothing, an SRQ of
 *     another domain, an SRQ destroyed under the receive QP; an rkey of
 *     a PD that is not the SRQ's: IBV_WC_REM_ACCESS_ERR;
 *   - the verbs' edges: the device claims XRC; ATOMIC WRITE on an XRC send
 *     QP is EOPNOTSUPP; nothing can be posted to an XRC QP's absent queues,
 *     not even by uverbs' own POST_SEND past the provider, in ERR or RTS.
 *
 * One line per check; exit 0 only if every check held.
 */
#include "rc_loopback.hpp"

#include <rdma/ib_user_verbs.h>

#include <endian.h>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

namespace {

using namespace rc_loopback;

constexpr size_t kMr = 1 << 20;
/*
 * Where each message's bytes leave from in the sender's MR, none written
 * again once sent: RC payloads leave by reference to the registered
 * pages, so a packet a capture still holds shows what the memory holds
 * when the capture reads it (test_xrc.py checks every captured ICRC).
 */
constexpr size_t kSmall = 64 * 1024;
constexpr size_t kWrite = 128 * 1024;
constexpr size_t kWrApi = 400 * 1024;
constexpr size_t kShared = 410 * 1024;
constexpr uint32_t kDepth = 64;
constexpr int kRemoteAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

/* The receiving side: a domain, and everything of it on TGT_DEV. */
struct Target {
	Setup s;		/* ctx, pd, the SRQs' CQ, the MR remote access goes to */
	int fd = -1;
	ibv_xrcd *xrcd = nullptr;
};

ibv_xrcd *open_domain(ibv_context *ctx, int fd)
{
	ibv_xrcd_init_attr a{};
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = fd;
	a.oflags = O_CREAT;
	ibv_xrcd *x = ibv_open_xrcd(ctx, &a);
	if (!x)
		die("ibv_open_xrcd", errno);
	return x;
}

ibv_srq *make_srq(Target &t, ibv_xrcd *xrcd, ibv_pd *pd)
{
	ibv_srq_init_attr_ex a{};
	a.attr.max_wr = kDepth;
	a.attr.max_sge = 1;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = IBV_SRQT_XRC;
	a.xrcd = xrcd;
	a.cq = t.s.cq;
	a.pd = pd;
	ibv_srq *srq = ibv_create_srq_ex(t.s.ctx, &a);
	if (!srq)
		die("ibv_create_srq_ex (XRC)", errno);
	return srq;
}

uint32_t srq_num(ibv_srq *srq)
{
	uint32_t n = 0;
	if (int err = ibv_get_srq_num(srq, &n))
		die("ibv_get_srq_num", err);
	return n;
}

/* Receives of @len bytes at @off of the target's MR, one per WQE. */
void post_recvs(Target &t, ibv_srq *srq, size_t off, uint32_t len, int n)
{
	for (int i = 0; i < n; i++) {
		ibv_sge sg{reinterpret_cast<uintptr_t>(mem(t.s, off)), len, t.s.mr->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = 0x5000 + off;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		if (int err = ibv_post_srq_recv(srq, &wr, &bad))
			die("ibv_post_srq_recv", err);
	}
}

/* A send QP on @s and a receive QP of @xrcd on @t, connected (RTS, RTR). */
struct Pair {
	ibv_qp *ini = nullptr;
	ibv_qp *tgt = nullptr;
};

void modify(ibv_qp *qp, ibv_qp_attr &a, int mask, const char *what)
{
	if (int err = ibv_modify_qp(qp, &a, mask))
		die(what, err);
}

void to_init(ibv_qp *qp, int access)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	modify(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS, "to INIT");
}

ibv_qp *create_send_qp(Setup &s, uint64_t send_ops)
{
	ibv_qp_init_attr_ex init{};
	init.qp_type = IBV_QPT_XRC_SEND;
	init.send_cq = s.cq;
	init.cap.max_send_wr = kDepth;
	init.cap.max_send_sge = 1;
	init.pd = s.pd;
	init.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = send_ops;
	}
	return ibv_create_qp_ex(s.ctx, &init);
}

Pair connect_pair(Setup &ini, Target &t, ibv_xrcd *xrcd, uint64_t send_ops = 0)
{
	Pair p;
	p.ini = create_send_qp(ini, send_ops);
	if (!p.ini)
		die("ibv_create_qp_ex (XRC send)", errno);
	ibv_qp_init_attr_ex init{};
	init.qp_type = IBV_QPT_XRC_RECV;
	init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	init.xrcd = xrcd;
	p.tgt = ibv_create_qp_ex(t.s.ctx, &init);
	if (!p.tgt)
		die("ibv_create_qp_ex (XRC receive)", errno);
	to_init(p.ini, 0);
	to_init(p.tgt, kRemoteAll);
	to_rtr(t.s, p.tgt, p.ini->qp_num, ini.gid, 4);
	to_rtr(ini, p.ini, p.tgt->qp_num, t.s.gid, 4);
	to_rts(p.ini, 4, 14);
	return p;
}

/* Posts one WR on the send QP towards XRC SRQ @srqn. */
void post(Pair &p, ibv_send_wr wr, uint32_t srqn)
{
	ibv_send_wr *bad = nullptr;
	wr.qp_type.xrc.remote_srqn = srqn;
	if (int err = ibv_post_send(p.ini, &wr, &bad))
		die("ibv_post_send", err);
}

ibv_send_wr make_wr(uint64_t id, ibv_wr_opcode op, ibv_sge *sg)
{
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = sg ? 1 : 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	return wr;
}

void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 10));
}

std::string status(const ibv_wc &wc)
{
	return wc.wr_id == ~0ull ? "no completion" : ibv_wc_status_str(wc.status);
}

/* Moves data both ways and checks every byte; the pair stays healthy. */
void traffic(Setup &ini, Target &t, Pair &p, ibv_srq *srq1, ibv_srq *srq2)
{
	const uint32_t n1 = srq_num(srq1), n2 = srq_num(srq2);
	const uint32_t big = 64 * 1024;

	/* SEND of 64 packets into srq1's buffer at 0. */
	post_recvs(t, srq1, 0, big, 1);
	fill(mem(ini, 0), big, 1);
	ibv_sge sg{reinterpret_cast<uintptr_t>(mem(ini, 0)), big, ini.mr->lkey};
	post(p, make_wr(1, IBV_WR_SEND, &sg), n1);
	ibv_wc s = next_completion(ini), r = next_completion(t.s);
	check(s.status == IBV_WC_SUCCESS && s.wr_id == 1 && s.opcode == IBV_WC_SEND,
	      "64 KiB SEND completes at the sender (" + status(s) + ")");
	check(r.status == IBV_WC_SUCCESS && r.opcode == IBV_WC_RECV &&
		      r.byte_len == big && r.qp_num == p.tgt->qp_num,
	      "... and on the SRQ's CQ, from the receive QP, 65536 bytes (" +
		      status(r) + ", qp " + std::to_string(r.qp_num) + ", " +
		      std::to_string(r.byte_len) + " B)");
	check(!std::memcmp(mem(t.s, 0), mem(ini, 0), big), "... every byte");

	/* SEND with immediate into srq2's buffer at 512 KiB. */
	post_recvs(t, srq2, 512 * 1024, 4096, 1);
	fill(mem(ini, kSmall), 100, 2);
	ibv_sge small{reinterpret_cast<uintptr_t>(mem(ini, kSmall)), 100, ini.mr->lkey};
	ibv_send_wr imm = make_wr(2, IBV_WR_SEND_WITH_IMM, &small);
	imm.imm_data = htobe32(0xC0FFEE);
	post(p, imm, n2);
	s = next_completion(ini);
	r = next_completion(t.s);
	check(s.status == IBV_WC_SUCCESS && r.status == IBV_WC_SUCCESS &&
		      (r.wc_flags & IBV_WC_WITH_IMM) && be32toh(r.imm_data) == 0xC0FFEE &&
		      r.wr_id == 0x5000 + 512 * 1024,
	      "SEND with immediate lands in the other SRQ's receive, immediate intact");
	check(!std::memcmp(mem(t.s, 512 * 1024), mem(ini, kSmall), 100), "... every byte");

	/* RDMA WRITE of 256 KiB, through srq1's PD. */
	const uint32_t wlen = 256 * 1024;
	fill(mem(ini, kWrite), wlen, 3);
	ibv_sge wsg{reinterpret_cast<uintptr_t>(mem(ini, kWrite)), wlen, ini.mr->lkey};
	ibv_send_wr w = make_wr(3, IBV_WR_RDMA_WRITE, &wsg);
	w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(t.s, 256 * 1024));
	w.wr.rdma.rkey = t.s.mr->rkey;
	post(p, w, n1);
	s = next_completion(ini);
	check(s.status == IBV_WC_SUCCESS && s.opcode == IBV_WC_RDMA_WRITE &&
		      !std::memcmp(mem(t.s, 256 * 1024), mem(ini, kWrite), wlen),
	      "256 KiB RDMA WRITE, every byte (" + status(s) + ")");

	/* WRITE with immediate consumes a receive of the SRQ it names. */
	post_recvs(t, srq2, 0, 0, 1);
	ibv_send_wr wi = make_wr(4, IBV_WR_RDMA_WRITE_WITH_IMM, &small);
	wi.imm_data = htobe32(77);
	wi.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(t.s, 600 * 1024));
	wi.wr.rdma.rkey = t.s.mr->rkey;
	post(p, wi, n2);
	s = next_completion(ini);
	r = next_completion(t.s);
	check(s.status == IBV_WC_SUCCESS && r.status == IBV_WC_SUCCESS &&
		      r.opcode == IBV_WC_RECV_RDMA_WITH_IMM && be32toh(r.imm_data) == 77 &&
		      r.qp_num == p.tgt->qp_num,
	      "RDMA WRITE with immediate completes a receive of the named SRQ");

	/* RDMA READ of 256 KiB back. */
	fill(mem(t.s, 256 * 1024), wlen, 4);
	std::memset(mem(ini, 512 * 1024), 0, wlen);
	ibv_sge rsg{reinterpret_cast<uintptr_t>(mem(ini, 512 * 1024)), wlen, ini.mr->lkey};
	ibv_send_wr rd = make_wr(5, IBV_WR_RDMA_READ, &rsg);
	rd.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(t.s, 256 * 1024));
	rd.wr.rdma.rkey = t.s.mr->rkey;
	post(p, rd, n1);
	s = next_completion(ini);
	check(s.status == IBV_WC_SUCCESS && s.opcode == IBV_WC_RDMA_READ &&
		      s.byte_len == wlen &&
		      !std::memcmp(mem(ini, 512 * 1024), mem(t.s, 256 * 1024), wlen),
	      "256 KiB RDMA READ, every byte (" + status(s) + ")");

	/* Atomics on 8 bytes at 900 KiB. */
	uint64_t *target = reinterpret_cast<uint64_t *>(mem(t.s, 900 * 1024));
	*target = 40;
	ibv_sge asg{reinterpret_cast<uintptr_t>(mem(ini, 900 * 1024)), 8, ini.mr->lkey};
	ibv_send_wr fa = make_wr(6, IBV_WR_ATOMIC_FETCH_AND_ADD, &asg);
	fa.wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(target);
	fa.wr.atomic.rkey = t.s.mr->rkey;
	fa.wr.atomic.compare_add = 2;
	post(p, fa, n2);
	s = next_completion(ini);
	const uint64_t fetched = *reinterpret_cast<uint64_t *>(mem(ini, 900 * 1024));
	check(s.status == IBV_WC_SUCCESS && fetched == 40 && *target == 42,
	      "FETCH_AND_ADD: 40 + 2, the old value returned");
	ibv_send_wr cs = make_wr(7, IBV_WR_ATOMIC_CMP_AND_SWP, &asg);
	cs.wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(target);
	cs.wr.atomic.rkey = t.s.mr->rkey;
	cs.wr.atomic.compare_add = 42;
	cs.wr.atomic.swap = 0x1234;
	post(p, cs, n1);
	s = next_completion(ini);
	check(s.status == IBV_WC_SUCCESS && *target == 0x1234 &&
		      *reinterpret_cast<uint64_t *>(mem(ini, 900 * 1024)) == 42,
	      "CMP_AND_SWP: swapped, the old value returned");
}

/* The ibv_wr_* API: the SRQ number set per WQE. */
void through_wr_api(Setup &ini, Target &t, ibv_xrcd *xrcd, ibv_srq *srq)
{
	Pair p = connect_pair(ini, t, xrcd, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	ibv_qp_ex *qx = ibv_qp_to_qp_ex(p.ini);
	post_recvs(t, srq, 700 * 1024, 4096, 2);
	fill(mem(ini, kWrApi), 3000, 5);
	ibv_wr_start(qx);
	for (int i = 0; i < 2; i++) {
		qx->wr_id = 10 + i;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_xrc_srqn(qx, srq_num(srq));
		ibv_wr_set_sge(qx, ini.mr->lkey,
			       reinterpret_cast<uintptr_t>(mem(ini, kWrApi)), 3000);
	}
	const int err = ibv_wr_complete(qx);
	ibv_wc s1 = next_completion(ini), s2 = next_completion(ini);
	ibv_wc r1 = next_completion(t.s), r2 = next_completion(t.s);
	check(!err && s1.status == IBV_WC_SUCCESS && s2.status == IBV_WC_SUCCESS &&
		      r1.status == IBV_WC_SUCCESS && r2.status == IBV_WC_SUCCESS &&
		      r2.byte_len == 3000 &&
		      !std::memcmp(mem(t.s, 700 * 1024), mem(ini, kWrApi), 3000),
	      "ibv_wr_send + ibv_wr_set_xrc_srqn: two SENDs, every byte");

	ibv_wr_start(qx);
	ibv_wr_send(qx);	/* no SRQ named */
	ibv_wr_set_sge(qx, ini.mr->lkey, reinterpret_cast<uintptr_t>(mem(ini, 0)), 8);
	check(ibv_wr_complete(qx) == EINVAL,
	      "an XRC WQE without ibv_wr_set_xrc_srqn: the batch is refused (EINVAL)");
	ibv_destroy_qp(p.ini);
	ibv_destroy_qp(p.tgt);
}

/* Another process's view: the domain by its file, the receive QP by number. */
void shared_domain(Setup &ini, Target &t, const char *dev, const char *file,
		   Pair &p, ibv_srq *srq)
{
	Setup other = open_setup(dev, t.s.gid_index, 4096, IBV_ACCESS_LOCAL_WRITE);
	const int fd = open(file, O_RDONLY);
	if (fd < 0)
		die("open", errno);
	ibv_xrcd *x = open_domain(other.ctx, fd);
	ibv_qp_open_attr oa{};
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = p.tgt->qp_num;
	oa.xrcd = x;
	oa.qp_type = IBV_QPT_XRC_RECV;
	ibv_qp *opened = ibv_open_qp(other.ctx, &oa);
	check(opened != nullptr, std::string("ibv_open_qp of the receive QP through "
					     "the shared domain (") +
					 (opened ? "ok" : std::strerror(errno)) + ")");
	if (opened) {
		ibv_qp_attr a{};
		ibv_qp_init_attr ia{};
		const int err = ibv_query_qp(opened, &a, IBV_QP_STATE, &ia);
		check(!err && a.qp_state == IBV_QPS_RTR && opened->qp_num == p.tgt->qp_num,
		      "... the opened handle queries the same QP, in RTR");
		check(ibv_destroy_qp(opened) == 0, "... and closes");
	}
	oa.qp_num = 0xFFFFF0;
	ibv_qp *none = ibv_open_qp(other.ctx, &oa);
	check(!none, "ibv_open_qp of a QP number the domain does not have fails");
	check(ibv_close_xrcd(x) == 0, "the second open of the domain closes");
	close(fd);

	/* The first process's receive QP still works. */
	post_recvs(t, srq, 800 * 1024, 64, 1);
	fill(mem(ini, kShared), 64, 6);
	ibv_sge sg{reinterpret_cast<uintptr_t>(mem(ini, kShared)), 64, ini.mr->lkey};
	post(p, make_wr(20, IBV_WR_SEND, &sg), srq_num(srq));
	ibv_wc s = next_completion(ini), r = next_completion(t.s);
	check(s.status == IBV_WC_SUCCESS && r.status == IBV_WC_SUCCESS &&
		      !std::memcmp(mem(t.s, 800 * 1024), mem(ini, kShared), 64),
	      "the receive QP still receives after the other handle closed");
}

/* A SEND to @srqn on a fresh pair is refused: the sender sees @want. */
void refused(Setup &ini, Target &t, ibv_xrcd *xrcd, uint32_t srqn,
	     const std::string &what)
{
	Pair p = connect_pair(ini, t, xrcd);
	ibv_sge sg{reinterpret_cast<uintptr_t>(mem(ini, 0)), 64, ini.mr->lkey};
	post(p, make_wr(30, IBV_WR_SEND, &sg), srqn);
	ibv_wc s = next_completion(ini);
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	/* The receive QP fails on the request it cannot take. */
	const int err = ibv_query_qp(p.tgt, &a, IBV_QP_STATE, &ia);
	check(s.status == IBV_WC_REM_INV_REQ_ERR && !err && a.qp_state == IBV_QPS_ERR,
	      what + ": IBV_WC_REM_INV_REQ_ERR, the receive QP in ERR (" + status(s) +
		      ", state " + std::to_string(a.qp_state) + ")");
	ibv_destroy_qp(p.ini);
	ibv_destroy_qp(p.tgt);
}

void hostile(Setup &ini, Target &t, ibv_srq *srq, const char *dir)
{
	refused(ini, t, t.xrcd, 0xFFFFF, "an SRQ number that names nothing");

	/* Another domain's SRQ, on the same device. */
	std::string file = std::string(dir) + "/xrc-other-domain";
	const int fd = open(file.c_str(), O_RDONLY | O_CREAT, 0600);
	if (fd < 0)
		die("open", errno);
	ibv_xrcd *other = open_domain(t.s.ctx, fd);
	ibv_srq *foreign = make_srq(t, other, t.s.pd);
	refused(ini, t, t.xrcd, srq_num(foreign), "an SRQ of another XRC domain");

	/* An SRQ destroyed under the receive QP that was using it. */
	ibv_srq *doomed = make_srq(t, t.xrcd, t.s.pd);
	const uint32_t doomed_num = srq_num(doomed);
	check(ibv_destroy_srq(doomed) == 0, "an XRC SRQ is destroyed");
	refused(ini, t, t.xrcd, doomed_num, "the SRQ destroyed before the SEND");

	/* Remote access checks the PD of the SRQ the request names. */
	ibv_pd *pd2 = ibv_alloc_pd(t.s.ctx);
	ibv_mr *mr2 = pd2 ? ibv_reg_mr(pd2, mem(t.s, 0), 4096, kRemoteAll) : nullptr;
	if (!mr2)
		die("PD/MR", errno);
	Pair p = connect_pair(ini, t, t.xrcd);
	ibv_sge sg{reinterpret_cast<uintptr_t>(mem(ini, 0)), 64, ini.mr->lkey};
	ibv_send_wr w = make_wr(40, IBV_WR_RDMA_WRITE, &sg);
	w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(t.s, 0));
	w.wr.rdma.rkey = mr2->rkey;
	post(p, w, srq_num(srq));
	ibv_wc s = next_completion(ini);
	check(s.status == IBV_WC_REM_ACCESS_ERR,
	      "an rkey of a PD other than the named SRQ's: IBV_WC_REM_ACCESS_ERR (" +
		      status(s) + ")");
	ibv_destroy_qp(p.ini);
	ibv_destroy_qp(p.tgt);
	ibv_dereg_mr(mr2);
	ibv_dealloc_pd(pd2);
	ibv_destroy_srq(foreign);
	ibv_close_xrcd(other);
	close(fd);
	unlink(file.c_str());
}

void edges(Setup &ini, Pair &p)
{
	ibv_device_attr attr{};
	check(!ibv_query_device(ini.ctx, &attr) &&
		      (attr.device_cap_flags & IBV_DEVICE_XRC),
	      "the device claims XRC (IBV_DEVICE_XRC)");

	ibv_qp *aw = create_send_qp(ini, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE);
	const int err = errno;
	check(!aw && err == EOPNOTSUPP,
	      std::string("an XRC send QP with ATOMIC WRITE: EOPNOTSUPP (") +
		      (aw ? "created" : std::strerror(err)) + ")");
	if (aw)
		ibv_destroy_qp(aw);

	ibv_recv_wr rwr{}, *rbad = nullptr;
	check(ibv_post_recv(p.ini, &rwr, &rbad) != 0,
	      "ibv_post_recv on an XRC send QP fails (it has no receive queue)");
	ibv_send_wr swr{}, *sbad = nullptr;
	swr.opcode = IBV_WR_SEND;
	check(ibv_post_send(p.tgt, &swr, &sbad) != 0,
	      "ibv_post_send on an XRC receive QP fails (it has no send queue)");
	ibv_send_wr wide = make_wr(50, IBV_WR_SEND, nullptr);
	wide.qp_type.xrc.remote_srqn = 1u << 24;
	check(ibv_post_send(p.ini, &wide, &sbad) == EINVAL,
	      "an SRQ number wider than 24 bits: EINVAL");
}

/*
 * A SEND posted to an XRC receive QP through uverbs' own POST_SEND
 * command, past the provider (which refuses it in user space): the QP
 * has no send queue and no send CQ, so the kernel must refuse it too,
 * in every state, as it refuses receives on it.  Returns write()'s errno,
 * 0 if the kernel took the WR.
 */
int raw_post_send(ibv_qp *qp)
{
	ib_uverbs_cmd_hdr hdr{};
	ib_uverbs_post_send cmd{};
	ib_uverbs_send_wr wr{};
	ib_uverbs_post_send_resp resp{};
	/* The command's WRs follow it (a flexible array): laid out by hand. */
	uint8_t req[sizeof(hdr) + sizeof(cmd) + sizeof(wr)];

	hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	hdr.in_words = sizeof(req) / 4;
	hdr.out_words = sizeof(resp) / 4;
	cmd.response = reinterpret_cast<uintptr_t>(&resp);
	cmd.qp_handle = qp->handle;
	cmd.wr_count = 1;
	cmd.wqe_size = sizeof(wr);
	wr.wr_id = 77;
	wr.opcode = IBV_WR_SEND;
	std::memcpy(req, &hdr, sizeof(hdr));
	std::memcpy(req + sizeof(hdr), &cmd, sizeof(cmd));
	std::memcpy(req + sizeof(hdr) + sizeof(cmd), &wr, sizeof(wr));
	return write(qp->context->cmd_fd, req, sizeof(req)) < 0 ? errno : 0;
}

void no_send_queue_in_any_state(Setup &ini, Target &t, ibv_xrcd *xrcd)
{
	ibv_qp_init_attr_ex init{};
	init.qp_type = IBV_QPT_XRC_RECV;
	init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	init.xrcd = xrcd;
	for (ibv_qp_state last : {IBV_QPS_ERR, IBV_QPS_RTS}) {
		ibv_qp *qp = ibv_create_qp_ex(t.s.ctx, &init);
		if (!qp)
			die("ibv_create_qp_ex (XRC receive)", errno);
		to_init(qp, kRemoteAll);
		if (last == IBV_QPS_ERR) {
			ibv_qp_attr a{};
			a.qp_state = IBV_QPS_ERR;
			modify(qp, a, IBV_QP_STATE, "to ERR");
		} else {
			to_rtr(t.s, qp, 1, ini.gid, 4);
			to_rts(qp, 4, 14);
		}
		const int err = raw_post_send(qp);
		check(err == EINVAL,
		      std::string("a raw POST_SEND on an XRC receive QP in ") +
			      (last == IBV_QPS_ERR ? "ERR" : "RTS") + ": EINVAL (" +
			      (err ? std::strerror(err) : "taken") + ")");
		ibv_destroy_qp(qp);
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 6) {
		std::fprintf(stderr, "usage: %s INI_DEV INI_GID TGT_DEV TGT_GID DOMAIN_FILE\n",
			     argv[0]);
		return 2;
	}
	tool_name = "xrc";
	Setup ini = open_setup(argv[1], std::atoi(argv[2]), kMr, kRemoteAll);
	Target t;
	t.s = open_setup(argv[3], std::atoi(argv[4]), kMr, kRemoteAll);
	t.fd = open(argv[5], O_RDONLY | O_CREAT, 0600);
	if (t.fd < 0)
		die("open", errno);
	t.xrcd = open_domain(t.s.ctx, t.fd);
	ibv_srq *srq1 = make_srq(t, t.xrcd, t.s.pd);
	ibv_srq *srq2 = make_srq(t, t.xrcd, t.s.pd);
	check(srq_num(srq1) != srq_num(srq2), "two XRC SRQs, two numbers");

	Pair p = connect_pair(ini, t, t.xrcd);
	traffic(ini, t, p, srq1, srq2);
	through_wr_api(ini, t, t.xrcd, srq1);
	shared_domain(ini, t, argv[3], argv[5], p, srq2);
	edges(ini, p);
	no_send_queue_in_any_state(ini, t, t.xrcd);

	std::string dir(argv[5]);
	dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
	hostile(ini, t, srq1, dir.empty() ? "." : dir.c_str());

	ibv_destroy_qp(p.ini);
	ibv_destroy_qp(p.tgt);
	check(ibv_destroy_srq(srq1) == 0 && ibv_destroy_srq(srq2) == 0,
	      "the SRQs are destroyed");
	check(ibv_close_xrcd(t.xrcd) == 0, "the domain closes once nothing uses it");
	close(t.fd);
	return finish();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for tests/guest/test_hostile_packets.py: QPs that are not
 * ready to receive, as targets for a remote attacker (the 2026 siw class
 * of a NULL dereference reached from the wire, tried on QPs in the states
 * where a device has the least state: RESET, INIT, RTR, and XRC targets).
 *
 *   early_qps DEV GID4_INDEX GID6_INDEX PEER4 PEER6
 *
 * Makes RC, UC and UD QPs in RESET, in INIT with receives posted, and in
 * RTR towards PEER4 and towards PEER6 (with receives), and XRC receive QPs
 * in INIT and RTR sharing an XRC SRQ with receives posted; prints them as
 * one JSON line (what hostile_gen.py --targets reads), then "ready", and
 * waits until its standard input ends, while the packets arrive.  Then it
 * checks what a device must have done with them:
 *   - a QP in RESET or INIT completed nothing and is in the same state;
 *   - a QP in RTR is in RTR or ERR, and no receive completed twice or
 *     outside what was posted;
 *   - the RC QPs that were in RESET and INIT still connect to a fresh QP
 *     and take a SEND into their first receive, every byte right: the
 *     attack left nothing behind in them.
 * Exit status as for every guest tool (rc_loopback.hpp).
 */
#include "rc_loopback.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <set>
#include <vector>

using namespace rc_loopback;

namespace {

constexpr uint32_t kQkey = 0x11111111;	/* the UD QPs' Q_Key, told to the attacker */
constexpr int kRecvs = 4;
constexpr uint32_t kMsg = 256;
constexpr int kRemoteAll = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;

struct Target {
	ibv_qp *qp = nullptr;
	ibv_cq *cq = nullptr;		/* its receive CQ (the SRQ's for XRC) */
	std::string type, state;
	std::set<uint64_t> posted;
};

ibv_gid gid_of(const char *addr)
{
	ibv_gid g{};
	if (inet_pton(AF_INET6, addr, g.raw) == 1)
		return g;
	g.raw[10] = g.raw[11] = 0xff;		/* ::ffff:a.b.c.d */
	if (inet_pton(AF_INET, addr, g.raw + 12) != 1)
		die("not an address", EINVAL);
	return g;
}

void post_recvs(Setup &s, Target &t, ibv_srq *srq, uint64_t first)
{
	for (uint64_t id = first; id < first + kRecvs; id++) {
		ibv_sge sg{reinterpret_cast<uintptr_t>(mem(s, (id % 64) * kMsg)), kMsg,
			   s.mr->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = id;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		if (int err = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(t.qp, &wr, &bad))
			die("ibv_post_recv", err);
		t.posted.insert(id);
	}
}

void modify(ibv_qp *qp, ibv_qp_attr &a, int mask, const char *what)
{
	if (int err = ibv_modify_qp(qp, &a, mask))
		die(what, err);
}

void to_init(ibv_qp *qp, ibv_qp_type type)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		a.qkey = kQkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = type == IBV_QPT_UC ? IBV_ACCESS_REMOTE_WRITE : kRemoteAll;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	modify(qp, a, mask, "to INIT");
}

void to_rtr_towards(Setup &s, ibv_qp *qp, ibv_qp_type type, int gid_index, const ibv_gid &peer)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_UD) {
		modify(qp, a, IBV_QP_STATE, "UD to RTR");
		return;
	}
	const int saved = s.gid_index;
	s.gid_index = gid_index;
	if (type == IBV_QPT_UC) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x123;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 64;
		modify(qp, a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN, "UC to RTR");
	} else {
		to_rtr(s, qp, 0x123, peer, 4);
	}
	s.gid_index = saved;
}

ibv_cq *new_cq(Setup &s)
{
	ibv_cq *cq = ibv_create_cq(s.ctx, 64, nullptr, nullptr, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	return cq;
}

const char *type_name(ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

/* Every RC, UC and UD target, in every early state. */
void make_targets(Setup &s, std::vector<Target> &out, int g4, int g6,
		  const ibv_gid &peer4, const ibv_gid &peer6)
{
	uint64_t id = 1000;
	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
		for (const char *state : {"RESET", "INIT", "RTR4", "RTR6"}) {
			Target t;
			t.cq = new_cq(s);
			t.qp = create_qp_on(s, type, s.cq, t.cq);
			t.type = type_name(type);
			t.state = state;
			if (t.state != "RESET") {
				to_init(t.qp, type);
				post_recvs(s, t, nullptr, id);
				id += 100;
			}
			if (t.state == "RTR4")
				to_rtr_towards(s, t.qp, type, g4, peer4);
			if (t.state == "RTR6")
				to_rtr_towards(s, t.qp, type, g6, peer6);
			out.push_back(std::move(t));
		}
	}
}

struct Xrc {
	ibv_xrcd *xrcd = nullptr;
	ibv_srq *srq = nullptr;
	ibv_cq *cq = nullptr;
	uint32_t srqn = 0;
	std::set<uint64_t> posted;
};

/* An XRC SRQ with receives, and receive QPs of its domain in INIT and RTR. */
void make_xrc_targets(Setup &s, Xrc &x, std::vector<Target> &out, int g4,
		      const ibv_gid &peer4)
{
	ibv_xrcd_init_attr xa{};
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	x.xrcd = ibv_open_xrcd(s.ctx, &xa);
	if (!x.xrcd)
		die("ibv_open_xrcd", errno);
	x.cq = new_cq(s);
	ibv_srq_init_attr_ex sa{};
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = x.xrcd;
	sa.cq = x.cq;
	sa.pd = s.pd;
	x.srq = ibv_create_srq_ex(s.ctx, &sa);
	if (!x.srq || ibv_get_srq_num(x.srq, &x.srqn))
		die("XRC SRQ", errno);
	Target holder;
	post_recvs(s, holder, x.srq, 9000);
	x.posted = holder.posted;
	for (const char *state : {"INIT", "RTR4"}) {
		ibv_qp_init_attr_ex init{};
		init.qp_type = IBV_QPT_XRC_RECV;
		init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		init.xrcd = x.xrcd;
		Target t;
		t.qp = ibv_create_qp_ex(s.ctx, &init);
		if (!t.qp)
			die("ibv_create_qp_ex (XRC receive)", errno);
		t.type = "XRC";
		t.state = state;
		to_init(t.qp, IBV_QPT_RC);
		if (t.state == "RTR4")
			to_rtr_towards(s, t.qp, IBV_QPT_RC, g4, peer4);
		out.push_back(std::move(t));
	}
}

void print_targets(const std::vector<Target> &ts, const Xrc &x)
{
	std::printf("{\"qkey\": %u, \"srqn\": %u, \"qps\": [", kQkey, x.srqn);
	for (size_t i = 0; i < ts.size(); i++)
		std::printf("%s{\"qpn\": %u, \"type\": \"%s\", \"state\": \"%s\", \"rq_psn\": 0}",
			    i ? ", " : "", ts[i].qp->qp_num, ts[i].type.c_str(),
			    ts[i].state.c_str());
	std::printf("]}\nready\n");
	std::fflush(stdout);
}

ibv_qp_state state_now(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	if (int err = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		die("ibv_query_qp", err);
	return a.qp_state;
}

/* Receive completions on @cq: each must be one of @posted, once. */
int take_completions(ibv_cq *cq, std::set<uint64_t> posted, int &wrong)
{
	int n = 0;
	ibv_wc wc;
	while (ibv_poll_cq(cq, 1, &wc) > 0) {
		n++;
		if (!posted.erase(wc.wr_id))
			wrong++;
	}
	return n;
}

void check_after(std::vector<Target> &ts, Xrc &x)
{
	for (Target &t : ts) {
		int wrong = 0;
		const int done = t.cq ? take_completions(t.cq, t.posted, wrong) : 0;
		const ibv_qp_state now = state_now(t.qp);
		const std::string what = t.type + " QP " + std::to_string(t.qp->qp_num) +
					 " in " + t.state;
		if (t.state == "RESET" || t.state == "INIT") {
			const ibv_qp_state was = t.state == "RESET" ? IBV_QPS_RESET : IBV_QPS_INIT;
			check(done == 0 && now == was,
			      what + ": no completion (" + std::to_string(done) +
				      "), state unchanged (" + std::to_string(now) + ")");
		} else {
			check((now == IBV_QPS_RTR || now == IBV_QPS_ERR) && !wrong,
			      what + ": in RTR or ERR (" + std::to_string(now) + "), " +
				      std::to_string(done) + " completions, none twice or unposted");
		}
	}
	int wrong = 0;
	const int done = take_completions(x.cq, x.posted, wrong);
	check(!wrong, "XRC SRQ: " + std::to_string(done) +
			      " completions, none twice or unposted");
}

/* Connects @t (RC, RESET or INIT with its receives) to a fresh QP on the
 * same device and sends it one message: it lands in the first receive.
 */
void check_still_usable(Setup &s, Target &t)
{
	ibv_qp *peer = make_rc(s);
	if (t.state == "RESET")
		to_init(t.qp, IBV_QPT_RC);
	connect(s, t.qp, peer->qp_num);
	connect(s, peer, t.qp->qp_num);
	std::memset(mem(s, 64 * kMsg), 0x5a, kMsg);
	if (t.posted.empty())
		post_recvs(s, t, nullptr, 5000);
	post_one_send(peer, 7, mem(s, 64 * kMsg), kMsg, s.mr->lkey);
	const ibv_wc sent = next_completion(s);
	ibv_wc got{};
	for (int i = 0; i < 10000 && ibv_poll_cq(t.cq, 1, &got) == 0; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	const uint64_t first = *t.posted.begin();
	const bool bytes_ok = !std::memcmp(mem(s, (first % 64) * kMsg), mem(s, 64 * kMsg), kMsg);
	check(sent.status == IBV_WC_SUCCESS && got.status == IBV_WC_SUCCESS &&
		      got.wr_id == first && got.byte_len == kMsg && bytes_ok,
	      "the RC QP attacked in " + t.state + " connects and takes a SEND into receive " +
		      std::to_string(first) + " (got " + std::to_string(got.wr_id) + ", " +
		      ibv_wc_status_str(got.status) + ")");
	ibv_destroy_qp(peer);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 6) {
		std::fprintf(stderr, "usage: %s DEV GID4_INDEX GID6_INDEX PEER4 PEER6\n", argv[0]);
		return 2;
	}
	tool_name = "early_qps";
	const int g4 = std::atoi(argv[2]), g6 = std::atoi(argv[3]);
	Setup s = open_setup(argv[1], g4, 65 * kMsg, IBV_ACCESS_LOCAL_WRITE);
	std::vector<Target> targets;
	Xrc x;
	make_targets(s, targets, g4, g6, gid_of(argv[4]), gid_of(argv[5]));
	make_xrc_targets(s, x, targets, g4, gid_of(argv[4]));
	print_targets(targets, x);

	std::string line;
	while (std::getline(std::cin, line))
		;
	check_after(targets, x);
	for (Target &t : targets)
		if (t.type == "RC" && (t.state == "RESET" || t.state == "INIT"))
			check_still_usable(s, t);
	for (Target &t : targets)
		check(ibv_destroy_qp(t.qp) == 0, t.type + " QP in " + t.state + " destroyed");
	return finish();
}

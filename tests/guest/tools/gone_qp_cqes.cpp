// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for test_qp_edges.py::test_a_gone_qp_leaves_no_completions:
 * what a CQ still holds of a QP after the QP is destroyed or moved to
 * RESET.  ConnectX (mlx4, mlx5) and hns remove those completions from
 * the CQ in the same call, so a library may free what their wr_ids point
 * at as soon as the QP is gone.  libfabric 2.1's ofi_rxm does: at
 * teardown it closes a connection's endpoint and then drains the shared
 * CQ, and a receive completion of the closed endpoint found there is
 * reposted on it, a call through freed memory.
 *
 *   gone_qp_cqes DEV GID_INDEX destroy|reset
 *
 * Two RC pairs on the device, A -> B and C -> D.  B and D receive into
 * one CQ that nobody polls until the end; B also sends there.  While the
 * CQ holds B's and D's completions interleaved, B is destroyed (or moved
 * to RESET): the CQ must then give D's completions, in order, and none of
 * B's; D keeps receiving into it; a reset B, connected again, receives
 * again.  Plain verbs only, so it runs on any device (rxe too).
 */
#include "rc_loopback.hpp"

#include <infiniband/verbs.h>

#include <vector>

namespace {

using namespace rc_loopback;

constexpr uint32_t kMsg = 64;

/* An RC QP in INIT whose completions go to @send_cq and @recv_cq. */
ibv_qp *rc_on(Setup &s, ibv_cq *send_cq, ibv_cq *recv_cq)
{
	ibv_qp *qp = create_qp_on(s, IBV_QPT_RC, send_cq, recv_cq);
	rc_to_init(qp);
	return qp;
}

/* @n SENDs from @qp, wr_id @first on, each waited for on s.cq: once a
 * SEND is acknowledged, the receive it consumed has completed.
 */
void send_and_wait(Setup &s, ibv_qp *qp, int n, uint64_t first)
{
	for (int i = 0; i < n; i++) {
		post_one_send(qp, first + i, s.mr->addr, kMsg, s.mr->lkey);
		const ibv_wc wc = next_completion(s);
		if (wc.wr_id != first + i || wc.status != IBV_WC_SUCCESS)
			die("a SEND did not complete", EIO);
	}
}

/* Everything @cq holds now (it is complete: every SEND was acknowledged). */
std::vector<ibv_wc> drain(ibv_cq *cq)
{
	std::vector<ibv_wc> got;
	ibv_wc wc[8];
	int n;

	while ((n = ibv_poll_cq(cq, 8, wc)) > 0)
		got.insert(got.end(), wc, wc + n);
	if (n < 0)
		die("ibv_poll_cq", EIO);
	return got;
}

/* @got is exactly D's receives wr_id @first .. @first + @n - 1, in order. */
void check_only(const std::vector<ibv_wc> &got, uint32_t d_qpn, uint64_t first, int n,
		const std::string &what)
{
	bool ok = static_cast<int>(got.size()) == n;
	for (size_t i = 0; ok && i < got.size(); i++)
		ok = got[i].qp_num == d_qpn && got[i].wr_id == first + i &&
		     got[i].status == IBV_WC_SUCCESS && got[i].opcode == IBV_WC_RECV;
	std::string seen;
	for (const ibv_wc &wc : got)
		seen += " " + std::to_string(wc.qp_num) + ":" + std::to_string(wc.wr_id);
	check(ok, what + " (the CQ held" + (seen.empty() ? " nothing" : seen) + ")");
}

void gone_qp_cqes(Setup &s, bool destroy)
{
	ibv_cq *shared = ibv_create_cq(s.ctx, 64, nullptr, nullptr, 0);
	if (!shared)
		die("ibv_create_cq", errno);
	ibv_qp *a = rc_on(s, s.cq, s.cq), *b = rc_on(s, shared, shared);
	ibv_qp *c = rc_on(s, s.cq, s.cq), *d = rc_on(s, s.cq, shared);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);
	connect(s, c, d->qp_num);
	connect(s, d, c->qp_num);
	const uint32_t d_qpn = d->qp_num;

	/* The shared CQ: B, D, B, D, B's SEND to A, D. */
	post_recvs(s, b, 4, nullptr, 100, kMsg);
	post_recvs(s, d, 6, nullptr, 200, kMsg);
	post_recvs(s, a, 1, nullptr, 300, kMsg);
	send_and_wait(s, a, 2, 400);
	send_and_wait(s, c, 2, 500);
	send_and_wait(s, a, 2, 402);
	send_and_wait(s, c, 1, 502);
	post_one_send(b, 600, s.mr->addr, kMsg, s.mr->lkey);
	if (next_completion(s).wr_id != 300)	/* A's receive: B's SEND landed */
		die("B's SEND did not arrive", EIO);
	/* B's SEND completion is in the shared CQ once A's ACK is back. */
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	send_and_wait(s, c, 1, 503);

	if (destroy) {
		if (int err = ibv_destroy_qp(b))
			die("ibv_destroy_qp", err);
	} else {
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RESET;
		if (int err = ibv_modify_qp(b, &attr, IBV_QP_STATE))
			die("to RESET", err);
	}
	const char *how = destroy ? "destroyed" : "reset";
	check_only(drain(shared), d_qpn, 200, 4,
		   std::string("after B is ") + how + ", the CQ gives D's 4 receives in order "
		   "and none of B's 5 completions");

	/* The CQ goes on: D receives the rest into it. */
	send_and_wait(s, c, 2, 504);
	check_only(drain(shared), d_qpn, 204, 2, "D's next 2 receives follow");

	if (!destroy) {
		/* A reset B comes back and receives again. */
		rc_to_init(b);
		connect(s, b, a->qp_num);
		ibv_qp_attr attr{};
		attr.qp_state = IBV_QPS_RESET;
		if (int err = ibv_modify_qp(a, &attr, IBV_QP_STATE))
			die("A to RESET", err);
		rc_to_init(a);
		connect(s, a, b->qp_num);
		drain(s.cq);
		post_recvs(s, b, 1, nullptr, 700, kMsg);
		send_and_wait(s, a, 1, 800);
		const std::vector<ibv_wc> got = drain(shared);
		check(got.size() == 1 && got[0].wr_id == 700 && got[0].status == IBV_WC_SUCCESS,
		      "B, connected again after the reset, receives into the CQ");
		ibv_destroy_qp(b);
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(c);
	ibv_destroy_qp(d);
	ibv_destroy_cq(shared);
}

} // namespace

int main(int argc, char **argv)
{
	const std::string scenario = argc == 4 ? argv[3] : "";
	if (scenario != "destroy" && scenario != "reset") {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX destroy|reset\n", argv[0]);
		return 2;
	}
	tool_name = "gone_qp_cqes";
	Setup s = open_setup(argv[1], std::atoi(argv[2]), kMsg, IBV_ACCESS_LOCAL_WRITE);
	gone_qp_cqes(s, scenario == "destroy");
	return finish();
}

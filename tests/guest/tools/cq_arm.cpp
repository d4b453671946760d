// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for test_transport.py::test_arming_a_cq_raises_an_event_for_unpolled_completions:
 * ibv_req_notify_cq() on a CQ that holds completions the process has
 * not polled yet.  ib_req_notify_cq()'s contract (include/rdma/ib_verbs.h)
 * is that every completion added since the last poll raises an event once
 * the CQ is armed; ConnectX does so at once, since its arm doorbell
 * carries the consumer index.  UCX relies on it: in its sleep mode it
 * polls until idle, arms, and sleeps in poll(2) on the completion channel
 * with no poll of the CQ in between (uct_ib_iface_pre_arm(),
 * ucp_worker_wait()), so a completion that lands between its last poll and
 * its arm must still wake it, or both ends of a ping-pong sleep for good.
 *
 *   cq_arm DEV GID_INDEX
 *
 * An arm for solicited completions waits for those only (and errors).
 *
 * One RC pair A -> B on the device; A's completions on a CQ that is
 * polled, B's receives on a CQ with a completion channel that is only
 * polled where a check says so.  Each SEND is waited for on A's CQ: once
 * it is acknowledged, the receive it consumed has completed.  Plain verbs
 * only, so it runs on any device (rxe too).
 */
#include "rc_loopback.hpp"

#include <infiniband/verbs.h>
#include <poll.h>

namespace {

using namespace rc_loopback;

constexpr uint32_t kMsg = 64;
constexpr int kEventMs = 5000;	/* an event that is due: far above any delivery */
constexpr int kQuietMs = 300;	/* no event due: how long none must come */

struct Receiver {
	ibv_comp_channel *channel;
	ibv_cq *cq;
};

/* The channel has an event within @ms: takes and acknowledges it. */
bool event_within(Receiver &r, int ms)
{
	pollfd pfd{r.channel->fd, POLLIN, 0};
	if (poll(&pfd, 1, ms) != 1)
		return false;
	ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(r.channel, &cq, &ctx))
		die("ibv_get_cq_event", errno);
	ibv_ack_cq_events(cq, 1);
	return cq == r.cq;
}

/* One SEND from @a, solicited or not, acknowledged (so received). */
void send_acked(Setup &s, ibv_qp *a, uint64_t wr_id, bool solicited)
{
	post_one_send(a, wr_id, s.mr->addr, kMsg, s.mr->lkey,
		      solicited ? IBV_SEND_SOLICITED : 0);
	const ibv_wc wc = next_completion(s);
	if (wc.wr_id != wr_id || wc.status != IBV_WC_SUCCESS)
		die("a SEND did not complete", EIO);
}

/* How many completions @cq holds, all taken. */
int drain(ibv_cq *cq)
{
	ibv_wc wc[8];
	int n, total = 0;
	while ((n = ibv_poll_cq(cq, 8, wc)) > 0)
		total += n;
	return total;
}

void arm(Receiver &r, bool solicited_only)
{
	if (int err = ibv_req_notify_cq(r.cq, solicited_only))
		die("ibv_req_notify_cq", err);
}

/* An event is due for the one completion the CQ holds: checks both. */
void expect_event_for_one(Receiver &r, const std::string &what)
{
	check(event_within(r, kEventMs), what + ": an event");
	check(drain(r.cq) == 1, "that completion is in the CQ");
}

} // namespace

int main(int argc, char **argv)
{
	tool_name = "cq_arm";
	if (argc != 3) {
		std::fprintf(stderr, "usage: cq_arm DEV GID_INDEX\n");
		return 2;
	}
	Setup s = open_setup(argv[1], std::atoi(argv[2]), 4096, IBV_ACCESS_LOCAL_WRITE);
	Receiver r{};
	r.channel = ibv_create_comp_channel(s.ctx);
	r.cq = r.channel ? ibv_create_cq(s.ctx, 64, nullptr, r.channel, 0) : nullptr;
	if (!r.cq)
		die("completion channel and CQ", errno);
	ibv_qp *a = create_qp_on(s, IBV_QPT_RC, s.cq, s.cq);
	ibv_qp *b = create_qp_on(s, IBV_QPT_RC, s.cq, r.cq);
	rc_to_init(a);
	rc_to_init(b);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);
	post_recvs(s, b, 8);

	/* The plain case first: armed while empty, then a completion. */
	arm(r, false);
	check(!event_within(r, kQuietMs), "armed on an empty CQ: no event yet");
	send_acked(s, a, 1, false);
	expect_event_for_one(r, "a completion after the arm");

	/* UCX's case: the completion lands between its last poll and its arm. */
	send_acked(s, a, 2, false);
	arm(r, false);
	expect_event_for_one(r, "armed while an unpolled completion waits");

	/* Everything polled: arming again raises nothing until the next one. */
	arm(r, false);
	check(!event_within(r, kQuietMs), "armed with every completion polled: no event");
	send_acked(s, a, 3, false);
	expect_event_for_one(r, "the next completion");

	/* UCX arms its receive CQ for solicited completions only; its UD
	 * async thread does so after every event while the main thread polls,
	 * so an unsolicited completion left unpolled must not wake it.
	 */
	send_acked(s, a, 4, false);
	arm(r, true);
	check(!event_within(r, kQuietMs),
	      "armed for solicited ones over an unpolled unsolicited completion: no event");
	check(drain(r.cq) == 1, "that completion is in the CQ");
	send_acked(s, a, 5, true);
	arm(r, true);
	expect_event_for_one(r, "armed for solicited ones while an unpolled solicited "
				"completion waits");

	ibv_destroy_qp(b);
	ibv_destroy_qp(a);
	ibv_destroy_cq(r.cq);
	ibv_destroy_comp_channel(r.channel);
	return finish();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * 4 KiB RDMA WRITE streams over N RC QPs of one device, each connected to
 * a QP of the same device in this process: what a device does per QP
 * when it has many, with the application out of the way.
 *
 * Why not perftest: ib_write_bw walks all its QPs between two polls of
 * at most 16 completions.  At 8192 QPs in the TCG guest that walk takes
 * about 0.7 ms, so it consumes completions no faster than ~23 per ms
 * whatever the device does; measured, sroce's CQ held 5400 completions
 * on average whenever perftest polled it (docs/bench/profile-notes.md).
 *
 * Each QP keeps @depth WRITEs in flight as perftest posts them (one
 * ibv_post_send per WR, the last of each round signalled); a completion
 * names its QP, which posts its next round at once.  Only the steady
 * state counts: from the moment every QP has completed a round (the
 * set-up burst is over) to the last post (after it the QPs drain).
 *
 *   qp_fanout DEV GID_INDEX QPS DEPTH WRITES [SIZE]
 * prints one line: qps Q depth D size S writes W seconds T gbps G
 * Exit 0, 1 if a WRITE failed, 2 on a usage or set-up error.
 */
#include "rc_loopback.hpp"

#include <vector>

namespace {

using namespace rc_loopback;

double now()
{
	return std::chrono::duration<double>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

long arg(const char *s, long min, const char *what)
{
	char *end;
	long v = std::strtol(s, &end, 10);
	if (*end || v < min) {
		std::fprintf(stderr, "qp_fanout: bad %s %s\n", what, s);
		std::exit(2);
	}
	return v;
}

} /* namespace */

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7) {
		std::fprintf(stderr, "usage: qp_fanout DEV GID_INDEX QPS DEPTH WRITES [SIZE]\n");
		return 2;
	}
	const int qps = arg(argv[3], 1, "QPS"), depth = arg(argv[4], 1, "DEPTH");
	const long writes = arg(argv[5], 1, "WRITES");
	const uint32_t size = argc == 7 ? arg(argv[6], 1, "SIZE") : 4096;
	/* Rounds enough that the steady state is most of the run. */
	if (writes < 8L * qps * depth) {
		std::fprintf(stderr, "qp_fanout: WRITES must be at least 8 x QPS x DEPTH\n");
		return 2;
	}
	tool_name = "qp_fanout";
	/* One source buffer for every WRITE, then each QP its own target. */
	const size_t mr_bytes = static_cast<size_t>(size) * (qps + 1);
	/* One signalled WR per QP is outstanding at a time. */
	Setup s = open_setup(argv[1], arg(argv[2], 0, "GID_INDEX"), mr_bytes,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, qps + 64);
	ibv_port_attr port{};
	if (int err = ibv_query_port(s.ctx, 1, &port))
		die("ibv_query_port", err);
	std::vector<ibv_qp *> req(qps), resp(qps);
	for (int i = 0; i < qps; i++) {
		req[i] = make_rc(s, nullptr, depth);
		resp[i] = make_rc(s, nullptr, 1);
	}
	/* perftest's MTU too: the port's active one. */
	for (int i = 0; i < qps; i++) {
		to_rtr(s, req[i], resp[i]->qp_num, s.gid, 1, port.active_mtu);
		to_rts(req[i], 1, 14);
		to_rtr(s, resp[i], req[i]->qp_num, s.gid, 1, port.active_mtu);
		to_rts(resp[i], 1, 14);
	}
	uint8_t *const src = mem(s, 0);
	const uint64_t dst = reinterpret_cast<uintptr_t>(mem(s, size));

	long posted = 0;
	auto post_round = [&](int i) {
		for (int k = 0; k < depth; k++) {
			ibv_sge sge{reinterpret_cast<uintptr_t>(src), size, s.mr->lkey};
			ibv_send_wr wr{}, *bad;
			wr.wr_id = i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = k == depth - 1 ? IBV_SEND_SIGNALED : 0;
			wr.wr.rdma.remote_addr = dst + static_cast<uint64_t>(i) * size;
			wr.wr.rdma.rkey = s.mr->rkey;
			if (int err = ibv_post_send(req[i], &wr, &bad))
				die("ibv_post_send", err);
		}
		posted += depth;
	};
	for (int i = 0; i < qps; i++)
		post_round(i);

	std::vector<bool> ran(qps);
	int running = 0;
	long done = 0, start_done = 0, end_done = 0;
	double start = 0, end = 0;
	ibv_wc wc[256];
	while (done < posted) {
		const int n = ibv_poll_cq(s.cq, 256, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		for (int j = 0; j < n; j++) {
			const int i = static_cast<int>(wc[j].wr_id);
			if (wc[j].status != IBV_WC_SUCCESS) {
				std::fprintf(stderr, "qp_fanout: QP %d: %s\n", i,
					     ibv_wc_status_str(wc[j].status));
				return 1;
			}
			done += depth;
			if (!ran[i]) {
				ran[i] = true;
				if (++running == qps) {
					start = now();
					start_done = done;
				}
			}
			if (posted < writes) {
				post_round(i);
				if (posted >= writes) {
					end = now();
					end_done = done;
				}
			}
		}
	}
	if (!end || end <= start) {
		std::fprintf(stderr, "qp_fanout: no steady state to measure\n");
		return 2;
	}
	const long counted = end_done - start_done;
	std::printf("qps %d depth %d size %u writes %ld seconds %.6f gbps %.6f\n",
		    qps, depth, size, counted, end - start,
		    counted * static_cast<double>(size) * 8 / (end - start) / 1e9);
	return 0;
}

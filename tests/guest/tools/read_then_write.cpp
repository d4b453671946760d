// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * read_then_write DEVICE GID_INDEX [ROUNDS]: an RDMA READ and, right
 * behind it on the same QP with no fence, an RDMA WRITE to the same remote
 * bytes.  Does the READ return the bytes as they were before the WRITE?
 *
 * InfiniBand lets a responder execute the WRITE before it reads the READ's
 * data (the requester's fence is there for this), but rxe and ConnectX
 * read a READ's data in order, and software written against them relies
 * on it (Open MPI 4.1.4's osc/ucx get_accumulate: docs/peers.md).  Each
 * round fills the target with 0xAA, READs 64 KiB of it (64 packets at
 * MTU 1024) and WRITEs 64 KiB of 0xBB over it, then counts the READ's
 * bytes that are 0xBB.
 */
#include "rc_loopback.hpp"

using namespace rc_loopback;

namespace {

constexpr size_t kLen = 64 * 1024;
constexpr size_t kTarget = 0, kReadInto = kLen, kWriteFrom = 2 * kLen;

void post(ibv_qp *qp, Setup &s, ibv_wr_opcode op, size_t local, size_t remote,
	  uint64_t id)
{
	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(mem(s, local));
	sge.length = kLen;
	sge.lkey = s.mr->lkey;
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;	/* and no IBV_SEND_FENCE */
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(s, remote));
	wr.wr.rdma.rkey = s.mr->rkey;
	if (int err = ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send", err);
}

} // namespace

int main(int argc, char **argv)
{
	tool_name = "read_then_write";
	if (argc < 3)
		die("usage: read_then_write DEVICE GID_INDEX [ROUNDS]", EINVAL);
	const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE;
	Setup s = open_setup(argv[1], std::atoi(argv[2]), 3 * kLen, access);
	ibv_qp *a = make_rc(s, nullptr, 16, 0, access);
	ibv_qp *b = make_rc(s, nullptr, 16, 0, access);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);

	int late_rounds = 0;
	size_t late_bytes = 0;
	for (int round = 0; round < rounds; round++) {
		std::memset(mem(s, kTarget), 0xaa, kLen);
		std::memset(mem(s, kReadInto), 0, kLen);
		std::memset(mem(s, kWriteFrom), 0xbb, kLen);
		post(a, s, IBV_WR_RDMA_READ, kReadInto, kTarget, 1);
		post(a, s, IBV_WR_RDMA_WRITE, kWriteFrom, kTarget, 2);
		for (int n = 0; n < 2; n++) {
			const ibv_wc wc = next_completion(s);
			if (wc.wr_id == ~0ull || wc.status != IBV_WC_SUCCESS) {
				check(false, "round " + std::to_string(round) +
					     ": both completions, successful");
				return finish();
			}
		}
		size_t late = 0;
		for (size_t i = 0; i < kLen; i++)
			late += *mem(s, kReadInto + i) == 0xbb;
		late_rounds += late > 0;
		late_bytes += late;
	}
	std::printf("rounds %d, READs that returned the later WRITE's bytes %d (%zu bytes)\n",
		    rounds, late_rounds, late_bytes);
	check(late_rounds == 0, "every READ returned the bytes as they were before the WRITE behind it");
	return finish();
}

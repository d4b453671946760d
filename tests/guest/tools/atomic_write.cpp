// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic_write DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]: RDMA ATOMIC WRITE
 * (IBTA 1.5, ibv_wr_atomic_write) from an RC QP of DEV to one of
 * PEER_DEV (default: DEV itself, through its own GID), checked as an
 * application would see it:
 *
 *   - 200 ATOMIC WRITEs, one READ/atomic credit each way: every one
 *     completes with IBV_WC_ATOMIC_WRITE and 8 bytes, and the peer's
 *     memory holds the last value byte for byte (no byte order applied);
 *     unsignaled ones between signaled ones retire in order;
 *   - an ATOMIC WRITE after a large RDMA WRITE lands after it;
 *   - an address not 8-aligned: IBV_WC_REM_INV_REQ_ERR, memory untouched;
 *   - an MR without REMOTE_WRITE (REMOTE_ATOMIC is not enough):
 *     IBV_WC_REM_ACCESS_ERR, memory untouched;
 *   - ibv_post_send() cannot carry it (EINVAL); a UC QP cannot ask for it
 *     (EOPNOTSUPP): when DEV is an sroce device.
 *
 * One line per check; exit 0 only if every check held.
 */
#include "rc_loopback.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

namespace {

using namespace rc_loopback;

constexpr size_t kMr = 1 << 16;

/* The requester's device and the responder's (the same one in loopback). */
struct Sides {
	Setup &req, &resp;
};

struct Pair {
	ibv_qp *a, *b;	/* a sends, b's memory is written */
};

Pair connected_pair(Sides &d)
{
	const uint64_t ops = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE;
	const int access = IBV_ACCESS_REMOTE_WRITE;
	Pair p{make_rc(d.req, nullptr, 64, ops, access),
	       make_rc(d.resp, nullptr, 64, ops, access)};
	connect(d.req, p.a, p.b->qp_num, &d.resp.gid);
	connect(d.resp, p.b, p.a->qp_num, &d.req.gid);
	return p;
}

void destroy(Pair &p)
{
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
}

void atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned flags, uint32_t rkey,
		  uint64_t addr, const void *value)
{
	ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = flags;
	ibv_wr_atomic_write(x, rkey, addr, value);
	if (int err = ibv_wr_complete(x))
		die("ibv_wr_complete", err);
}

void many_in_a_row(Sides &d)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d);
	const uint64_t target = reinterpret_cast<uintptr_t>(mem(s, 8));
	int good = 0, posted = 0;
	uint8_t value[8];

	for (int i = 0; i < 200; i++) {
		for (int k = 0; k < 8; k++)
			value[k] = static_cast<uint8_t>(i * 8 + k);
		/* Every fourth signaled; ones between retire with it. */
		const bool signaled = i % 4 == 3;
		atomic_write(p.a, i, signaled ? IBV_SEND_SIGNALED : 0, s.mr->rkey,
			     target, value);
		posted++;
		if (!signaled)
			continue;
		const ibv_wc wc = next_completion(d.req);
		if (wc.wr_id == uint64_t(i) && wc.status == IBV_WC_SUCCESS &&
		    wc.opcode == IBV_WC_ATOMIC_WRITE && wc.byte_len == 8)
			good++;
		else
			std::printf("completion: wr_id %llu %s opcode %d len %u\n",
				    (unsigned long long)wc.wr_id,
				    ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	}
	check(good == posted / 4, std::to_string(good) + " of " +
		      std::to_string(posted / 4) +
		      " signaled ATOMIC WRITEs completed: IBV_WC_ATOMIC_WRITE, 8 bytes");
	check(std::memcmp(mem(s, 8), value, 8) == 0,
	      "the peer's memory holds the last value, byte for byte");
	check(*mem(s, 7) == 0 && *mem(s, 16) == 0, "and nothing around it");
	destroy(p);
}

void after_a_write(Sides &d)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d);
	const size_t big = 32768;
	std::memset(mem(d.req, 0), 0x11, big);	/* source */
	std::memset(mem(s, big), 0, big);	/* target */
	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);
	const uint8_t flag[8] = {'d', 'o', 'n', 'e', 0, 0, 0, 1};

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = 0;
	ibv_wr_rdma_write(x, s.mr->rkey, reinterpret_cast<uintptr_t>(mem(s, big)));
	ibv_wr_set_sge(x, d.req.mr->lkey, reinterpret_cast<uintptr_t>(mem(d.req, 0)),
		       big - 8);
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, s.mr->rkey,
			    reinterpret_cast<uintptr_t>(mem(s, 2 * big - 8)), flag);
	if (int err = ibv_wr_complete(x))
		die("ibv_wr_complete", err);
	const ibv_wc wc = next_completion(d.req);
	check(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS,
	      "an ATOMIC WRITE behind a 32 KiB RDMA WRITE completes");
	bool written = true;
	for (size_t i = 0; i < big - 8; i++)
		written &= *mem(s, big + i) == 0x11;
	check(written && std::memcmp(mem(s, 2 * big - 8), flag, 8) == 0,
	      "both landed: the WRITE's data and the flag after it");
	destroy(p);
}

void refused(Sides &d, const char *what, uint32_t rkey, uint64_t addr,
	     ibv_wc_status want)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d);
	const uint8_t value[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	std::memset(mem(s, 0), 0, 64);
	atomic_write(p.a, 9, IBV_SEND_SIGNALED, rkey, addr, value);
	const ibv_wc wc = next_completion(d.req);
	check(wc.wr_id == 9 && wc.status == want,
	      std::string(what) + ": " + ibv_wc_status_str(want) + " (got " +
		      ibv_wc_status_str(wc.status) + ")");
	bool untouched = true;
	for (int i = 0; i < 64; i++)
		untouched &= *mem(s, i) == 0;
	check(untouched, std::string(what) + ": memory untouched");
	destroy(p);
	ibv_wc drain;
	for (Setup *side : {&d.req, &d.resp})
		while (ibv_poll_cq(side->cq, 1, &drain) > 0)
			;	/* whatever the failed QPs flushed */
}

/* The requester's device alone (sroce). */
void not_through_post_send(Sides &d)
{
	Setup &s = d.req;
	Pair p = connected_pair(d);
	ibv_send_wr wr{}, *bad = nullptr;
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mem(s, 8));
	wr.wr.rdma.rkey = s.mr->rkey;
	const int err = ibv_post_send(p.a, &wr, &bad);
	check(err == EINVAL, std::string("ibv_post_send(IBV_WR_ATOMIC_WRITE): EINVAL (got ") +
				     std::strerror(err) + ")");
	destroy(p);

	check_uc_refuses(s, IBV_QP_EX_WITH_ATOMIC_WRITE, "ATOMIC WRITE");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 5) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]\n",
			     argv[0]);
		return 2;
	}
	tool_name = "atomic_write";
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	Setup req = open_setup(argv[1], std::atoi(argv[2]), kMr, access);
	Setup peer;
	if (argc == 5)
		peer = open_setup(argv[3], std::atoi(argv[4]), kMr, access);
	Sides d{req, argc == 5 ? peer : req};
	Setup &s = d.resp;

	many_in_a_row(d);
	after_a_write(d);
	refused(d, "an address not 8-aligned", s.mr->rkey,
		reinterpret_cast<uintptr_t>(mem(s, 4)), IBV_WC_REM_INV_REQ_ERR);
	ibv_mr *atomic_only = ibv_reg_mr(s.pd, mem(s, 0), 4096,
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!atomic_only)
		die("ibv_reg_mr", errno);
	refused(d, "an MR without REMOTE_WRITE", atomic_only->rkey,
		reinterpret_cast<uintptr_t>(mem(s, 8)), IBV_WC_REM_ACCESS_ERR);
	/* sroce's provider's answers; rxe's takes the opcode through
	 * ibv_post_send (with no value to write) and returns success.
	 */
	if (!std::strncmp(argv[1], "sroce", 5))
		not_through_post_send(d);
	return finish();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for tests/guest/test_memory_windows.py: memory windows at
 * the top of the 64-bit address space, where a sum of an address and a
 * length wraps (the 2026 rxe class of u64 overflows in length and address
 * checks, tried on windows as qp_edges' iova-top tries it on MRs).
 *
 *   mw_top DEV GID_INDEX
 *
 * An MR of 8 KiB at iova 2^64 - 8 KiB that grants no remote right itself;
 * a type 2 window over its last 4 KiB, ending at 2^64, bound on a fresh
 * connected pair for every access (a refused access leaves the pair in
 * ERR).  Checks, each with the status a NIC gives:
 *   - through the window, addressed by iova: a WRITE, a READ and a
 *     FETCH_AND_ADD ending exactly at 2^64 succeed and land there; a WRITE
 *     that runs past 2^64 (its end wraps to a small number) and one that
 *     starts a byte below the window (inside the MR) fail with a remote
 *     access error;
 *   - zero-based, the same window: a WRITE ending at the window's end
 *     succeeds, one past it and one at an offset whose sum with its
 *     length wraps fail;
 *   - binds that run past 2^64, or start a byte below the MR, complete
 *     with IBV_WC_MW_BIND_ERR;
 *   - after every refused access or bind, no byte of the MR changed.
 * Exit status as for every guest tool (rc_loopback.hpp).
 */
#include "rc_loopback.hpp"

#include <vector>

using namespace rc_loopback;

namespace {

constexpr uint64_t kMrLen = 8192;
constexpr uint64_t kMrIova = ~0ull - kMrLen + 1;
constexpr uint64_t kWinLen = 4096;
constexpr uint64_t kWinIova = ~0ull - kWinLen + 1;	/* the MR's last 4 KiB */
constexpr int kRemoteAll = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;

struct Target {
	uint8_t *bytes;		/* the MR's memory */
	ibv_mr *mr;
	uint8_t *local;		/* the requester's buffer */
	ibv_mr *lmr;
};

struct Outcome {
	ibv_wc_status bind = IBV_WC_GENERAL_ERR;
	ibv_wc_status access = IBV_WC_GENERAL_ERR;
};

/* The status of the next completion with @wr_id (GENERAL_ERR if none). */
ibv_wc_status status_of(Setup &s, uint64_t wr_id)
{
	for (int i = 0; i < 4; i++) {
		const ibv_wc wc = next_completion(s);
		if (wc.wr_id == ~0ull)
			break;
		if (wc.wr_id == wr_id)
			return wc.status;
	}
	return IBV_WC_GENERAL_ERR;
}

/*
 * On a fresh pair: binds a type 2 window on the responder over
 * [@bind_addr, +@bind_len) of the MR (@zero_based or not), then, if the
 * bind succeeded and @access has an opcode, posts @access from the
 * requester through the window's new rkey.
 */
Outcome through_window(Setup &s, Target &t, uint64_t bind_addr, uint64_t bind_len,
		       bool zero_based, ibv_send_wr *access)
{
	Outcome o;
	ibv_qp *a = make_rc(s, nullptr, 16, 0, kRemoteAll);
	ibv_qp *b = make_rc(s, nullptr, 16, 0, kRemoteAll);
	ibv_mw *mw = ibv_alloc_mw(s.pd, IBV_MW_TYPE_2);
	if (!mw)
		die("ibv_alloc_mw", errno);
	connect(s, a, b->qp_num);
	connect(s, b, a->qp_num);

	ibv_send_wr bind{}, *bad = nullptr;
	bind.wr_id = 100;
	bind.opcode = IBV_WR_BIND_MW;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bind.bind_mw.bind_info.mr = t.mr;
	bind.bind_mw.bind_info.addr = bind_addr;
	bind.bind_mw.bind_info.length = bind_len;
	bind.bind_mw.bind_info.mw_access_flags = kRemoteAll | (zero_based ? IBV_ACCESS_ZERO_BASED : 0);
	if (int err = ibv_post_send(b, &bind, &bad))
		die("ibv_post_send (bind)", err);
	o.bind = status_of(s, bind.wr_id);
	if (o.bind == IBV_WC_SUCCESS && access) {
		access->wr_id = 200;
		access->send_flags = IBV_SEND_SIGNALED;
		if (access->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			access->wr.atomic.rkey = bind.bind_mw.rkey;
		else
			access->wr.rdma.rkey = bind.bind_mw.rkey;
		if (int err = ibv_post_send(a, access, &bad))
			die("ibv_post_send (access)", err);
		o.access = status_of(s, access->wr_id);
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dealloc_mw(mw);
	return o;
}

ibv_send_wr rdma_wr(Target &t, ibv_wr_opcode op, uint64_t remote, uint32_t len, ibv_sge &sge)
{
	sge = {reinterpret_cast<uintptr_t>(t.local), len, t.lmr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.wr.rdma.remote_addr = remote;
	return wr;
}

std::string statuses(const Outcome &o)
{
	return std::string("bind ") + ibv_wc_status_str(o.bind) + ", access " +
	       ibv_wc_status_str(o.access);
}

void inside_by_iova(Setup &s, Target &t)
{
	ibv_sge sge;
	std::memset(t.local, 0x22, 100);
	ibv_send_wr w = rdma_wr(t, IBV_WR_RDMA_WRITE, ~0ull - 99, 100, sge);
	Outcome o = through_window(s, t, kWinIova, kWinLen, false, &w);
	check(o.access == IBV_WC_SUCCESS && t.bytes[kMrLen - 100] == 0x22 &&
		      t.bytes[kMrLen - 1] == 0x22 && t.bytes[kMrLen - 101] == 0x11,
	      "a WRITE of the window's last 100 bytes, below 2^64, lands there (" +
		      statuses(o) + ")");

	ibv_send_wr r = rdma_wr(t, IBV_WR_RDMA_READ, kWinIova, kWinLen, sge);
	o = through_window(s, t, kWinIova, kWinLen, false, &r);
	check(o.access == IBV_WC_SUCCESS &&
		      !std::memcmp(t.local, t.bytes + kMrLen - kWinLen, kWinLen),
	      "a READ of the whole window, up to 2^64, returns it (" + statuses(o) + ")");

	uint64_t last, fetched, now;
	std::memcpy(&last, t.bytes + kMrLen - 8, 8);
	ibv_send_wr f = rdma_wr(t, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, sge);
	f.wr.atomic.remote_addr = ~0ull - 7;
	f.wr.atomic.compare_add = 5;
	o = through_window(s, t, kWinIova, kWinLen, false, &f);
	std::memcpy(&fetched, t.local, 8);
	std::memcpy(&now, t.bytes + kMrLen - 8, 8);
	check(o.access == IBV_WC_SUCCESS && fetched == last && now == last + 5,
	      "a FETCH_AND_ADD on the window's last 8 bytes adds (" + statuses(o) + ")");
}

/* @wr through a window over [@addr, +@len) fails, the MR as it was. */
void refused(Setup &s, Target &t, uint64_t addr, uint64_t len, bool zero_based,
	     ibv_send_wr *wr, ibv_wc_status want, const std::string &what)
{
	const std::vector<uint8_t> before(t.bytes, t.bytes + kMrLen);
	const Outcome o = through_window(s, t, addr, len, zero_based, wr);
	const ibv_wc_status got = wr ? o.access : o.bind;
	check(got == want && (!wr || o.bind == IBV_WC_SUCCESS) &&
		      !std::memcmp(before.data(), t.bytes, kMrLen),
	      what + " fails with " + ibv_wc_status_str(want) + ", the MR untouched (" +
		      statuses(o) + ")");
}

void outside_by_iova(Setup &s, Target &t)
{
	ibv_sge sge;
	std::memset(t.local, 0x33, 200);
	ibv_send_wr w = rdma_wr(t, IBV_WR_RDMA_WRITE, ~0ull - 99, 200, sge);
	refused(s, t, kWinIova, kWinLen, false, &w, IBV_WC_REM_ACCESS_ERR,
		"a WRITE of 200 bytes at 2^64 - 100 through the window (past 2^64)");
	w = rdma_wr(t, IBV_WR_RDMA_WRITE, kWinIova - 1, 200, sge);
	refused(s, t, kWinIova, kWinLen, false, &w, IBV_WC_REM_ACCESS_ERR,
		"a WRITE starting a byte below the window, inside the MR,");
}

void zero_based(Setup &s, Target &t)
{
	ibv_sge sge;
	std::memset(t.local, 0x44, 200);
	ibv_send_wr w = rdma_wr(t, IBV_WR_RDMA_WRITE, kWinLen - 100, 100, sge);
	const Outcome o = through_window(s, t, kWinIova, kWinLen, true, &w);
	check(o.access == IBV_WC_SUCCESS && t.bytes[kMrLen - 100] == 0x44 &&
		      t.bytes[kMrLen - 1] == 0x44 && t.bytes[kMrLen - 101] != 0x44,
	      "zero based: a WRITE of the window's last 100 bytes lands below 2^64 (" +
		      statuses(o) + ")");
	w = rdma_wr(t, IBV_WR_RDMA_WRITE, kWinLen - 100, 200, sge);
	refused(s, t, kWinIova, kWinLen, true, &w, IBV_WC_REM_ACCESS_ERR,
		"zero based: a WRITE of 200 bytes 100 before the window's end");
	w = rdma_wr(t, IBV_WR_RDMA_WRITE, ~0ull - 49, 100, sge);
	refused(s, t, kWinIova, kWinLen, true, &w, IBV_WC_REM_ACCESS_ERR,
		"zero based: a WRITE of 100 bytes at offset 2^64 - 50 (the sum wraps)");
}

void bad_binds(Setup &s, Target &t)
{
	refused(s, t, ~0ull - 99, 200, false, nullptr, IBV_WC_MW_BIND_ERR,
		"a bind of 200 bytes at 2^64 - 100 (past 2^64)");
	refused(s, t, kMrIova - 1, kWinLen, false, nullptr, IBV_WC_MW_BIND_ERR,
		"a bind starting a byte below the MR");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX\n", argv[0]);
		return 2;
	}
	tool_name = "mw_top";
	Setup s = open_setup(argv[1], std::atoi(argv[2]), 64, IBV_ACCESS_LOCAL_WRITE);
	Target t;
	t.bytes = static_cast<uint8_t *>(std::aligned_alloc(4096, kMrLen));
	t.local = static_cast<uint8_t *>(std::aligned_alloc(4096, kMrLen));
	if (!t.bytes || !t.local)
		die("aligned_alloc", ENOMEM);
	std::memset(t.bytes, 0x11, kMrLen);
	/* The MR itself grants no remote right: only the window does. */
	t.mr = ibv_reg_mr_iova(s.pd, t.bytes, kMrLen, kMrIova,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	t.lmr = ibv_reg_mr(s.pd, t.local, kMrLen, IBV_ACCESS_LOCAL_WRITE);
	if (!t.mr || !t.lmr)
		die("ibv_reg_mr", errno);
	inside_by_iova(s, t);
	outside_by_iova(s, t);
	zero_based(s, t);
	bad_binds(s, t);
	ibv_dereg_mr(t.lmr);
	ibv_dereg_mr(t.mr);
	return finish();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flush DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]: RDMA FLUSH (IBTA 1.5,
 * ibv_wr_flush) from an RC QP of DEV to one of PEER_DEV (default: DEV
 * itself, through its own GID), checked as an application would see it:
 *
 *   - global visibility of a range just written, and of the whole MR
 *     (whatever length the caller passes then): IBV_WC_FLUSH, the data
 *     there;
 *   - 100 in a row with one READ/atomic credit, every fourth signaled:
 *     all complete, in order;
 *   - refused with IBV_WC_REM_ACCESS_ERR, nothing written after it: a
 *     persistent FLUSH (no MR here is persistent memory), a range past
 *     the MR's end, an MR that may be written but not flushed, and (sroce
 *     responder) a QP that does not grant FLUSH;
 *   - sroce as requester: ibv_post_send() cannot carry it (EINVAL), a UC
 *     QP cannot ask for it (EOPNOTSUPP); sroce as responder: the device
 *     claims global FLUSH and ATOMIC WRITE but not persistence, and an MR
 *     asking to be flushed to persistence is refused.
 *
 * Built against rdma-core 44 (Debian 12), which has no FLUSH verb, and
 * run there on Linux 6.1, whose ib_core knows no FLUSH access bit, it
 * checks the other side of honesty: no FLUSH capability claimed, and an
 * MR asking for the bit by value refused.  On a newer kernel under the
 * same user space (bookworm-backports' 6.12) the kernel's FLUSH shows
 * through instead: the capability claimed, such an MR granted.
 *
 * One line per check; exit 0 only if every check held.
 */
#include "rc_loopback.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

#include <sys/utsname.h>

namespace {

using namespace rc_loopback;

constexpr size_t kMr = 1 << 16;
/* ib_user_verbs.h's IB_UVERBS_DEVICE_*, by value: 44's copy predates them. */
constexpr uint64_t kCapFlushGlobal = 1ull << 38;
constexpr uint64_t kCapFlushPersistent = 1ull << 39;
constexpr uint64_t kCapAtomicWrite = 1ull << 40;
constexpr int kAccessFlushGlobal = 1 << 8;	/* IBV_ACCESS_FLUSH_GLOBAL */

uint64_t device_caps(Setup &s)
{
	ibv_device_attr_ex attr{};
	if (int err = ibv_query_device_ex(s.ctx, nullptr, &attr))
		die("ibv_query_device_ex", err);
	return attr.device_cap_flags_ex;
}

#if SROCE_TOOLS_HAVE_FLUSH

bool is_sroce(const char *dev)
{
	return !std::strncmp(dev, "sroce", 5);
}

uint64_t addr(Setup &s, size_t off)
{
	return reinterpret_cast<uintptr_t>(mem(s, off));
}

struct Sides {
	Setup &req, &resp;
	bool resp_is_sroce;
};

struct Pair {
	ibv_qp *a, *b;	/* a sends, b's memory is flushed */
};

constexpr uint64_t kOps = IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_RDMA_WRITE;
constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL |
			  IBV_ACCESS_FLUSH_PERSISTENT;

Pair connected_pair(Sides &d, int resp_access = kQpAccess)
{
	Pair p{make_rc(d.req, nullptr, 128, kOps, kQpAccess),
	       make_rc(d.resp, nullptr, 128, kOps, resp_access)};
	connect(d.req, p.a, p.b->qp_num, &d.resp.gid);
	connect(d.resp, p.b, p.a->qp_num, &d.req.gid);
	return p;
}

void destroy(Sides &d, Pair &p)
{
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_wc drain;
	for (Setup *side : {&d.req, &d.resp})
		while (ibv_poll_cq(side->cq, 1, &drain) > 0)
			;	/* whatever failed QPs flushed */
}

/* A 32 KiB RDMA WRITE, then a signaled FLUSH (@level, @len at @off). */
void write_then_flush(Sides &d, const char *what, uint8_t level, size_t len)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d);
	const size_t big = 32768;
	std::memset(mem(d.req, 0), 0x5A, big);
	std::memset(mem(s, big), 0, big);
	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = 0;
	ibv_wr_rdma_write(x, s.mr->rkey, addr(s, big));
	ibv_wr_set_sge(x, d.req.mr->lkey, addr(d.req, 0), big);
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x, s.mr->rkey, addr(s, big), len, IBV_FLUSH_GLOBAL, level);
	if (int err = ibv_wr_complete(x))
		die("ibv_wr_complete", err);
	const ibv_wc wc = next_completion(d.req);
	check(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH,
	      std::string(what) + ": IBV_WC_FLUSH, success (got " +
		      ibv_wc_status_str(wc.status) + ", opcode " +
		      std::to_string(wc.opcode) + ")");
	bool written = true;
	for (size_t i = 0; i < big; i++)
		written &= *mem(s, big + i) == 0x5A;
	check(written, std::string(what) + ": the WRITE before it is there");
	destroy(d, p);
}

void many_in_a_row(Sides &d)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d);
	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);
	int good = 0, signaled = 0;

	for (int i = 0; i < 100; i++) {
		const bool sig = i % 4 == 3;
		ibv_wr_start(x);
		x->wr_id = i;
		x->wr_flags = sig ? IBV_SEND_SIGNALED : 0;
		ibv_wr_flush(x, s.mr->rkey, addr(s, 64 * i), 64, IBV_FLUSH_GLOBAL,
			     i % 2 ? IBV_FLUSH_MR : IBV_FLUSH_RANGE);
		if (int err = ibv_wr_complete(x))
			die("ibv_wr_complete", err);
		if (!sig)
			continue;
		signaled++;
		const ibv_wc wc = next_completion(d.req);
		if (wc.wr_id == uint64_t(i) && wc.status == IBV_WC_SUCCESS &&
		    wc.opcode == IBV_WC_FLUSH)
			good++;
		else
			std::printf("completion: wr_id %llu %s opcode %d\n",
				    (unsigned long long)wc.wr_id,
				    ibv_wc_status_str(wc.status), wc.opcode);
	}
	check(good == signaled, std::to_string(good) + " of " + std::to_string(signaled) +
					" signaled FLUSHes (100 posted, ranges and whole MR) "
					"completed in order");
	destroy(d, p);
}

/*
 * A FLUSH the peer refuses, then an RDMA WRITE behind it: the FLUSH fails
 * with @want and the WRITE, after the error, never lands.
 */
void refused(Sides &d, const char *what, uint32_t rkey, uint64_t at, size_t len,
	     uint8_t type, ibv_wc_status want, int resp_access = kQpAccess)
{
	Setup &s = d.resp;
	Pair p = connected_pair(d, resp_access);
	/* Source and target apart: in loopback they are the same MR. */
	std::memset(mem(s, 0), 0, 64);
	std::memset(mem(d.req, 8192), 0xEE, 64);
	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);

	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x, rkey, at, len, type, IBV_FLUSH_RANGE);
	x->wr_id = 10;
	ibv_wr_rdma_write(x, s.mr->rkey, addr(s, 0));
	ibv_wr_set_sge(x, d.req.mr->lkey, addr(d.req, 8192), 64);
	if (int err = ibv_wr_complete(x))
		die("ibv_wr_complete", err);
	const ibv_wc wc = next_completion(d.req);
	check(wc.wr_id == 9 && wc.status == want,
	      std::string(what) + ": " + ibv_wc_status_str(want) + " (got " +
		      ibv_wc_status_str(wc.status) + ")");
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	bool untouched = true;
	for (int i = 0; i < 64; i++)
		untouched &= *mem(s, i) == 0;
	check(untouched, std::string(what) + ": the WRITE behind it never landed");
	destroy(d, p);
}

/* The requester's device alone (sroce). */
void requester_refusals(Sides &d)
{
	Setup &s = d.req;
	Pair p = connected_pair(d);
	ibv_send_wr wr{}, *bad = nullptr;
	wr.opcode = IBV_WR_FLUSH;
	wr.wr.rdma.remote_addr = addr(s, 0);
	wr.wr.rdma.rkey = s.mr->rkey;
	const int err = ibv_post_send(p.a, &wr, &bad);
	check(err == EINVAL, std::string("ibv_post_send(IBV_WR_FLUSH): EINVAL (got ") +
				     std::strerror(err) + ")");

	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.a);
	ibv_wr_start(x);
	ibv_wr_flush(x, s.mr->rkey, addr(s, 0), 64, 0, IBV_FLUSH_RANGE);
	const int no_type = ibv_wr_complete(x);
	ibv_wr_start(x);
	ibv_wr_flush(x, s.mr->rkey, addr(s, 0), 1ull << 32, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	const int too_long = ibv_wr_complete(x);
	check(no_type == EINVAL && too_long == EINVAL,
	      "ibv_wr_flush with no placement type, or a range of 4 GiB: EINVAL");
	destroy(d, p);

	check_uc_refuses(s, IBV_QP_EX_WITH_FLUSH, "FLUSH");
}

/* The responder's device alone (sroce). */
void responder_claims(Sides &d)
{
	Setup &s = d.resp;
	const uint64_t caps = device_caps(s);
	check((caps & kCapFlushGlobal) && (caps & kCapAtomicWrite) &&
		      !(caps & kCapFlushPersistent),
	      "the device claims global FLUSH and ATOMIC WRITE, not persistence");
	ibv_mr *pmem = ibv_reg_mr(s.pd, mem(s, 0), 4096,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_FLUSH_PERSISTENT);
	const int err = errno;
	check(!pmem && err == EOPNOTSUPP,
	      std::string("an MR to be flushed to persistence: EOPNOTSUPP (got ") +
		      (pmem ? "an MR" : std::strerror(err)) + ")");
	if (pmem)
		ibv_dereg_mr(pmem);
}

int run(int argc, char **argv)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_FLUSH_GLOBAL;
	Setup req = open_setup(argv[1], std::atoi(argv[2]), kMr, access);
	Setup peer;
	const bool two = argc == 5;
	if (two)
		peer = open_setup(argv[3], std::atoi(argv[4]), kMr, access);
	Sides d{req, two ? peer : req, is_sroce(two ? argv[3] : argv[1])};
	Setup &s = d.resp;

	write_then_flush(d, "a range just written", IBV_FLUSH_RANGE, 32768);
	write_then_flush(d, "the whole MR, length 0", IBV_FLUSH_MR, 0);
	write_then_flush(d, "the whole MR, a length past its end", IBV_FLUSH_MR,
			 12345678);
	many_in_a_row(d);
	refused(d, "to persistence", s.mr->rkey, addr(s, 0), 64, IBV_FLUSH_PERSISTENT,
		IBV_WC_REM_ACCESS_ERR);
	refused(d, "a range past the MR's end", s.mr->rkey, addr(s, kMr - 32), 64,
		IBV_FLUSH_GLOBAL, IBV_WC_REM_ACCESS_ERR);
	ibv_mr *write_only = ibv_reg_mr(s.pd, mem(s, 0), 4096,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!write_only)
		die("ibv_reg_mr", errno);
	refused(d, "an MR without FLUSH_GLOBAL", write_only->rkey, addr(s, 0), 64,
		IBV_FLUSH_GLOBAL, IBV_WC_REM_ACCESS_ERR);
	/* rxe answers a QP without the right with Invalid Request; sroce as
	 * for READ, WRITE and atomics without theirs.
	 */
	if (d.resp_is_sroce) {
		refused(d, "a QP that does not grant FLUSH", s.mr->rkey, addr(s, 0), 64,
			IBV_FLUSH_GLOBAL, IBV_WC_REM_ACCESS_ERR, IBV_ACCESS_REMOTE_WRITE);
		responder_claims(d);
	}
	if (is_sroce(argv[1]))
		requester_refusals(d);
	return finish();
}

#else /* rdma-core 44: no FLUSH verb */

/* ib_core has the FLUSH access bit and capabilities from Linux 6.2 on. */
bool kernel_knows_flush()
{
	utsname u{};
	int major = 0, minor = 0;

	if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2)
		die("uname", errno);
	return major > 6 || (major == 6 && minor >= 2);
}

int run(int argc, char **argv)
{
	(void)argc;
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	Setup s = open_setup(argv[1], std::atoi(argv[2]), kMr, access);
	const uint64_t caps = device_caps(s);
	ibv_mr *mr = ibv_reg_mr(s.pd, mem(s, 0), 4096,
				IBV_ACCESS_LOCAL_WRITE | kAccessFlushGlobal);
	const int err = errno;
	if (kernel_knows_flush()) {
		/* Debian 12's user space on a newer kernel (bookworm-backports'
		 * 6.12): the kernel's FLUSH, seen by value through rdma-core 44.
		 */
		check(caps & kCapFlushGlobal,
		      "FLUSH claimed where ib_core has it (Linux 6.2 on)");
		check(mr, std::string("an MR asking for FLUSH_GLOBAL by value: an MR (got ") +
				  (mr ? "one" : std::strerror(err)) + ")");
	} else {
		check(!(caps & (kCapFlushGlobal | kCapFlushPersistent)),
		      "no FLUSH capability claimed where ib_core has no FLUSH access bit");
		check(!mr && err == EINVAL,
		      std::string("an MR asking for FLUSH_GLOBAL by value: EINVAL (got ") +
			      (mr ? "an MR" : std::strerror(err)) + ")");
	}
	if (mr)
		ibv_dereg_mr(mr);
	return finish();
}

#endif

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 5) {
		std::fprintf(stderr, "usage: %s DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]\n",
			     argv[0]);
		return 2;
	}
	tool_name = "flush";
	return run(argc, argv);
}

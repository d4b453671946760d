// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * odp DEV GID_INDEX: on-demand paging (IBV_ACCESS_ON_DEMAND) on one device,
 * RC QPs connected through its own GID, checked as an application sees it:
 *
 *   - the capabilities: ODP for every RC operation and SRQ receives, UD
 *     sends, no implicit ODP (its registration is refused with EINVAL);
 *   - nothing is pinned: VmPin does not grow with a 64 MiB ODP MR;
 *   - SEND, a multi-packet WRITE, READ and both atomics between ODP MRs
 *     whose pages are not present on either side (a fresh anonymous
 *     mapping to write into; a memfd filled with write(2), never touched
 *     through the mapping, to read from): the data byte for byte, and the
 *     page faults counted;
 *   - madvise(MADV_DONTNEED) between transfers (the MMU notifier takes
 *     the pages away) and a fork() whose child writes its copy: the next
 *     transfer still lands in the parent's memory;
 *   - memory that appears after registration: an MR over a PROT_NONE
 *     reservation refuses a WRITE (IBV_WC_REM_ACCESS_ERR), and once
 *     mprotect() makes it memory, a new QP's WRITE lands;
 *   - a send from an unmapped ODP range completes with
 *     IBV_WC_LOC_PROT_ERR;
 *   - ibv_advise_mr: a synchronous prefetch makes the next transfer fault
 *     nothing; a non-ODP MR is refused with EINVAL;
 *   - a race: while WRITEs and READs target an ODP MR, another thread
 *     replaces the memory under each of them (mmap MAP_FIXED, so the range
 *     is never unmapped): every operation succeeds, and the last lands.
 *
 *   odp DEV GID_INDEX [--race SECONDS]: only the race, for SECONDS (the
 *   soak runs it beside its traffic).
 *
 * One line per check; exit 0 only if every check held.
 */
#include "rc_loopback.hpp"

#include <atomic>
#include <random>
#include <fstream>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace rc_loopback;

constexpr size_t kLen = 256 << 10;	/* 256 packets at MTU 1024 */
constexpr int kOdp = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;
constexpr int kQpAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC;

const char *dev_name;

uint64_t counter(const char *name)
{
	std::ifstream f(std::string("/sys/class/infiniband/") + dev_name +
			"/ports/1/hw_counters/" + name);
	uint64_t v = 0;
	if (!(f >> v))
		die(name, ENOENT);
	return v;
}

long vm_pinned_kb()
{
	std::ifstream f("/proc/self/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("VmPin:", 0) == 0)
			return std::stol(line.substr(6));
	return -1;
}

uint8_t pattern(size_t i, int seed)
{
	return static_cast<uint8_t>(i * 7 + seed * 13 + (i >> 10));
}

/* A fresh anonymous mapping: no page present until touched. */
uint8_t *fresh(size_t len, int prot = PROT_READ | PROT_WRITE)
{
	void *p = mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap", errno);
	return static_cast<uint8_t *>(p);
}

/* A shared mapping of a memfd holding the pattern, written with write(2):
 * the pages exist in the page cache but not in our page table.
 */
uint8_t *untouched_source(size_t len, int seed)
{
	const int fd = memfd_create("odp-source", 0);
	if (fd < 0)
		die("memfd_create", errno);
	std::vector<uint8_t> buf(len);
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, seed);
	if (write(fd, buf.data(), len) != static_cast<ssize_t>(len))
		die("write", errno);
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		die("mmap", errno);
	return static_cast<uint8_t *>(p);
}

bool holds(const uint8_t *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			return false;
	return true;
}

ibv_mr *reg(Setup &s, void *p, size_t len, int access = kOdp)
{
	ibv_mr *mr = ibv_reg_mr(s.pd, p, len, access);
	if (!mr)
		die("ibv_reg_mr (ODP)", errno);
	return mr;
}

/* Completions seen while waiting for another one. */
std::vector<ibv_wc> seen;

/* Completion of wr_id @id, or wr_id ~0 after 10 s without it. */
ibv_wc wait_for(Setup &s, uint64_t id)
{
	for (int i = 0; i < 8; i++) {
		for (size_t j = 0; j < seen.size(); j++) {
			if (seen[j].wr_id == id) {
				const ibv_wc wc = seen[j];
				seen.erase(seen.begin() + j);
				return wc;
			}
		}
		const ibv_wc wc = next_completion(s);
		if (wc.wr_id == ~0ull)
			return wc;
		seen.push_back(wc);
	}
	ibv_wc none{};
	none.wr_id = ~0ull;
	return none;
}

/* A source with pattern @seed not yet in our page table, a destination
 * with no page present (or a PROT_NONE reservation), both ODP MRs.
 */
struct Buffers {
	uint8_t *src, *dst;
	ibv_mr *smr, *dmr;
};

Buffers buffers(Setup &s, int seed, int dst_prot = PROT_READ | PROT_WRITE)
{
	Buffers b;
	b.src = untouched_source(kLen, seed);
	b.dst = fresh(kLen, dst_prot);
	b.smr = reg(s, b.src, kLen);
	b.dmr = reg(s, b.dst, kLen);
	return b;
}

/* @src_mapped false: the test unmapped the source already. */
void release(Buffers &b, bool src_mapped = true)
{
	ibv_dereg_mr(b.smr);
	ibv_dereg_mr(b.dmr);
	if (src_mapped)
		munmap(b.src, kLen);
	munmap(b.dst, kLen);
}

struct Pair {
	ibv_qp *a, *b;
};

Pair connected(Setup &s)
{
	Pair p{make_rc(s, nullptr, 64, 0, kQpAccess), make_rc(s, nullptr, 64, 0, kQpAccess)};
	connect(s, p.a, p.b->qp_num);
	connect(s, p.b, p.a->qp_num);
	return p;
}

void destroy(Setup &s, Pair &p)
{
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_wc drain;
	while (ibv_poll_cq(s.cq, 1, &drain) > 0)
		;
	seen.clear();
}

void post(ibv_qp *qp, ibv_send_wr &wr)
{
	ibv_send_wr *bad;
	wr.send_flags |= IBV_SEND_SIGNALED;
	if (int err = ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send", err);
}

std::string status(const ibv_wc &wc)
{
	return wc.wr_id == ~0ull ? "no completion" : ibv_wc_status_str(wc.status);
}

ibv_send_wr rdma(ibv_wr_opcode op, uint64_t id, ibv_sge &sge, ibv_mr *remote,
		 const void *raddr)
{
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(raddr);
	wr.wr.rdma.rkey = remote->rkey;
	return wr;
}

void caps(Setup &s)
{
	ibv_device_attr_ex attr{};
	if (int err = ibv_query_device_ex(s.ctx, nullptr, &attr))
		die("ibv_query_device_ex", err);
	const auto &o = attr.odp_caps;
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			    IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	check(o.general_caps & IBV_ODP_SUPPORT, "ODP claimed");
	check(!(o.general_caps & IBV_ODP_SUPPORT_IMPLICIT), "implicit ODP not claimed");
	check((o.per_transport_caps.rc_odp_caps & rc) == rc, "RC: every operation");
	check(o.per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND, "UD: sends");
	errno = 0;
	ibv_mr *implicit = ibv_reg_mr(s.pd, nullptr, SIZE_MAX, kOdp);
	check(!implicit && errno == EINVAL,
	      std::string("implicit ODP registration refused: EINVAL (got ") +
		      (implicit ? "an MR" : std::strerror(errno)) + ")");
	if (implicit)
		ibv_dereg_mr(implicit);
}

void nothing_pinned(Setup &s)
{
	const size_t big = 64 << 20;
	uint8_t *p = fresh(big);
	const long before = vm_pinned_kb();
	ibv_mr *mr = reg(s, p, big);
	const long after = vm_pinned_kb();
	check(before >= 0 && after == before,
	      "a 64 MiB ODP MR pins nothing (VmPin " + std::to_string(before) + " -> " +
		      std::to_string(after) + " kB)");
	ibv_dereg_mr(mr);
	munmap(p, big);
}

/* SEND, WRITE, READ and atomics between MRs with no page present. */
void transfers(Setup &s)
{
	Pair p = connected(s);
	Buffers b = buffers(s, 1);
	uint8_t *src = b.src, *dst = b.dst;
	ibv_mr *smr = b.smr, *dmr = b.dmr;
	const uint64_t faults = counter("odp_page_faults");

	/* SEND of 64 KiB into a receive buffer nobody touched. */
	ibv_sge rsge{reinterpret_cast<uintptr_t>(dst), 65536, dmr->lkey};
	ibv_recv_wr rwr{};
	rwr.wr_id = 10;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ibv_recv_wr *rbad;
	if (int err = ibv_post_recv(p.b, &rwr, &rbad))
		die("ibv_post_recv", err);
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), 65536, smr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 11;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	post(p.a, wr);
	ibv_wc wc = wait_for(s, 11);
	ibv_wc rwc = wait_for(s, 10);
	check(wc.status == IBV_WC_SUCCESS && rwc.status == IBV_WC_SUCCESS &&
		      rwc.byte_len == 65536 && holds(dst, 65536, 1),
	      "SEND 64 KiB, no page present on either side: delivered (" + status(wc) +
		      ", " + status(rwc) + ")");

	/* WRITE 256 KiB: the destination's pages are taken away first. */
	madvise(dst, kLen, MADV_DONTNEED);
	sge.length = kLen;
	wr = rdma(IBV_WR_RDMA_WRITE, 12, sge, dmr, dst);
	post(p.a, wr);
	wc = wait_for(s, 12);
	check(wc.status == IBV_WC_SUCCESS && holds(dst, kLen, 1),
	      "WRITE 256 KiB after MADV_DONTNEED of the target: landed (" + status(wc) + ")");

	/* READ 256 KiB from the untouched memfd pages into pages just dropped. */
	uint8_t *src2 = untouched_source(kLen, 2);
	ibv_mr *s2mr = reg(s, src2, kLen);
	madvise(dst, kLen, MADV_DONTNEED);
	ibv_sge lsge{reinterpret_cast<uintptr_t>(dst), static_cast<uint32_t>(kLen), dmr->lkey};
	wr = rdma(IBV_WR_RDMA_READ, 13, lsge, s2mr, src2);
	post(p.a, wr);
	wc = wait_for(s, 13);
	check(wc.status == IBV_WC_SUCCESS && holds(dst, kLen, 2),
	      "READ 256 KiB, both sides faulted: the data (" + status(wc) + ")");

	/* Atomics on a page dropped, their results into a page dropped. */
	madvise(dst, kLen, MADV_DONTNEED);
	ibv_sge asge{reinterpret_cast<uintptr_t>(dst + 4096), 8, dmr->lkey};
	wr = rdma(IBV_WR_ATOMIC_FETCH_AND_ADD, 14, asge, dmr, nullptr);
	wr.wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(dst + 8192);
	wr.wr.atomic.rkey = dmr->rkey;
	wr.wr.atomic.compare_add = 5;
	post(p.a, wr);
	wc = wait_for(s, 14);
	uint64_t got, now;
	std::memcpy(&got, dst + 4096, 8);
	std::memcpy(&now, dst + 8192, 8);
	check(wc.status == IBV_WC_SUCCESS && got == 0 && now == 5,
	      "FETCH_AND_ADD on pages not present: old 0, now 5 (" + status(wc) + ", " +
		      std::to_string(got) + ", " + std::to_string(now) + ")");
	madvise(dst, kLen, MADV_DONTNEED);
	wr.wr_id = 15;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 0;
	wr.wr.atomic.swap = 77;
	post(p.a, wr);
	wc = wait_for(s, 15);
	std::memcpy(&got, dst + 4096, 8);
	std::memcpy(&now, dst + 8192, 8);
	check(wc.status == IBV_WC_SUCCESS && got == 0 && now == 77,
	      "CMP_AND_SWP after MADV_DONTNEED (the 5 is gone): swapped (" + status(wc) + ")");
	check(counter("odp_page_faults") > faults, "the page faults are counted");

	ibv_dereg_mr(s2mr);
	munmap(src2, kLen);
	destroy(s, p);
	release(b);
}

/* A child's write to its copy of the registered memory stays its own. */
void fork_keeps_parent_memory(Setup &s)
{
	Pair p = connected(s);
	Buffers b = buffers(s, 3);
	uint8_t *src = b.src, *dst = b.dst;
	ibv_mr *smr = b.smr, *dmr = b.dmr;
	std::memset(dst, 0xEE, kLen);	/* present in the parent */
	const pid_t child = fork();
	if (child == 0) {
		std::memset(dst, 0x11, kLen);	/* the child's copy */
		_exit(0);
	}
	int wstatus = 0;
	waitpid(child, &wstatus, 0);
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), static_cast<uint32_t>(kLen), smr->lkey};
	ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 20, sge, dmr, dst);
	post(p.a, wr);
	const ibv_wc wc = wait_for(s, 20);
	check(wc.status == IBV_WC_SUCCESS && holds(dst, kLen, 3),
	      "after fork() and the child's writes, a WRITE lands in the parent (" +
		      status(wc) + ")");
	destroy(s, p);
	release(b);
}

/* An MR over a reservation: refused until it is memory, then written. */
void memory_after_registration(Setup &s)
{
	Buffers b = buffers(s, 4, PROT_NONE);
	uint8_t *src = b.src, *dst = b.dst;
	ibv_mr *smr = b.smr, *dmr = b.dmr;
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), 4096, smr->lkey};

	Pair p = connected(s);
	ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 30, sge, dmr, dst);
	post(p.a, wr);
	ibv_wc wc = wait_for(s, 30);
	check(wc.status == IBV_WC_REM_ACCESS_ERR,
	      "WRITE into a PROT_NONE reservation: IBV_WC_REM_ACCESS_ERR (" + status(wc) + ")");
	destroy(s, p);

	if (mprotect(dst, kLen, PROT_READ | PROT_WRITE))
		die("mprotect", errno);
	p = connected(s);
	sge.length = kLen;
	wr = rdma(IBV_WR_RDMA_WRITE, 31, sge, dmr, dst);
	post(p.a, wr);
	wc = wait_for(s, 31);
	check(wc.status == IBV_WC_SUCCESS && holds(dst, kLen, 4),
	      "the same MR once mprotect() made it memory: the WRITE lands (" + status(wc) + ")");
	destroy(s, p);

	/* The source goes away under its MR: a local protection error. */
	munmap(src, kLen);
	p = connected(s);
	wr = rdma(IBV_WR_RDMA_WRITE, 32, sge, dmr, dst);
	post(p.a, wr);
	wc = wait_for(s, 32);
	check(wc.status == IBV_WC_LOC_PROT_ERR,
	      "WRITE from an unmapped ODP range: IBV_WC_LOC_PROT_ERR (" + status(wc) + ")");
	destroy(s, p);
	release(b, false);
}

void prefetch(Setup &s)
{
	Pair p = connected(s);
	Buffers b = buffers(s, 5);
	uint8_t *src = b.src, *dst = b.dst;
	ibv_mr *smr = b.smr, *dmr = b.dmr;
	ibv_sge both[2] = {{reinterpret_cast<uintptr_t>(src), static_cast<uint32_t>(kLen), smr->lkey},
			   {reinterpret_cast<uintptr_t>(dst), static_cast<uint32_t>(kLen), dmr->lkey}};
	int err = ibv_advise_mr(s.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				IBV_ADVISE_MR_FLAG_FLUSH, both, 2);
	check(err == 0, std::string("synchronous PREFETCH_WRITE: 0 (got ") + std::strerror(err) + ")");
	const uint64_t faults = counter("odp_page_faults");
	ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 40, both[0], dmr, dst);
	post(p.a, wr);
	const ibv_wc wc = wait_for(s, 40);
	const uint64_t after = counter("odp_page_faults");
	check(wc.status == IBV_WC_SUCCESS && holds(dst, kLen, 5) && after == faults,
	      "then a WRITE faults nothing (" + status(wc) + ", " +
		      std::to_string(after - faults) + " faults)");
	ibv_sge pinned{reinterpret_cast<uintptr_t>(mem(s, 0)), 4096, s.mr->lkey};
	err = ibv_advise_mr(s.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &pinned, 1);
	check(err == EINVAL, std::string("prefetch of a pinned MR: EINVAL (got ") +
				     std::strerror(err) + ")");
	destroy(s, p);
	release(b);
}


/*
 * WRITEs (from an ODP source) and READs (into the target) of 256 KiB, one
 * at a time, while another thread maps fresh memory over the target: once
 * per operation, at a random moment within its first 2 ms, so the
 * replacement (an invalidation of the whole range) lands anywhere in a
 * transfer, on a fast machine or a slow debug kernel alike; replacing
 * faster than a transfer can complete would only measure livelock.
 * MAP_FIXED replaces atomically, so no fault may fail: every operation
 * must succeed; once the thread stops, a WRITE must land.
 */
void race(Setup &s, double seconds)
{
	Pair p = connected(s);
	Buffers b = buffers(s, 6);
	std::atomic<bool> stop{false};
	std::atomic<long> flips{0}, started{0};
	std::thread flipper([&] {
		std::minstd_rand rng(42);
		long seen = 0;
		while (!stop.load()) {
			if (started.load() == seen) {	/* one per operation */
				std::this_thread::sleep_for(std::chrono::microseconds(100));
				continue;
			}
			seen = started.load();
			std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
			void *q = mmap(b.dst, kLen, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (q == MAP_FAILED)
				die("mmap MAP_FIXED", errno);
			b.dst[(flips++ * 4096) % kLen] = 1;	/* one page present */
		}
	});
	ibv_sge src{reinterpret_cast<uintptr_t>(b.src), static_cast<uint32_t>(kLen), b.smr->lkey};
	ibv_sge dst{reinterpret_cast<uintptr_t>(b.dst), static_cast<uint32_t>(kLen), b.dmr->lkey};
	long ops = 0, good = 0;
	std::string first_bad;
	const auto end = std::chrono::steady_clock::now() +
			 std::chrono::duration<double>(seconds);
	while (std::chrono::steady_clock::now() < end) {
		const bool read = ops % 2;
		ibv_send_wr wr = read ? rdma(IBV_WR_RDMA_READ, 100 + ops, dst, b.smr, b.src)
				      : rdma(IBV_WR_RDMA_WRITE, 100 + ops, src, b.dmr, b.dst);
		post(p.a, wr);
		started++;
		const ibv_wc wc = wait_for(s, 100 + ops);
		ops++;
		if (wc.wr_id != ~0ull && wc.status == IBV_WC_SUCCESS) {
			good++;
		} else {
			first_bad = status(wc);
			break;
		}
	}
	stop = true;
	flipper.join();
	check(ops > 0 && good == ops,
	      "race: " + std::to_string(good) + " of " + std::to_string(ops) +
		      " WRITEs/READs succeeded while the target was replaced " +
		      std::to_string(flips.load()) + " times" +
		      (first_bad.empty() ? "" : " (then " + first_bad + ")"));
	if (good == ops) {
		ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 99, src, b.dmr, b.dst);
		post(p.a, wr);
		const ibv_wc wc = wait_for(s, 99);
		check(wc.status == IBV_WC_SUCCESS && holds(b.dst, kLen, 6),
		      "race: after it, a WRITE lands (" + status(wc) + ")");
	}
	destroy(s, p);
	release(b);
}

} // namespace

int main(int argc, char **argv)
{
	tool_name = "odp";
	const bool race_only = argc == 5 && !std::strcmp(argv[3], "--race");
	if (argc != 3 && !race_only) {
		std::fprintf(stderr, "usage: odp DEV GID_INDEX [--race SECONDS]\n");
		return 2;
	}
	dev_name = argv[1];
	Setup s = open_setup(argv[1], std::atoi(argv[2]), 4096, IBV_ACCESS_LOCAL_WRITE);
	if (race_only) {
		race(s, std::atof(argv[4]));
		return finish();
	}
	caps(s);
	nothing_pinned(s);
	transfers(s);
	fork_keeps_parent_memory(s);
	memory_after_registration(s);
	prefetch(s);
	race(s, 3);
	return finish();
}

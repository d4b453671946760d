// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for tests/guest/test_hostile_packets.py: RDMA READs answered
 * by a peer that lies about their length (the 2026 siw class of READ
 * Response bounds, tried on sroce's requester).
 *
 *   read_responses DEV GID4_INDEX PEER4
 *
 * Makes one RC QP per case, connected to a QP number at PEER4 that no
 * device there has (read_responder.py sniffs the READ requests on the
 * peer's link and answers them as its case says), prints the cases as one
 * JSON line and "ready", waits for a line on its standard input, then
 * posts each case's READ and checks what it came to:
 *   - the status a NIC reports: success where the answer was right (or
 *     where a wrong packet could be told apart from the answer and was
 *     dropped), IBV_WC_BAD_RESP_ERR where the peer sent more or fewer
 *     bytes than asked for, in any packet;
 *   - every byte around the READ's two SGEs as it was (a response that
 *     lands outside its READ would overwrite them), and on success every
 *     byte inside them as the peer sent it.
 * Exit status as for every guest tool (rc_loopback.hpp).
 */
#include "rc_loopback.hpp"

#include <arpa/inet.h>

#include <iostream>
#include <vector>

using namespace rc_loopback;

namespace {

constexpr uint32_t kFakeQpn = 0x7f0000;	/* the peer's QPs: no device has them */
constexpr size_t kSlot = 8192;		/* each case's part of the MR */
constexpr size_t kGuard = 64;		/* bytes around and between the SGEs */
constexpr uint8_t kGuardByte = 0xee;

/* What read_responder.py does for each case name: keep the two in step. */
struct Case {
	const char *name;
	uint32_t length;	/* of the READ */
	ibv_wc_status expect;
};

constexpr Case kCases[] = {
	{"right", 3000, IBV_WC_SUCCESS},
	{"only_long", 256, IBV_WC_BAD_RESP_ERR},
	{"only_short", 256, IBV_WC_BAD_RESP_ERR},
	{"only_empty", 256, IBV_WC_BAD_RESP_ERR},
	{"first_beyond", 256, IBV_WC_BAD_RESP_ERR},
	{"first_short", 3000, IBV_WC_BAD_RESP_ERR},
	{"middle_short", 3000, IBV_WC_BAD_RESP_ERR},
	{"last_long", 3000, IBV_WC_BAD_RESP_ERR},
	{"last_short", 3000, IBV_WC_BAD_RESP_ERR},
	{"middle_at_the_end", 3000, IBV_WC_BAD_RESP_ERR},
	{"extra_after_last", 3000, IBV_WC_SUCCESS},
	{"gap_then_rerequest", 3000, IBV_WC_SUCCESS},
	{"stale_psn_first", 3000, IBV_WC_SUCCESS},
	{"atomic_ack_for_read", 256, IBV_WC_SUCCESS},
};

/* The bytes a right answer carries: read_responder.py makes the same. */
uint8_t pattern(size_t offset)
{
	return static_cast<uint8_t>(offset * 7 + 13);
}

ibv_gid gid_of(const char *addr)
{
	ibv_gid g{};
	g.raw[10] = g.raw[11] = 0xff;		/* ::ffff:a.b.c.d */
	if (inet_pton(AF_INET, addr, g.raw + 12) != 1)
		die("not an IPv4 address", EINVAL);
	return g;
}

/* An RC QP with two send SGEs, in INIT. */
ibv_qp *make_qp(Setup &s)
{
	ibv_qp_init_attr init{};
	init.send_cq = init.recv_cq = s.cq;
	init.cap.max_send_wr = init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_RC;
	ibv_qp *qp = ibv_create_qp(s.pd, &init);
	if (!qp)
		die("ibv_create_qp", errno);
	rc_to_init(qp, 0);
	return qp;
}

/*
 * Case @i's slot: guard, the first SGE (a third of the READ), guard, the
 * second SGE, guard; the READ's bytes land in the SGEs in order.
 */
struct Layout {
	size_t base, first, second;	/* offsets into the MR */
	uint32_t first_len, second_len;
};

Layout layout(size_t i, uint32_t length)
{
	Layout l;
	l.base = i * kSlot;
	l.first_len = length / 3;
	l.second_len = length - l.first_len;
	l.first = l.base + kGuard;
	l.second = l.first + l.first_len + kGuard;
	return l;
}

/* Byte @k of the READ's data, wherever its SGE put it. */
uint8_t *data_byte(Setup &s, const Layout &l, size_t k)
{
	return k < l.first_len ? mem(s, l.first + k) : mem(s, l.second + k - l.first_len);
}

bool is_data(const Layout &l, size_t off)
{
	return (off >= l.first && off < l.first + l.first_len) ||
	       (off >= l.second && off < l.second + l.second_len);
}

void post_read(Setup &s, ibv_qp *qp, const Layout &l, uint64_t wr_id)
{
	ibv_sge sg[2] = {
		{reinterpret_cast<uintptr_t>(mem(s, l.first)), l.first_len, s.mr->lkey},
		{reinterpret_cast<uintptr_t>(mem(s, l.second)), l.second_len, s.mr->lkey},
	};
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x10000000 + wr_id * 0x100000;
	wr.wr.rdma.rkey = 0x1234;
	if (int err = ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send", err);
}

void check_case(Setup &s, size_t i, const Layout &l)
{
	const Case &c = kCases[i];
	const ibv_wc wc = next_completion(s);
	const std::string what = std::string(c.name) + ": ";
	check(wc.wr_id == i && wc.status == c.expect,
	      what + "completes with " + ibv_wc_status_str(c.expect) + " (got " +
		      (wc.wr_id == ~0ull ? std::string("nothing in 10 s")
					 : std::string(ibv_wc_status_str(wc.status))) + ")");
	size_t guard_bad = 0;
	for (size_t off = l.base; off < l.base + kSlot; off++)
		if (!is_data(l, off) && *mem(s, off) != kGuardByte)
			guard_bad++;
	check(!guard_bad, what + "no byte around the SGEs written (" +
				  std::to_string(guard_bad) + " were)");
	if (c.expect != IBV_WC_SUCCESS)
		return;
	size_t data_bad = 0;
	for (size_t k = 0; k < c.length; k++)
		if (*data_byte(s, l, k) != pattern(k))
			data_bad++;
	check(!data_bad, what + "every byte as the peer sent it (" +
				 std::to_string(data_bad) + " not)");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 4) {
		std::fprintf(stderr, "usage: %s DEV GID4_INDEX PEER4\n", argv[0]);
		return 2;
	}
	tool_name = "read_responses";
	constexpr size_t n = sizeof(kCases) / sizeof(kCases[0]);
	Setup s = open_setup(argv[1], std::atoi(argv[2]), n * kSlot, IBV_ACCESS_LOCAL_WRITE);
	std::memset(s.mr->addr, kGuardByte, n * kSlot);
	const ibv_gid peer = gid_of(argv[3]);
	std::vector<ibv_qp *> qps;
	std::printf("{\"cases\": [");
	for (size_t i = 0; i < n; i++) {
		ibv_qp *qp = make_qp(s);
		/* A 1 s local ACK timeout: a lost answer is asked for again. */
		to_rtr(s, qp, kFakeQpn + i, peer);
		to_rts(qp);
		qps.push_back(qp);
		const Layout l = layout(i, kCases[i].length);
		std::memset(mem(s, l.first), 0, l.first_len);
		std::memset(mem(s, l.second), 0, l.second_len);
		std::printf("%s{\"name\": \"%s\", \"qpn\": %u, \"peer_qpn\": %u, \"length\": %u}",
			    i ? ", " : "", kCases[i].name, qp->qp_num, kFakeQpn + unsigned(i),
			    kCases[i].length);
	}
	std::printf("]}\nready\n");
	std::fflush(stdout);
	std::string line;
	std::getline(std::cin, line);
	for (size_t i = 0; i < n; i++) {
		const Layout l = layout(i, kCases[i].length);
		post_read(s, qps[i], l, i);
		check_case(s, i, l);
	}
	for (ibv_qp *qp : qps)
		check(ibv_destroy_qp(qp) == 0, "QP " + std::to_string(qp->qp_num) + " destroyed");
	return finish();
}

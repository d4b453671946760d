// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Host micro-benchmark of sroce's per-packet data-path primitives from
// kernel/proto (the same C the module compiles), each next to plain
// memcpy of the same bytes: the copy is the floor a software RDMA device
// cannot go below, so bytes/s relative to memcpy says how much the
// protocol work costs on top.  scripts/bench-host runs it and writes the
// table; nothing here passes or fails.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "crc32.h"
#include "icrc.h"
#include "opcode.h"
#include "wire.h"

namespace {

std::vector<u8> pattern(size_t n)
{
	std::vector<u8> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = static_cast<u8>(i * 131 + 7);
	return v;
}

void bytes_done(benchmark::State &st, size_t n)
{
	st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * n);
}

void BM_memcpy(benchmark::State &st)
{
	size_t n = st.range(0);
	auto src = pattern(n), dst = std::vector<u8>(n);
	for (auto _ : st) {
		std::memcpy(dst.data(), src.data(), n);
		benchmark::DoNotOptimize(dst.data());
		benchmark::ClobberMemory();
	}
	bytes_done(st, n);
}

void BM_crc32(benchmark::State &st)
{
	size_t n = st.range(0);
	auto src = pattern(n);
	for (auto _ : st)
		benchmark::DoNotOptimize(roce_crc32_update(ROCE_CRC32_INIT, src.data(), n));
	bytes_done(st, n);
}

// What the receive path pays today: copy the payload out, CRC it again.
void BM_memcpy_then_crc32(benchmark::State &st)
{
	size_t n = st.range(0);
	auto src = pattern(n), dst = std::vector<u8>(n);
	for (auto _ : st) {
		std::memcpy(dst.data(), src.data(), n);
		benchmark::DoNotOptimize(roce_crc32_update(ROCE_CRC32_INIT, dst.data(), n));
		benchmark::ClobberMemory();
	}
	bytes_done(st, n);
}

void BM_crc32_copy(benchmark::State &st)
{
	size_t n = st.range(0);
	auto src = pattern(n), dst = std::vector<u8>(n);
	for (auto _ : st) {
		benchmark::DoNotOptimize(
			roce_crc32_copy(ROCE_CRC32_INIT, dst.data(), src.data(), n));
		benchmark::ClobberMemory();
	}
	bytes_done(st, n);
}

// The same two with the CRC engine capped: tables only (what a CPU without
// PCLMULQDQ, or a context that may not borrow the FPU, pays) and
// PCLMULQDQ's 16-byte registers only (a CPU without AVX-512).
struct EngineCap {
	explicit EngineCap(int e) { roce_crc32_host_engine = e; }
	~EngineCap() { roce_crc32_host_engine = ROCE_CRC32_ENGINE_WIDE; }
};

void BM_crc32_tables(benchmark::State &st)
{
	EngineCap cap(ROCE_CRC32_ENGINE_TABLE);
	BM_crc32(st);
}

void BM_crc32_copy_tables(benchmark::State &st)
{
	EngineCap cap(ROCE_CRC32_ENGINE_TABLE);
	BM_crc32_copy(st);
}

void BM_crc32_pclmul(benchmark::State &st)
{
	EngineCap cap(ROCE_CRC32_ENGINE_PCLMUL);
	BM_crc32(st);
}

void BM_crc32_copy_pclmul(benchmark::State &st)
{
	EngineCap cap(ROCE_CRC32_ENGINE_PCLMUL);
	BM_crc32_copy(st);
}

// A whole RDMA WRITE ONLY packet: IPv4, UDP, BTH, RETH, payload; the ICRC
// the way net.c computes it on send and receive.
struct WritePacket {
	std::vector<u8> ip = std::vector<u8>(ROCE_IPV4_HDR_LEN);
	std::vector<u8> udp;	// UDP header .. payload (no ICRC)
	explicit WritePacket(size_t payload)
	{
		roce_pkt_info pi{};
		pi.bth.opcode = ROCE_OP_RC_WRITE_ONLY;
		pi.bth.pkey = ROCE_DEFAULT_PKEY;
		pi.bth.dest_qpn = 0x12;
		pi.bth.psn = 0x345;
		pi.reth = {0x7f0000001000ull, 0x1234, static_cast<u32>(payload)};
		ip[0] = 0x45;
		ip[9] = 17;
		udp.resize(ROCE_UDP_HDR_LEN + ROCE_MAX_HDR_LEN + payload);
		int h = roce_build_headers(&pi, udp.data() + ROCE_UDP_HDR_LEN,
					   ROCE_MAX_HDR_LEN);
		udp.resize(ROCE_UDP_HDR_LEN + h + payload);
	}
};

void BM_icrc_packet(benchmark::State &st)
{
	size_t n = st.range(0);
	WritePacket p(n);
	for (auto _ : st)
		benchmark::DoNotOptimize(roce_icrc_compute(p.ip.data(), p.ip.size(), false,
							   p.udp.data(), p.udp.size()));
	bytes_done(st, n);
}

constexpr size_t kWriteHdr = ROCE_BTH_LEN + 16;	// BTH + RETH

void BM_build_headers(benchmark::State &st)
{
	roce_pkt_info pi{};
	u8 buf[ROCE_MAX_HDR_LEN];
	pi.bth.opcode = ROCE_OP_RC_WRITE_ONLY;
	pi.bth.pkey = ROCE_DEFAULT_PKEY;
	for (auto _ : st) {
		pi.bth.psn++;
		benchmark::DoNotOptimize(roce_build_headers(&pi, buf, sizeof(buf)));
		benchmark::ClobberMemory();
	}
	bytes_done(st, kWriteHdr);
}

void BM_parse(benchmark::State &st)
{
	WritePacket p(64);
	const u8 *bth = p.udp.data() + ROCE_UDP_HDR_LEN;
	size_t len = p.udp.size() - ROCE_UDP_HDR_LEN + ROCE_ICRC_LEN;
	std::vector<u8> pkt(bth, bth + len - ROCE_ICRC_LEN);
	pkt.resize(len);
	roce_pkt_info out;
	for (auto _ : st) {
		benchmark::DoNotOptimize(roce_parse(pkt.data(), pkt.size(), &out));
		benchmark::ClobberMemory();
	}
	bytes_done(st, kWriteHdr);
}

} // namespace

BENCHMARK(BM_memcpy)->Arg(kWriteHdr)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_memcpy_then_crc32)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32_copy)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32_pclmul)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32_copy_pclmul)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32_tables)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_crc32_copy_tables)->Arg(64)->Arg(4096)->Arg(65536);
BENCHMARK(BM_icrc_packet)->Arg(4096);
BENCHMARK(BM_build_headers);
BENCHMARK(BM_parse);

BENCHMARK_MAIN();

#!/usr/bin/python3
"""Google Benchmark JSON (sroce_micro_bench, with repetitions) -> the
Markdown table docs/bench/host.md: per-byte cost of each data-path
primitive next to memcpy of the same number of bytes.

usage: host_report.py BENCH_JSON OUT_MD"""
import json
import re
import sys

WHAT = {
    "BM_memcpy": "memcpy (the floor)",
    "BM_crc32": "CRC-32 only (roce_crc32_update: the widest fold engine the CPU has)",
    "BM_memcpy_then_crc32": "memcpy, then CRC-32 of the copy (two passes)",
    "BM_crc32_copy": "copy-and-CRC in one pass (roce_crc32_copy)",
    "BM_crc32_pclmul": "CRC-32 only, PCLMULQDQ 16 B/register (no AVX-512)",
    "BM_crc32_copy_pclmul": "copy-and-CRC in one pass, PCLMULQDQ 16 B/register",
    "BM_crc32_tables": "CRC-32 only, tables (no PCLMULQDQ)",
    "BM_crc32_copy_tables": "copy-and-CRC in one pass, tables (no PCLMULQDQ)",
    "BM_icrc_packet": "ICRC of a WRITE ONLY packet (roce_icrc_compute)",
    "BM_build_headers": "build BTH+RETH (roce_build_headers)",
    "BM_parse": "parse BTH+RETH (roce_parse)",
}
HEADER_BYTES = 28   # BTH + RETH, what the header benchmarks count


def medians(doc):
    """{(name, bytes): (bytes_per_second, cpu_ns)} from median aggregates."""
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name, _, arg = b["run_name"].partition("/")
        n = int(arg) if arg else HEADER_BYTES
        out[(name, n)] = (b["bytes_per_second"], b["cpu_time"])
    return out


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    m = medians(doc)
    ctx = doc["context"]
    with open("/proc/cpuinfo") as f:
        model = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
    cpu = model.group(1) if model else "unknown CPU"
    lines = [
        "# Host micro-benchmark: data-path primitives vs memcpy", "",
        "Written by `scripts/bench-host` on %s.  Host: %s, %d CPUs; medians of %d "
        "repetitions, CPU time (the machine may be shared).  Per-byte ratio: "
        "the primitive's ns/byte over memcpy's for the same byte count "
        "(1.0 = as cheap as copying)." % (
            ctx["date"], cpu, ctx["num_cpus"],
            max(b.get("repetitions", 1) for b in doc["benchmarks"])), "",
        "| primitive | bytes | GB/s | ns/byte | x memcpy per byte |",
        "|---|---|---|---|---|"]
    for (name, n), (bps, _) in sorted(m.items(), key=lambda kv: (list(WHAT).index(kv[0][0]), kv[0][1])):
        base = m.get(("BM_memcpy", n))
        ratio = "%.2f" % (base[0] / bps) if base else "-"
        lines.append("| %s | %d | %.2f | %.3f | %s |" % (
            WHAT.get(name, name), n, bps / 1e9, 1e9 / bps, ratio))
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

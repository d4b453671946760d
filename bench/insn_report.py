#!/usr/bin/python3
"""scripts/bench --insns, on the host: joins the plugin's marks (plugin.out)
with the guest's runs (runs.jsonl) into instructions per message and per
KiB for each transport, and writes insns.md and insns.json.

    insn_report.py RUN_DIR DOCS_DIR --host-info JSON

Per round trip = (cost of a run of 3N round trips - cost of a run of N) /
2N, kernel and user apart: the programs' start and exit cancel out.  Both
ends are in the guest, so a round trip's cost is both sides' work for two
messages (one each way): per message = per round trip / 2.  The spread
is (largest - smallest) / median of the repetitions' totals."""
import argparse
import json
import os
import re
import statistics
import sys

MARK = re.compile(r"^mark (\d+) vcpu \d+ kernel (\d+) user (\d+)$")
TRANSPORTS = ("sroce", "sroce-nopoll", "rxe", "tcp", "udp")


def read_marks(path):
    marks = {}
    with open(path) as f:
        for line in f:
            m = MARK.match(line.strip())
            if m:
                marks[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return marks


def read_runs(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def per_round_trip(runs, marks):
    """{(transport, size): {"kernel": [...], "user": [...], "errors": [...]}},
    one value per repetition."""
    cost, out = {}, {}
    for r in runs:
        key = (r["transport"], r["size"], r["rep"])
        if r["error"] or r["start"] not in marks or r["end"] not in marks:
            out.setdefault(key[:2], {"kernel": [], "user": [], "errors": []})[
                "errors"].append(r["error"] or "a mark is missing")
            continue
        (k0, u0), (k1, u1) = marks[r["start"]], marks[r["end"]]
        cost.setdefault(key, {})[r["iters"]] = (k1 - k0, u1 - u0)
    for (t, size, rep), by_iters in cost.items():
        if len(by_iters) != 2:
            continue
        short, long_ = sorted(by_iters)
        n = long_ - short
        e = out.setdefault((t, size), {"kernel": [], "user": [], "errors": []})
        e["kernel"].append((by_iters[long_][0] - by_iters[short][0]) / n)
        e["user"].append((by_iters[long_][1] - by_iters[short][1]) / n)
    return out


def summarise(values):
    totals = [k + u for k, u in zip(values["kernel"], values["user"])]
    if not totals:
        return None
    med = statistics.median(totals)
    return {"kernel": statistics.median(values["kernel"]),
            "user": statistics.median(values["user"]),
            "total": med, "reps": len(totals),
            "spread": (max(totals) - min(totals)) / med if med else 0.0}


def unit(size):
    """What a row is counted per: a message, or a KiB for bulk sizes."""
    return ("KiB", size * 2 / 1024) if size >= 65536 else ("message", 2)


def fmt(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x


def report(figures, host_info):
    sizes = sorted({s for _, s in figures})
    lines = [
        "# Instructions per message, sroce against rxe and the kernel's TCP/UDP",
        "",
        "Made by `scripts/bench --insns` (bench/insn/, bench/insn_guest.py): guest",
        "instructions counted by a qemu TCG plugin, not time, so the host's speed",
        "does not move them.  Event-driven ping-pong in loopback on one device",
        "(`ibv_rc_pingpong -e`; TCP and UDP with blocking sockets), both ends",
        "in the guest: each figure is both sides' work, kernel and user, per",
        "message (a round trip is two) or per KiB moved, from the difference of",
        "a run of 3N and one of N round trips.  `sroce` is the device as",
        "installed, its SQ poller's spinning after each post counted;",
        "`sroce-nopoll` the same with `sq_poll_idle_us` 0 (every post rings",
        "the doorbell): the work alone.",
        "",
        "Run on %s at %s: host CPU %s, qemu %s, guest CPU model %s; the host's"
        % (host_info.get("date", "?"), host_info.get("commit", "?"),
           host_info.get("cpu", "?"), host_info.get("qemu", "?"),
           host_info.get("guest_cpu", "?")),
        "load (1, 5, 15 min) %s (one vCPU: load moves the counts little, README)."
        % host_info.get("load", "?"),
        "",
        "Each figure is the median of %s repetitions; the spread is the largest"
        % ("/".join(str(n) for n in sorted({f.get("reps", 0) for f in figures.values()}))
           or "?"),
        "less the smallest, over that median.",
        "",
        "| size | per | transport | kernel | user | total | spread | x rxe |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        per, div = unit(size)
        rxe = figures.get(("rxe", size))
        for t in TRANSPORTS:
            f = figures.get((t, size))
            if not f:
                continue
            ratio = ("%.2f" % (f["total"] / rxe["total"])
                     if rxe and rxe["total"] and t != "rxe" else "")
            lines.append("| %d | %s | %s | %s | %s | %s | %.1f %% | %s |" % (
                size, per, t, fmt(f["kernel"] / div), fmt(f["user"] / div),
                fmt(f["total"] / div), 100 * f["spread"], ratio))
    lines += [
        "",
        "Where this measure is blind: a `rep movs` or a PCLMULQDQ is one",
        "instruction whatever it costs (the guest's CPU model, `max,-erms,-fsrm`,",
        "makes the kernel copy with loops, not `rep movsb`); memory traffic and",
        "cache misses cost nothing here; and every instruction in the window",
        "counts, the guest's timer ticks and kernel threads included (sroce's SQ",
        "poller, when it runs, is sroce's cost).  Wall-clock ratios are in",
        "latest.md.",
    ]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("docs")
    p.add_argument("--host-info", default="{}")
    a = p.parse_args()
    marks = read_marks(os.path.join(a.run, "plugin.out"))
    runs = read_runs(os.path.join(a.run, "runs.jsonl"))
    raw = per_round_trip(runs, marks)
    figures = {k: s for k, v in raw.items() if (s := summarise(v))}
    errors = {"%s/%d" % k: v["errors"] for k, v in raw.items() if v["errors"]}
    os.makedirs(a.docs, exist_ok=True)
    host = json.loads(a.host_info)
    with open(os.path.join(a.docs, "insns.md"), "w") as f:
        f.write(report(figures, host))
        if errors:
            f.write("\nRuns that failed (not in the figures):\n\n")
            for k, v in sorted(errors.items()):
                f.write("- %s: %s\n" % (k, v[0].strip().replace("\n", " ")[:300]))
    with open(os.path.join(a.docs, "insns.json"), "w") as f:
        json.dump({"host": host, "per_round_trip": {
            "%s/%d" % k: v for k, v in sorted(figures.items())},
            "errors": errors}, f, indent=1)
    print(open(os.path.join(a.docs, "insns.md")).read())
    return 1 if not figures else 0


if __name__ == "__main__":
    sys.exit(main())

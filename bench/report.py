#!/usr/bin/python3
"""Turns one scripts/bench run (meta.json + raw.jsonl from the guest) into
the committed figures: a Markdown table, a PNG chart of the sroce/rxe
ratios and a JSON file with every raw record.

usage: report.py RUN_DIR OUT_DIR [--host-info JSON]"""
import argparse
import datetime
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from harness import BAD_KERNEL_LOG  # noqa: E402
import plan  # noqa: E402

LOOPBACK_NOTE = ("each device talks to itself on its own netdev: rxe0 on veth0 "
                 "in the initial namespace, sroce1 on veth1 in namespace `peer`")
WIRE_NOTE = ("sroce0 (veth0) to sroce1 (veth1, namespace `peer`) across the "
             "veth pair; sroce only, because rxe in Linux 6.1 keeps its UDP "
             "socket in the initial namespace and cannot reach a device in "
             "another one")


def load(run_dir):
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(run_dir, "raw.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return meta, records


class Summary:
    """Medians over rounds per (path, workload, device)."""

    def __init__(self, meta, records):
        self.workloads = {(w["path"], w["id"]): w for w in meta["workloads"]}
        self.runs = {}
        for r in records:
            self.runs.setdefault((r["path"], r["workload"], r["device"]), []).append(r)

    def median(self, path, wid, device, metric=None):
        """Median of the good runs; None if all failed, NOT_RUN if none
        was recorded (a run cut short)."""
        w = self.workloads.get((path, wid))
        if w is None or not self.runs.get((path, wid, device)):
            return NOT_RUN    # not in this run's plan (--only), or cut short
        vals = [r["metrics"][metric or w["metric"]]
                for r in self.runs.get((path, wid, device), []) if r["ok"]]
        return statistics.median(vals) if vals else None

    def counts(self, path, wid, device):
        rs = self.runs.get((path, wid, device), [])
        return sum(r["ok"] for r in rs), len(rs)

    def rounds(self):
        """Rounds actually recorded (a run cut short has fewer than planned)."""
        return max((r["round"] for rs in self.runs.values() for r in rs), default=0)

    def failures(self):
        return [r for rs in self.runs.values() for r in rs if not r["ok"]]


NOT_RUN = "not run"


def fmt(v, unit=""):
    if v is None:
        return "failed"
    if v is NOT_RUN:
        return v
    return ("%.3g" % v if abs(v) < 1000 else "%.0f" % v) + (" " + unit if unit else "")


def ratio(a, b):
    if NOT_RUN in (a, b):
        return NOT_RUN
    return a / b if a is not None and b not in (None, 0) else None


METRIC_NAMES = {"typical_us": "typical", "avg_us": "average", "p99_us": "p99",
                "mpps": "msg rate",
                "kernel_cpu_s_per_gib": "kernel part", "gbps": "",
                "cpu_s_per_gib": "", "per_wr": "doorbells", "kib_per_qp": "",
                "device_per_wr": "all but clock reads"}
METRIC_UNITS = {"p99_us": "us", "avg_us": "us", "mpps": "Mpps", "kernel_cpu_s_per_gib": "CPU s/GiB"}


# Latencies are lower-is-better whatever the workload's own metric is (a
# p99 beside a rate reads the other way from the rate).
LOWER_IS_BETTER = {"typical_us", "avg_us", "p99_us", "p999_us"}


def comparison_rows(s):
    """Loopback rows: (label, unit, rxe, sroce, sroce/rxe, higher_is_better)."""
    rows = []
    for (path, wid), w in s.workloads.items():
        if path != "loopback" or "rxe" not in w["devices"]:
            continue
        for m in [w["metric"]] + list(w["also"]):
            label = wid + (" " + METRIC_NAMES.get(m, m) if METRIC_NAMES.get(m, m) else "")
            rxe, sroce = s.median(path, wid, "rxe", m), s.median(path, wid, "sroce", m)
            rows.append((label, METRIC_UNITS.get(m, w["unit"]), rxe, sroce,
                         ratio(sroce, rxe),
                         w["higher_is_better"] and m not in LOWER_IS_BETTER))
    return rows


def most_qps(s, prefix):
    """The workload of the plan whose id starts with @prefix and ends in
    the largest QP count (".../8192qp"), or None."""
    ids = [wid for (p, wid) in s.workloads if wid.startswith(prefix)]
    return max(ids, key=lambda wid: int(wid.split("/")[-1][:-2]), default=None)


def target_rows(s):
    lb, wire = "loopback", "wire"
    big, fan = most_qps(s, "scaling/"), most_qps(s, "fanout/")
    loss = next((wid for (p, wid) in s.workloads if p == wire and "loss" in wid
                 and wid.startswith("write")), None)
    tcp_sroce = s.median(lb, "tcp/iperf3", "tcp-sroce-path")
    def vs_rxe(wid, m=None):
        return ratio(s.median(lb, wid, "sroce", m), s.median(lb, wid, "rxe", m))

    rows = []
    for verb in ("WRITE", "SEND"):
        for size in ("64KiB", "1MiB"):
            rows.append(("%s bandwidth %s, sroce/rxe (loopback)"
                         % (verb, size.replace("KiB", " KiB").replace("MiB", " MiB")),
                         ">= 3", vs_rxe("%s_bw/%s/1qp" % (verb.lower(), size)), 3, True))
    rows += [
        ("WRITE bandwidth 64 KiB, sroce/TCP (loopback, same netns)", ">= 0.6",
         ratio(s.median(lb, "write_bw/64KiB/1qp", "sroce"), tcp_sroce), 0.6, True),
        ("WRITE bandwidth 64 KiB, sroce/TCP (wire)", ">= 0.6",
         ratio(s.median(wire, "write_bw/64KiB/1qp", "sroce"),
               s.median(wire, "tcp/iperf3", "tcp")), 0.6, True),
    ]
    for qps in (1, 8):
        rows.append(("message rate 64 B, %d QP%s, sroce/rxe (loopback)"
                     % (qps, "s" if qps > 1 else ""), ">= 3",
                     vs_rxe("write_bw/64B/%dqp" % qps, "mpps"), 3, True))
    for verb in ("send", "write", "read"):
        rows.append(("%s latency 2 B (typical), sroce/rxe (loopback)" % verb,
                     "<= 0.5", vs_rxe("%s_lat/2B" % verb), 0.5, False))
    lats = [vs_rxe(wid, m) for (p, wid), w in s.workloads.items()
            if p == lb and w["kind"] == "lat" and "rxe" in w["devices"]
            for m in [w["metric"]] + list(w["also"])]
    lats = [v for v in lats if v not in (None, NOT_RUN)]
    rows += [
        ("worst latency figure (typical or p99), sroce/rxe (loopback)", "<= 1",
         max(lats) if lats else None, 1, False),
        ("doorbell syscalls per WR, sroce (WRITE 4 KiB)", "<= 0.05",
         s.median(lb, "syscalls_per_wr/write/4KiB", "sroce"), 0.05, False),
        ("all syscalls per WR but perftest's clock reads, sroce (WRITE 4 KiB)",
         "<= 0.05", s.median(lb, "syscalls_per_wr/write/4KiB", "sroce",
                             "device_per_wr"), 0.05, False),
        ("CPU per GiB, sroce/rxe (WRITE 64 KiB, loopback)", "<= 0.5",
         vs_rxe("cpu_per_gib/write/64KiB"), 0.5, False),
        ("WRITE bandwidth 64 KiB, 8 QPs / 1 QP, sroce (loopback)", ">= 1.5",
         ratio(s.median(lb, "write_bw/64KiB/8qp", "sroce"),
               s.median(lb, "write_bw/64KiB/1qp", "sroce")), 1.5, True),
    ]
    if fan:
        rows.append(("bandwidth at %s / at 8 QPs, %d WRITEs in flight per QP, "
                     "sroce (qp_fanout)" % (fan.split("/")[-1], plan.FANOUT_DEPTH),
                     ">= 0.8", ratio(s.median(lb, fan, "sroce"),
                                     s.median(lb, "fanout/write/4KiB/8qp", "sroce")),
                     0.8, True))
    if big:
        # Not the target's measure any more: perftest's walk over its QPs
        # paces the 8192-QP run in a TCG guest (profile notes).
        rows.append(("bandwidth at %s / at 8 QPs, %d in flight in all, sroce "
                     "(perftest; paced by perftest, see the profile notes)"
                     % (big.split("/")[-1], plan.SCALING_IN_FLIGHT), "-",
                     ratio(s.median(lb, big, "sroce"),
                           s.median(lb, "scaling/write/4KiB/8qp", "sroce")),
                     None, True))
    if loss:
        rows.append(("goodput under %s loss / lossless, sroce (wire)" % loss.split("loss")[-1],
                     ">= 0.5", ratio(s.median(wire, loss, "sroce"),
                                     s.median(wire, "write_bw/64KiB/1qp", "sroce")),
                     0.5, True))
    out = []
    for label, goal, value, bound, higher in rows:
        met = "-" if bound is None else "n/a" if value in (None, NOT_RUN) else (
            "yes" if (value >= bound if higher else value <= bound) else "no")
        out.append((label, goal, fmt(value), met))
    return out


def markdown(meta, host, s, kernel_problems):
    g, st = meta["guest"], meta["settings"]
    L = ["# sroce vs rxe: latest benchmark figures", "",
         "Written by `scripts/bench` on %s from commit `%s`; re-run with "
         "`scripts/bench` (about 25 minutes on an idle host, far longer on a "
         "busy one) or `scripts/bench --quick`." % (
             host.get("date"), host.get("commit")), "",
         "Guest: qemu %s TCG (no KVM) on %s, CPU model `%s` (of the copy and "
         "CRC flags the guest sees: %s; ICRC engine: %s), %d vCPUs, %d MiB, Debian kernel %s, "
         "veth MTU %d (RoCE active MTU %s), clocksource %s.  %d round(s), devices "
         "alternating, medians shown.  Host load average %s: TCG guests share "
         "the host's cores with whatever else runs, so absolute figures drift "
         "with it; ratios from one run are what to compare." % (
             host.get("qemu", "?"), host.get("cpu", "?"), host.get("guest_cpu", "?"),
             " ".join(g.get("cpu_flags", [])) or "none", g.get("crc_engine", "?"),
             g["cpus"], g["mem_mib"],
             g["kernel"], g["veth_mtu"], g["roce_active_mtu"], g["clocksource"],
             s.rounds(), host.get("load", "?")), "",
         ] + (["sroce parameters and device settings for this run: %s." % ", ".join(
             "`%s`" % p for p in meta["params"]), ""] if meta.get("params") else []) + (
             ["**Note:** " + host["note"], ""] if host.get("note") else []) + [
         "![sroce advantage over rxe](ratios.png)", "",
         "## Targets (issue 17)", "", "| figure | target | measured | met |",
         "|---|---|---|---|"]
    L += ["| %s | %s | %s | %s |" % r for r in target_rows(s)]
    L += ["", "## Loopback, like for like", "", "Path: " + LOOPBACK_NOTE + ".  "
          "Bandwidth runs are perftest (in MiB/s, which prints more digits than "
          "`--report_gbits`; shown in Gb/s), a fixed volume per run (%.3g x 32 MiB; 64 B: %d messages); latency runs %d "
          "iterations; CPU per GiB is the whole guest's /proc/stat busy time, "
          "marginal between %d- and %d-iteration 64 KiB WRITE runs; syscalls "
          "per WR are the client's, counted in the kernel (`perf stat` on the "
          "syscall tracepoints, which unlike strace does not stop the process), "
          "marginal between %d- and %d-WR runs: doorbells are its write() calls "
          "on the uverbs fd; all syscalls leave out perftest's own clock reads "
          "(a real syscall each without a vDSO clock under TCG, tens of "
          "thousands per run, following its time rather than its WRs); QP scaling "
          "runs are 4 KiB WRITEs over N QPs, %d in flight in all (at most 128 "
          "per QP), about %d per run whatever N; QP fan-out runs are "
          "bench/tools/qp_fanout, 4 KiB WRITEs over N QPs of the device to "
          "itself, %d in flight per QP whatever N, %d per run, timed in the "
          "steady state (once every QP has completed a round); "
          "kernel memory per QP is the Slab + "
          "VmallocUsed growth while %d RC QPs (128/128 WRs) exist." % (
              st["volume"], 20000 * st["volume"], st["lat_iters"],
              st["cpu_iters"][0], st["cpu_iters"][1], st["syscall_iters"][0],
              st["syscall_iters"][1], plan.SCALING_IN_FLIGHT, plan.SCALING_WRITES,
              plan.FANOUT_DEPTH, st.get("fanout_writes", 0), st["memory_qps"]), "",
          "| workload | unit | rxe | sroce | sroce/rxe | better |",
          "|---|---|---|---|---|---|"]
    for label, unit, rxe, sroce, r, higher in comparison_rows(s):
        better = ("" if r in (None, NOT_RUN) else "same" if abs(r - 1) < 0.02 else
                  "sroce" if (r > 1) == higher else "rxe")
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            label, unit, fmt(rxe), fmt(sroce), fmt(r), better))
    for dev in ("rxe", "sroce"):
        parts = [(name, s.median("loopback", "syscalls_per_wr/write/4KiB", dev, m))
                 for name, m in (("doorbell write()", "per_wr"),
                                 ("other but clock reads", "other_per_wr"),
                                 ("perftest's clock reads (noise)", "clock_reads_per_wr"))]
        if all(isinstance(v, float) for _, v in parts):
            L.append("\nSyscalls per WR on %s: %s." % (dev, ", ".join(
                "%s %.3g" % kv for kv in parts)))
    L += ["", "## Wire and the TCP ceiling", "", "Wire path: " + WIRE_NOTE +
          ".  Loss: netem on veth0's egress (the data direction).  TCP: "
          "`iperf3` (one stream, %d s) over the same path." % st["duration"], "",
          "| workload | path | value |", "|---|---|---|"]
    for (path, wid), w in s.workloads.items():
        for dev in w["devices"]:
            if path == "loopback" and not dev.startswith("tcp"):
                continue
            for m in [w["metric"]] + list(w["also"]):
                name = METRIC_NAMES.get(m, m)
                L.append("| %s %s%s | %s | %s |" % (
                    dev, wid, " " + name if name else "",
                    path, fmt(s.median(path, wid, dev, m), METRIC_UNITS.get(m, w["unit"]))))
    fails = s.failures()
    L += ["", "## Failed runs", ""]
    L += ["- %s %s %s round %d: %s" % (f["path"], f["device"], f["workload"],
                                       f["round"], f["error"].strip().splitlines()[0][:160])
          for f in fails] or ["None."]
    L += ["", "## Guest kernel log", ""]
    if kernel_problems is None:
        L.append("Not saved: the guest was stopped before it ended.")
    else:
        L += (["    " + p for p in kernel_problems[:20]] or
              ["No warnings, oopses or BUGs."])
    return "\n".join(L) + "\n"


def chart(s, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401 (used through matplotlib.)
    rows = [(label, r if higher else 1 / r) for label, _, _, _, r, higher
            in comparison_rows(s) if r not in (None, NOT_RUN) and r > 0]
    fig, ax = plt.subplots(figsize=(9, 0.28 * len(rows) + 1.5))
    labels = [r[0] for r in rows][::-1]
    vals = [r[1] for r in rows][::-1]
    ax.barh(labels, vals, color=["tab:green" if v >= 1 else "tab:red" for v in vals])
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    plain = matplotlib.ticker.FormatStrFormatter("%g")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.tick_params(axis="x", which="minor", labelsize=6)
    for y, v in enumerate(vals):
        ax.text(v, y, " %.2g" % v, va="center", fontsize=6)
    ax.set_xlabel("sroce advantage over rxe, x (>1: sroce better; bandwidth "
                  "sroce/rxe, latency and costs rxe/sroce)")
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--host-info", default="{}")
    a = ap.parse_args()
    meta, records = load(a.run_dir)
    host = json.loads(a.host_info)
    host.setdefault("date", datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"))
    problems = None     # vm-run saves the log only when the guest ends well
    dmesg = os.path.join(a.run_dir, "dmesg")
    if os.path.exists(dmesg):
        with open(dmesg, errors="replace") as f:
            problems = [l.rstrip() for l in f if BAD_KERNEL_LOG.search(l)]
    s = Summary(meta, records)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "latest.md"), "w") as f:
        f.write(markdown(meta, host, s, problems))
    with open(os.path.join(a.out_dir, "latest.json"), "w") as f:
        json.dump({"host": host, "meta": meta, "records": records,
                   "kernel_problems": problems}, f, indent=1)
    chart(s, os.path.join(a.out_dir, "ratios.png"),
          "sroce vs rxe, loopback, %s" % host["date"])
    print(open(os.path.join(a.out_dir, "latest.md")).read())


if __name__ == "__main__":
    main()

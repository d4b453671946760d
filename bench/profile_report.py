#!/usr/bin/python3
"""Turns one scripts/profile run (profile.json and the `perf report` texts
from bench/profile_guest.py) into docs/bench/profile.md: per workload and
device, how much of the sampled time the guest's CPUs were halted (by
perf's samples and, independently, by /proc/stat), then where the rest
went: top symbols, modules/objects and commands, as shares of the busy
(non-halted) samples.

usage: profile_report.py RUN_DIR OUT_FILE [--host-info JSON]"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parsers  # noqa: E402

# Where a halted CPU's cpu-clock sample lands: the instruction after `hlt`
# in the idle task.  (pv_ is the name on newer kernels.)
HALT_SYMBOLS = ("native_safe_halt", "pv_native_safe_halt")
TOP_SYMBOLS = 10
TOP_GROUPS = 6


def is_halt(comm, sym):
    return comm == "swapper" and sym in HALT_SYMBOLS


def short_dso(dso):
    """[kernel.kallsyms] -> kernel, [sroce] -> sroce.ko, /usr/lib/x/libibverbs.so.1.14 -> libibverbs.so.1.14"""
    if dso == "[kernel.kallsyms]":
        return "kernel"
    if dso == "[unknown]":
        return "unknown"
    if dso.startswith("[") and dso.endswith("]") and " " not in dso:
        return dso[1:-1] + ".ko"
    return os.path.basename(dso)


def proc_stat_idle_share(lines):
    """Idle share of all CPUs' time between two /proc/stat "cpu" lines."""
    a, b = (parsers.proc_stat_ticks(line) for line in lines)
    d = [y - x for x, y in zip(a, b)]
    return d[2] / sum(d) if sum(d) else None


class Profile:
    """One device's samples: halted share, and busy samples grouped."""

    def __init__(self, rows):
        self.total = sum(n for n, _, _, _ in rows)
        busy = [r for r in rows if not is_halt(r[1], r[3])]
        self.busy = sum(n for n, _, _, _ in busy)
        self.halted_share = 1 - self.busy / self.total

        def top(key, count):
            c = collections.Counter()
            for r in busy:
                c[key(r)] += r[0]
            return [(k, n / self.busy) for k, n in c.most_common(count)] if self.busy else []
        # Addresses perf could not name count together, per object.
        self.symbols = top(lambda r: "%s (%s)" % (
            "?" if r[3].startswith("0x") else r[3], short_dso(r[2])), TOP_SYMBOLS)
        self.objects = top(lambda r: short_dso(r[2]), TOP_GROUPS)
        self.commands = top(lambda r: r[1], TOP_GROUPS)


def pct(share):
    return "%.1f%%" % (100 * share)


def side_by_side(title, devices, lists, count):
    L = ["| # | %s |" % " | ".join("%s: %s | %%" % (d, title) for d in devices),
         "|---|" + "---|---|" * len(devices)]
    for i in range(min(count, max((len(x) for x in lists), default=0))):
        cells = ["`%s` | %s" % (x[i][0].replace("|", "\\|"), pct(x[i][1]))
                 if i < len(x) else " | " for x in lists]
        L.append("| %d | %s |" % (i + 1, " | ".join(cells)))
    return L


def result_text(rec):
    r = rec.get("result")
    if not r:
        return "no perftest report (its -D mode sometimes prints none under TCG)"
    return "%.3g Gb/s, %.3g Mpps" % (r["gbps"], r["mpps"])


AGREE = 0.05    # halted (perf) vs idle (/proc/stat): within 5 points


def idle_verdict(pairs):
    """[(device, halted by perf, idle by /proc/stat)] -> one sentence."""
    pairs = [p for p in pairs if p[2] is not None]
    if not pairs:
        return ""
    worst = max(pairs, key=lambda p: abs(p[1] - p[2]))
    gap = abs(worst[1] - worst[2])
    if gap <= AGREE:
        return ("perf's halted share and /proc/stat's idle share agree within %.1f "
                "points on every device: the halted time is real idleness (the vCPUs "
                "wait for wake-ups), not a sampling artefact." % (100 * gap))
    return ("perf's halted share and /proc/stat's idle share differ by %.1f points "
            "on %s: perf's halted share is not the whole truth there." % (
                100 * gap, worst[0]))


def workload_section(recs, run_dir):
    devices = [r["device"] for r in recs]
    L = ["## `%s`" % recs[0]["workload"], ""]
    profiles, idle_pairs = {}, []
    L += ["| device | perftest | samples | halted (perf) | idle (/proc/stat) |",
          "|---|---|---|---|---|"]
    for r in recs:
        with open(os.path.join(run_dir, r["perf_report"])) as f:
            p = profiles[r["device"]] = Profile(parsers.perf_report_rows(f.read()))
        idle = proc_stat_idle_share(r["proc_stat"])
        idle_pairs.append((r["device"], p.halted_share, idle))
        L.append("| %s | %s | %d | %s | %s |" % (
            r["device"], result_text(r), p.total, pct(p.halted_share),
            "?" if idle is None else pct(idle)))
        if not r.get("window_inside_run"):
            L.append("| | **the sampling window outlasted the run: idle is overstated** | | | |")
    if not profiles:
        return L
    devs = [d for d in devices if d in profiles]
    L += ["", idle_verdict(idle_pairs) + "  Below: shares of the busy (not "
          "halted) samples.", ""]
    L += side_by_side("top symbols", devs, [profiles[d].symbols for d in devs], TOP_SYMBOLS)
    L.append("")
    L += side_by_side("by object", devs, [profiles[d].objects for d in devs], TOP_GROUPS)
    L.append("")
    L += side_by_side("by command", devs, [profiles[d].commands for d in devs], TOP_GROUPS)
    return L


def markdown(doc, host, run_dir):
    g = doc["guest"]
    recs = doc["records"]
    window = recs[0]["window_s"] if recs else 0
    L = ["# Where the time goes: sroce vs rxe under perf", "",
         "Written by `scripts/profile` on %s from commit `%s`.  One qemu %s TCG "
         "guest (no KVM) on %s: %d vCPUs, %d MiB, Debian kernel %s, veth MTU %d, "
         "clocksource %s; host load %s.  Loopback path as in "
         "[the benchmark](latest.md): rxe0 on veth0, sroce1 on veth1 in namespace "
         "`peer`, one device at a time.  `perf record -a -e cpu-clock -F 999` "
         "(TCG has no PMU) over %d s of each run's steady state (from %d s after "
         "the server starts); /proc/stat is read at both ends of the same window." % (
             host.get("date", "?"), host.get("commit", "?"), host.get("qemu", "?"),
             host.get("cpu", "?"), g["cpus"], g["mem_mib"], g["kernel"], g["veth_mtu"],
             g["clocksource"], host.get("load", "?"), window,
             recs[0]["window_start_s"] if recs else 0), ""]
    L += ["Halted: the share of samples on the `hlt` in the idle task "
          "(`%s`); the idle column is the kernel's own idle accounting over the "
          "same window, an independent check of it." % "`, `".join(HALT_SYMBOLS), ""]
    by_workload = collections.OrderedDict()
    for r in recs:
        by_workload.setdefault(r["workload"], []).append(r)
    for rs in by_workload.values():
        L += workload_section(rs, run_dir) + [""]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("out_file")
    ap.add_argument("--host-info", default="{}")
    a = ap.parse_args()
    with open(os.path.join(a.run_dir, "profile.json")) as f:
        doc = json.load(f)
    text = markdown(doc, json.loads(a.host_info), a.run_dir)
    with open(a.out_file, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

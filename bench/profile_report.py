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
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parsers  # noqa: E402

# Where a halted CPU's cpu-clock sample lands: the instruction after `hlt`
# in the idle task.  (pv_ is the name on newer kernels.)
HALT_SYMBOLS = ("native_safe_halt", "pv_native_safe_halt")
TOP_SYMBOLS = 10
TOP_GROUPS = 6

# What a kernel sample was doing, by symbol: the first pattern that
# matches names the activity (driver symbols are known by module, see
# Profile).  Rough on purpose: memcpy also copies headers, and the
# network stack's own helpers hide under "other kernel" when their names
# say nothing.
ACTIVITIES = (
    ("ICRC", r"crc|fold16|^loop_(64|16)$|^less_64$|^fold_64$|pclmul"),
    ("FPU save/restore", r"fpu|fpregs|xsave|xrstor"),
    ("copy and clear", r"^(__)?(memcpy|memset|memmove)|^copy_user|^rep_mov|"
                       r"^clear_page|^copy_page|^skb_copy_bits|^_copy_(from|to)"),
    ("allocation", r"kmem_cache|kmalloc|kfree|alloc_skb|skb_release|slab|"
                   r"alloc_pages|free_unref|page_frag|netdev_alloc|build_skb|"
                   r"consume_skb|free_pages|get_page_from|^put_page|folio"),
    ("syscall and uverbs", r"^ib_uverbs|^uverbs|^rdma_lookup|syscall|^__x64_sys|"
                           r"^ksys_|^vfs_|rw_verify|security_file|^__fdget|^fput|"
                           r"__check_object|^__get_user|^_copy_from_user"),
    ("IP/UDP stack", r"^(__)?(ip6?_|udp|inet|netif|net_rx|napi|process_backlog|"
                     r"dev_|loopback|veth|nf_|neigh|dst_|skb_|validate_xmit|"
                     r"sch_|qdisc|compute_score|raw_local|fib|eth_|"
                     r"do_softirq|handle_softirqs)"),
)
ACTIVITY_RE = [(name, re.compile(pat)) for name, pat in ACTIVITIES]
DRIVER_OBJECTS = ("sroce.ko", "rdma_rxe.ko")


def activity(dso, sym, driver_symbols):
    """Which activity one busy sample was: user space, driver, one of
    ACTIVITIES, or other kernel (locks, RCU, scheduling, timers)."""
    obj = short_dso(dso)
    if obj != "kernel" and not obj.endswith(".ko"):
        return "user space"
    for name, pat in ACTIVITY_RE[:2]:       # CRC and FPU inside drivers too
        if pat.search(sym):
            return name
    if obj in DRIVER_OBJECTS or sym in driver_symbols or sym.startswith("rxe_"):
        return "driver"
    for name, pat in ACTIVITY_RE[2:]:
        if pat.search(sym):
            return name
    return "other kernel"


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

    def __init__(self, rows, driver_symbols=frozenset()):
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
        self.activities = collections.Counter()
        for n, _, dso, sym in busy:
            self.activities[activity(dso, sym, driver_symbols)] += n


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


def activity_table(recs, profiles, cpus):
    """Busy samples by activity per device; where perftest gave a message
    rate, also each activity's CPU time per message (all vCPUs' samples
    over the window, divided by the messages of that window)."""
    devs = [r["device"] for r in recs if r["device"] in profiles]
    rates = {r["device"]: (r.get("result") or {}).get("mpps") for r in recs}
    names = [n for n, _ in ACTIVITIES] + ["driver", "user space", "other kernel"]
    per_msg = all(rates.get(d) for d in devs)
    head = "| activity | " + " | ".join(
        "%s %s" % (d, "% busy | " + d + " us/msg" if per_msg else "% busy") for d in devs) + " |"
    L = [head, "|---|" + ("---|---|" if per_msg else "---|") * len(devs)]
    rows = []
    for name in names + ["all busy"]:
        cells = []
        for d in devs:
            p = profiles[d]
            n = p.busy if name == "all busy" else p.activities.get(name, 0)
            cells.append(pct(n / p.busy) if p.busy else "?")
            if per_msg:
                cells.append("%.2f" % (n / p.total * cpus / rates[d]))
        rows.append((name, cells))
    L += ["| %s | %s |" % (n, " | ".join(c)) for n, c in rows]
    if per_msg:
        L += ["", "us/msg: the activity's share of all samples x %d vCPUs / "
              "perftest's message rate." % cpus]
    return L


def workload_section(recs, run_dir, driver_symbols=frozenset(), cpus=2):
    devices = [r["device"] for r in recs]
    L = ["## `%s`" % recs[0]["workload"], ""]
    profiles, idle_pairs = {}, []
    L += ["| device | perftest | samples | halted (perf) | idle (/proc/stat) |",
          "|---|---|---|---|---|"]
    for r in recs:
        with open(os.path.join(run_dir, r["perf_report"])) as f:
            p = profiles[r["device"]] = Profile(parsers.perf_report_rows(f.read()),
                                                driver_symbols)
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
    L += activity_table(recs, profiles, cpus) + [""]
    L += side_by_side("top symbols", devs, [profiles[d].symbols for d in devs], TOP_SYMBOLS)
    L.append("")
    L += side_by_side("by object", devs, [profiles[d].objects for d in devs], TOP_GROUPS)
    L.append("")
    L += side_by_side("by command", devs, [profiles[d].commands for d in devs], TOP_GROUPS)
    return L


def markdown(doc, host, run_dir, driver_symbols=frozenset()):
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
        L += workload_section(rs, run_dir, driver_symbols, g["cpus"]) + [""]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("out_file")
    ap.add_argument("--host-info", default="{}")
    ap.add_argument("--notes", help="markdown to end the report with (the reading "
                    "of the figures, kept in docs/bench/profile-notes.md)")
    ap.add_argument("--driver-symbols", help="file of sroce.ko's function names "
                    "(perf sometimes files a module's samples under the kernel)")
    a = ap.parse_args()
    syms = frozenset()
    if a.driver_symbols:
        with open(a.driver_symbols) as f:
            syms = frozenset(f.read().split())
    with open(os.path.join(a.run_dir, "profile.json")) as f:
        doc = json.load(f)
    text = markdown(doc, json.loads(a.host_info), a.run_dir, syms)
    if a.notes:
        with open(a.notes) as f:
            text += "\n" + f.read()
    with open(a.out_file, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

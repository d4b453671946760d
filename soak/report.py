"""The soak's verdict and report, from what soak/guest_runner.py recorded.

    report.py RUN_DIR MARKDOWN_FILE [--note TEXT]

Exits non-zero when the soak failed: any data error, a stuck or failed
operation (completion error), a kernel warning/oops, memory that did not
stay flat, or RDMA objects not released after the traffic app ended.
"""
import argparse
import datetime
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
import kmem  # noqa: E402
from harness import BAD_KERNEL_LOG, LEAK_MODULES  # noqa: E402

# "Flat": the end of the traffic within 2% + 4 MiB of the baseline taken
# after the first minute (the warm-up: every QP, MR and buffer exists by
# then), and no steady climb (every minute higher than the one before,
# over at least four minutes, by more than 1 MiB in all).
FLAT_RATIO, FLAT_SLACK_KB, CLIMB_KB, CLIMB_STEPS = 0.02, 4096, 1024, 4
COUNTERS = ("retransmits", "timeouts", "seq_err_sent", "seq_err_rcvd", "dup_requests",
            "rnr_nak_sent", "rnr_nak_rcvd", "rx_dropped", "rx_no_qp", "rx_malformed",
            "rx_icrc_errors", "completion_errors", "tx_errors",
            "odp_page_faults", "odp_invalidations", "odp_fault_errors")


def memory(sample):
    """The figures the soak watches, in kB, from one raw sample."""
    info = kmem.meminfo(sample["meminfo"])
    caches = kmem.slabinfo(sample["slabinfo"])
    return {"SUnreclaim": info["SUnreclaim"], "Slab": info["Slab"],
            "kmalloc": kmem.kmalloc_bytes(caches) // 1024,
            "sroce caches": sum(kmem.own_caches(caches).values())}


def is_flat(values, held_kb=0):
    """(flat?, why) for a metric's per-minute values, warm-up first.
    @held_kb: memory the kernel may hold back on top, by its own bound
    (the debug kernel's KASAN quarantine, quarantine_kb())."""
    if len(values) < 2:
        return False, "too few samples (run at least 2 minutes)"
    base, end = values[0], values[-1]
    limit = base * (1 + FLAT_RATIO) + FLAT_SLACK_KB + held_kb
    held = " + KASAN quarantine %d kB" % held_kb if held_kb else ""
    if end > limit:
        return False, "end %d kB > %d kB (baseline %d kB + 2%% + 4 MiB%s)" % (
            end, limit, base, held)
    steps = list(zip(values, values[1:]))
    if (len(steps) >= CLIMB_STEPS and all(b > a for a, b in steps)
            and end - base > CLIMB_KB):
        return False, "grew every minute (%d -> %d kB)" % (base, end)
    return True, "end %d kB, baseline %d kB%s" % (end, base, held and held + " allowed")


def counter_delta(before, after):
    total = {}
    for dev, stats in after.items():
        for k, v in stats.items():
            total[k] = total.get(k, 0) + v - before.get(dev, {}).get(k, 0)
    return total


def netem_drops(text):
    """Packets netem dropped, per netem qdisc, from `tc -s qdisc`."""
    return [int(m.group(1)) for m in re.finditer(
        r"qdisc netem [^\n]*\n\s*Sent \d+ bytes \d+ pkt \(dropped (\d+)", text)]


def quarantine_kb(sample):
    """The most KASAN (generic) holds in its quarantine: freed objects stay
    allocated, as far as slab counts go, until it passes 1/32 of RAM
    (mm/kasan/quarantine.c, QUARANTINE_FRACTION).  On the debug kernel
    slab memory climbs by up to that much on any workload, then levels;
    kmemleak, not flatness, is the leak check there."""
    return kmem.meminfo(sample["meminfo"])["MemTotal"] // 32


def verdict(traffic, samples, kernel_problems, debug_kernel=False, odp_race=None):
    """(failures, facts) from the parsed run; @odp_race: the ODP race's
    output, if it ran."""
    fails, facts = [], {}
    if traffic is None:
        return ["the traffic app left no result"], facts
    if odp_race is not None and "\n0 checks failed" not in "\n" + odp_race:
        fails.append("ODP race: %s" % odp_race.strip()[-500:])
    if traffic["data_errors"]:
        fails.append("%d data errors" % traffic["data_errors"])
    if traffic["stuck"]:
        fails.append("operations never completed: %s" % traffic["stuck"])
    if traffic["completion_errors"]:
        fails.append("completion errors: %s" % traffic["completion_errors"])
    if kernel_problems:
        fails.append("kernel log: %s" % kernel_problems[:5])
    during = [s for s in samples if s["phase"].startswith("minute")]
    held = quarantine_kb(during[0]) if debug_kernel and during else 0
    mem = {}
    for metric in ("SUnreclaim", "kmalloc"):
        values = [memory(s)[metric] for s in during]
        ok, why = is_flat(values, held)
        mem[metric] = {"values": values, "flat": ok, "why": why}
        if not ok:
            fails.append("%s not flat: %s" % (metric, why))
    facts["memory"] = mem
    phase = {s["phase"]: s for s in samples}
    if "before" in phase and "settled" in phase:
        before = kmem.resources(phase["before"]["resources"])
        after = kmem.resources(phase["settled"]["resources"])
        facts["resources"] = (before, after)
        if before != after:
            fails.append("RDMA objects not released: before %s, after %s" % (before, after))
        facts["memory_before_after"] = (memory(phase["before"]), memory(phase["settled"]))
        facts["counters"] = counter_delta(kmem.statistics(phase["before"]["statistics"]),
                                          kmem.statistics(phase.get("ended", phase["settled"])
                                                          ["statistics"]))
        c = facts["counters"]
        # The ODP flows must really have paged: faults, and pages taken away.
        if traffic.get("odp_flows") and not (c.get("odp_page_faults") and
                                             c.get("odp_invalidations")):
            fails.append("ODP flows, but %d page faults and %d invalidations" % (
                c.get("odp_page_faults", 0), c.get("odp_invalidations", 0)))
    else:
        fails.append("samples before and after the traffic are missing")
    return fails, facts


def kmemleak_failures(scan):
    """The debug kernel's kmemleak verdict from the guest's scan (None:
    there was none, which fails rather than look like no leaks): a report
    whose allocation stack runs through sroce or the RDMA core."""
    if scan is None:
        return ["no kmemleak scan from the guest (kmemleak missing or off?)"]
    blocks = re.split(r"(?m)^(?=unreferenced object )", scan)
    ours = [b for b in blocks if b.startswith("unreferenced object ") and
            LEAK_MODULES.search(b)]
    return ["kmemleak: %d leak(s) through sroce or the RDMA core, first:\n%s" %
            (len(ours), ours[0])] if ours else []


def markdown(traffic, facts, fails, netem, note, minutes, built_from):
    ops = sorted(set(traffic["posted"]) | set(traffic["lost"]))
    lines = [
        "# Soak: mixed verified traffic over a lossy, reordering link",
        "",
        "%s, commit %s, `scripts/soak %s`: %d QPs (%s flows: one QP on sroce0 and one on "
        "sroce1 each), one qemu TCG guest; netem on both veth ends, data packets only: "
        "`%s`.%s" % (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), built_from,
                     minutes, traffic["qps"], ", ".join("%d %s" % (n, k) for k, n in
                                                        traffic["flows"].items()),
                     netem.split("\n")[0], " " + note if note else ""),
        "",
        "**Verdict: %s**" % ("PASS" if not fails else "FAIL: " + "; ".join(fails)),
        "",
        "| | |", "|---|---|",
        "| traffic time | %s s |" % traffic["seconds"],
        "| bytes verified | %d (%.1f MiB) |" % (traffic["bytes_verified"],
                                                traffic["bytes_verified"] / 2**20),
        "| data errors | %d |" % traffic["data_errors"],
        "| completion errors | %s |" % (traffic["completion_errors"] or "none"),
        "| UC/UD messages arrived after being counted lost | %s |" % (traffic["late"] or "none"),
        "| packets netem dropped (veth0, veth1) | %s |" % netem_drops(netem),
        "",
        "## Operations", "",
        "| QP type and opcode | posted | verified | lost (UC/UD only) |", "|---|---:|---:|---:|",
    ]
    for op in ops:
        lines.append("| %s | %d | %d | %d |" % (op, traffic["posted"].get(op, 0),
                                               traffic["verified"].get(op, 0),
                                               traffic["lost"].get(op, 0)))
    if traffic.get("completion_error_samples"):
        lines += ["", "Completion errors:", ""]
        lines += ["- " + e for e in traffic["completion_error_samples"]]
    if traffic["error_samples"]:
        lines += ["", "Data errors (first %d):" % len(traffic["error_samples"]), ""]
        lines += ["- " + e for e in traffic["error_samples"]]
    c = facts.get("counters", {})
    lines += ["", "## Device counters (sroce0 + sroce1, over the run)", "",
              "| counter | value |", "|---|---:|"]
    lines += ["| %s | %d |" % (k, c.get(k, 0)) for k in COUNTERS]
    lines += ["", "## Memory", "",
              "Flat means: the last in-traffic sample within 2% + 4 MiB of the baseline "
              "taken after the first minute (warm-up), and no climb in every minute "
              "(four or more) by more than 1 MiB in all.", "",
              "| metric (kB) | per minute | verdict |", "|---|---|---|"]
    for metric, m in facts.get("memory", {}).items():
        lines.append("| %s | %s | %s: %s |" % (metric, " ".join(map(str, m["values"])),
                                              "flat" if m["flat"] else "NOT flat", m["why"]))
    if "memory_before_after" in facts:
        b, a = facts["memory_before_after"]
        lines += ["", "Before the traffic / 10 s after the app exited: %s" % ", ".join(
            "%s %d / %d kB" % (k, b[k], a[k]) for k in ("SUnreclaim", "Slab", "kmalloc"))]
        rb, ra = facts["resources"]
        lines += ["", "`rdma resource` before: %s; after: %s" % (rb, ra)]
    return "\n".join(lines) + "\n"


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("markdown")
    p.add_argument("--minutes", default="?")
    p.add_argument("--note", default="")
    p.add_argument("--commit", default="unknown", help="what the guest ran")
    p.add_argument("--kernel", choices=("debug",), help="the guest ran the debug kernel")
    a = p.parse_args()
    text = read(os.path.join(a.run, "traffic.json")).strip()
    traffic = json.loads(text.splitlines()[-1]) if text else None
    samples = [json.loads(l) for l in read(os.path.join(a.run, "samples.jsonl")).splitlines()]
    problems = [l for l in read(os.path.join(a.run, "dmesg")).splitlines()
                if BAD_KERNEL_LOG.search(l)]
    fails, facts = verdict(traffic, samples, problems, a.kernel == "debug",
                           read(os.path.join(a.run, "odp_race.txt"), None))
    if a.kernel == "debug":
        fails += kmemleak_failures(read(os.path.join(a.run, "kmemleak"), None))
    if traffic is not None:
        os.makedirs(os.path.dirname(os.path.abspath(a.markdown)), exist_ok=True)
        with open(a.markdown, "w") as f:
            f.write(markdown(traffic, facts, fails, read(os.path.join(a.run, "netem.txt")),
                             a.note, a.minutes + (" --kernel debug" if a.kernel else ""),
                             a.commit))
        print("soak report: %s" % a.markdown)
    print("soak: " + ("PASS" if not fails else "FAIL: " + "; ".join(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

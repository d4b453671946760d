#!/usr/bin/python3
"""Turns scripts/bench --cc runs (bench/cc_guest.py's JSON lines, one file
per DCQCN setting) into docs/bench/cc.md and cc-rate.png: per leaf qdisc
and setting, RoCE's goodput against the bottleneck and against TCP's,
Jain's index, marks, drops and CNPs, and each QP's DCQCN rate over the
window (the sroce:rate_change trace).

usage: cc_report.py OUT_DIR --host-info JSON RUN_LOG [RUN_LOG ...]"""
import argparse
import json
import os

TARGET_SHARE, TARGET_JAIN = 0.9, 0.9


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(line) for line in f if line.startswith("{")]
    return recs


def setting_name(rec):
    d = rec["dcqcn"]
    return "defaults" if d == "defaults" else "scaled timers (%s)" % ", ".join(
        "%s=%s" % kv for kv in sorted(d.items()))


def rate_summary(events, seconds):
    """Per QP: cuts, increases, and the median and last rate (Mb/s)."""
    by_qp = {}
    for t, qpn, kbps, reason, _stage, _alpha in events:
        by_qp.setdefault(qpn, []).append((t, kbps, reason))
    out = []
    for qpn, evs in sorted(by_qp.items()):
        rates = sorted(k for _, k, _ in evs)
        out.append((qpn, sum(1 for e in evs if e[2] in ("cnp_cut", "local_pushback")),
                    sum(1 for e in evs if e[2] in ("rate_timer", "byte_counter")),
                    rates[len(rates) // 2] / 1000, evs[-1][1] / 1000))
    return out


def markdown(recs, host):
    L = ["# Congestion control: does DCQCN fill a slow bottleneck?", "",
         "Written by `scripts/bench --cc` on %s from commit `%s`; one qemu %s TCG "
         "guest on %s, guest CPU model `%s`; host load %s." % (
             host.get("date", "?"), host.get("commit", "?"), host.get("qemu", "?"),
             host.get("cpu", "?"), host.get("guest_cpu", "?"), host.get("load", "?")), "",
         "Four RC QPs (`ib_write_bw -q 4 -s 65536`) from sroce1 (namespace `peer`) "
         "into sroce0; veth1's egress is the bottleneck: htb at the rate below with "
         "an ECN-marking leaf.  Goodput is each QP's bytes sent over a window after "
         "a warm-up (the start, when every QP sends at the line rate before any CNP "
         "returns, is not what DCQCN controls); TCP is `iperf3 -P 4` through the "
         "same qdisc (Debian's default `tcp_ecn=2`: the client does not ask for "
         "ECN, so TCP sees drops, not marks).  Target (issue 17): at least %d%% of "
         "the bottleneck with Jain's index at least %.1f." % (
             100 * TARGET_SHARE, TARGET_JAIN), "",
         "| leaf qdisc | DCQCN | RoCE Mb/s (share) | Jain | marks | drops (window / run) "
         "| CNPs | timeouts | TCP Mb/s (share) | TCP Jain | TCP drops | met |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        ro, tcp, link = r["roce"], r["tcp"], r["kbit"] / 1000
        share = ro["total_mbit"] / link
        met = share >= TARGET_SHARE and ro["jain"] >= TARGET_JAIN and ro["perftest_ok"]
        L.append("| %s | %s | %.1f (%.0f%%) | %.3f | %d | %d / %d | %d | %d | %.1f (%.0f%%) "
                 "| %.3f | %d | %s |" % (
                     r["leaf"], "defaults" if r["dcqcn"] == "defaults" else "scaled",
                     ro["total_mbit"], 100 * share, ro["jain"], ro["window_marks"],
                     ro["window_drops"], ro["run_drops"],
                     ro["counters"]["sroce1"]["cnp_rcvd"],
                     ro["counters"]["sroce1"]["timeouts"], tcp["total_mbit"],
                     100 * tcp["total_mbit"] / link, tcp["jain"], tcp["drops"],
                     "yes" if met else "no"))
    L += ["", "Leaf qdiscs: " + "; ".join(sorted({"%s: `%s`" % (r["leaf"], r["qdisc"])
                                                  for r in recs})) + ".", ""]
    L += ["Settings: " + "; ".join(sorted({setting_name(r) for r in recs})) + ".", ""]
    L += ["## DCQCN's rate in the window", "",
          "From the `sroce:rate_change` trace: per QP, rate cuts (CNP or local "
          "pushback), increases (timer or byte counter), and the median and last "
          "rate DCQCN allowed.  A rate far above the QP's share of the bottleneck "
          "means DCQCN was not what held the QP back: its send window and the "
          "queue were.  [cc-rate.png](cc-rate.png) plots the trace.", "",
          "| leaf qdisc | DCQCN | QP | cuts | increases | median Mb/s | last Mb/s |",
          "|---|---|---|---|---|---|---|"]
    for r in recs:
        for qpn, cuts, incs, med, last in rate_summary(r["roce"]["events"],
                                                         r["roce"]["seconds"]):
            L.append("| %s | %s | %d | %d | %d | %.4g | %.4g |" % (
                r["leaf"], "defaults" if r["dcqcn"] == "defaults" else "scaled",
                qpn, cuts, incs, med, last))
    return "\n".join(L) + "\n"


def chart(recs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(recs), 1, figsize=(9, 2.6 * len(recs)), squeeze=False)
    for ax, r in zip(axes[:, 0], recs):
        by_qp = {}
        for t, qpn, kbps, *_ in r["roce"]["events"]:
            by_qp.setdefault(qpn, ([], []))
            by_qp[qpn][0].append(t)
            by_qp[qpn][1].append(kbps / 1000)
        for qpn, (ts, rs) in sorted(by_qp.items()):
            ax.step(ts, rs, where="post", linewidth=0.6, label="QP %d" % qpn)
        ax.axhline(r["kbit"] / 1000 / max(r["roce"]["qps"], 1), color="k",
                   linestyle="--", linewidth=0.8, label="fair share")
        ax.set_yscale("log")
        ax.set_ylabel("Mb/s")
        ax.set_title("%s, DCQCN %s: %.1f of %.0f Mb/s" % (
            r["leaf"], "defaults" if r["dcqcn"] == "defaults" else "scaled",
            r["roce"]["total_mbit"], r["kbit"] / 1000), fontsize=9)
        ax.legend(fontsize=6, loc="upper right")
    axes[-1, 0].set_xlabel("seconds into the window")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--host-info", default="{}")
    a = ap.parse_args()
    recs = load(a.logs)
    if not recs:
        raise SystemExit("no results in " + " ".join(a.logs))
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "cc.md"), "w") as f:
        f.write(markdown(recs, json.loads(a.host_info)))
    chart(recs, os.path.join(a.out_dir, "cc-rate.png"))
    print("wrote %s/cc.md and cc-rate.png" % a.out_dir)


if __name__ == "__main__":
    main()

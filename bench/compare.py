#!/usr/bin/python3
"""Compares two complete bench runs (their latest.json) workload by
workload, as ratios sroce/rxe, and says which moved beyond the run-to-run
spread.  Absolute figures under TCG drift with the host by tens of
percent; the ratio of two devices measured alternately in one round does
much less, and how much less is what each run's own rounds show.

For each loopback workload and metric that both runs measured on both
devices: the ratio in each round (sroce's figure over rxe's of the same
round), its median, and its spread (the largest per-round ratio over the
smallest, minus one).  A figure is "worse beyond the spread" when the
after run's median ratio is worse than the before run's by more than the
larger of the two spreads.

usage: compare.py BEFORE.json AFTER.json [--label-before X --label-after Y]
  BEFORE.json/AFTER.json: docs/bench/latest.json of two runs, or
  `git show COMMIT:docs/bench/latest.json` saved to a file.
Prints a Markdown table and a summary; exit status 0 (a report, not a
test: it decides nothing on its own)."""
import argparse
import json
import math
import statistics

LOWER_IS_BETTER = {"typical_us", "avg_us", "p99_us", "p999_us", "cpu_s_per_gib",
                   "kernel_cpu_s_per_gib", "per_wr", "device_per_wr", "kib_per_qp",
                   "us_per_rt", "setup_us_per_conn"}


def round_ratios(doc):
    """{(workload, metric): [sroce/rxe per round]} of a run's loopback records."""
    workloads = {w["id"]: w for w in doc["meta"]["workloads"] if w["path"] == "loopback"}
    by = {}
    for r in doc["records"]:
        w = workloads.get(r["workload"])
        if w is None or r["path"] != "loopback" or not r["ok"]:
            continue
        for m in [w["metric"]] + list(w.get("also", [])):
            v = r["metrics"].get(m)
            if isinstance(v, (int, float)):
                by.setdefault((r["workload"], m, r["round"]), {})[r["device"]] = v
    ratios = {}
    for (wid, m, _), devs in sorted(by.items()):
        if devs.get("rxe") and "sroce" in devs:
            ratios.setdefault((wid, m), []).append(devs["sroce"] / devs["rxe"])
    return ratios, workloads


def higher_is_better(workloads, wid, metric):
    if metric in LOWER_IS_BETTER:
        return False
    return workloads[wid].get("higher_is_better", True)


def spread(vals):
    return max(vals) / min(vals) - 1 if len(vals) > 1 and min(vals) > 0 else 0.0


def relative_change(mb, ma, up):
    """The change from median ratio @mb to @ma, > 0 better for sroce.  A
    ratio can be 0 (sroce's syscalls per WR): 0 to 0 is no change, and
    reaching 0 where lower is better (or leaving it where higher is) is
    better without bound."""
    good, base = (ma, mb) if up else (mb, ma)
    if base == 0:
        return 0.0 if good == 0 else math.inf
    change = good / base - 1
    # Equal medians from float arithmetic are no change at all.
    return 0.0 if math.isclose(good, base, rel_tol=1e-9) else change


def compare(before, after):
    """Rows (workload, metric, before median, before spread, after median,
    after spread, change, verdict): change > 0 is better for sroce."""
    rb, wb = round_ratios(before)
    ra, wa = round_ratios(after)
    rows = []
    for key in sorted(set(rb) & set(ra)):
        wid, m = key
        mb, ma = statistics.median(rb[key]), statistics.median(ra[key])
        sb, sa = spread(rb[key]), spread(ra[key])
        up = higher_is_better(wa, wid, m)
        change = relative_change(mb, ma, up)
        limit = max(sb, sa)
        if min(len(rb[key]), len(ra[key])) < 2:
            verdict = "one round: no spread to judge by"
        elif change < -limit:
            verdict = "worse beyond the spread"
        elif change > limit:
            verdict = "better beyond the spread"
        else:
            verdict = "within the spread"
        rows.append((wid, m, mb, sb, ma, sa, change, verdict))
    return rows


def markdown(rows, label_b, label_a):
    out = ["| workload | metric | sroce/rxe %s | spread | sroce/rxe %s | spread | "
           "change for sroce | verdict |" % (label_b, label_a),
           "|---|---|---:|---:|---:|---:|---:|---|"]
    for wid, m, mb, sb, ma, sa, change, verdict in rows:
        out.append("| %s | %s | %.3g | %.0f %% | %.3g | %.0f %% | %+.0f %% | %s |" % (
            wid, m, mb, 100 * sb, ma, 100 * sa, 100 * change, verdict))
    worse = [r for r in rows if r[7].startswith("worse")]
    spreads = sorted(max(r[3], r[5]) for r in rows)
    out.append("")
    out.append("%d figures compared; %d worse beyond the spread, %d better beyond it; "
               "median spread %.0f %%, largest %.0f %%." % (
                   len(rows), len(worse), sum(r[7].startswith("better") for r in rows),
                   100 * statistics.median(spreads) if spreads else 0,
                   100 * spreads[-1] if spreads else 0))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--label-before", default="before")
    ap.add_argument("--label-after", default="after")
    args = ap.parse_args()
    with open(args.before) as f:
        before = json.load(f)
    with open(args.after) as f:
        after = json.load(f)
    print(markdown(compare(before, after), args.label_before, args.label_after))


if __name__ == "__main__":
    main()

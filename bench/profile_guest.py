#!/usr/bin/python3
"""Runs inside the scripts/profile guest (scripts/vm-run --rxe): for each
perftest workload and each device, on bench's loopback path (rxe0 on veth0,
sroce1 on veth1 in namespace `peer`), samples the whole guest with
`perf record -a -e cpu-clock` (TCG has no PMU) for a window inside the
run's steady state, and reads /proc/stat at both ends of that window, so
the report can tell halted (idle) CPUs from sampling artefacts.

Writes $SROCE_OUT/profile.json and one `perf report` text per run.
usage: profile_guest.py SECONDS WORKLOAD...   (WORKLOAD: "ib_write_bw -s 64")
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_runner  # noqa: E402
import parsers  # noqa: E402

OUT = guest_runner.OUT
WARM_UP = 10     # seconds from server start to the window: connect, set up, ramp
TAIL = 10        # seconds the run goes on after the window
DEVICES = ("rxe", "sroce")


def sample(secs, data):
    """perf record -a for `secs`; the first /proc/stat line ("cpu ...") read
    by the sampled command itself at the start and end of the window."""
    window = ("read -r a </proc/stat; sleep %d; read -r b </proc/stat; "
              "echo \"$a\"; echo \"$b\"" % secs)
    # -N: no copies of every sampled object into ~/.debug afterwards.
    r = subprocess.run(["perf", "record", "-q", "-N", "-a", "-e", "cpu-clock",
                        "-F", "999", "-o", data, "--", "bash", "-c", window],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=secs + 120)
    lines = [l for l in r.stdout.splitlines() if l.startswith("cpu ")]
    if r.returncode != 0 or len(lines) != 2:
        raise guest_runner.RunFailed("perf record failed: " + parsers._tail(r.stdout))
    return lines


def profile_one(n, tool_args, device, secs):
    tool, args = tool_args[0], tool_args[1:]
    pair = guest_runner.Pair(*guest_runner.PAIRS[("loopback", device)])
    data = "/tmp/perf.%d.%s.data" % (n, device)
    got = {}

    def sampler():
        time.sleep(WARM_UP)
        try:
            got["stat"] = sample(secs, data)
        except Exception as e:  # reported with the run, never lost
            got["error"] = str(e)
        got["window_end"] = time.monotonic()

    t0 = time.monotonic()
    th = threading.Thread(target=sampler)
    th.start()
    try:
        out, _, _ = pair.perftest(tool, args + ["-D", str(WARM_UP + secs + TAIL)],
                                  timeout=WARM_UP + secs + TAIL + 120)
    except guest_runner.RunFailed as e:
        out = "run failed: %s" % e
    run_end = time.monotonic()
    th.join()
    rec = {"workload": " ".join(tool_args), "device": device,
           "seconds": round(run_end - t0, 1), "window_s": secs,
           "window_start_s": WARM_UP, "client_tail": out[-400:]}
    try:
        rec["result"] = parsers.perftest_bw(out)
    except parsers.ParseError:
        rec["result"] = None
    if "error" in got:
        rec["error"] = got["error"]
        return rec
    # The window must lie inside the run, or idle time after it would count.
    rec["window_inside_run"] = got["window_end"] <= run_end
    rec["proc_stat"] = got["stat"]
    report = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "--no-children", "-n",
         "--sort", "comm,dso,sym", "-t", "|"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=600)
    rec["perf_report"] = "perf-%d-%s.txt" % (n, device)
    with open(os.path.join(OUT, rec["perf_report"]), "w") as f:
        f.write(report.stdout)
    os.unlink(data)
    return rec


def main():
    secs, workloads = int(sys.argv[1]), [w.split() for w in sys.argv[2:]]
    records = []
    for n, tool_args in enumerate(workloads):
        for device in DEVICES:
            rec = profile_one(n, tool_args, device, secs)
            records.append(rec)
            print("%-28s %-6s %s" % (rec["workload"], device,
                                     rec.get("error") or "sampled %ds" % secs), flush=True)
    with open(os.path.join(OUT, "profile.json"), "w") as f:
        json.dump({"guest": guest_runner.describe_guest(), "records": records}, f, indent=1)


if __name__ == "__main__":
    main()

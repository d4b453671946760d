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
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_runner  # noqa: E402
import parsers  # noqa: E402

OUT = guest_runner.OUT
WARM_UP = 15     # seconds from server start to the window: connect, set up, ramp
# ... and this much more per QP: perftest's -D counts from the end of the
# set-up, which for 8192 QPs took 75 s on rxe (both ends create and connect
# every QP); a fixed warm-up sampled the set-up instead of the traffic.
WARM_UP_PER_QP = 0.012
TAIL = 10        # seconds the run goes on after the window
DEVICES = ("rxe", "sroce")


class Sampler:
    """perf record -a, started before the run with its events off (perf's
    own start-up, minutes in a busy TCG guest, stays out of the window)
    and switched on and off through its control fifo; /proc/stat's "cpu"
    line is read right at both switches."""

    def __init__(self, data):
        ctl, ack = data + ".ctl", data + ".ack"
        for fifo in (ctl, ack):
            if os.path.exists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo)
        self.perf = subprocess.Popen(
            ["perf", "record", "-q", "-N", "-a", "-e", "cpu-clock", "-F", "999",
             "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack), "-o", data],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ctl, self.ack = open(ctl, "w"), open(ack)
        self.command("disable")     # answered once perf's main loop runs

    def command(self, what):
        self.ctl.write(what + "\n")
        self.ctl.flush()
        # perf writes "ack\n\0": the NUL starts the next line we read
        if self.ack.readline().replace("\0", "").strip() != "ack":
            raise guest_runner.RunFailed("perf did not acknowledge %r" % what)

    def window(self, secs):
        def cpu_line():
            with open("/proc/stat") as f:
                return f.readline().strip()
        before = cpu_line()
        self.command("enable")
        time.sleep(secs)
        self.command("disable")
        return [before, cpu_line()]

    def stop(self):
        self.perf.send_signal(signal.SIGINT)
        self.perf.wait(timeout=900)     # writes the data file out


def warm_up(args):
    """Seconds before the window for a perftest with these arguments."""
    qps = int(args[args.index("-q") + 1]) if "-q" in args else 1
    return WARM_UP + int(qps * WARM_UP_PER_QP)


def profile_one(n, tool_args, device, secs):
    tool, args = tool_args[0], tool_args[1:]
    wait = warm_up(args)
    pair = guest_runner.Pair(*guest_runner.PAIRS[("loopback", device)])
    data = "/tmp/perf.%d.%s.data" % (n, device)
    sampler = Sampler(data)
    got = {}

    def run():
        try:
            got["out"] = pair.perftest(tool, args + ["-D", str(wait + secs + TAIL)],
                                       timeout=2 * wait + secs + TAIL + 300)[0]
        except guest_runner.RunFailed as e:
            got["out"] = "run failed: %s" % e
        got["end"] = time.monotonic()

    t0 = time.monotonic()
    th = threading.Thread(target=run)
    th.start()
    time.sleep(wait)
    stat = sampler.window(secs)
    window_end = time.monotonic()
    th.join()
    sampler.stop()
    out = got["out"]
    rec = {"workload": " ".join(tool_args), "device": device,
           "seconds": round(got["end"] - t0, 1), "window_s": secs,
           "window_start_s": wait, "client_tail": out[-400:],
           # The window must lie inside the run, or idle time after it would count.
           "window_inside_run": window_end <= got["end"], "proc_stat": stat}
    try:
        rec["result"] = parsers.perftest_bw(out)
    except parsers.ParseError:
        rec["result"] = None
    report = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "--no-children", "-n",
         "--sort", "comm,dso,sym", "-t", "|"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=900)
    rec["perf_report"] = "perf-%d-%s.txt" % (n, device)
    with open(os.path.join(OUT, rec["perf_report"]), "w") as f:
        f.write(report.stdout)
    os.unlink(data)
    return rec


def main():
    secs, workloads = int(sys.argv[1]), [w.split() for w in sys.argv[2:]]
    doc = {"guest": guest_runner.describe_guest(), "records": []}
    for n, tool_args in enumerate(workloads):
        for device in DEVICES:
            rec = profile_one(n, tool_args, device, secs)
            doc["records"].append(rec)
            print("%-28s %-6s sampled %ds, run %.0fs" % (
                rec["workload"], device, secs, rec["seconds"]), flush=True)
            # after every run: a guest cut short still leaves what it sampled
            with open(os.path.join(OUT, "profile.json"), "w") as f:
                json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()

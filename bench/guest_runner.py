#!/usr/bin/python3
"""Runs the benchmark plan inside the guest (scripts/bench starts it as
scripts/vm-run --rxe's COMMAND).

Phase 1 (loopback): rxe0 and sroce1 take turns on every workload, round
after round, the device that goes first alternating per round, so drift
on the shared host hits both alike.  Phase 2 (wire): rxe is removed (its
UDP socket would hold port 4791 in the initial namespace), sroce0 is
created on veth0 and the sroce-only wire workloads run.

Every run appends one JSON record to $SROCE_OUT/raw.jsonl as soon as it
ends, so a guest that dies or times out still leaves what it measured.
A run that fails is recorded with ok=false and the tool's last words.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import tempfile
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import consumer_runs  # noqa: E402
import parsers  # noqa: E402
import plan  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("SROCE_OUT", "/tmp")
# The load generators of bench/tools, as the build made them (--tools).
TOOLS = os.path.join(HERE, "..", "build", "cmake", "bench", "tools")
GIB = float(1 << 30)
USER_HZ = os.sysconf("SC_CLK_TCK")


class Endpoint:
    def __init__(self, dev, ns, ip):
        self.dev, self.ns, self.ip = dev, ns, ip

    def argv(self, argv):
        return (["ip", "netns", "exec", self.ns] if self.ns else []) + argv

    def gid_index(self):
        """The RoCE v2 GID that carries our IPv4 address."""
        want = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
            int(b) for b in self.ip.split("."))
        port = "/sys/class/infiniband/%s/ports/1" % self.dev
        for i in range(len(os.listdir(port + "/gids"))):
            try:
                gid = open("%s/gids/%d" % (port, i)).read().strip()
                kind = open("%s/gid_attrs/types/%d" % (port, i)).read()
            except OSError:
                continue
            if gid == want and "v2" in kind:
                return i
        raise RuntimeError("no RoCE v2 GID for %s on %s" % (self.ip, self.dev))


RXE = Endpoint("rxe0", None, "198.51.100.1")
SROCE1 = Endpoint("sroce1", "peer", "198.51.100.2")
SROCE0 = Endpoint("sroce0", None, "198.51.100.1")
# (server, client) per device and path
PAIRS = {
    ("loopback", "rxe"): (RXE, RXE),
    ("loopback", "sroce"): (SROCE1, SROCE1),
    ("loopback", "tcp-rxe-path"): (RXE, RXE),
    ("loopback", "tcp-sroce-path"): (SROCE1, SROCE1),
    ("wire", "sroce"): (SROCE1, SROCE0),
    ("wire", "tcp"): (SROCE1, SROCE0),
}


class RunFailed(Exception):
    pass


def busy_seconds():
    """(user, kernel) CPU seconds of the whole guest so far."""
    with open("/proc/stat") as f:
        return tuple(t / USER_HZ for t in parsers.proc_stat_ticks(f.read())[:2])


def listening(pid, port):
    """True once process `pid` (in whatever namespace it entered) has a
    TCP socket listening on `port`; reads /proc, spawns nothing."""
    for name in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, name)) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[1].endswith(":%04X" % port) and cols[3] == "0A":
                return True
    return False


def why(output):
    """The lines of a tool's output that say what went wrong."""
    bad = [l.strip() for l in output.splitlines()
           if re.search(r"error|fail|couldn't|unable|invalid|timed? ?out|"
                        r"should be|not supported", l, re.I)]
    return " / ".join(bad[-4:]) if bad else parsers._tail(output, 3)


class Pair:
    """A server/client run of one tool; ports rotate so a lingering
    socket from the previous run never gets in the way."""
    port = 18600

    def __init__(self, server, client):
        self.server, self.client = server, client

    def run(self, server_argv, client_argv, timeout, env=None, ready=None):
        """Runs the server, waits until it listens on TCP {port} (or until
        @ready(server pid, port) holds: rdma_cm and rsockets listen with no
        TCP socket), runs the client; @env adds to both environments."""
        Pair.port = Pair.port + 1 if Pair.port < 18999 else 18600
        port = Pair.port
        srv_cmd = self.server.argv([a.replace("{port}", str(port)) for a in server_argv])
        cli_cmd = self.client.argv([a.replace("{port}", str(port)) for a in client_argv])
        if env is not None:
            env = dict(os.environ, **env)
        ready = ready or listening
        cpu0, t0 = busy_seconds(), time.monotonic()
        # The server writes into a file, not a pipe: nobody reads a pipe
        # until the client is done, and perftest prints four lines per QP,
        # so at 1024 QPs a full pipe stopped the server mid-handshake and
        # the client waited out its whole timeout.
        srv_log = tempfile.TemporaryFile("w+")
        srv = subprocess.Popen(srv_cmd, stdout=srv_log,
                               stderr=subprocess.STDOUT, text=True, env=env)

        def srv_output():
            srv_log.seek(0)
            return srv_log.read()
        try:
            deadline = time.monotonic() + 60
            while not ready(srv.pid, port):
                if srv.poll() is not None or time.monotonic() > deadline:
                    raise RunFailed("server did not listen: " + why(srv_output()))
                time.sleep(0.05)
            try:
                cli = subprocess.run(cli_cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     timeout=timeout, env=env)
            except subprocess.TimeoutExpired:
                raise RunFailed("client timed out after %ds" % timeout) from None
            try:
                srv.wait(timeout=30)
                srv_out = srv_output()
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()
                srv_out = srv_output() + "\n(server killed)"
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
            srv_log.close()
        seconds = time.monotonic() - t0
        cpu = tuple(b - a for a, b in zip(cpu0, busy_seconds()))
        if cli.returncode != 0:
            raise RunFailed("client exit %d: %s | server: %s" % (
                cli.returncode, why(cli.stdout), why(srv_out)))
        return cli.stdout, seconds, cpu

    def perftest(self, tool, args, timeout=120, wrap=()):
        def argv(ep, prefix, target):
            return list(prefix) + [
                tool, "-d", ep.dev, "-x", str(ep.gid_index()), "-p", "{port}",
                "-F"] + args + target
        return self.run(argv(self.server, (), []),
                        argv(self.client, wrap, [self.server.ip]), timeout)


# --- one function per workload kind: (workload, pair, settings) -> metrics
# perftest's completion moderation: one signalled WR in DEF_CQ_MOD, none
# for messages over MSG_SIZE_CQ_MOD_LIMIT, never more than the tx depth.
PERFTEST_CQ_MOD = 100
PERFTEST_CQ_MOD_SIZE_LIMIT = 8192
PERFTEST_TX_DEPTH = 128


def whole_cq_mods(iters, size, depth=PERFTEST_TX_DEPTH):
    """@iters rounded up to a whole number of perftest's completion
    moderation periods.  perftest before 24.01 (Debian 12 has 4.5-0.17)
    counts every completion as a whole period, the last, shorter one of
    each QP too, and stops polling once the count reaches the total: with
    several QPs whose progress differs by a period or more, a QP still
    waiting for completions never posts its last WRs and the client
    hangs (its upstream fix: "fix completion count with special
    combination of tx_depth/cq_mod/iterations")."""
    mod = 1 if size > PERFTEST_CQ_MOD_SIZE_LIMIT else min(PERFTEST_CQ_MOD, depth)
    return -(-iters // mod) * mod


def bw_iterations(size, qps, s):
    """Iterations per QP for a bandwidth run: a fixed volume per message
    size (perftest's -D duration mode reports 0 iterations or 0.00 Gb/s
    too often under TCG, so runs are counted, not timed)."""
    total = s.volume * (20000 if size <= 64 else (32 << 20) // size)
    return whole_cq_mods(max(5, int(total) // qps), size)  # perftest wants >= 5


def run_bw(w, pair, s):
    """perftest bandwidth in its default MB/s: --report_gbits prints two
    decimals, 0.00 Gb/s for small messages at TCG speeds."""
    p = w.params
    n = bw_iterations(p["size"], p["qps"], s)
    out, seconds, _ = pair.perftest(p["tool"], [
        "-s", str(p["size"]), "-q", str(p["qps"]), "-n", str(n)], timeout=s.timeout)
    r = parsers.perftest_bw(out)
    r.update(iters_per_qp=n, seconds=round(seconds, 1), output=out[-400:])
    return r


def run_lat(w, pair, s):
    p = w.params
    out, _, _ = pair.perftest(p["tool"], ["-s", str(p["size"]), "-n",
                                          str(s.lat_iters)] + list(p.get("extra", ())),
                              timeout=s.timeout)
    r = parsers.perftest_lat(out)
    r["output"] = out[-400:]
    return r


def run_pingpong(w, pair, s):
    """ibv_rc_pingpong: microseconds per round trip, the application
    spinning on its CQ or (events) asleep on its completion channel; with
    one_cpu both ends may run on CPU 0 only."""
    p = w.params
    pin = ["taskset", "-c", "0"] if p.get("one_cpu") else []

    def argv(ep, target):
        return pin + ["ibv_rc_pingpong", "-d", ep.dev, "-g", str(ep.gid_index()),
                "-p", "{port}", "-s", str(p["size"]), "-n", str(s.lat_iters)] + (
                    ["-e"] if p["events"] else []) + target
    out, _, _ = pair.run(argv(pair.server, []), argv(pair.client, [pair.server.ip]),
                         s.timeout)
    r = parsers.rc_pingpong(out)
    r["output"] = out[-400:]
    return r


def run_cpu(w, pair, s):
    """Guest CPU per GiB, marginal: the difference between a long and a
    short ib_write_bw run, so process start and connection setup cancel."""
    size = w.params["size"]
    cpu = []
    for n in s.cpu_iters:
        _, _, c = pair.perftest("ib_write_bw", ["-s", str(size), "-n", str(n)],
                                timeout=s.timeout)
        cpu.append(c)
    gib = (s.cpu_iters[1] - s.cpu_iters[0]) * size / GIB
    user, kernel = ((cpu[1][i] - cpu[0][i]) / gib for i in (0, 1))
    # perftest busy-polls its CQ, so user time mostly measures how long
    # the run took; kernel time is what the device itself costs.
    return {"cpu_s_per_gib": user + kernel, "kernel_cpu_s_per_gib": kernel,
            "user_cpu_s_per_gib": user, "cpu_s": cpu,
            "iters": list(s.cpu_iters)}


# Syscall counting in the kernel (perf stat on tracepoints), never ptrace:
# strace stops the client at every syscall, which slows it so much that
# sroce's send engine always drains the ring and asks for a doorbell on
# every post.  perf stat counts only the client (perftest) and its threads.
# x86-64 numbers of the clock reads perftest makes in its loop: without a
# vDSO clock under TCG (hpet) each is a real syscall, the app's cost.
CLOCK_SYSCALL_IDS = (228, 96, 201)    # clock_gettime, gettimeofday, time
SYSCALL_EVENTS = (
    ("all", "raw_syscalls:sys_enter", None),
    ("clock", "raw_syscalls:sys_enter",
     " || ".join("id == %d" % i for i in CLOCK_SYSCALL_IDS)),
    # In perftest's loop the only write() not to stdout/stderr is the
    # doorbell on the uverbs fd (its socket exchange and its report are
    # the same in both run lengths and cancel).
    ("doorbell", "syscalls:sys_enter_write", "fd > 2"),
)


def ensure_tracefs():
    if not os.path.isdir("/sys/kernel/tracing/events"):
        sh("mount -t tracefs nodev /sys/kernel/tracing")


def perf_stat_argv(path):
    argv = ["perf", "stat", "-x,", "-o", path]
    for _, event, where in SYSCALL_EVENTS:
        argv += ["-e", event] + (["--filter", where] if where else [])
    return tuple(argv + ["--"])


def run_syscalls(w, pair, s):
    """Client syscalls per WRITE work request, marginal between two run
    lengths, so setup syscalls cancel: the doorbells (write() on the uverbs
    fd) as the headline, all syscalls but perftest's clock reads beside."""
    ensure_tracefs()
    size = w.params["size"]
    counts = []
    for n in s.syscall_iters:
        path = "/tmp/perf-stat.%d" % n
        pair.perftest("ib_write_bw", ["-s", str(size), "-n", str(n)],
                      timeout=s.timeout, wrap=perf_stat_argv(path))
        with open(path) as f:
            rows = parsers.perf_stat_counts(f.read())
        if [e for e, _ in rows] != [e for _, e, _ in SYSCALL_EVENTS]:
            raise RunFailed("perf stat counted other events: %s" % rows)
        counts.append({name: c for (name, _, _), (_, c) in zip(SYSCALL_EVENTS, rows)})
    span = s.syscall_iters[1] - s.syscall_iters[0]
    per = {k: round((counts[1][k] - counts[0][k]) / span, 6) for k in counts[0]}
    # perftest's clock reads follow the run's time, not its WRs (tens of
    # thousands per run either way), so their marginal is noise: the
    # device's figure leaves them out.
    return {"per_wr": per["doorbell"], "device_per_wr": round(per["all"] - per["clock"], 6),
            "other_per_wr": round(per["all"] - per["clock"] - per["doorbell"], 6),
            "clock_reads_per_wr": per["clock"], "all_per_wr": per["all"],
            "counts": counts, "iters": list(s.syscall_iters)}


SCALING_FAILED = {}   # (path, device) -> the smallest QP count that failed


def scaling_timeout(qps, s):
    """Setting up thousands of QPs takes a while in a TCG guest (both
    ends create, connect and destroy each one): the usual client timeout
    plus a tenth of a second per QP, 940 s at 8192."""
    return s.timeout + qps // 10


def scaling_depth_and_iters(qps, size):
    """A scaling run's tx depth per QP and iterations per QP:
    plan.SCALING_IN_FLIGHT WRs in flight in all (at most perftest's
    default depth per QP), and about plan.SCALING_WRITES WRITEs in all,
    in whole completion periods."""
    depth = max(1, min(PERFTEST_TX_DEPTH, plan.SCALING_IN_FLIGHT // qps))
    return depth, whole_cq_mods(max(5, depth, plan.SCALING_WRITES // qps), size, depth)


def run_scaling(w, pair, s):
    """ib_write_bw over many QPs (scaling_depth_and_iters).  Once a device
    fails at some QP count, larger counts are not tried on it: they would
    only fail slower."""
    qps, size = w.params["qps"], w.params["size"]
    key = (w.path, pair.server.dev)
    if qps >= SCALING_FAILED.get(key, qps + 1):
        raise RunFailed("not run: the same device failed at %d QPs"
                        % SCALING_FAILED[key])
    depth, iters = scaling_depth_and_iters(qps, size)
    try:
        out, seconds, _ = pair.perftest(
            "ib_write_bw", ["-s", str(size), "-q", str(qps), "-t", str(depth),
                            "-n", str(iters)], timeout=scaling_timeout(qps, s))
        r = parsers.perftest_bw(out)
    except Exception:
        SCALING_FAILED[key] = min(qps, SCALING_FAILED.get(key, qps))
        raise
    r.update(depth=depth, iters_per_qp=iters, seconds=seconds)
    return r


def run_fanout(w, pair, s):
    """bench/tools/qp_fanout: WRITE streams over N QPs of the device to
    itself, the same depth per QP at every N, the application out of the
    way (perftest's walk over its QPs paces it in a TCG guest)."""
    ep = pair.client
    p = w.params
    cmd = ep.argv([os.path.join(TOOLS, "qp_fanout"), ep.dev, str(ep.gid_index()),
                   str(p["qps"]), str(p["depth"]), str(s.fanout_writes),
                   str(p["size"])])
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=scaling_timeout(p["qps"], s))
    except subprocess.TimeoutExpired:
        raise RunFailed("qp_fanout timed out") from None
    if r.returncode != 0:
        raise RunFailed("qp_fanout exit %d: %s" % (r.returncode, why(r.stdout)))
    return parsers.qp_fanout(r.stdout)


def run_qp_memory(w, pair, s):
    ep = pair.server
    cmd = ep.argv([sys.executable, os.path.join(HERE, "qp_memory.py"),
                   ep.dev, str(w.params["count"])])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise RunFailed(parsers._tail(r.stdout))
    return json.loads(r.stdout.splitlines()[-1])


def run_tcp(w, pair, s):
    env = dict(os.environ, TMPDIR="/tmp")   # iperf3 keeps a file there
    out, _, _ = pair.run(
        ["iperf3", "-s", "-1", "-B", pair.server.ip, "-p", "{port}"],
        ["iperf3", "-c", pair.server.ip, "-p", "{port}", "-t",
         str(s.duration), "-J"], timeout=60 + s.duration, env=env)
    return {"gbps": parsers.iperf3_gbps(out)}


RUNNERS = {"bw": run_bw, "lat": run_lat, "pingpong": run_pingpong, "cpu": run_cpu,
           "tcp": run_tcp, **consumer_runs.RUNNERS,
           "syscalls": run_syscalls, "scaling": run_scaling, "fanout": run_fanout,
           "qp_memory": run_qp_memory}


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def with_loss(w, fn):
    """netem loss on veth0's egress: the client-to-server data direction
    of the wire path; the server's ACKs travel back unimpaired."""
    loss = w.params.get("loss")
    if not loss:
        return fn()
    sh("tc qdisc replace dev veth0 root netem loss %s" % loss)
    try:
        return fn()
    finally:
        sh("tc qdisc del dev veth0 root")


HUNG = {}   # (path, workload, device) -> round in which it timed out


def failure_text(e):
    """What a failed run records: the error's first line (why it failed)
    and the end of the tool output after it.  Keeping only the last 600
    characters lost the why whenever the output was long."""
    why_, _, detail = str(e).strip().partition("\n")
    return why_[:300] + ("\n" + detail[-600:] if detail else "")


def run_one(w, device, rnd, s, log):
    pair = Pair(*PAIRS[(w.path, device)])
    rec = {"workload": w.id, "path": w.path, "device": device, "round": rnd}
    key = (w.path, w.id, device)
    t0 = time.monotonic()
    try:
        if key in HUNG:     # each hang costs a whole timeout: once is enough
            raise RunFailed("not run again: timed out in round %d" % HUNG[key])
        rec["metrics"] = with_loss(w, lambda: RUNNERS[w.kind](w, pair, s))
        rec["ok"] = True
    except (RunFailed, parsers.ParseError, RuntimeError, OSError,
            subprocess.SubprocessError, ValueError) as e:
        rec["ok"], rec["error"] = False, failure_text(e)
        if "timed out after" in rec["error"]:
            HUNG.setdefault(key, rnd)
    rec["seconds"] = round(time.monotonic() - t0, 1)
    log.write(json.dumps(rec) + "\n")
    log.flush()
    shown = ("%.4g %s" % (rec["metrics"][w.metric], w.unit) if rec["ok"]
             else "FAILED: " + rec["error"].splitlines()[0][:100])
    print("[round %d] %-8s %-14s %-30s %s (%.0fs)" % (
        rnd, w.path, device, w.id, shown, rec["seconds"]), flush=True)


def run_phase(workloads, s, log):
    for rnd in range(1, s.rounds + 1):
        for w in workloads:
            if not w.every_round and rnd > 1:
                continue
            order = list(w.devices) if rnd % 2 else list(reversed(w.devices))
            for device in order:
                run_one(w, device, rnd, s, log)


# rep movsb (erms, fsrm) for copies; PCLMULQDQ / AVX-512 for the ICRC.
DATA_PATH_FLAGS = {"erms", "fsrm", "pclmulqdq", "avx512f", "vpclmulqdq"}


def describe_guest():
    def read(p):
        with open(p) as f:
            return f.read().strip()
    mem = parsers.meminfo_kib(read("/proc/meminfo"))
    mtu = subprocess.run("ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:\\s*//p'",
                         shell=True, stdout=subprocess.PIPE, text=True).stdout
    return {"kernel": os.uname().release, "cpus": os.cpu_count(),
            "mem_mib": mem["MemTotal"] // 1024,
            "veth_mtu": int(read("/sys/class/net/veth0/mtu")),
            "roce_active_mtu": mtu.strip(),
            "clocksource": read("/sys/devices/system/clocksource/clocksource0/"
                                "current_clocksource"),
            # What decides the copy and CRC code the kernel picks.
            "cpu_flags": sorted(DATA_PATH_FLAGS & set(re.search(
                r"^flags\s*:(.*)$", read("/proc/cpuinfo"), re.M)[1].split())),
            "crc_engine": read("/sys/module/sroce/parameters/crc_engine")
            if os.path.exists("/sys/module/sroce/parameters/crc_engine") else "?"}


def set_sroce(name, value):
    """A module parameter (crc_engine) or, failing that, a setting every
    sroce device has (rx_steer, loopback_bypass: /sys/class/infiniband)."""
    param = "/sys/module/sroce/parameters/" + name
    paths = [param] if os.path.exists(param) else sorted(
        p for p in glob.glob("/sys/class/infiniband/sroce*/" + name))
    if not paths:
        sys.exit("sroce has no parameter or device setting %r" % name)
    for p in paths:
        with open(p, "w") as f:
            f.write(value)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--duration", type=int)
    ap.add_argument("--volume", type=float, help="scale bandwidth run sizes")
    ap.add_argument("--only", help="run only workloads whose id contains this "
                    "(or one of several, separated by commas)")
    ap.add_argument("--tools", help="where the build put bench/tools' programs")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="an sroce module parameter or device setting for the run (e.g. crc_engine=table, "
                         "rx_steer=1), recorded in the report")
    a = ap.parse_args()
    if a.tools:
        global TOOLS
        TOOLS = a.tools
    for kv in a.param:
        name, _, value = kv.partition("=")
        if not re.fullmatch(r"\w+", name):
            sys.exit("bad --param %r" % kv)
        set_sroce(name, value)
    s = plan.Settings.quick() if a.quick else plan.Settings()
    if a.rounds:
        s.rounds = a.rounds
    if a.duration:
        s.duration = a.duration
    if a.volume:
        s.volume = a.volume
    phases = {"loopback": plan.loopback_workloads(s), "wire": plan.wire_workloads(s)}
    if a.only:
        wanted = a.only.split(",")
        phases = {k: [w for w in v if any(o in w.id for o in wanted)]
                  for k, v in phases.items()}
    meta = {"guest": describe_guest(), "settings": vars(s), "params": a.param,
            "workloads": [w.as_dict() for ws in phases.values() for w in ws]}
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(OUT, "raw.jsonl"), "w") as log:
        run_phase(phases["loopback"], s, log)
        if phases["wire"]:
            # rxe's socket holds UDP 4791 in this namespace: make room.
            sh("rdma link delete rxe0 && modprobe -r rdma_rxe && "
               "rdma link add sroce0 type sroce netdev veth0 && sleep 1")
            run_phase(phases["wire"], s, log)


if __name__ == "__main__":
    main()

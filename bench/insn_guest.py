#!/usr/bin/python3
"""Runs in a scripts/vm-run --rxe guest loaded with the instruction-counting
plugin (scripts/bench --insns): the same event-driven ping-pong on sroce,
rxe and the kernel's TCP and UDP, each between two marks, and prints one
JSON line per run saying which marks bound it.

Each transport runs in loopback on one device or address, as rxe must on
Debian 12 (its 6.1 rxe has no network namespaces): sroce1 in namespace
`peer`, rxe0 in the initial one, TCP and UDP to 198.51.100.2 in `peer`.
RDMA: `ibv_rc_pingpong -e`, which sleeps on its completion channel as
most applications and every kernel consumer do (a spinning poller would
retire instructions doing nothing); TCP/UDP: bench/tools/sock_pingpong,
blocking sockets.  Each message is checked at its far end.

A run's window starts once its server listens (so neither the server's
start nor the wait for it counts) and ends when both have exited.  Every
run is made twice, with ITERS and 3 x ITERS round trips: the difference
is the cost of 2 x ITERS round trips alone, with the programs' start and
exit (libibverbs loading every provider, QP set-up) gone from it.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from guest_runner import Endpoint  # the bench's own GID lookup

PEER = ["ip", "netns", "exec", "peer"]
SIZES = {64: 500, 4096: 500, 65536: 150, 1048576: 15}
QUICK_SIZES = {64: 100, 4096: 100, 65536: 30, 1048576: 4}
PORT = 18515
# The marks that start and stop the plugin's profile (bench/insn/sroce_insn.c).
PROFILE_START, PROFILE_STOP = 0xfff00001, 0xfff00002


def write_settings(settings):
    """Writes each sysfs file of `settings` its value; returns the values
    they had, to write back the same way."""
    old = {}
    for path, value in settings.items():
        with open(path) as f:
            old[path] = f.read().strip()
        with open(path, "w") as f:
            f.write(value)
    return old


class Transport:
    def __init__(self, name, ns, server, client, listen, settings=None):
        self.name, self.ns = name, ns
        self.server, self.client, self.listen = server, client, listen
        self.settings = settings or {}      # sysfs file -> value, for its runs

    def argv(self, template, size, iters, tools):
        return self.ns + [a.format(size=size, iters=iters, tools=tools) for a in template]


def transports():
    g_sroce = Endpoint("sroce1", "peer", "198.51.100.2").gid_index()
    g_rxe = Endpoint("rxe0", None, "198.51.100.1").gid_index()
    rc = ["ibv_rc_pingpong", "-e", "-s", "{size}", "-n", "{iters}", "-c"]
    sroce_server = rc + ["-d", "sroce1", "-g", str(g_sroce)]
    sroce_client = sroce_server + ["198.51.100.2"]
    return [
        # As installed: the SQ poller watches each process for
        # sq_poll_idle_us after it posts, spinning, and what it spins
        # counts here (the work it saves is the doorbell syscall's).
        Transport("sroce", PEER, sroce_server, sroce_client, "tcp"),
        # Without the poller: every post rings (the device's setting
        # sq_poll_idle_us = 0), so the count is the work alone.
        Transport("sroce-nopoll", PEER, sroce_server, sroce_client, "tcp",
                  {"/sys/class/infiniband/sroce1/sq_poll_idle_us": "0"}),
        Transport("rxe", [], rc + ["-d", "rxe0", "-g", str(g_rxe)],
                  rc + ["-d", "rxe0", "-g", str(g_rxe), "198.51.100.1"], "tcp"),
        Transport("tcp", PEER, ["{tools}/sock_pingpong", "tcp", "-s", "{size}", "-n", "{iters}"],
                  ["{tools}/sock_pingpong", "tcp", "-s", "{size}", "-n", "{iters}",
                   "198.51.100.2"], "tcp"),
        Transport("udp", PEER, ["{tools}/sock_pingpong", "udp", "-s", "{size}", "-n", "{iters}"],
                  ["{tools}/sock_pingpong", "udp", "-s", "{size}", "-n", "{iters}",
                   "198.51.100.2"], "udp"),
    ]


def listening(ns, proto):
    flag = "-Hltn" if proto == "tcp" else "-Hlun"
    out = subprocess.run(ns + ["ss", flag, "sport = :%d" % PORT],
                         capture_output=True, text=True).stdout
    return bool(out.strip())


class Marks:
    def __init__(self, tool):
        self.tool, self.next = tool, 1

    def set(self):
        n, self.next = self.next, self.next + 1
        return self.write(n)

    def write(self, n):
        subprocess.run([self.tool, str(n)], check=True)
        return n


class ProfileMarks(Marks):
    """The two marks of a profiled run (--profile): the plugin counts each
    translated block's starts between them."""
    def __init__(self, tool):
        super().__init__(tool)
        self.numbers = iter((PROFILE_START, PROFILE_STOP))

    def set(self):
        return self.write(next(self.numbers))


class NoMarks:
    def set(self):
        return None


def warm_up(t, tools):
    """A run of @t that counts for nothing, before the first that counts:
    the guest's one-offs after boot fall in it (the random pool's reseed,
    ~5M instructions, landed in the first measured run every time: a 19 %
    spread at 64 B for whichever transport ran first)."""
    old = write_settings(t.settings)
    try:
        one_run(t, 64, SIZES[64], NoMarks(), tools)
    finally:
        write_settings(old)


def profile(t, size, iters, tools, mark_tool):
    """Two runs of @t, of @iters and 3 x @iters round trips, each between
    the profile's marks (their difference is the round trips' alone, as
    in the counts), then the kernel's text symbols, for
    bench/insn_profile.py to name the blocks with."""
    warm_up(t, tools)
    old = write_settings(t.settings)
    try:
        for n in (iters, 3 * iters):
            start, end, err = one_run(t, size, n, ProfileMarks(mark_tool), tools)
            print(json.dumps({"transport": t.name, "size": size, "iters": n,
                              "start": start, "end": end, "error": err}), flush=True)
    finally:
        write_settings(old)
    with open("/proc/kallsyms") as f:
        for line in f:
            if line.split()[1] in "tT":
                sys.stdout.write(line)


def one_run(t, size, iters, marks, tools):
    server = subprocess.Popen(t.argv(t.server, size, iters, tools), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not listening(t.ns, t.listen):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            return None, None, "the server did not listen: " + server.stdout.read()[-500:]
        time.sleep(0.05)
    start = marks.set()
    client = subprocess.run(t.argv(t.client, size, iters, tools), capture_output=True,
                            text=True, timeout=900)
    try:
        server_out, _ = server.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server_out = "(the server did not exit)"
    end = marks.set()
    ok = client.returncode == 0 and server.returncode == 0
    return start, end, "" if ok else (client.stdout + client.stderr + server_out)[-800:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tools", required=True)
    p.add_argument("--reps", type=int, default=None,
                   help="repetitions of every count (default 5, --quick 3)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--profile", type=int, metavar="SIZE",
                   help="two runs (N and 3N round trips) of the --only transport "
                   "(named whole) at SIZE, profiled, instead of the counts")
    a = p.parse_args()
    marks = Marks(os.path.join(a.tools, "insn_mark"))
    sizes = QUICK_SIZES if a.quick else SIZES
    if a.profile:
        named = [t for t in transports() if t.name == a.only]
        if not named or a.profile not in SIZES:
            p.error("--profile needs --only naming one transport and a size of %s"
                    % sorted(SIZES))
        profile(named[0], a.profile, SIZES[a.profile], a.tools, marks.tool)
        return 0
    chosen = [t for t in transports() if not a.only or a.only in t.name]
    if chosen:
        warm_up(chosen[0], a.tools)
    for rep in range(a.reps or (3 if a.quick else 5)):
        for t in chosen:
            old = write_settings(t.settings)
            try:
                for size, iters in sizes.items():
                    if t.name == "udp" and size > 65507:
                        continue        # one datagram a message
                    # The two lengths alternate, so a drift over the run
                    # meets both alike.
                    for n in (iters, 3 * iters):
                        start, end, err = one_run(t, size, n, marks, a.tools)
                        print(json.dumps({"transport": t.name, "size": size, "iters": n,
                                          "rep": rep, "start": start, "end": end,
                                          "error": err}), flush=True)
            finally:
                write_settings(old)


if __name__ == "__main__":
    sys.exit(main())

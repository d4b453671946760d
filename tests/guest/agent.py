#!/usr/bin/python3
"""In-guest agent: runs the commands the host-side test harness sends.

vm-run starts this as its COMMAND.  Requests and replies are JSON files in
the output folder that vm-run shares between host and guest (virtio-9p, no
caching), each written to a temporary name and renamed into place so the
other side never reads half a file:

    rpc/<n>.req   {"op": "run", "cmd": "...", "timeout": s}  -> rpc/<n>.res
                  {"op": "kmsg"}   kernel log records since the last kmsg
                  {"op": "exit"}   stop the agent (the guest powers off)
One request is served at a time, in order.
"""
import json
import os
import signal
import subprocess
import sys
import time

RPC = os.path.join(os.environ["SROCE_OUT"], "rpc")
POLL_SECONDS = 0.02


class KernelLog:
    """Reads /dev/kmsg incrementally: each open file sees every record once."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)

    def new_records(self):
        lines = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                return lines
            except BrokenPipeError:  # records overwritten before we read them
                lines.append("(kernel log records lost)")
                continue
            head, _, text = rec.decode(errors="replace").partition(";")
            fields = head.split(",")
            usec = int(fields[2]) if len(fields) > 2 else 0
            lines.append("[%12.6f] %s" % (usec / 1e6, text.split("\n")[0]))


def run(req):
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/bash", "-c", req["cmd"]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        start_new_session=True,  # so a timeout kills the whole process group
        cwd=req.get("cwd") or None)
    try:
        out, err = proc.communicate(timeout=req.get("timeout", 120))
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    return {"rc": proc.returncode, "stdout": out.decode(errors="replace"),
            "stderr": err.decode(errors="replace"), "timed_out": timed_out,
            "seconds": time.monotonic() - started}


def reply(name, res):
    tmp = os.path.join(RPC, name + ".res.tmp")
    with open(tmp, "w") as f:
        json.dump(res, f)
    os.rename(tmp, os.path.join(RPC, name + ".res"))


def main():
    os.makedirs(RPC, exist_ok=True)
    kmsg = KernelLog()
    with open(os.path.join(RPC, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        reqs = sorted((f for f in os.listdir(RPC) if f.endswith(".req")),
                      key=lambda f: int(f.split(".")[0]))
        if not reqs:
            time.sleep(POLL_SECONDS)
            continue
        name = reqs[0][:-4]
        path = os.path.join(RPC, reqs[0])
        with open(path) as f:
            req = json.load(f)
        os.unlink(path)
        op = req.get("op")
        if op == "run":
            reply(name, run(req))
        elif op == "kmsg":
            reply(name, {"lines": kmsg.new_records()})
        elif op == "exit":
            reply(name, {})
            return 0
        else:
            reply(name, {"error": "unknown op %r" % op})


if __name__ == "__main__":
    sys.exit(main())

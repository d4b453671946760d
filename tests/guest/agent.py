#!/usr/bin/python3
"""In-guest agent: runs the commands the host-side test harness sends.

vm-run starts this as its COMMAND, with a virtio-serial port named
org.sroce.agent (vm-run --channel) whose host end is the harness's.  Once
the port is open the agent writes rpc/ready in the output folder vm-run
shares (virtio-9p), which is how the harness knows the guest is up; then
it serves one request at a time, in order, each a message on the port
(a 4-byte big-endian length, then that many bytes of JSON):

    {"op": "run", "cmd": "...", "timeout": s, "cwd": dir}
                     -> {"rc", "stdout", "stderr", "timed_out", "seconds"}
    {"op": "kmsg"}   -> {"lines": kernel log records since the last kmsg}
    {"op": "exit"}   -> {}, and the agent stops (the guest powers off)

Why a port and not files in the shared folder, as before: a request and
its reply as files cost ~25 ms of 9p operations and polling even when
both sides polled every millisecond (41 ms at the 20 ms poll it had), on
each of the suite's thousands of commands; the port costs a few.
"""
import glob
import json
import os
import signal
import struct
import subprocess
import sys
import time

RPC = os.path.join(os.environ["SROCE_OUT"], "rpc")
CHANNEL_NAME = "org.sroce.agent"
# Until the harness connects, a read of the port ends at once (EOF): look
# again this often.
UNCONNECTED_POLL_SECONDS = 0.02
LENGTH = struct.Struct(">I")


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


def open_channel():
    """The port vm-run --channel made, found by its name (the guest runs
    no udev to make /dev/virtio-ports/<name>)."""
    subprocess.run(["modprobe", "virtio_console"], check=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for name_file in glob.glob("/sys/class/virtio-ports/*/name"):
            with open(name_file) as f:
                if f.read().strip() == CHANNEL_NAME:
                    port = os.path.basename(os.path.dirname(name_file))
                    return os.open("/dev/" + port, os.O_RDWR)
        time.sleep(0.1)
    raise SystemExit("agent: no virtio-serial port %s (vm-run --channel)" % CHANNEL_NAME)


def read_exactly(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            if data:
                raise SystemExit("agent: the harness closed the port mid-message")
            time.sleep(UNCONNECTED_POLL_SECONDS)   # not connected (yet)
            continue
        data += chunk
    return data


def receive(fd):
    (length,) = LENGTH.unpack(read_exactly(fd, LENGTH.size))
    return json.loads(read_exactly(fd, length))


def send(fd, obj):
    data = json.dumps(obj).encode()
    view = memoryview(LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def main():
    channel = open_channel()
    kmsg = KernelLog()
    os.makedirs(RPC, exist_ok=True)
    with open(os.path.join(RPC, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        req = receive(channel)
        op = req.get("op")
        if op == "run":
            send(channel, run(req))
        elif op == "kmsg":
            send(channel, {"lines": kmsg.new_records()})
        elif op == "exit":
            send(channel, {})
            return 0
        else:
            send(channel, {"error": "unknown op %r" % op})


if __name__ == "__main__":
    sys.exit(main())

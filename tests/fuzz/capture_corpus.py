#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Regenerate the captured part of the fuzz_parse seeds: real RoCE v2
packets, as sroce and the kernel's rxe put them on the wire.

    tests/fuzz/capture_corpus.py [OUTDIR]     (after scripts/build;
                                               default OUTDIR: corpus/)

Boots two guests (scripts/vm-run, then vm-run --rxe) and in each records
every RoCE v2 UDP payload (BTH..ICRC, what fuzz_parse takes) crossing
veth0 while soak/traffic.py runs a few seconds of every opcode over RC,
UC and UD (multi-packet messages, atomics, SEND_WITH_INV, immediate
data) and ib_read_bw/ib_atomic_bw run, with 2% of data packets lost so
NAKs and retransmissions show up too.  The sroce guest gives sroce's own
packets; the rxe guest (rxe0 on veth0 talking to sroce1) gives rxe's
and sroce's answers to them.  Keeps one packet per (sender, opcode,
size class): tens of files, named capture-SENDER-OPCODE-SIZE.bin, next
to the synthetic seeds from gen_corpus.py.

In the guest this script runs itself as `capture_corpus.py guest`.
"""
import glob
import os
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROCE_PORT = 4791
SENDERS = {"198.51.100.1": "veth0", "198.51.100.2": "veth1"}
# BTH opcode -> name (IBA table 38: transport in the top 3 bits).
TRANSPORTS = {0: "rc", 1: "uc", 3: "ud"}
OPS = {0: "send_first", 1: "send_middle", 2: "send_last", 3: "send_last_imm",
       4: "send_only", 5: "send_only_imm", 6: "write_first", 7: "write_middle",
       8: "write_last", 9: "write_last_imm", 10: "write_only", 11: "write_only_imm",
       12: "read_req", 13: "read_resp_first", 14: "read_resp_middle",
       15: "read_resp_last", 16: "read_resp_only", 17: "ack", 18: "atomic_ack",
       19: "cmp_swap", 20: "fetch_add", 22: "send_last_inv", 23: "send_only_inv"}


def opcode_name(op):
    if op == 0x81:
        return "cnp"
    t, low = TRANSPORTS.get(op >> 5), OPS.get(op & 0x1F)
    return "%s_%s" % (t, low) if t and low else "op%02x" % op


def roce_payload(frame):
    """(source IP, UDP payload) of a RoCE v2 frame, or None."""
    if len(frame) < 14:
        return None
    ethertype = struct.unpack(">H", frame[12:14])[0]
    if ethertype == 0x0800 and len(frame) >= 34 and frame[23] == 17:
        ihl = (frame[14] & 0x0F) * 4
        src = socket.inet_ntop(socket.AF_INET, frame[26:30])
        udp = 14 + ihl
    elif ethertype == 0x86DD and len(frame) >= 62 and frame[20] == 17:
        src = socket.inet_ntop(socket.AF_INET6, frame[22:38])
        udp = 54
    else:
        return None
    if len(frame) < udp + 8 or struct.unpack(">H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    length = struct.unpack(">H", frame[udp + 4:udp + 6])[0]
    return src, frame[udp + 8:udp + length]


def size_class(payload):
    """Header-only or small packets apart from full ones."""
    return "small" if len(payload) <= 64 else "full"


def select(packets):
    """One packet per (sender, opcode, size class), the first seen:
    {file name: payload}."""
    chosen = {}
    for sender, payload in packets:
        if len(payload) < 16:
            continue
        name = "capture-%s-%s-%s.bin" % (sender, opcode_name(payload[0]), size_class(payload))
        chosen.setdefault(name, payload)
    return chosen


# ---- in the guest ---------------------------------------------------------

def sniff(stop, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    s.bind(("veth0", 0))
    s.settimeout(0.2)
    while not stop.is_set():
        try:
            frame = s.recv(65535)
        except socket.timeout:
            continue
        got = roce_payload(frame)
        if got:
            out.append(got)


def guest(outdir):
    sys.path[:0] = [os.path.join(ROOT, "tests", "guest"), os.path.join(ROOT, "soak")]
    from traffic import v2_gid_index
    from verbs_apps import impair_command
    rxe = os.path.exists("/sys/class/infiniband/rxe0")
    dev0 = "rxe0" if rxe else "sroce0"
    packets, stop = [], threading.Event()
    sniffer = threading.Thread(target=sniff, args=(stop, packets))
    sniffer.start()
    time.sleep(0.5)
    py = sys.executable
    steps = [
        "%s %s/soak/traffic.py 4 --rc 4 --uc 2 --ud 2 --devices %s,sroce1"
        % (py, ROOT, dev0),
        impair_command("veth0", "loss 2%") + " && " +
        impair_command("veth1", "loss 2%", "ip netns exec peer "),
        "%s %s/soak/traffic.py 4 --rc 4 --uc 0 --ud 0 --devices %s,sroce1"
        % (py, ROOT, dev0),
    ]
    for cmd in steps:
        # Only the packets matter here; what the traffic found is shown.
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        print(r.stdout[-600:], r.stderr[-600:])
    g0, g1 = v2_gid_index(dev0, "198.51.100.1"), v2_gid_index("sroce1", "198.51.100.2")
    for tool in ("ib_read_bw -s 3000 -n 200", "ib_atomic_bw -n 200",
                 "ib_send_bw -c UD -s 512 -n 200"):
        subprocess.run(
            "ip netns exec peer timeout 60 %s -d sroce1 -x %d >/dev/null 2>&1 & "
            "sleep 2; timeout 60 %s -d %s -x %d 198.51.100.2 >/dev/null 2>&1; wait"
            % (tool, g1, tool, dev0, g0), shell=True)
    stop.set()
    sniffer.join()
    names = {ip: ("rxe" if rxe and dev == "veth0" else "sroce") for ip, dev in SENDERS.items()}
    for name, payload in select((names.get(src, "other"), p) for src, p in packets).items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(payload)
    print("%d packets seen, %d kept" % (len(packets), len(os.listdir(outdir))))


# ---- on the host ------------------------------------------------------------

def host(outdir):
    runs = os.path.join(os.environ.get("SROCE_BUILD", os.path.join(ROOT, "build")),
                        "capture")
    keep = {}
    for flag in ([], ["--rxe"]):
        run = os.path.join(runs, "rxe" if flag else "sroce")
        subprocess.run(["rm", "-rf", run], check=True)
        os.makedirs(run)
        # The traffic's own verdict does not matter here, only its packets.
        subprocess.run([os.path.join(ROOT, "scripts", "vm-run"), "--timeout", "600",
                        "--out", run] + flag +
                       ["--", sys.executable, os.path.abspath(__file__), "guest"])
        for path in sorted(glob.glob(os.path.join(run, "capture-*.bin"))):
            keep.setdefault(os.path.basename(path), open(path, "rb").read())
    for old in glob.glob(os.path.join(outdir, "capture-*.bin")):
        os.unlink(old)
    for name, payload in sorted(keep.items()):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(payload)
    print("%d captured seeds in %s" % (len(keep), outdir))


if __name__ == "__main__":
    if sys.argv[1:2] == ["guest"]:
        guest(os.environ["SROCE_OUT"])   # vm-run's folder shared back
    else:
        host(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus"))

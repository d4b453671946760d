"""A peer that answers RDMA READs with the wrong number of bytes, for
tests/guest/test_hostile_packets.py (with tools/read_responses.cpp).

    read_responder.py --cases FILE --sniff-dev DEV --src4 PEER --dst4 DEV_IP
                      --src6 PEER6 --dst6 DEV_IP6 --stop FILE

FILE is read_responses' JSON: one RC QP of the device under test per case,
connected to a QP number here that no device has.  The READ requests the
device sends it are caught on DEV (AF_PACKET, in the peer's namespace)
and answered, from an ordinary UDP socket (hostile_gen.py builds the
packets and their ICRC), as the case's script says: its n-th request
gets the n-th answer (the last one again after that), where an answer
is a list of READ response packets, each an opcode, a PSN relative to
the request's and a length, carrying the bytes a right answer carries at
that place (read_responses.cpp's `pattern`).  Runs until the stop file
exists; prints "ready" once it listens, then every request it saw, per
case, as one JSON line.
"""
import argparse
import ipaddress
import json
import os
import socket
import struct
import time

from hostile_gen import ETH_P_ALL, ROCE_PORT, Gen

MTU = 1024
FIRST, MIDDLE, LAST, ONLY, ATOMIC_ACK = 0x0D, 0x0E, 0x0F, 0x10, 0x12
READ_REQUEST = 0x0C
AETH_ACK = 0x1F << 24       # an ACK, no credit count


def right(length):
    """The packets of a right answer to a READ of `length` bytes:
    (opcode, PSN offset, data offset, bytes)."""
    if length <= MTU:
        return [(ONLY, 0, 0, length)]
    n = (length + MTU - 1) // MTU
    return ([(FIRST, 0, 0, MTU)] + [(MIDDLE, i, i * MTU, MTU) for i in range(1, n - 1)] +
            [(LAST, n - 1, (n - 1) * MTU, length - (n - 1) * MTU)])


def full_mtu(*ops):
    """Packets of a full MTU each, the i-th at PSN offset i."""
    return [(op, i, i * MTU, MTU) for i, op in enumerate(ops)]


# case -> function(length of this request) -> answers, one per request
# (each built from the length of the request it answers).
SCRIPTS = {
    "right": lambda n: [right(n)],
    "only_long": lambda n: [[(ONLY, 0, 0, n + 4)]],
    "only_short": lambda n: [[(ONLY, 0, 0, n - 4)]],
    "only_empty": lambda n: [[(ONLY, 0, 0, 0)]],
    "first_beyond": lambda n: [[(FIRST, 0, 0, MTU), (LAST, 1, MTU, 64)]],
    "first_short": lambda n: [[(FIRST, 0, 0, MTU - 24)]],
    "middle_short": lambda n: [full_mtu(FIRST) + [(MIDDLE, 1, MTU, MTU - 4)]],
    "last_long": lambda n: [full_mtu(FIRST, MIDDLE) + [(LAST, 2, 2 * MTU, n - 2 * MTU + 4)]],
    "last_short": lambda n: [full_mtu(FIRST, MIDDLE) + [(LAST, 2, 2 * MTU, n - 2 * MTU - 4)]],
    "middle_at_the_end": lambda n: [full_mtu(FIRST, MIDDLE, MIDDLE)],
    "extra_after_last": lambda n: [right(n) + [(MIDDLE, 3, 3 * MTU, MTU),
                                                (LAST, 4, 4 * MTU, 100)]],
    # The middle packet missing: the device asks again from there, and
    # gets a right answer to what it asked.
    "gap_then_rerequest": lambda n: [[p for i, p in enumerate(right(n)) if i != 1],
                                     right(n)],
    # A response for the PSN before the READ: not outstanding, dropped.
    "stale_psn_first": lambda n: [[(LAST, -1, 0, 952)] + right(n)],
    # An atomic's answer at the READ's PSN: dropped; the READ, not
    # answered, is asked for again after its local ACK timeout.
    "atomic_ack_for_read": lambda n: [[(ATOMIC_ACK, 0, 0, 0)], right(n)],
}


def pattern(offset, length):
    return bytes((k * 7 + 13) & 0xFF for k in range(offset, offset + length))


class Responder:
    def __init__(self, args, cases):
        self.gen = Gen(args)
        self.by_peer_qpn = {c["peer_qpn"]: c for c in cases}
        for c in cases:
            if c["name"] not in SCRIPTS:
                raise SystemExit("no script for case %r" % c["name"])
            c["requests"] = []
        self.dev, self.peer = (ipaddress.ip_address(a).packed for a in (args.dst4, args.src4))

    def packet(self, case, op, psn, data_offset, length):
        pad = -length % 4
        hdr = b""
        if op in (FIRST, LAST, ONLY, ATOMIC_ACK):
            hdr = struct.pack(">I", AETH_ACK | 1)
        if op == ATOMIC_ACK:
            hdr += struct.pack(">Q", 0x1122334455667788)
        bth = (struct.pack(">BBH", op, pad << 4, 0xFFFF) +
               struct.pack(">I", case["qpn"]) + struct.pack(">I", psn & 0xFFFFFF))
        return bth + hdr + pattern(data_offset, length) + bytes(pad)

    def answer(self, case, psn, va, length):
        reqs = case["requests"]
        first_va = reqs[0]["va"] if reqs else va
        reqs.append({"psn": psn, "va": va, "offset": va - first_va, "length": length})
        answers = SCRIPTS[case["name"]](length)
        base = va - first_va
        for op, dpsn, off, n in answers[min(len(reqs) - 1, len(answers) - 1)]:
            self.gen.send("answer", self.packet(case, op, psn + dpsn, base + off, n),
                          family=4)

    def read_request(self, frame):
        """(case, PSN, va, length) of a READ request to one of our QPs."""
        if len(frame) < 14 + 20 + 8 + 12 + 16 or frame[12:14] != b"\x08\x00":
            return None
        ip = frame[14:]
        ihl = (ip[0] & 0xF) * 4
        if ip[9] != 17 or ip[12:16] != self.dev or ip[16:20] != self.peer:
            return None
        if struct.unpack(">H", ip[ihl + 2:ihl + 4])[0] != ROCE_PORT:
            return None
        bth = ip[ihl + 8:ihl + 20]
        case = self.by_peer_qpn.get(int.from_bytes(bth[5:8], "big"))
        if bth[0] != READ_REQUEST or case is None:
            return None
        va, _, length = struct.unpack(">QII", ip[ihl + 20:ihl + 36])
        return case, int.from_bytes(bth[9:12], "big"), va, length

    def run(self, sniff_dev, stop, limit):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        sock.bind((sniff_dev, 0))
        sock.settimeout(0.2)
        print("ready", flush=True)
        start = time.monotonic()
        while not os.path.exists(stop) and time.monotonic() - start < limit:
            try:
                frame = sock.recv(256)
            except socket.timeout:
                continue
            req = self.read_request(frame)
            if req:
                self.answer(*req)


def main():
    ap = argparse.ArgumentParser()
    for a in ("cases", "sniff_dev", "src4", "dst4", "src6", "dst6", "stop"):
        ap.add_argument("--" + a.replace("_", "-"), required=True)
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("--seed", type=int, default=1)
    ap.set_defaults(live_dev=None)      # hostile_gen's Gen: no live QPs here
    args = ap.parse_args()
    with open(args.cases) as f:
        cases = json.load(f)["cases"]
    r = Responder(args, cases)
    r.run(args.sniff_dev, args.stop, args.limit)
    print(json.dumps({c["name"]: c["requests"] for c in cases}))


if __name__ == "__main__":
    main()

"""Hostile RoCE v2 packet generator for tests/guest/test_hostile_packets.py.

Sends COUNT bad packets, from one process through ordinary UDP sockets
(IPv4 and IPv6), at a device's UDP port 4791, and prints what it sent per
category as JSON.  Every packet is built here independently of
kernel/proto, ICRC included; the socket's IPv4/IPv6 header is known in
advance (unconnected, DF set: IP ID 0), so a correct ICRC can be computed
and a packet gets past the ICRC check to the parser and the transport.

Categories, and what the device must do with them:
  bad_icrc   any packet, ICRC wrong, or too short to carry one -> rx_icrc_errors
  malformed  correct ICRC, unparsable: truncated headers, bad PadCnt,
             unknown opcodes, TVer != 0, payload where none belongs,
             length not a multiple of 4                   -> rx_malformed
  no_qp      well formed, QPN that does not exist         -> rx_no_qp
  live       well formed, at the live QPs: every opcode, bad P_Keys,
             wrong transport, bad rkeys, addresses and lengths, oversized
             payloads, all with PSNs far outside the window the live
             connection uses, so that they must be dropped or answered
             without touching the transfer
  mutated    a packet of the categories above with 1-4 random bytes
             changed and the ICRC made correct again

With --in-window every packet is instead of category
  in_window  a request at a live RC QP with a PSN just after the last one
             its real peer sent (sniffed on --sniff-dev from --peer4),
             every SEND and WRITE opcode (so sequences break too), sent
             from --src4/--src6, addresses that are not the QP's peer
                                                          -> rx_dropped

With --cnp every packet is instead of category
  cnp        a CNP (BTH and 16 reserved bytes) at a live RC QP, over IPv4
             from --src4: from a stranger  -> rx_dropped
                          from the QP's peer -> taken (DCQCN's cut)

With --targets FILE every packet is instead of category
  at_RESET, at_INIT  any opcode at a QP of FILE (tools/early_qps.cpp)
             that is in RESET or INIT, its own transport's half the time,
             with its Q_Key or XRC SRQ half the time    -> rx_dropped
  at_RTR     the same at a QP in RTR, from the peer its AV names, half of
             them at the PSN it expects next: taken, refused or NAKed

    hostile_gen.py --src4 A --dst4 B --src6 A6 --dst6 B6 --live-dev DEV
                   --count N [--seed S]

The live QPs (the RTS RC QPs of DEV, and its GSI QP 1) and their PSNs are
read from `rdma resource show qp` in the initial namespace every
REFRESH packets, so a transfer may come and go while the flood runs.
"""
import argparse
import ipaddress
import json
import random
import socket
import struct
import subprocess
import time
import zlib

ROCE_PORT = 4791
SPORT = 49999
REFRESH = 5000
ETH_P_ALL = 3
IMM, RETH, AETH, ATMETH, ATMACK, DETH, IETH, FETH, XRCETH = (
    "imm", "reth", "aeth", "atmeth", "atmack", "deth", "ieth", "feth", "xrceth")
HDR_LEN = {IMM: 4, RETH: 16, AETH: 4, ATMETH: 28, ATMACK: 8, DETH: 8, IETH: 4, FETH: 4,
           XRCETH: 4}

# opcode -> (extension headers in wire order, carries payload, is request)
OPS = {}
for base in (0x00, 0x20):       # RC and UC share SEND and WRITE
    OPS.update({
        base + 0x00: ([], True, True), base + 0x01: ([], True, True),
        base + 0x02: ([], True, True), base + 0x03: ([IMM], True, True),
        base + 0x04: ([], True, True), base + 0x05: ([IMM], True, True),
        base + 0x06: ([RETH], True, True), base + 0x07: ([], True, True),
        base + 0x08: ([], True, True), base + 0x09: ([IMM], True, True),
        base + 0x0A: ([RETH], True, True), base + 0x0B: ([RETH, IMM], True, True),
    })
OPS.update({
    0x0C: ([RETH], False, True),
    0x0D: ([AETH], True, False), 0x0E: ([], True, False),
    0x0F: ([AETH], True, False), 0x10: ([AETH], True, False),
    0x11: ([AETH], False, False), 0x12: ([AETH, ATMACK], False, False),
    0x13: ([ATMETH], False, True), 0x14: ([ATMETH], False, True),
    0x16: ([IETH], True, True), 0x17: ([IETH], True, True),
    0x1C: ([FETH, RETH], False, True),          # FLUSH
    0x1D: ([RETH], True, True),                 # ATOMIC WRITE
    0x64: ([DETH], True, True), 0x65: ([DETH, IMM], True, True),
})
RC_OPS = [op for op in OPS if op < 0x20]
# XRC (transport 101b): RC's operations up to SEND_ONLY_INV, requests with
# an XRCETH naming the target's XRC SRQ right after the BTH.
for op in [o for o in RC_OPS if o <= 0x17]:
    hdrs, payload, is_req = OPS[op]
    OPS[0xA0 + op] = ([XRCETH] + hdrs if is_req else hdrs, payload, is_req)
CNP = 0x81
KNOWN = set(OPS) | {CNP}
UNKNOWN = [op for op in range(256) if op not in KNOWN]
AETH_SYNDROMES = [0x1F, 0x00, 0x20, 0x3F, 0x60, 0x61, 0x62, 0x63, 0x64, 0x7F,
                  0x9F]


class Gen:
    def __init__(self, args):
        self.rng = random.Random(args.seed)
        self.qkey = self.srqn = None
        self.live_dev = args.live_dev
        self.live = [(1, 0, 0)]
        self.rc_live_packets = 0
        self.sent = {}
        self.errors = 0
        self.paths = []
        for fam, src, dst in ((socket.AF_INET, args.src4, args.dst4),
                              (socket.AF_INET6, args.src6, args.dst6)):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET:
                s.setsockopt(socket.IPPROTO_IP, 10, 2)   # IP_MTU_DISCOVER=DO
            s.bind((src, SPORT))
            self.paths.append((s, fam == socket.AF_INET6,
                               ipaddress.ip_address(src).packed,
                               ipaddress.ip_address(dst).packed, dst))

    def refresh_live(self):
        """(qpn, rq_psn, sq_psn) of the device's RTS RC QPs, and QP 1."""
        out = subprocess.run(["nsenter", "-t", "1", "-n", "rdma", "-j",
                              "resource", "show", "qp", "link",
                              self.live_dev + "/1"],
                             capture_output=True, text=True).stdout
        qps = [q for q in json.loads(out or "[]")
               if q.get("type") == "RC" and q.get("state") == "RTS"]
        self.live = [(1, 0, 0)] + [(q["lqpn"], q.get("rq-psn", 0),
                                    q.get("sq-psn", 0)) for q in qps]

    # -- packet pieces ------------------------------------------------------
    def ext(self, kind, rkey, va, length):
        r = self.rng
        if kind == IMM or kind == IETH:
            return struct.pack(">I", r.getrandbits(32))
        if kind == FETH:    # any type and level, reserved bits included
            return struct.pack(">I", r.getrandbits(32))
        if kind == RETH:
            return struct.pack(">QII", va, rkey, length)
        if kind == AETH:
            return bytes([r.choice(AETH_SYNDROMES)]) + r.getrandbits(24).to_bytes(3, "big")
        if kind == ATMETH:
            return struct.pack(">QIQQ", va, rkey, r.getrandbits(64), r.getrandbits(64))
        if kind == ATMACK:
            return struct.pack(">Q", r.getrandbits(64))
        if kind == DETH:    # the target's Q_Key half of the time, if known
            qkey = self.qkey if self.qkey is not None and r.random() < 0.5 else r.getrandbits(32)
            return struct.pack(">II", qkey, r.getrandbits(24))
        if kind == XRCETH:  # the target's XRC SRQ half of the time, if known
            srqn = self.srqn if self.srqn is not None and r.random() < 0.5 else r.getrandbits(24)
            return struct.pack(">I", srqn)
        raise ValueError(kind)

    def bad_access(self):
        """(rkey, va, length): wrong keys, addresses, wrapping lengths."""
        r = self.rng
        return (r.choice([0, 0xFFFFFFFF, r.getrandbits(32)]),
                r.choice([0, (1 << 64) - 8, r.getrandbits(64), r.getrandbits(64) & ~7]),
                r.choice([0, 1, 0xFFFFFFFF, 0x80000000, r.getrandbits(32)]))

    def bth(self, op, qpn, psn, pad, pkey=0xFFFF, tver=0):
        r = self.rng
        b1 = (r.getrandbits(1) << 7) | (r.getrandbits(1) << 6) | (pad << 4) | tver
        return (struct.pack(">BBH", op, b1, pkey) + bytes([r.getrandbits(2) << 6])
                + qpn.to_bytes(3, "big") + bytes([r.getrandbits(1) << 7])
                + psn.to_bytes(3, "big"))

    def packet(self, op, qpn, psn, payload_len=None, pkey=0xFFFF):
        """A well-formed packet of opcode `op` (BTH..pad, no ICRC)."""
        hdrs, has_payload, _ = OPS[op]
        rkey, va, length = self.bad_access()
        if not has_payload:
            payload_len = 0
        elif payload_len is None:
            payload_len = self.rng.choice([0, 1, 3, 4, 64, 1023, 1024, 1025, 1400,
                                           self.rng.randrange(1400)])
        pad = -payload_len % 4
        body = b"".join(self.ext(h, rkey, va, length) for h in hdrs)
        return (self.bth(op, qpn, psn, pad, pkey) + body +
                self.rng.randbytes(payload_len) + bytes(pad))

    # -- categories ---------------------------------------------------------
    def far_psn(self, base):
        """A PSN 2^22 +- 2^21 away from base: never in the live window."""
        d = (1 << 22) + self.rng.randrange(-(1 << 21), 1 << 21)
        return (base + self.rng.choice([d, -d])) & 0xFFFFFF

    def live_packet(self):
        r = self.rng
        qpn, rq_psn, sq_psn = r.choice(self.live)
        if qpn != 1:
            self.rc_live_packets += 1
        op = r.choice(list(OPS))
        is_req = OPS[op][2]
        psn = self.far_psn(rq_psn if is_req else sq_psn)
        pkey = 0xFFFF if r.random() < 0.9 else r.choice([0, 0x7FFE, 0x1234])
        return self.packet(op, qpn, psn, pkey=pkey)

    def sniff(self, sock, peer, dst):
        """Reads what the sniffer caught: {qpn: last PSN} of the requests
        the real peer sent to dst."""
        while True:
            try:
                frame = sock.recv(128)
            except BlockingIOError:
                return
            if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b"\x08\x00":
                continue
            ip = frame[14:]
            ihl = (ip[0] & 0xF) * 4
            if ip[9] != 17 or ip[12:16] != peer or ip[16:20] != dst:
                continue
            if struct.unpack(">H", ip[ihl + 2:ihl + 4])[0] != ROCE_PORT:
                continue
            bth = ip[ihl + 8:ihl + 20]
            if bth[0] in OPS and bth[0] < 0x20 and OPS[bth[0]][2]:
                self.window[int.from_bytes(bth[5:8], "big")] = (
                    int.from_bytes(bth[9:12], "big"), time.monotonic())

    def run_in_window(self, count, sniff_dev, peer4, dst4):
        """Only in-window packets; returns the seconds it took."""
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                             socket.htons(ETH_P_ALL))
        sock.bind((sniff_dev, 0))
        sock.setblocking(False)
        peer, dst = (ipaddress.ip_address(a).packed for a in (peer4, dst4))
        self.window = {}
        r = self.rng
        start = time.monotonic()
        sent = 0
        while sent < count and time.monotonic() - start < 600:
            self.sniff(sock, peer, dst)
            # Only QPs that are live now: a finished transfer's QP is gone.
            now = time.monotonic()
            live = [q for q, (_, seen) in self.window.items() if now - seen < 0.2]
            if not live:
                time.sleep(0.01)
                continue
            qpn = r.choice(live)
            psn = (self.window[qpn][0] + r.randrange(1, 4)) & 0xFFFFFF
            op = r.choice([o for o in RC_OPS if o <= 0x0B])
            self.rc_live_packets += 1
            self.send("in_window", self.packet(op, qpn, psn,
                                               payload_len=r.choice([0, 4, 64, 1024])))
            sent += 1
        return time.monotonic() - start

    def no_qp_packet(self):
        r = self.rng
        qpn = r.randrange(0x800000, 0xFFFFFF)   # sroce allocates from 16 up
        return self.packet(r.choice(list(OPS)), qpn, r.getrandbits(24))

    def any_packet(self):
        return self.live_packet() if self.rng.random() < 0.5 else self.no_qp_packet()

    def malformed_packet(self):
        r = self.rng
        qpn = r.choice(self.live)[0] if r.random() < 0.5 else r.getrandbits(24)
        how = r.randrange(6)
        if how == 0:        # headers cut short
            op = r.choice([o for o in OPS if OPS[o][0]])
            p = self.packet(op, qpn, r.getrandbits(24), payload_len=0)
            return p[:r.randrange(12, len(p))]
        if how == 1:        # PadCnt without (enough) payload
            op = r.choice(list(OPS))
            p = bytearray(self.packet(op, qpn, r.getrandbits(24), payload_len=0))
            p[1] |= r.randrange(1, 4) << 4
            return bytes(p)
        if how == 2:        # no such opcode
            return (self.bth(r.choice(UNKNOWN), qpn, r.getrandbits(24), 0) +
                    r.randbytes(4 * r.randrange(0, 20)))
        if how == 3:        # transport version != 0
            return (self.bth(r.choice(list(OPS)), qpn, r.getrandbits(24), 0,
                             tver=r.randrange(1, 16)) + bytes(32))
        if how == 4:        # payload after a payload-less header
            op = r.choice([o for o in OPS if not OPS[o][1]])
            return self.packet(op, qpn, r.getrandbits(24)) + r.randbytes(4 * r.randrange(1, 64))
        op = r.choice([o for o in OPS if OPS[o][1]])   # unaligned length
        return self.packet(op, qpn, r.getrandbits(24), payload_len=8) + r.randbytes(r.randrange(1, 4))

    def mutated_packet(self):
        p = bytearray(self.any_packet())
        for _ in range(self.rng.randrange(1, 5)):
            i = self.rng.randrange(min(len(p), 44))   # BTH and the headers
            p[i] = self.rng.getrandbits(8)
        return bytes(p)

    # -- wire -------------------------------------------------------------
    def icrc(self, ipv6, src, dst, roce):
        """ICRC of UDP payload `roce` (BTH..pad) as the socket sends it."""
        udp_len = 8 + len(roce) + 4
        if ipv6:
            ip = (b"\x6f\xff\xff\xff" + struct.pack(">HBB", udp_len, 17, 0xFF) +
                  src + dst)
        else:
            ip = (struct.pack(">BBHHHBBH", 0x45, 0xFF, 20 + udp_len, 0, 0x4000,
                              0xFF, 17, 0xFFFF) + src + dst)
        udp = struct.pack(">HHHH", SPORT, ROCE_PORT, udp_len, 0xFFFF)
        bth = bytearray(roce)
        bth[4] = 0xFF
        crc = zlib.crc32(b"\xff" * 8 + ip + udp + bytes(bth))
        return struct.pack("<I", crc)

    def send(self, category, roce, good_icrc=True, family=None):
        """Sends over a random path, or over IPv4 (family 4) or IPv6 (6)."""
        paths = [p for p in self.paths if family is None or p[1] == (family == 6)]
        sock, ipv6, src, dst, dst_str = self.rng.choice(paths)
        if good_icrc:
            wire = roce + self.icrc(ipv6, src, dst, roce)
        elif len(roce) >= 12 and self.rng.random() < 0.9:
            icrc = bytearray(self.icrc(ipv6, src, dst, roce))
            icrc[self.rng.randrange(4)] ^= 1 << self.rng.randrange(8)
            wire = roce + bytes(icrc)
        else:                       # shorter than BTH + ICRC
            wire = roce[:self.rng.randrange(0, 16)]
        try:
            sock.sendto(wire, (dst_str, ROCE_PORT))
        except OSError:
            self.errors += 1
            return
        key = category + ("6" if ipv6 else "4")
        self.sent[key] = self.sent.get(key, 0) + 1

    def run_targets(self, count, targets):
        """Packets only at the QPs of `targets` (early_qps' JSON: QPs in
        RESET, INIT and RTR, XRC receive QPs): any opcode, half of them of
        the QP's own transport.  A QP in RTR gets its packets over the
        family its AV names, from the peer it names (--src4/--src6), half
        of them with PSNs among its first 16 (it expects 0 first), so that
        some come in order and are taken."""
        r = self.rng
        self.qkey, self.srqn = targets["qkey"], targets["srqn"]
        own = {"RC": [o for o in OPS if o < 0x20],
               "UC": [o for o in OPS if 0x20 <= o < 0x40],
               "UD": [o for o in OPS if 0x60 <= o < 0x80],
               "XRC": [o for o in OPS if 0xA0 <= o < 0xC0]}
        start = time.monotonic()
        for _ in range(count):
            t = r.choice(targets["qps"])
            op = r.choice(own[t["type"]] if r.random() < 0.5 else list(OPS))
            state, family = t["state"], None
            psn = r.getrandbits(24)
            if state.startswith("RTR"):
                family = int(state[3:])
                if r.random() < 0.5:
                    psn = r.randrange(16)
            self.send("at_" + state.rstrip("46"), self.packet(op, t["qpn"], psn),
                      family=family)
        return time.monotonic() - start

    def run_cnps(self, count):
        """Only CNPs, at the live RC QPs, over IPv4."""
        r = self.rng
        start = time.monotonic()
        sent, rc = 0, []
        # Between two transfers no RC QP lives: wait for the next one.
        while sent < count and time.monotonic() - start < 600:
            if sent % 50 == 0 or not rc:
                self.refresh_live()
                rc = [q for q in self.live if q[0] != 1]
            if not rc:
                time.sleep(0.05)
                continue
            self.rc_live_packets += 1
            self.send("cnp", self.bth(CNP, r.choice(rc)[0], 0, 0) + bytes(16), family=4)
            sent += 1
        return time.monotonic() - start

    def run(self, count):
        weights = [("bad_icrc", 0.15), ("malformed", 0.2), ("no_qp", 0.15),
                   ("live", 0.35), ("mutated", 0.15)]
        start = time.monotonic()
        for i in range(count):
            if i % REFRESH == 0:
                self.refresh_live()
            x, cat = self.rng.random(), None
            for cat, w in weights:
                if x < w:
                    break
                x -= w
            if cat == "bad_icrc":
                self.send(cat, self.any_packet(), good_icrc=False)
            elif cat == "malformed":
                self.send(cat, self.malformed_packet())
            elif cat == "no_qp":
                self.send(cat, self.no_qp_packet())
            elif cat == "live":
                self.send(cat, self.live_packet())
            else:
                self.send(cat, self.mutated_packet())
        return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    for a in ("src4", "dst4", "src6", "dst6", "live_dev"):
        ap.add_argument("--" + a.replace("_", "-"), required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--in-window", action="store_true")
    ap.add_argument("--cnp", action="store_true")
    ap.add_argument("--sniff-dev")
    ap.add_argument("--peer4")
    ap.add_argument("--targets", help="early_qps' JSON: packets only at those QPs")
    args = ap.parse_args()
    g = Gen(args)
    if args.targets:
        with open(args.targets) as f:
            seconds = g.run_targets(args.count, json.load(f))
    elif args.cnp:
        seconds = g.run_cnps(args.count)
    elif args.in_window:
        seconds = g.run_in_window(args.count, args.sniff_dev, args.peer4, args.dst4)
    else:
        seconds = g.run(args.count)
    print(json.dumps({"sent": g.sent, "send_errors": g.errors,
                      "at_live_rc_qps": g.rc_live_packets,
                      "seconds": round(seconds, 1)}))


if __name__ == "__main__":
    main()

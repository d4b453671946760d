#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the fuzz seed corpus: one valid RoCE v2 UDP payload (BTH..ICRC)
per file, covering every extension header.  Encoded here independently of
kernel/proto so the seeds double as a second opinion on the wire format.
The ICRC trailer is a placeholder: there is no IP header to cover.

Usage: gen_corpus.py [OUTDIR]   (default: corpus/ next to this script)
"""
import os
import struct
import sys


def bth(op, psn, qpn=0x12, pad=0, se=0, mig=0, pkey=0xFFFF, becn=0, ack=0):
    b1 = (se << 7) | (mig << 6) | (pad << 4)  # TVer 0
    return struct.pack(">BBHB", op, b1, pkey, becn << 6) + \
        qpn.to_bytes(3, "big") + bytes([ack << 7]) + psn.to_bytes(3, "big")


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def aeth(syndrome, msn):
    return bytes([syndrome]) + msn.to_bytes(3, "big")


def atmeth(va, rkey, swap_add, compare):
    return struct.pack(">QIQQ", va, rkey, swap_add, compare)


def feth(placement, selectivity):
    return struct.pack(">I", (selectivity & 3) << 4 | (placement & 0xF))


def deth(qkey, src_qpn):
    return struct.pack(">IB", qkey, 0) + src_qpn.to_bytes(3, "big")


def packet(hdrs, payload=b""):
    pad = -len(payload) % 4
    return hdrs + payload + bytes(pad) + b"\xde\xad\xbe\xef"


def padded_bth(op, psn, payload, **kw):
    return bth(op, psn, pad=-len(payload) % 4, **kw)


SEEDS = {}
p = b"hello"
SEEDS["rc_send_only"] = packet(padded_bth(0x04, 0xFFFFFF, p, ack=1), p)
p = bytes(range(256))
SEEDS["rc_send_first"] = packet(bth(0x00, 1), p)
p = b"imm!x"
SEEDS["rc_send_only_imm"] = packet(
    padded_bth(0x05, 2, p, se=1) + b"\x01\x02\x03\x04", p)
p = b"inv"
SEEDS["rc_send_only_inv"] = packet(
    padded_bth(0x17, 3, p) + struct.pack(">I", 0xABCD), p)
p = b"0123456789abcdef"
SEEDS["rc_write_only_imm"] = packet(
    bth(0x0B, 4, ack=1) + reth(0x7F0000001000, 0x1234, 16) +
    b"\xca\xfe\xba\xbe", p)
SEEDS["rc_read_req"] = packet(bth(0x0C, 5) + reth(0x1000, 0x42, 65536))
p = b"r" * 64
SEEDS["rc_read_resp_first"] = packet(bth(0x0D, 5) + aeth(0x1F, 7), p)
SEEDS["rc_ack"] = packet(bth(0x11, 9) + aeth(0x00, 1))
SEEDS["rc_nak_seq"] = packet(bth(0x11, 9) + aeth(0x60, 1))
SEEDS["rc_rnr_nak"] = packet(bth(0x11, 9) + aeth(0x2E, 1))
SEEDS["rc_cmp_swap"] = packet(
    bth(0x13, 10, ack=1) + atmeth(0x2000, 0x77, 1, 0))
SEEDS["rc_atomic_ack"] = packet(
    bth(0x12, 10) + aeth(0x00, 2) + struct.pack(">Q", 0x1122334455667788))
# RDMA FLUSH (IBTA 1.5): global visibility of a range, and of a whole MR.
SEEDS["rc_flush_range"] = packet(
    bth(0x1C, 12, ack=1) + feth(1, 0) + reth(0x3000, 0x99, 4096))
SEEDS["rc_flush_mr"] = packet(
    bth(0x1C, 13, ack=1) + feth(1, 1) + reth(0, 0x99, 0))
# XRC (IBTA A14): an XRCETH (reserved byte, 24-bit SRQ number) after the
# BTH of every request; responses are RC's renumbered.
p = b"xrc send"
SEEDS["xrc_send_only"] = packet(
    padded_bth(0xA4, 14, p, ack=1) + struct.pack(">I", 0x000123), p)
p = b"w" * 32
SEEDS["xrc_write_first"] = packet(
    bth(0xA6, 15) + struct.pack(">I", 0xFF000001) + reth(0x4000, 0x55, 4096), p)
SEEDS["xrc_fetch_add"] = packet(
    bth(0xB4, 16, ack=1) + struct.pack(">I", 7) + atmeth(0x5000, 0x66, 3, 0))
SEEDS["xrc_ack"] = packet(bth(0xB1, 16) + aeth(0x00, 3))
# scapy's UC example (test/contrib/roce.uts): migreq, padcount 2.
SEEDS["uc_send_only_scapy"] = bytes.fromhex(
    "2460ffff000000d300cf1710"
    "4630818be28935d90e9a95505401be885e500000"
    "78f353f3")
p = b"ud datagram"
SEEDS["ud_send_only_imm"] = packet(
    padded_bth(0x65, 11, p, qpn=1) + deth(0x80010000, 0x1234) +
    b"\x00\x00\x00\x2a", p)
# ConnectX-4 Lx CNP capture (same scapy test file).
SEEDS["cnp_connectx4"] = bytes.fromhex(
    "8100ffff400001180000000000000000000000000000000000000000"
    "82fd002a")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        assert len(data) % 4 == 0, name
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Seeds for fuzz_access from real request packets.

Reads RoCE v2 UDP payloads (BTH..ICRC, one per file: the parse corpus, or
packets captured from a guest's traffic by capture_roce.py) and, for every
READ, WRITE, atomic or FLUSH request among them, writes inputs for fuzz_access
(layout in fuzz_access.c): the request's own RETH/AtomicETH against MRs
that fit it exactly, miss it by one byte at either end, sit at the top of
the address space, lack the right, belong to another PD or are invalid.

Usage: access_seeds.py OUTDIR PACKET_DIR...
"""
import hashlib
import os
import struct
import sys

# BTH opcode (low 5 bits, RC 0x00.. / UC 0x20..) -> fuzz_access kind
# (byte 0: FLUSH is bit 6, whatever the low bits).
READ, WRITE, ATOMIC, FLUSH = 0, 1, 2, 64
REQUESTS = {0x06: WRITE, 0x0A: WRITE, 0x0B: WRITE, 0x0C: READ,
            0x13: ATOMIC, 0x14: ATOMIC, 0x1C: FLUSH}
# Byte 1: the MR's rights (FLUSH_GLOBAL is bit 4 there).
RIGHT = {READ: 4, WRITE: 2, ATOMIC: 8, FLUSH: 0x10}
EXT_LEN = {READ: 16, WRITE: 16, ATOMIC: 28, FLUSH: 20}
BTH_LEN = 12


def requests(packet):
    """(kind, va, length, ext_header_bytes) of a request packet, or None."""
    if len(packet) < BTH_LEN + 4:
        return None
    op = packet[0]
    if op >> 5 not in (0, 1) or (op & 0x1F) not in REQUESTS:
        return None
    kind = REQUESTS[op & 0x1F]
    ext = packet[BTH_LEN:BTH_LEN + EXT_LEN[kind]]
    if len(ext) < EXT_LEN[kind]:
        return None
    reth = ext[4:] if kind == FLUSH else ext   # FLUSH: FETH, then RETH
    va = struct.unpack(">Q", reth[:8])[0]
    length = 8 if kind == ATOMIC else struct.unpack(">I", reth[12:16])[0]
    return kind, va, length, ext


def seeds(kind, va, length, ext):
    right = RIGHT[kind]
    top = (1 << 64) - 1
    mrs = [  # (flags, rights, iova, length)
        (0, right, va, length),                      # exact fit
        (0, 0x3F, va - 4096 & top, length + 8192),    # roomy
        (0, right, va + 1 & top, length),            # starts one late
        (0, right, va, max(length - 1, 0)),           # ends one early
        (0, right, top - 4095, 4096),                 # top of the space
        (0, 0x3F & ~right, va, length),               # right missing
        (4, right, va, length),                       # another PD
        (8, right, va, length),                       # invalidated
        (16, right, va, length),                      # no MR for the key
    ]
    for flags, rights, iova, mlen in mrs:
        yield (bytes([kind | flags, rights]) + struct.pack(">QQ", iova, mlen)
               + ext)


def main(out, dirs):
    os.makedirs(out, exist_ok=True)
    n = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), "rb") as f:
                req = requests(f.read())
            if not req:
                continue
            for seed in seeds(*req):
                h = hashlib.sha1(seed).hexdigest()[:16]
                with open(os.path.join(out, h), "wb") as f:
                    f.write(seed)
                n += 1
    print("wrote %d seeds to %s" % (n, out))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])

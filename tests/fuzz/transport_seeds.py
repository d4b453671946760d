#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Seeds for fuzz_transport (layout in fuzz_transport.c): programs of
4-byte operations shaped like real traffic, so the fuzzer starts from
states that matter: streams of SENDs with their ACKs, READs overtaken by
ACKs, losses with rewinds, duplicate READs and atomics at the responder.

Usage: transport_seeds.py OUTDIR
"""
import os
import random
import sys

import seedfiles

POST, SEND, ACK, FIND, SEEK, READ_REQ, ATOMIC_REQ, DUP = range(8)


def op(code, arg=0):
    return bytes([code, arg >> 16 & 0xff, arg >> 8 & 0xff, arg & 0xff])


def post(length, rd_atomic=False):
    return op(POST, length | (0x800000 if rd_atomic else 0))


def ack(ahead):
    """An ACK `ahead` PSNs past comp_psn (0: the next one; -1: a repeat)."""
    return op(ACK, (ahead + 0x80) & 0xff)


def programs():
    yield b"".join([post(100), op(SEND), ack(0)])
    yield b"".join([post(3000), op(SEND), ack(5), ack(11)])
    yield b"".join([post(8), post(600, True), post(8), op(SEND), op(SEND),
                    op(SEND), ack(4), op(FIND, 2), op(SEEK)])
    yield b"".join([post(1000), post(1000), op(SEND), op(SEND), ack(1),
                    op(SEEK), op(SEND), ack(7)])
    yield b"".join([post(16000)] * 16 + [op(SEND)] * 16 + [ack(-1), ack(60)])
    yield b"".join([op(READ_REQ, 4 << 8 | 2000), op(ATOMIC_REQ, 4),
                    op(DUP, 3), op(DUP, 0), op(DUP, 0x800000)])
    yield b"".join([op(READ_REQ, 1 << 8 | 300)] * 10 + [op(DUP, 0x800000)] * 3 +
                   [op(READ_REQ, 3 << 8 | 5)])
    yield b"".join([op(ATOMIC_REQ, 3)] * 20 + [op(DUP, 1), op(DUP, 2)])
    rnd = random.Random(4791)
    for n in range(8):
        yield bytes(rnd.randrange(256) for _ in range(4 * rnd.randrange(8, 80)))


if __name__ == "__main__":
    seedfiles.write(sys.argv[1] if len(sys.argv) > 1 else
                    os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "corpus-transport"), programs())

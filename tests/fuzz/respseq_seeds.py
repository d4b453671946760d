#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Seeds for fuzz_respseq (layout in fuzz_respseq.c): request streams
shaped like real traffic, RC and UC, so the fuzzer starts from states
that matter: multi-packet messages, a lost packet, duplicates after a
lost ACK, READs that take several PSNs, a stream across the PSN wrap.

Usage: respseq_seeds.py [OUTDIR]
"""
import os
import sys

import seedfiles

# indices into fuzz_respseq.c's ops[]
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY = 0, 1, 2, 3, 4
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 6, 7, 8, 10
READ, CMP_SWAP, FETCH_ADD = 12, 13, 14


def head(rc, epsn):
    return bytes([1 if rc else 0, epsn >> 16 & 0xff, epsn >> 8 & 0xff, epsn & 0xff])


def req(op, off=0, how=0):
    """A request `off` PSNs from the ePSN of the moment."""
    return bytes([op, off & 0xff, how])


def message(first, middle, last, n):
    return [req(first)] + [req(middle)] * n + [req(last)]


def programs():
    for rc in (True, False):
        yield head(rc, 0) + b"".join(message(SEND_FIRST, SEND_MIDDLE, SEND_LAST, 3))
        yield head(rc, 0xfffffe) + b"".join(
            message(WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, 4) + [req(SEND_ONLY)])
        # a packet lost in the middle of a SEND, then the rest resent
        yield head(rc, 100) + b"".join([req(SEND_FIRST), req(SEND_LAST, 1),
                                        req(SEND_LAST, 2), req(SEND_MIDDLE),
                                        req(SEND_LAST)])
        # a broken sequence at ePSN
        yield head(rc, 7) + b"".join([req(SEND_MIDDLE), req(SEND_LAST),
                                      req(WRITE_ONLY)])
        # a WRITE FIRST inside a SEND
        yield head(rc, 7) + b"".join([req(SEND_FIRST), req(WRITE_FIRST),
                                      req(WRITE_LAST)])
        # duplicates after a lost ACK
        yield head(rc, 0x400000) + b"".join([req(SEND_ONLY)] * 3 +
                                             [req(SEND_ONLY, -3), req(SEND_ONLY, -2),
                                              req(SEND_ONLY)])
        # an execution that fails
        yield head(rc, 55) + b"".join([req(SEND_FIRST, 0, 4), req(SEND_MIDDLE),
                                       req(SEND_ONLY)])
    # READs of several PSNs, a duplicate inside one, atomics
    yield head(True, 9) + b"".join([req(READ, 0, 3), req(READ, -2), req(CMP_SWAP),
                                    req(FETCH_ADD), req(CMP_SWAP, -1)])
    # far PSNs: half the space behind and ahead
    yield head(True, 0x10) + req(SEND_ONLY, -128) + bytes([0x80, 0x00, 0x10]) + \
        req(SEND_ONLY, -128) + bytes([0x80, 0x00, 0x11]) + req(SEND_ONLY)


if __name__ == "__main__":
    seedfiles.write(sys.argv[1] if len(sys.argv) > 1 else
                    os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "corpus-respseq"), programs())

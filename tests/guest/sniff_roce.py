#!/usr/bin/python3
"""Guest helper: records the RoCE v2 packets (UDP to port 4791, IPv4)
arriving on one interface for a while, as JSON lines on stdout.

    sniff_roce.py IFACE SECONDS

Each line: {"sport": UDP source port, "opcode": BTH opcode,
"payload": bytes after BTH and its extended headers, before the ICRC
(known opcodes only, else null), "icrc_ok": whether the ICRC is right,
computed here from the frame as IBTA A17 defines it, "xrc_srqn": the
XRCETH's SRQ number of an XRC request, else null}.  Prints "ready" on
stderr once the socket is bound, so a caller knows nothing is missed
after that.
"""
import json
import socket
import struct
import sys
import time
import zlib

ETH_P_IP = 0x0800
SO_RCVBUFFORCE = 33     # <asm-generic/socket.h>; python names it nowhere
ROCE_PORT = 4791
# Extended-header bytes after the 12-byte BTH, by opcode (UD: DETH).
EXT_HEADERS = {0x64: 8, 0x65: 12}   # UD SEND_ONLY, UD SEND_ONLY_IMM (+ImmDt)


# XRC requests (0xA0-0xB7 but the responses 0xAD-0xB2): an XRCETH, whose
# low 24 bits name the SRQ, right after the BTH.
XRC_RESPONSES = range(0xAD, 0xB3)


def xrc_srqn(bth):
    op = bth[0]
    if 0xA0 <= op <= 0xB7 and op not in XRC_RESPONSES and len(bth) >= 16:
        return int.from_bytes(bth[13:16], "big")
    return None


def icrc_ok(ip, udp):
    """RoCE v2 ICRC over IPv4 (IBTA A17.8): eight 1-bytes for the LRH, the
    IP header with TOS, TTL and checksum as 1s, the UDP header with its
    checksum as 1s, the BTH with its byte 4 (FECN, BECN, reserved) as 1s,
    then the rest, up to the ICRC, which is stored little-endian."""
    ihl = (ip[0] & 0xF) * 4
    hdr = bytearray(ip[:ihl])
    hdr[1] = 0xFF
    hdr[8] = 0xFF
    hdr[10:12] = b"\xff\xff"
    ulen = struct.unpack("!H", udp[4:6])[0]
    u = bytearray(udp[:ulen])
    if len(u) < 8 + 12 + 4:
        return False
    u[6:8] = b"\xff\xff"
    u[8 + 4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(hdr) + bytes(u[:-4]))
    return struct.pack("<I", crc) == bytes(u[-4:])


def parse(frame):
    if len(frame) < 14 + 20 or struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0xF) * 4
    if ip[9] != socket.IPPROTO_UDP:
        return None
    udp = ip[ihl:]
    sport, dport, ulen = struct.unpack("!HHH", udp[:6])
    if dport != ROCE_PORT:
        return None
    bth = udp[8:]
    opcode = bth[0]
    pad = (bth[1] >> 4) & 3
    ext = EXT_HEADERS.get(opcode)
    payload = None
    if ext is not None:
        payload = ulen - 8 - 12 - ext - pad - 4
    return {"sport": sport, "opcode": opcode, "payload": payload,
            "icrc_ok": icrc_ok(ip, udp), "xrc_srqn": xrc_srqn(bth)}


def main():
    iface, seconds = sys.argv[1], float(sys.argv[2])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    # Bursts of a window of packets come faster than python reads them
    # under TCG: room for them all (FORCE: root may exceed rmem_max).
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    s.bind((iface, 0))
    s.settimeout(0.2)
    print("ready", file=sys.stderr, flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            frame, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        p = parse(frame)
        if p:
            print(json.dumps(p), flush=True)


if __name__ == "__main__":
    main()

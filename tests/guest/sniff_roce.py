#!/usr/bin/python3
"""Guest helper: records the RoCE v2 packets (UDP to port 4791, IPv4)
arriving on one interface for a while, as JSON lines on stdout.

    sniff_roce.py IFACE SECONDS

Each line: {"sport": UDP source port, "opcode": BTH opcode,
"payload": bytes after BTH and its extended headers, before the ICRC
(known opcodes only, else null)}.  Prints "ready" on stderr once the
socket is bound, so a caller knows nothing is missed after that.
"""
import json
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
ROCE_PORT = 4791
# Extended-header bytes after the 12-byte BTH, by opcode (UD: DETH).
EXT_HEADERS = {0x64: 8, 0x65: 12}   # UD SEND_ONLY, UD SEND_ONLY_IMM (+ImmDt)


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
    return {"sport": sport, "opcode": opcode, "payload": payload}


def main():
    iface, seconds = sys.argv[1], float(sys.argv[2])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
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

# SPDX-License-Identifier: ISC
"""relay.py: what the tests' TCP relays share (tests/kernels/slowstdin.py,
tests/remote/keep.py, offloop.py, refuse.py): one direction of a
relayed connection, copied until either side ends, then both shut."""
import socket


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

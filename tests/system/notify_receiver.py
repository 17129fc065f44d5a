# A fake service manager's notification socket for the daemon system tests (daemon_lib.sh):
# binds the AF_UNIX datagram socket NOTIFY_SOCKET names (a path, or '@name' for an abstract
# one), then appends one line per datagram to OUT:
#
#   MONOTONIC_USEC SENDER_PID MESSAGE
#
# MONOTONIC_USEC is when it arrived (CLOCK_MONOTONIC, the clock of the MONOTONIC_USEC= the
# daemon sends with RELOADING=1), SENDER_PID the kernel's word for the sender (SO_PASSCRED,
# as systemd's NotifyAccess=main checks it), and the message has its newlines shown as ';'.
# OUT is created only once the socket is bound, so its existence says "ready". It ends with
# the test script whose pid OWNER is, even if it was not told to (a python3 that is a version
# manager's shim forks the real interpreter, which a kill of the shim's pid would miss).
#
#   python3 notify_receiver.py SOCKET OUT OWNER
import os
import socket
import struct
import sys
import time


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


path, out, owner = sys.argv[1], sys.argv[2], int(sys.argv[3])
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
sock.bind("\0" + path[1:] if path.startswith("@") else path)
sock.settimeout(1.0)
with open(out, "a", encoding="utf-8") as notes:
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(struct.calcsize("3i")))
        except socket.timeout:
            if not alive(owner):
                break
            continue
        arrived = time.monotonic_ns() // 1000
        pid = 0
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", payload[: struct.calcsize("3i")])[0]
        text = data.decode("utf-8", "backslashreplace").replace("\n", ";")
        notes.write(f"{arrived} {pid} {text}\n")
        notes.flush()

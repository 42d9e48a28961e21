"""Which loopback ports a rank's server can listen on (no TensorFlow here: the launcher stays light)."""
import errno
import random
import socket


def port_is_free(port):
    """True when a server could listen on `port` now (connections of an earlier job still closing do not count,
    as gRPC's own socket reuses the address)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind(("", port))
        return True
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        return False
    finally:
        probe.close()


def free_base_port(size, first=20000, last=60000):
    """A port p in [first, last) such that servers could listen on p .. p+size-1 now.

    The search starts at a random port and wraps around: jobs started at the same moment (two CI runs, two test
    sessions) then rarely race for the same range between this check and their servers' start.
    """
    span = last - size - first + 1
    if span <= 0:
        raise RuntimeError(f"npu-run: no {size} consecutive ports between {first} and {last}")
    start = random.randrange(span)
    offset = 0
    while offset < span:
        port = first + (start + offset) % span
        taken = next((i for i in range(size) if not port_is_free(port + i)), None)
        if taken is None:
            return port
        offset += taken + 1
    raise RuntimeError(f"npu-run: no {size} consecutive free ports between {first} and {last}")

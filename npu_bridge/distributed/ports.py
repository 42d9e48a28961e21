"""Which loopback ports a rank's server can listen on (no TensorFlow here: the launcher stays light)."""
import errno
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
    """The first port p >= first such that servers could listen on p .. p+size-1 now."""
    port = first
    while port + size <= last:
        taken = next((offset for offset in range(size) if not port_is_free(port + offset)), None)
        if taken is None:
            return port
        port += taken + 1
    raise RuntimeError(f"npu-run: no {size} consecutive free ports between {first} and {last}")

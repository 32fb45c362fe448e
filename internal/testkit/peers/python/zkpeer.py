#!/usr/bin/python3
"""zkpeer.py runs a command under a Kazoo lock recipe. It is the "Kazoo
client" of zklock's interoperability tests and benchmarks.

  zkpeer.py --servers HOSTS --path P [--kind mutex|read|write|semaphore]
            [--limit N] [--session-timeout-ms MS] [--repeat K] [--data TEXT]
            -- CMD [ARGS...]

Each of the K repeats acquires the lock at P, runs CMD with inherited stdio,
waits for it and releases the lock; all repeats share one session. The
recipes are Kazoo's own: Lock (mutex), ReadLock (read) and WriteLock (write).
--data is the recipe's identifier, which Kazoo writes as the node's data.

--kind semaphore is refused (exit 2): Kazoo's Semaphore keeps its leases as
plain children of P and its lock in the sibling node "P-__lock__", which
neither Curator's InterProcessSemaphoreV2 (P/locks, P/leases) nor zklock
--limit would see.

Kazoo before 2.9 has a read-lock deadlock (python-zk/kazoo#649): a ReadLock
waits for every write-lock node, even those queued after its own, while such
a writer waits for the reader. Against those versions the read lock here
waits only for writers with a lower sequence number, which is the ZooKeeper
shared-lock recipe and what Kazoo does since 2.9.

Exit status: CMD's status from the last repeat (128+N if a signal killed it,
127 if it was not found, 126 if it could not be run), 2 for a usage error,
69 if no session could be established, 70 if a lock operation failed. On
SIGTERM, SIGINT or SIGHUP the runner passes the signal to CMD, or, while
waiting for the lock, closes its session (so its node goes at once) and
exits 128+N.
"""

import logging
import os
import signal
import subprocess
import sys

EXIT_USAGE = 2
EXIT_UNAVAILABLE = 69
EXIT_SOFTWARE = 70

CONNECT_TIMEOUT_S = 15.0

USAGE = (
    "usage: zkpeer.py --servers HOSTS --path P [--kind mutex|read|write|semaphore] [--limit N]\n"
    "                 [--session-timeout-ms MS] [--repeat K] [--data TEXT] -- CMD [ARGS...]"
)

FLAGS = ("--servers", "--path", "--kind", "--limit", "--session-timeout-ms", "--repeat", "--data")


class UsageError(Exception):
    pass


def parse_int(flag, value, minimum):
    try:
        n = int(value, 10)
    except ValueError:
        raise UsageError("%s: not a number: %s" % (flag, value))
    if n < minimum:
        raise UsageError("%s: must be at least %d, got %d" % (flag, minimum, n))
    return n


def parse(argv):
    opts = {
        "servers": None,
        "path": None,
        "kind": "mutex",
        "limit": 1,
        "session_timeout_ms": 10000,
        "repeat": 1,
        "data": None,
    }
    kind_set = limit_set = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("--"):
            raise UsageError("unexpected argument %s (the command goes after --)" % arg)
        flag, eq, value = arg.partition("=")
        if flag not in FLAGS:
            raise UsageError("unknown flag %s" % flag)
        if not eq:
            if i + 1 >= len(argv):
                raise UsageError("%s needs a value" % flag)
            i += 1
            value = argv[i]
        if flag == "--kind":
            opts["kind"], kind_set = value, True
        elif flag == "--limit":
            opts["limit"], limit_set = parse_int(flag, value, 1), True
        elif flag == "--session-timeout-ms":
            opts["session_timeout_ms"] = parse_int(flag, value, 1)
        elif flag == "--repeat":
            opts["repeat"] = parse_int(flag, value, 1)
        else:
            opts[flag[2:]] = value
        i += 1
    opts["command"] = argv[i:]

    if not opts["servers"]:
        raise UsageError("--servers is required")
    path = opts["path"]
    if not path or not path.startswith("/") or path == "/" or path.endswith("/"):
        raise UsageError("--path must be an absolute ZooKeeper path below /, got %s" % path)
    if limit_set and not kind_set:
        opts["kind"] = "semaphore"
    kind = opts["kind"]
    if kind in ("mutex", "read", "write"):
        if limit_set:
            raise UsageError("--limit applies only to --kind semaphore")
    elif kind == "semaphore":
        raise UsageError(
            "--kind semaphore: Kazoo's Semaphore does not interoperate (its leases are "
            "children of the path and its lock is the sibling node %s-__lock__, not "
            "Curator's %s/locks and %s/leases)" % (path, path, path)
        )
    else:
        raise UsageError("--kind must be mutex, read, write or semaphore, got %s" % kind)
    if not opts["command"]:
        raise UsageError("no command given (put it after --)")
    return opts


def kazoo_version():
    from kazoo.version import __version__

    parts = []
    for p in __version__.split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def read_lock_class():
    """Kazoo's ReadLock, with the lower-sequence rule on Kazoo < 2.9."""
    from kazoo.recipe.lock import ReadLock
    from kazoo.retry import ForceRetryError

    if kazoo_version() >= (2, 9):
        return ReadLock

    class SequencedReadLock(ReadLock):
        def _get_predecessor(self, node):
            # Our node is "<uuid hex>__rlock__<seq>"; the writers that block us
            # are the "__lock__" nodes (self._contenders_re) created before it.
            children = self.client.get_children(self.path)
            if node not in children:
                # Our ephemeral node is gone (session trouble): let Kazoo's
                # retry loop find or recreate it, as Kazoo itself does.
                raise ForceRetryError()
            ours = int(node[len(self.prefix):])
            best, best_seq = None, None
            for child in children:
                m = self._contenders_re.search(child)
                if m is None:
                    continue
                seq = int(m.group(1))
                if seq < ours and (best_seq is None or seq > best_seq):
                    best, best_seq = child, seq
            return best

    return SequencedReadLock


def run_command(command, state):
    try:
        proc = subprocess.Popen(command)
    except FileNotFoundError as e:
        sys.stderr.write("zkpeer: %s: %s\n" % (command[0], e.strerror))
        return 127
    except OSError as e:
        sys.stderr.write("zkpeer: %s: %s\n" % (command[0], e.strerror))
        return 126
    state["child"] = proc
    try:
        rc = proc.wait()
    finally:
        state["child"] = None
    return 128 - rc if rc < 0 else rc


def main(argv):
    try:
        opts = parse(argv)
    except UsageError as e:
        sys.stderr.write("zkpeer: %s\n%s\n" % (e, USAGE))
        return EXIT_USAGE

    # Kazoo logs connection chatter through the logging module; without a
    # handler Python would print its warnings to stderr.
    log = logging.getLogger("kazoo")
    log.addHandler(logging.NullHandler())
    log.propagate = False

    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError
    from kazoo.recipe.lock import Lock, WriteLock

    client = KazooClient(hosts=opts["servers"], timeout=opts["session_timeout_ms"] / 1000.0)
    state = {"child": None}

    def on_signal(signum, frame):
        proc = state["child"]
        if proc is not None:
            proc.send_signal(signum)
            return
        # Not running the command: leave at once. Closing the session deletes
        # our node now rather than when the session would time out.
        try:
            client.stop()
            client.close()
        finally:
            os._exit(128 + signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, on_signal)

    try:
        client.start(timeout=CONNECT_TIMEOUT_S)
    except KazooTimeoutError:
        sys.stderr.write("zkpeer: no session with %s within %gs\n" % (opts["servers"], CONNECT_TIMEOUT_S))
        return EXIT_UNAVAILABLE
    try:
        cls = {"mutex": Lock, "write": WriteLock, "read": read_lock_class()}[opts["kind"]]
        lock = cls(client, opts["path"], opts["data"])
        code = 0
        for _ in range(opts["repeat"]):
            try:
                lock.acquire()
            except Exception as e:
                sys.stderr.write("zkpeer: acquiring %s lock %s: %r\n" % (opts["kind"], opts["path"], e))
                return EXIT_SOFTWARE
            try:
                code = run_command(opts["command"], state)
            finally:
                try:
                    lock.release()
                except Exception as e:
                    sys.stderr.write("zkpeer: releasing %s lock %s: %r\n" % (opts["kind"], opts["path"], e))
                    return EXIT_SOFTWARE
        return code
    finally:
        client.stop()
        client.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

// ZkPeer runs a command under an Apache Curator lock recipe. It is the
// "Curator client" of zklock's interoperability tests and benchmarks.
//
//   ZkPeer --servers HOSTS --path P [--kind mutex|read|write|semaphore]
//          [--limit N] [--session-timeout-ms MS] [--repeat K] [--data TEXT]
//          [--revocable] -- CMD [ARGS...]
//   ZkPeer --servers HOSTS --revoke NODE
//
// --revocable makes a mutex, read or write lock revocable (Curator's
// makeRevocable): on a revocation request the runner stops CMD (SIGTERM),
// releases the lock and goes on (its exit status is then CMD's, 143).
// --revoke NODE asks the contender NODE to give up its place with
// Curator's Revoker.attemptRevoke and exits 0.
//
// Each of the K repeats acquires the lock at P, runs CMD with inherited
// stdio, waits for it and releases the lock; all repeats share one session.
// The recipes are Curator's own: InterProcessMutex (mutex),
// InterProcessReadWriteLock (read, write) and InterProcessSemaphoreV2 with N
// leases (semaphore). --data becomes the data of every node the client
// creates (Curator's default is the local IP address as text).
//
// Exit status: CMD's status from the last repeat (128+N if a signal killed
// it, 127 if it was not found, 126 if it could not be run), 2 for a usage
// error, 69 if no session could be established, 70 if a lock operation
// failed. On SIGTERM, SIGINT or SIGHUP the runner stops CMD, closes its
// session (so its node goes at once) and exits 128+N.

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class ZkPeer {
    static final int EXIT_USAGE = 2;
    static final int EXIT_UNAVAILABLE = 69;
    static final int EXIT_SOFTWARE = 70;

    static final String USAGE =
        "usage: ZkPeer --servers HOSTS --path P [--kind mutex|read|write|semaphore] [--limit N]\n"
            + "              [--session-timeout-ms MS] [--repeat K] [--data TEXT] [--revocable] -- CMD [ARGS...]\n"
            + "       ZkPeer --servers HOSTS --revoke NODE";

    /** How long to wait for the first session. */
    static final int CONNECT_TIMEOUT_MS = 15000;

    private ZkPeer() {}

    static final class UsageException extends Exception {
        UsageException(String msg) {
            super(msg);
        }
    }

    static final class Options {
        String servers;
        String path;
        String kind = "mutex";
        boolean kindSet;
        int limit = 1;
        boolean limitSet;
        int sessionTimeoutMs = 10000;
        int repeat = 1;
        String data;
        boolean revocable;
        String revoke;
        List<String> command = new ArrayList<>();
    }

    /** A lock that can be taken and given back, whatever the recipe. */
    interface Held {
        void acquire() throws Exception;

        void release() throws Exception;
    }

    public static void main(String[] args) {
        int code;
        try {
            code = run(args);
        } catch (Throwable t) {
            System.err.println("zkpeer: " + t);
            code = EXIT_SOFTWARE;
        }
        System.out.flush();
        System.err.flush();
        if (stopping) {
            // A signal started the JVM's shutdown: let it finish (the hook
            // stops the command and closes the session) and exit 128+N.
            for (;;) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    // keep waiting
                }
            }
        }
        // halt, not exit: Curator's and ZooKeeper's threads have nothing
        // left to do once the client is closed, and halting skips the JVM's
        // slow orderly shutdown.
        Runtime.getRuntime().halt(code);
    }

    static int parseInt(String flag, String v, int min) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + ": not a number: " + v);
        }
        if (n < min) {
            throw new UsageException(flag + ": must be at least " + min + ", got " + n);
        }
        return n;
    }

    static Options parse(String[] args) throws UsageException {
        Options o = new Options();
        int i = 0;
        for (; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                i++;
                break;
            }
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument " + a + " (the command goes after --)");
            }
            if (a.equals("--revocable")) {
                o.revocable = true;
                continue;
            }
            String flag = a;
            String value = null;
            int eq = a.indexOf('=');
            if (eq >= 0) {
                flag = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            switch (flag) {
                case "--servers":
                case "--path":
                case "--kind":
                case "--limit":
                case "--session-timeout-ms":
                case "--repeat":
                case "--data":
                case "--revoke":
                    break;
                default:
                    throw new UsageException("unknown flag " + flag);
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException(flag + " needs a value");
                }
                value = args[++i];
            }
            switch (flag) {
                case "--servers":
                    o.servers = value;
                    break;
                case "--path":
                    o.path = value;
                    break;
                case "--kind":
                    o.kind = value;
                    o.kindSet = true;
                    break;
                case "--limit":
                    o.limit = parseInt(flag, value, 1);
                    o.limitSet = true;
                    break;
                case "--session-timeout-ms":
                    o.sessionTimeoutMs = parseInt(flag, value, 1);
                    break;
                case "--repeat":
                    o.repeat = parseInt(flag, value, 1);
                    break;
                case "--revoke":
                    o.revoke = value;
                    break;
                default:
                    o.data = value;
                    break;
            }
        }
        o.command.addAll(Arrays.asList(args).subList(i, args.length));
        if (o.servers == null || o.servers.isEmpty()) {
            throw new UsageException("--servers is required");
        }
        if (o.revoke != null) {
            if (!o.revoke.startsWith("/")) {
                throw new UsageException("--revoke must be a node's absolute path, got " + o.revoke);
            }
            return o;
        }
        if (o.path == null || !o.path.startsWith("/") || (o.path.length() > 1 && o.path.endsWith("/"))
                || o.path.equals("/")) {
            throw new UsageException("--path must be an absolute ZooKeeper path below /, got " + o.path);
        }
        if (o.limitSet && !o.kindSet) {
            o.kind = "semaphore";
        }
        switch (o.kind) {
            case "mutex":
            case "read":
            case "write":
                if (o.limitSet) {
                    throw new UsageException("--limit applies only to --kind semaphore");
                }
                break;
            case "semaphore":
                if (o.revocable) {
                    throw new UsageException("--revocable applies to mutex, read and write locks");
                }
                break;
            default:
                throw new UsageException("--kind must be mutex, read, write or semaphore, got " + o.kind);
        }
        if (o.command.isEmpty()) {
            throw new UsageException("no command given (put it after --)");
        }
        return o;
    }

    static Held recipe(CuratorFramework client, Options o) {
        switch (o.kind) {
            case "read":
            case "write": {
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, o.path);
                InterProcessMutex m = o.kind.equals("read") ? rw.readLock() : rw.writeLock();
                revocable(m, o);
                return new Held() {
                    public void acquire() throws Exception {
                        m.acquire();
                    }

                    public void release() throws Exception {
                        m.release();
                    }
                };
            }
            case "semaphore": {
                InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(client, o.path, o.limit);
                return new Held() {
                    Lease lease;

                    public void acquire() throws Exception {
                        lease = s.acquire();
                    }

                    public void release() throws Exception {
                        s.returnLease(lease);
                        lease = null;
                    }
                };
            }
            default: {
                InterProcessMutex m = new InterProcessMutex(client, o.path);
                revocable(m, o);
                return new Held() {
                    public void acquire() throws Exception {
                        m.acquire();
                    }

                    public void release() throws Exception {
                        m.release();
                    }
                };
            }
        }
    }

    /** The command running now, for the shutdown hook. */
    static volatile Process child;

    /** Set when the lock held now was revoked; cleared at each acquire. */
    static volatile boolean revoked;

    /**
     * With --revocable, a revocation stops the command; the main thread then
     * releases the lock (InterProcessMutex belongs to the thread that took it).
     */
    static void revocable(InterProcessMutex m, Options o) {
        if (!o.revocable) {
            return;
        }
        m.makeRevocable(lock -> {
            System.err.println("zkpeer: lock " + o.path + " revoked");
            revoked = true;
            Process p = child;
            if (p != null) {
                p.destroy();
            }
        });
    }

    /** Set once a signal has started the JVM's shutdown. */
    static volatile boolean stopping;

    static int runCommand(List<String> command) throws InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).inheritIO().start();
        } catch (IOException e) {
            String m = String.valueOf(e.getMessage());
            System.err.println("zkpeer: " + command.get(0) + ": " + m);
            return m.contains("error=2,") ? 127 : 126;
        }
        child = p;
        if (revoked) {
            p.destroy();
        }
        try {
            // For a command killed by signal N, waitFor returns 128+N.
            return p.waitFor();
        } finally {
            child = null;
        }
    }

    static int run(String[] args) throws Exception {
        Options o;
        try {
            o = parse(args);
        } catch (UsageException e) {
            System.err.println("zkpeer: " + e.getMessage());
            System.err.println(USAGE);
            return EXIT_USAGE;
        }
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
            .connectString(o.servers)
            .sessionTimeoutMs(o.sessionTimeoutMs)
            .connectionTimeoutMs(CONNECT_TIMEOUT_MS)
            .retryPolicy(new ExponentialBackoffRetry(100, 5));
        if (o.data != null) {
            // Every recipe creates its nodes with the client's default data.
            b.defaultData(o.data.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = b.build();
        // On SIGTERM, SIGINT or SIGHUP: stop the command, then close the
        // session, which deletes our node at once.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping = true;
            Process p = child;
            if (p != null) {
                p.destroy();
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    // close the session anyway
                }
            }
            client.close();
        }));
        client.start();
        try {
            if (!client.blockUntilConnected(CONNECT_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                System.err.println("zkpeer: no session with " + o.servers + " within " + CONNECT_TIMEOUT_MS + "ms");
                return EXIT_UNAVAILABLE;
            }
            if (o.revoke != null) {
                Revoker.attemptRevoke(client, o.revoke);
                return 0;
            }
            Held lock = recipe(client, o);
            int code = 0;
            for (int r = 0; r < o.repeat; r++) {
                revoked = false;
                try {
                    lock.acquire();
                } catch (Exception e) {
                    if (stopping) {
                        return EXIT_SOFTWARE;
                    }
                    System.err.println("zkpeer: acquiring " + o.kind + " lock " + o.path + ": " + e);
                    return EXIT_SOFTWARE;
                }
                code = runCommand(o.command);
                if (stopping) {
                    return code;
                }
                try {
                    lock.release();
                } catch (Exception e) {
                    System.err.println("zkpeer: releasing " + o.kind + " lock " + o.path + ": " + e);
                    return EXIT_SOFTWARE;
                }
            }
            return code;
        } finally {
            if (!stopping) {
                client.close();
            }
        }
    }
}

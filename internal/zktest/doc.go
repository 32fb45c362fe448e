// Package zktest starts real ZooKeeper servers for tests: a standalone
// server, a small quorum ensemble, a TCP proxy for fault injection, and
// helpers for ZooKeeper's four-letter-word admin commands. An ensemble
// started with Options.PeerProxies runs its server-to-server links through
// proxies, so that Cluster.Isolate can partition one server from the rest.
//
// Nothing in this package mocks ZooKeeper. If a Java runtime or the
// ZooKeeper jars cannot be found, or a server does not come up, the Start
// functions return an error that says what is missing; callers are expected
// to fail rather than skip, so a broken test machine is noticed.
//
// The API is usable from TestMain (no testing.TB needed) so a test package
// can share one server:
//
//	var cluster *zktest.Cluster
//
//	func TestMain(m *testing.M) {
//		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
//		c, err := zktest.StartStandalone(ctx, zktest.Options{})
//		cancel()
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		cluster = c
//		code := m.Run()
//		c.Stop()
//		os.Exit(code)
//	}
//
// Locating ZooKeeper: if ZOOKEEPER_HOME is set it must point at an Apache
// release layout ($ZOOKEEPER_HOME/lib/*.jar and $ZOOKEEPER_HOME/*.jar);
// otherwise the jars of Debian's zookeeper package in /usr/share/java are
// used. Java is $JAVA_HOME/bin/java, else java on PATH, else /usr/bin/java.
package zktest

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
// A test package shares one server, started by the first test that needs
// it (Lazy), so that a test that needs none starts no JVM:
//
//	var lazy zktest.Lazy // or shared.Client(t), see package shared
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		lazy.Stop()
//		os.Exit(code)
//	}
//
//	func TestX(t *testing.T) {
//		c := lazy.Need(t) // under go test -short, the test is skipped
//		…
//	}
//
// go test -short, the fast lane, starts no JVM: NeedServer skips a test
// that starts servers of its own, and a server started under -short anyway
// panics (javart.CheckNotShort). The Start functions need no testing.T, so
// a program (the benchmark driver) can start servers too.
//
// Locating ZooKeeper: if ZOOKEEPER_HOME is set it must point at an Apache
// release layout ($ZOOKEEPER_HOME/lib/*.jar and $ZOOKEEPER_HOME/*.jar);
// otherwise the jars of Debian's zookeeper package in /usr/share/java are
// used. Java is $JAVA_HOME/bin/java, else java on PATH, else /usr/bin/java.
package zktest

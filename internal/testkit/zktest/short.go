package zktest

import "github.com/zklock/zklock/internal/testkit/javart"

// NeedServer skips tb under go test -short, the fast lane, which starts no
// server: a test that starts servers of its own (an ensemble, a TLS or
// SASL server) calls it first. A JVM started under -short anyway panics
// (javart.CheckNotShort).
func NeedServer(tb TB) {
	if javart.Short() {
		tb.Helper()
		tb.Skip("needs a ZooKeeper server: go test -short runs without one")
	}
}

package javart

import "flag"

// The fast lane, go test -short, starts no JVM: no ZooKeeper server, no
// Curator runner, no javac. Whatever starts one calls CheckNotShort first,
// so that a test that forgot to skip under -short fails at once instead of
// making the lane slow again.

// Short reports a test binary run with -short. It reads the flag rather
// than calling testing.Short, so that programs (the benchmark driver) do
// not link the testing package.
func Short() bool {
	f := flag.Lookup("test.short")
	return f != nil && f.Value.String() == "true"
}

// CheckNotShort panics under -short, naming what was about to start.
func CheckNotShort(what string) {
	if Short() {
		panic("a JVM (" + what + ") started under go test -short, which starts none; " +
			"skip the test there: zktest.NeedServer(t), or get the server through zktest.Lazy.Need")
	}
}

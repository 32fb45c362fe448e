package zktest

// TB is the part of testing.TB that the helpers use; *testing.T and
// *testing.B satisfy it. zktest names it rather than importing testing so
// that a program (the benchmark driver) can start servers without linking
// the testing package into its binary.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	Name() string
	Skip(args ...any)
}

//go:build race

package zkcli

// raceEnabled: this test binary, and so every zklock it runs as a child,
// was built with the race detector.
const raceEnabled = true

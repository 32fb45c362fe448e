//go:build !race

package zkcli

const raceEnabled = false

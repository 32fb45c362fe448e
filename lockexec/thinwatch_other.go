//go:build unix && !(linux && amd64)

package lockexec

import "errors"

// thinWatch: the in-memory watchdog exists on linux/amd64 only
// (thinwatch_linux_amd64.go); elsewhere the watchdog is a process.
type thinWatch struct{}

func startThin() (int, *thinWatch, error) {
	return 0, nil, errors.New("no in-memory watchdog on this platform")
}

func (*thinWatch) set(pgid int, stop, kill int64) error { return nil }
func (*thinWatch) fired() bool                          { return false }
func (*thinWatch) standDown()                           {}
func (*thinWatch) retire(pid int) bool                  { return false }

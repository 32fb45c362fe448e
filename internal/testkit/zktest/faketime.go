package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// faketimeLibs are where Debian's faketime package puts libfaketime's
// thread-safe variant, which a JVM needs.
var faketimeLibs = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
	"/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
	"/usr/lib/faketime/libfaketimeMT.so.1",
}

// Faketime is the environment (for Options.ServerEnv) that sets a server's
// wall clock off by offset, through libfaketime (Debian package faketime,
// in scripts/install-deps.sh). Only the wall clock moves: the monotonic
// clock, on which the server times sessions, ticks and elections, stays
// real, so the server works normally and dates every write it leads
// (mtime, ctime) offset by offset.
func Faketime(offset time.Duration) ([]string, error) {
	lib, err := faketimeLib()
	if err != nil {
		return nil, err
	}
	return []string{"LD_PRELOAD=" + lib, fmt.Sprintf("FAKETIME=%+d", int64(offset/time.Second)), "FAKETIME_DONT_FAKE_MONOTONIC=1"}, nil
}

// A ClockFile steps a running server's wall clock: libfaketime reads the
// offset from the file again at most a second after it changes
// (FAKETIME_CACHE_DURATION), so a test can step the clock of a leader
// while it leads, as an NTP step or a restored VM would, without the
// election a restart would cause.
type ClockFile string

// NewClockFile writes a clock file with no offset in dir and returns it
// with the environment (for Options.ServerEnv) that reads it. Only the
// wall clock moves, as with Faketime.
func NewClockFile(dir string) (ClockFile, []string, error) {
	lib, err := faketimeLib()
	if err != nil {
		return "", nil, err
	}
	f := ClockFile(filepath.Join(dir, "faketime"))
	if err := f.Set(0); err != nil {
		return "", nil, err
	}
	return f, []string{"LD_PRELOAD=" + lib, "FAKETIME_TIMESTAMP_FILE=" + string(f), "FAKETIME_CACHE_DURATION=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"}, nil
}

// Set sets the offset of the clocks that read f, within about a second.
// It replaces the file by a rename, so a server never reads it half
// written.
func (f ClockFile) Set(offset time.Duration) error {
	tmp := string(f) + ".new"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%+d\n", int64(offset/time.Second)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, string(f))
}

// faketimeLib is the libfaketime this host has.
func faketimeLib() (string, error) {
	for _, lib := range faketimeLibs {
		if _, err := os.Stat(lib); err == nil {
			return lib, nil
		}
	}
	return "", fmt.Errorf("zktest: libfaketime not found (%s): install the Debian package faketime (scripts/install-deps.sh)", filepath.Join(filepath.Dir(faketimeLibs[0]), "…"))
}

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
	for _, lib := range faketimeLibs {
		if _, err := os.Stat(lib); err == nil {
			return []string{
				"LD_PRELOAD=" + lib,
				fmt.Sprintf("FAKETIME=%+d", int64(offset/time.Second)),
				"FAKETIME_DONT_FAKE_MONOTONIC=1",
			}, nil
		}
	}
	return nil, fmt.Errorf("zktest: libfaketime not found (%s): install the Debian package faketime (scripts/install-deps.sh)", filepath.Join(filepath.Dir(faketimeLibs[0]), "…"))
}

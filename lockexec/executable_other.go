//go:build unix && !linux

package lockexec

import "os"

// selfExecutable is the running binary.
func selfExecutable() (string, error) { return os.Executable() }

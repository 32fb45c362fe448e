package lockexec

import "os"

// selfExecutable is the running binary, even if it was replaced or
// deleted on disk since it started (an upgrade in place).
func selfExecutable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

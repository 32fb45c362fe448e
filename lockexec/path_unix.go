//go:build unix

package lockexec

import (
	"os"
	"os/exec"
	"path/filepath"
)

// defaultPath is where a command name is looked up when PATH is unset (as
// under `env -i` or a bare crontab environment), the same as execvp does and
// so flock(1), which execs the command with execvp. glibc's execvp falls
// back to confstr(_CS_PATH), which is "/bin:/usr/bin" since glibc 2.24
// (`getconf PATH` prints it; earlier versions also searched the current
// directory first, which is left out here as glibc now does).
const defaultPath = "/bin:/usr/bin"

// searchPath is the list of directories a command name is looked up in.
func searchPath() string {
	if p, set := os.LookupEnv("PATH"); set {
		return p
	}
	return defaultPath
}

// lookPathEnv is exec.LookPath, with defaultPath when PATH is unset, where
// exec.LookPath alone finds nothing.
func lookPathEnv(name string) (string, error) {
	if _, set := os.LookupEnv("PATH"); set {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(defaultPath) {
		// With a slash in it, LookPath checks just this file.
		if p, err := exec.LookPath(dir + "/" + name); err == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

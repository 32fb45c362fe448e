// Package javart finds the Java runtime and Debian's jars for the JVMs the
// tests and benchmarks start: ZooKeeper servers and the Curator peer. The
// scripts (scripts/lib.sh) read the same lists from this directory's text
// files, so a jar added for the tests is added for the demo too.
package javart

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DebianDir is where Debian's Java library packages install their jars,
// each with an unversioned symlink that survives package upgrades.
const DebianDir = "/usr/share/java"

//go:embed server-jars.txt
var serverJars string

//go:embed startup-flags.txt
var startupFlags string

// ServerJars is the smallest set of DebianDir jars that runs a ZooKeeper
// server, by name without ".jar". Listing them (instead of DebianDir/*)
// keeps the classpath short, which matters for start-up time, and keeps
// unrelated, possibly conflicting, libraries out.
func ServerJars() []string { return lines(serverJars) }

// StartupFlags trim a JVM's start-up, which dominates a short-lived test
// JVM: a small heap needs no parallel collector, C1 alone compiles soon
// enough, and no hsperfdata file is written (less I/O, nothing left in
// /tmp).
func StartupFlags() []string { return lines(startupFlags) }

// lines lists a text file's lines, skipping blanks and # comments.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// ErrNotFound is wrapped by the errors of Java and JDK.
var ErrNotFound = errors.New("not found")

// Java returns the java binary to run: $JAVA_HOME/bin/java first, because
// that is the JVM a developer chose (ZooKeeper's own zkServer.sh does the
// same), then java on PATH, then /usr/bin/java.
func Java() (string, error) {
	var tried []string
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		p := filepath.Join(jh, "bin", "java")
		if executable(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	tried = append(tried, "java on $PATH")
	if executable("/usr/bin/java") {
		return "/usr/bin/java", nil
	}
	tried = append(tried, "/usr/bin/java")
	return "", fmt.Errorf("java %w (tried %s)", ErrNotFound, strings.Join(tried, ", "))
}

// JDK returns javac, looked for in the same order as Java, and the java of
// the same JDK, so that the runtime can load what that javac compiled.
func JDK() (javac, java string, err error) {
	var tried []string
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		tried = append(tried, filepath.Join(jh, "bin", "javac"))
	}
	if p, err := exec.LookPath("javac"); err == nil {
		tried = append(tried, p)
	}
	tried = append(tried, "/usr/bin/javac")
	for _, p := range tried {
		if !executable(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		j := filepath.Join(filepath.Dir(real), "java")
		if !executable(j) {
			return "", "", fmt.Errorf("the java next to %s %w (looked for %s)", real, ErrNotFound, j)
		}
		return real, j, nil
	}
	return "", "", fmt.Errorf("javac %w (tried $JAVA_HOME/bin/javac, javac on $PATH, /usr/bin/javac)", ErrNotFound)
}

// executable reports whether p is a regular file someone may execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

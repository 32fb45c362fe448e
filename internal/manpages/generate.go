package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"
	"github.com/zklock/zklock/cmd"
)

// envDefaults are the variables the command tree reads for flag defaults:
// a page shows the built-in default, never the environment of the machine
// that built the release.
var envDefaults = []string{"ZKLOCK_SERVERS", "ZKLOCK_TLS_CA", "ZKLOCK_TLS_CERT", "ZKLOCK_TLS_KEY", "ZKLOCK_JAAS"}

// generate writes one page per visible command into dir.
func generate(dir string) error {
	for _, k := range envDefaults {
		os.Unsetenv(k)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	header := &doc.GenManHeader{
		Title:   "ZKLOCK",
		Section: "1",
		Source:  "zklock " + cmd.Version(),
		Manual:  "zklock manual",
	}
	if err := doc.GenManTree(cmd.CommandTree(), header, dir); err != nil {
		return fmt.Errorf("writing the pages into %s: %w", dir, err)
	}
	return nil
}

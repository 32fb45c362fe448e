package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time: -ldflags "-X github.com/zklock/zklock/cmd.version=v1.2.3".
var version = ""

// Version is zklock's version: the linker-set one, else the module version
// `go install` recorded, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what zklock version and zklock --version print.
func versionLine() string {
	return fmt.Sprintf("zklock %s (%s)\n", Version(), buildLine())
}

// buildLine names the Go release and the platform of this binary.
func buildLine() string {
	return fmt.Sprintf("%s, %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newCmdVersion(u *ui) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zklock's version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprint(u.out, versionLine())
			return nil
		},
	}
}

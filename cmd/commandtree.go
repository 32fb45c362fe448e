package cmd

import (
	"io"

	"github.com/spf13/cobra"
)

// CommandTree is zklock's command tree as --help shows it, for generating
// documentation (the man pages are made from it, never written by hand).
// Flag defaults read from the environment are shown as the environment
// says: a generator clears it first.
func CommandTree() *cobra.Command {
	root := newCmdRoot(newUI(io.Discard, io.Discard), false)
	var fill func(c *cobra.Command)
	fill = func(c *cobra.Command) {
		lazyLong(c)
		// A man page has no zklock help NAME to point at: it carries
		// the topics itself.
		c.Long = fullLong(c)
		for _, s := range c.Commands() {
			fill(s)
		}
	}
	fill(root)
	// A page that changes with the day it was made would make every build
	// of the same source differ.
	root.DisableAutoGenTag = true
	return root
}

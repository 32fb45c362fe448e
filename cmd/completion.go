package cmd

import (
	"github.com/spf13/cobra"
)

// newCmdCompletion prints a shell's completion script; the packages install
// its output in each shell's completion directory.
func newCmdCompletion(u *ui) *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish",
		Short:     "Print the shell completion script for bash, zsh or fish",
		Example:   "  source <(zklock completion bash)\n  zklock completion zsh > \"${fpath[1]}/_zklock\"\n  zklock completion fish > ~/.config/fish/completions/zklock.fish",
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("completion needs one shell: bash, zsh or fish")
			}
			root := c.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(u.out, true)
			case "zsh":
				return root.GenZshCompletion(u.out)
			case "fish":
				return root.GenFishCompletion(u.out, true)
			}
			return usageErrorf("completion: unknown shell %q: use bash, zsh or fish", args[0])
		},
	}
}

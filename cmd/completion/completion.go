// Package completion implements `mcpauth completion <shell>`: cobra's shell
// completion scripts, written to stdout (the root command sends cobra's own
// output to stderr, where a script would be lost).
package completion

import (
	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
)

// NewCmd builds the command. The root command must set
// CompletionOptions.DisableDefaultCmd so cobra does not add its own.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell on stdout. Load it with, e.g.:

  bash:        source <(mcpauth completion bash)
  zsh:         mcpauth completion zsh > "${fpath[1]}/_mcpauth"
  fish:        mcpauth completion fish > ~/.config/fish/completions/mcpauth.fish
  powershell:  mcpauth completion powershell | Out-String | Invoke-Expression`,
		Example:               "  mcpauth completion bash > /etc/bash_completion.d/mcpauth",
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), f.IO.Out
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return clierr.FlagErrorf("unknown shell %q", args[0])
		},
	}
}

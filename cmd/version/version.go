// Package version implements `mcpauth version`.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
)

// NewCmd builds the command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := Read(f.Version)
			_, err := fmt.Fprintln(f.IO.Out, info.String())
			return err
		},
	}
}

// Info is what a binary knows about its own build.
type Info struct {
	Version  string // release version (-ldflags or module version), else "dev"
	Commit   string // VCS revision, "" when built outside a checkout
	Modified bool   // built from a checkout with uncommitted changes
	Go       string
	Platform string // GOOS/GOARCH
}

func (i Info) String() string {
	s := "mcpauth " + i.Version
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if i.Modified {
			c += "-dirty"
		}
		s += " (commit " + c + ")"
	}
	return fmt.Sprintf("%s %s %s", s, i.Go, i.Platform)
}

// Read returns the build information: v when the release build set it,
// else what `go build` and `go install` record (module version, VCS
// revision).
func Read(v string) Info {
	info := Info{Version: Resolve(v), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}

// Resolve returns v, or the module version recorded in the binary.
func Resolve(v string) string {
	if v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

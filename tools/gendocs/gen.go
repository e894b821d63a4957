package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/root"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// shells are the completion files release archives carry.
var shells = []string{"bash", "zsh", "fish"}

// factory is the CLI's factory with an empty environment and buffered
// streams, so the reference does not depend on who generates it.
func factory() (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	io, _, out, errOut := iostreams.Test()
	return cmdutil.New(io, func(string) string { return "" }), out, errOut
}

// tree is the whole command tree, as `mcpauth --help` sees it.
func tree() *cobra.Command {
	f, _, _ := factory()
	cmd := root.NewCmd(f)
	cmd.DisableAutoGenTag = true // no date: the checked-in files stay stable
	return cmd
}

// writeMarkdown replaces dir's mcpauth*.md with one file per command, so a
// removed command's page goes too.
func writeMarkdown(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "mcpauth*.md"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return doc.GenMarkdownTree(tree(), dir)
}

func writeMan(dir, version string, date *time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	source := "mcpauth"
	if version != "" {
		source += " " + version
	}
	return doc.GenManTree(tree(), &doc.GenManHeader{Title: "MCPAUTH", Section: "1", Source: source, Manual: "mcpauth manual", Date: date}, dir)
}

// writeCompletions runs `mcpauth completion SHELL` itself, so the files are
// exactly what users get from the command.
func writeCompletions(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, sh := range shells {
		f, out, errOut := factory()
		if code := root.Run(context.Background(), f, []string{"completion", sh}); code != 0 {
			return fmt.Errorf("mcpauth completion %s: exit %d: %s", sh, code, strings.TrimSpace(errOut.String()))
		}
		if err := os.WriteFile(filepath.Join(dir, "mcpauth."+sh), out.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

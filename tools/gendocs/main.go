// Command gendocs writes the command reference from the cobra tree: Markdown
// into docs/cli/ (checked in, kept fresh by this package's tests), and, for
// release archives, man pages and the bash, zsh and fish completion files.
//
//	go run ./tools/gendocs                      # docs/cli/*.md
//	go run ./tools/gendocs -man man -completions completions -date 2026-11-27T00:00:00Z
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gendocs", flag.ContinueOnError)
	md := fs.String("md", "", "write the Markdown reference into this directory (default docs/cli when no other output is asked for)")
	man := fs.String("man", "", "write man pages (section 1) into this directory")
	comp := fs.String("completions", "", "write mcpauth.bash, mcpauth.zsh and mcpauth.fish into this directory")
	date := fs.String("date", "", "man page date, RFC 3339 (release: the commit date, so builds are reproducible)")
	version := fs.String("version", "", "version named in the man pages' footer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *md == "" && *man == "" && *comp == "" {
		*md = "docs/cli"
	}
	if *md != "" {
		if err := writeMarkdown(*md); err != nil {
			return fmt.Errorf("markdown: %w", err)
		}
	}
	if *man != "" {
		var when *time.Time
		if *date != "" {
			t, err := time.Parse(time.RFC3339, *date)
			if err != nil {
				return fmt.Errorf("-date: %w", err)
			}
			when = &t
		}
		if err := writeMan(*man, *version, when); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	if *comp != "" {
		if err := writeCompletions(*comp); err != nil {
			return fmt.Errorf("completions: %w", err)
		}
	}
	return nil
}

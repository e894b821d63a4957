package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpauth/mcpauth/tools/bench/internal/bench"
)

// write writes the reports the flags ask for: JSON of every mode, and the
// chart and Markdown of the first (out-of-process when it ran).
func (opts *options) write(reps []*bench.Report) error {
	rep := reps[0]
	if opts.JSON != "" {
		b, err := bench.JSONAll(reps)
		if err != nil {
			return err
		}
		if err := opts.writeFile(opts.JSON, b); err != nil {
			return err
		}
	}
	if opts.Chart != "" {
		if err := opts.writeFile(opts.Chart, rep.SVG()); err != nil {
			return err
		}
	}
	if opts.Markdown != "" {
		old, _ := os.ReadFile(opts.Markdown) // absent: nothing hand-written to keep
		if err := opts.writeFile(opts.Markdown, rep.Markdown(chartLink(opts.Markdown, opts.Chart), old, reps[1:]...)); err != nil {
			return err
		}
	}
	return nil
}

// chartLink is the chart's path as the Markdown file links it.
func chartLink(markdown, chart string) string {
	if chart == "" || chart == "-" {
		return ""
	}
	if rel, err := filepath.Rel(filepath.Dir(markdown), chart); err == nil {
		return filepath.ToSlash(rel)
	}
	return chart
}

func (opts *options) writeFile(name string, b []byte) error {
	if name == "-" {
		_, err := opts.out.Write(b)
		return err
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

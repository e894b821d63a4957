package host

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/hostconfig"
)

// ListOptions are `host list`'s arguments.
type ListOptions struct {
	F       *cmdutil.Factory
	Machine Machine
	Host    string // "" for every host
	File    string
}

func newListCmd(f *cmdutil.Factory, runF func(cmdutil.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{F: f, Machine: system()}
	cmd := &cobra.Command{
		Use:               "list [<host>]",
		Short:             "List the mcpauth proxy entries in hosts' config files",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeHost,
		RunE:              cmdutil.RunE(opts, &opts.Host, runF, ListRun),
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "the config file to read (with <host>; default: the host's own)")
	return cmd
}

// listed is one entry as list reports it.
type listed struct {
	Host   string `json:"host"`
	Name   string `json:"name"`
	Server string `json:"server"`
	File   string `json:"file"`
}

// ListRun lists the entries that run mcpauth proxy.
func ListRun(_ cmdutil.Context, opts *ListOptions) error {
	f := opts.F
	names := hostconfig.Names()
	if opts.Host != "" {
		names = []string{opts.Host}
	}
	ui := cmdutil.NewUI(f)
	rows := []listed{}
	for _, name := range names {
		file := ""
		if opts.Host != "" {
			file = opts.File
		}
		hf, err := open(opts.Machine, name, file)
		if err != nil {
			if hf.path == "" {
				return err // an unknown host, no home folder
			}
			ui.Warn("%v", err)
			continue
		}
		for _, e := range hf.entries {
			if u := e.Entry.URL(); e.Stdio && u != "" {
				rows = append(rows, listed{Host: hf.host.Name, Name: e.Name, Server: u, File: hf.path})
			}
		}
	}
	if f.Globals.JSON() {
		return cmdutil.WriteJSON(f.IO.Out, rows)
	}
	if len(rows) == 0 {
		ui.Info("no host runs mcpauth proxy (mcpauth host add <host> <mcp-url> adds one)")
		return nil
	}
	for _, r := range rows {
		fmt.Fprintln(f.IO.Out, cmdutil.Text(fmt.Sprintf("%-15s %-20s %s  (%s)", r.Host, r.Name, r.Server, r.File)))
	}
	return nil
}

package host

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/hostconfig"
)

// AddOptions are `host add`'s arguments.
type AddOptions struct {
	F       *cmdutil.Factory
	Machine Machine
	Host    string
	Server  string
	Name    string
	File    string
	Force   bool
	Print   bool
}

func newAddCmd(f *cmdutil.Factory, runF func(cmdutil.Context, *AddOptions) error) *cobra.Command {
	opts := &AddOptions{F: f, Machine: system()}
	cmd := &cobra.Command{
		Use:   "add <host> <mcp-url>",
		Short: "Make a host run mcpauth proxy for a server",
		Long: `Write the entry that runs mcpauth proxy <mcp-url> --login into the host's
config file: the absolute path of this mcpauth, and the token folder (and
--storage, --account, --ca-file when given) as flags, since hosts start
servers with an environment of their own. The entry's name comes from the
server's host name unless --name is given.

An entry of that name that runs something else is replaced only with
--force; the file as it was is kept beside it (` + hostconfig.BackupSuffix + `).
The host's first start without a stored login signs in (browser, or a
device code without one); mcpauth login <mcp-url> beforehand avoids the wait.`,
		Example: `  mcpauth host add claude-code https://mcp.example.com/mcp
  mcpauth host add codex https://mcp.example.com/mcp --name example-work --account work
  mcpauth host add vscode https://mcp.example.com/mcp --print`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeHost,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Host, opts.Server = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return AddRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the entry's name (default: from the server's host name)")
	cmd.Flags().StringVar(&opts.File, "file", "", "the config file to edit (default: the host's own for this user and OS)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an entry of the same name that runs something else")
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the entry instead of writing it")
	return cmd
}

// added is what add reports with -o json.
type added struct {
	Host    string   `json:"host"`
	Name    string   `json:"name"`
	File    string   `json:"file"`
	Backup  string   `json:"backup,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Unchanged: the file already had this entry.
	Unchanged bool `json:"unchanged,omitempty"`
}

// AddRun writes (or prints) the entry.
func AddRun(_ cmdutil.Context, opts *AddOptions) error {
	f := opts.F
	server, err := cmdutil.ParseTarget(opts.Server)
	if err != nil {
		return err
	}
	name := opts.Name
	if name == "" {
		name = hostconfig.NameFor(server)
	}
	if err := hostconfig.CheckName(name); err != nil {
		return clierr.FlagErrorf("--name: %v", err)
	}
	h, path, err := target(opts.Machine, opts.Host, opts.File)
	if err != nil {
		return err
	}
	entry, err := proxyEntry(opts, server)
	if err != nil {
		return err
	}
	if opts.Print {
		snippet, err := h.Snippet(name, entry)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "# in %s\n", cmdutil.Text(path))
		_, err = fmt.Fprint(f.IO.Out, snippet)
		return err
	}
	hf, err := open(opts.Machine, opts.Host, opts.File)
	if err != nil {
		return err
	}
	res := added{Host: h.Name, Name: name, File: hf.path, Command: entry.Command, Args: entry.Args}
	if e := hf.find(name); e != nil {
		if e.Stdio && e.Entry.Equal(entry) {
			res.Unchanged = true
			return report(f, h, res)
		}
		if !opts.Force {
			return clierr.WithExit(clierr.ExitFailure, fmt.Errorf("%s already has a server named %q (in %s) that runs something else: --force replaces it, --name picks another name",
				h.Title, name, hf.path))
		}
	}
	out, err := h.Set(hf.data, name, entry)
	if err != nil {
		return fmt.Errorf("%s: %w", hf.path, err)
	}
	if res.Backup, err = hf.write(out); err != nil {
		return err
	}
	return report(f, h, res)
}

// proxyEntry is the entry for server: this binary, by its absolute path,
// and the global flags the proxy needs to find the same login.
func proxyEntry(opts *AddOptions, server string) (hostconfig.Entry, error) {
	f := opts.F
	bin, err := opts.Machine.Executable()
	if err != nil {
		return hostconfig.Entry{}, fmt.Errorf("finding the mcpauth binary: %w", err)
	}
	choice, err := f.StorageChoice()
	if err != nil {
		return hostconfig.Entry{}, err
	}
	dir, err := filepath.Abs(choice.Dir)
	if err != nil {
		return hostconfig.Entry{}, err
	}
	flags := []string{"--config-dir", dir}
	if choice.Overridden {
		flags = append(flags, "--storage", string(choice.Storage))
	}
	if a := f.Globals.Account; a != "" && a != "default" {
		flags = append(flags, "--account", a)
	}
	if ca := f.Globals.CAFile; ca != "" {
		abs, err := filepath.Abs(ca)
		if err != nil {
			return hostconfig.Entry{}, err
		}
		flags = append(flags, "--ca-file", abs)
	}
	return hostconfig.Proxy(bin, server, flags), nil
}

func report(f *cmdutil.Factory, h hostconfig.Host, res added) error {
	if f.Globals.JSON() {
		return cmdutil.WriteJSON(f.IO.Out, res)
	}
	ui := cmdutil.NewUI(f)
	if res.Unchanged {
		ui.Success("%s already runs mcpauth proxy as %q (%s)", h.Title, res.Name, res.File)
		return nil
	}
	ui.Success("%s runs mcpauth proxy as %q (%s)", h.Title, res.Name, res.File)
	if res.Backup != "" {
		ui.Info("the file as it was: %s", res.Backup)
	}
	for _, n := range h.Notes {
		ui.Info("%s", n)
	}
	return nil
}

// Package host implements `mcpauth host add|list|remove`: entries that run
// `mcpauth proxy <url> --login`, written into an MCP host's own config file.
package host

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/hostconfig"
)

// Machine is what the host commands read from the machine; tests give a
// home folder of their own and any GOOS.
type Machine struct {
	Home func() (string, error)
	// XDGConfigHome is $XDG_CONFIG_HOME ("" when unset), where opencode and,
	// on Linux, the Electron hosts keep their config.
	XDGConfigHome string
	GOOS          string
	Executable    func() (string, error)
	Exists        func(string) bool
}

func system() Machine {
	return Machine{Home: os.UserHomeDir, XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"), GOOS: runtime.GOOS, Executable: os.Executable, Exists: hostconfig.Exists}
}

// NewCmd builds `host` with add, list and remove; the run functions replace
// AddRun, ListRun and RemoveRun in tests (nil: the real ones).
func NewCmd(f *cmdutil.Factory, runAdd func(cmdutil.Context, *AddOptions) error, runList func(cmdutil.Context, *ListOptions) error,
	runRemove func(cmdutil.Context, *RemoveOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Add mcpauth proxy entries to MCP hosts' config files",
		Long: `Write, list and remove the entries that make an MCP host run
mcpauth proxy <url> --login as a local stdio server, in the host's own
config file. Hosts: ` + strings.Join(hostconfig.Names(), ", ") + `.

The file's other entries, settings and comments are kept, and a copy of the
file as it was is kept beside it (` + hostconfig.BackupSuffix + `). See docs/hosts.md.`,
	}
	cmd.AddCommand(newAddCmd(f, runAdd), newListCmd(f, runList), newRemoveCmd(f, runRemove))
	return cmd
}

// completeHost completes a host name as the first argument.
func completeHost(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return hostconfig.Names(), cobra.ShellCompDirectiveNoFileComp
}

// target is the host and the file its entries are in: file when given
// (--file), else the host's own for this machine.
func target(m Machine, name, file string) (hostconfig.Host, string, error) {
	h, err := hostconfig.Lookup(name)
	if err != nil {
		return h, "", clierr.FlagErrorf("%v", err)
	}
	if file != "" {
		abs, err := filepath.Abs(file)
		return h, abs, err
	}
	home, err := m.Home()
	if err != nil {
		return h, "", err
	}
	return h, h.Path(hostconfig.Location{Home: home, XDGConfigHome: m.XDGConfigHome, GOOS: m.GOOS}, m.Exists), nil
}

// hostFile is a host's file as read: its content and entries.
type hostFile struct {
	host    hostconfig.Host
	path    string // the file itself, symbolic links followed
	data    []byte
	existed bool
	entries []hostconfig.Named
}

// open reads the host's file (see target); a missing one is empty.
func open(m Machine, name, file string) (hostFile, error) {
	h, path, err := target(m, name, file)
	if err != nil {
		return hostFile{}, err
	}
	hf := hostFile{host: h}
	if hf.data, hf.path, hf.existed, err = hostconfig.ReadFile(path); err != nil {
		return hf, fmt.Errorf("reading %s: %w", path, err)
	}
	if hf.entries, err = h.Entries(hf.data); err != nil {
		return hf, fmt.Errorf("%s: %w", hf.path, err)
	}
	return hf, nil
}

// find is the entry called name, or nil.
func (hf hostFile) find(name string) *hostconfig.Named {
	for i := range hf.entries {
		if hf.entries[i].Name == name {
			return &hf.entries[i]
		}
	}
	return nil
}

// write replaces the file's content with out, keeping a backup.
func (hf hostFile) write(out []byte) (backup string, err error) {
	if backup, err = hostconfig.WriteFile(hf.path, hf.data, out, hf.existed); err != nil {
		return "", fmt.Errorf("writing %s: %w", hf.path, err)
	}
	return backup, nil
}

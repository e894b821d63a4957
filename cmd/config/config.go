// Package config implements `mcpauth config get|set`: settings kept beside
// the token files (today one: storage).
package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/keyring"
)

// keys are the settings config knows, in listing order.
var keys = []string{"storage"}

// NewCmd builds `config` with its get and set subcommands; runGet and
// runSet replace GetRun and SetRun in tests.
func NewCmd(f *cmdutil.Factory, runGet func(*GetOptions) error, runSet func(*SetOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and change remembered settings",
		Long: `Settings live in settings.json beside the token files (MCPAUTH_CONFIG_DIR).

  storage   where tokens are stored: auto (the OS keyring; on a terminal, ask
            before using a plain file), keyring or file. Agreeing to the file
            fallback sets it to file. --storage / MCPAUTH_STORAGE override it
            for one command. Setting auto or keyring moves the logins
            stored in plain files into the OS keyring.`,
	}
	cmd.AddCommand(newGetCmd(f, runGet), newSetCmd(f, runSet))
	return cmd
}

// Setting is one setting as get reports it.
type Setting struct {
	Key    string    `json:"key"`
	Value  string    `json:"value"`
	Reason string    `json:"reason,omitempty"`
	SetAt  time.Time `json:"set_at,omitzero"`
	// OverriddenBy names the flag or variable that replaces the value for
	// this command.
	OverriddenBy string `json:"overridden_by,omitempty"`
}

func checkKey(key string) error {
	if !slices.Contains(keys, key) {
		return clierr.FlagErrorf("unknown setting %q (known: %s)", key, strings.Join(keys, ", "))
	}
	return nil
}

func read(f *cmdutil.Factory, key string) (Setting, error) {
	c, err := f.StorageChoice()
	if err != nil {
		return Setting{}, err
	}
	s := Setting{Key: key, Value: string(c.Remembered.Storage), Reason: c.Remembered.Reason, SetAt: c.Remembered.SetAt}
	if c.Overridden {
		s.OverriddenBy = fmt.Sprintf("--storage / MCPAUTH_STORAGE (%s)", c.Storage)
	}
	return s, nil
}

// describe is a setting's reason and date in words, or "".
func describe(s Setting) string {
	var parts []string
	if s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	if !s.SetAt.IsZero() {
		parts = append(parts, "since "+s.SetAt.Format("2006-01-02"))
	}
	if s.OverriddenBy != "" {
		parts = append(parts, "overridden by "+s.OverriddenBy)
	}
	return strings.Join(parts, ", ")
}

func storageValue(v string) (keyring.Storage, error) {
	st, err := keyring.ParseStorage(v)
	if v == "" || err != nil {
		return "", clierr.FlagErrorf("invalid storage %q: want auto, keyring or file", v)
	}
	return st, nil
}

package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/mcpauth/mcpauth/internal/secretflag"
)

// SecretFlag is a secret flag (package secretflag).
type SecretFlag = secretflag.SecretFlag

// BindSecret adds --name and --name-file to fl, filling *p on Resolve.
func BindSecret(fl *pflag.FlagSet, p *string, name, usage string) *SecretFlag {
	return secretflag.Bind(fl, p, name, usage)
}

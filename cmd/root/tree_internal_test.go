package root

import (
	"os"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// The fast path finds a command by the name in the table: a command whose
// Use starts with another word would only ever be found through the whole
// tree, and quietly lose the saving.
func TestSubcommandTableMatchesCommands(t *testing.T) {
	f := cmdutil.New(iostreams.System(os.Getenv), os.Getenv)
	seen := map[string]bool{}
	for _, sc := range subcommands() {
		if seen[sc.name] {
			t.Errorf("%s listed twice", sc.name)
		}
		seen[sc.name] = true
		if got := sc.build(f).Name(); got != sc.name {
			t.Errorf("table says %q, command is named %q", sc.name, got)
		}
	}
}

func TestNewCmdBuildsOnlyTheNamedCommand(t *testing.T) {
	all := len(subcommands())
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"token", "--header"}, 1},
		{[]string{"version"}, 1},
		{[]string{"config", "get", "storage"}, 1},
		{nil, all},
		{[]string{"--debug", "token"}, all},
		{[]string{"help", "token"}, all},
		{[]string{"tokn"}, all},
		{[]string{"completion", "bash"}, all},
	} {
		f := cmdutil.New(iostreams.System(os.Getenv), os.Getenv)
		if got := len(newCmd(f, tc.args).Commands()); got != tc.want {
			t.Errorf("%q: %d commands built, want %d", tc.args, got, tc.want)
		}
	}
}

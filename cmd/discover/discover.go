// Package discover implements `mcpauth discover`: show what a server
// advertises and every probe it took to find out.
package discover

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/flows"
)

// Options are discover's flags.
type Options struct {
	F        *cmdutil.Factory
	Target   string
	Discover cmdutil.DiscoverFlags
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "discover <mcp-url>",
		Short: "Show a server's authorization metadata and the probes that found it",
		Long: `Probe an MCP server the way login does (401 challenge, RFC 9728 protected
resource metadata, RFC 8414 / OpenID Connect discovery) and print what was
found, with every URL tried, its status and verdict.`,
		Example: "  mcpauth discover http://127.0.0.1:8080/mcp\n  mcpauth discover https://mcp.example.com/mcp --output json | jq .probes",
		Args:    cmdutil.TargetArgs,
		RunE:    cmdutil.RunE(opts, &opts.Target, runF, Run),
	}
	opts.Discover.Bind(cmd.Flags())
	return cmd
}

// Run discovers and prints; on failure it still shows the probes.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	disc, err := f.Discover(ctx, opts.Target, opts.Discover)
	if f.Globals.JSON() && disc != nil {
		if werr := cmdutil.WriteJSON(f.IO.Out, disc); werr != nil {
			return werr
		}
		return err
	}
	// A server that answered nothing (a closed port, say) gets the one
	// line of the error; --output json still lists the probe.
	if disc != nil && (err == nil || answered(disc)) {
		printText(f, disc, err == nil)
	}
	return err
}

func answered(d *flows.Discovery) bool {
	for _, p := range d.Probes {
		if p.Status != 0 {
			return true
		}
	}
	return false
}

// printText shows what was found as labelled values, then each probe as
// its URL with the status and verdict under it: a list, so that the URL
// gets the whole width and, when even that is too narrow, gives way in the
// host, keeping the .well-known path that tells probes apart.
func printText(f *cmdutil.Factory, d *flows.Discovery, ok bool) {
	w, width := f.IO.Out, f.IO.TerminalWidth()
	if ok {
		as := d.AuthServer
		rows := [][2]string{
			{"resource", d.Resource},
			{"issuer", d.Issuer},
			{"authorization_endpoint", as.AuthorizationEndpoint},
			{"token_endpoint", as.TokenEndpoint},
			{"registration_endpoint", orNone(as.RegistrationEndpoint)},
			{"device_authorization_endpoint", orNone(as.DeviceAuthorizationEndpoint)},
			{"device flow", yesNo(d.SupportsDeviceFlow())},
			{"pkce", orNone(strings.Join(as.CodeChallengeMethodsSupported, ", "))},
			{"scopes_supported", orNone(strings.Join(fields(as.ScopesSupported), " "))},
			{"scope to request", orNone(d.Scope)},
		}
		if d.Legacy {
			rows = append(rows, [2]string{"note", "no protected resource metadata: base URL taken as the authorization server"})
		}
		fmt.Fprintln(w, tablefmt.Pairs(rows, width))
		fmt.Fprintln(w)
	}
	probes := make([]tablefmt.Entry, 0, len(d.Probes))
	for _, p := range d.Probes {
		status := "-"
		if p.Status != 0 {
			status = strconv.Itoa(p.Status)
		}
		verdict := p.Verdict
		if p.Answer != "" {
			verdict += ": " + p.Answer
		}
		if p.Err != "" {
			verdict += ": " + p.Err
		}
		probes = append(probes, tablefmt.Entry{Key: p.URL, Fields: []string{status, verdict}})
	}
	fmt.Fprintln(w, "probes")
	fmt.Fprintln(w, tablefmt.List(probes, width, tablefmt.PathURL))
}

// fields bounds each of a server's values on its own (the table bounds
// and escapes the whole cell).
func fields(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = cmdutil.Field(v)
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "supported"
	}
	return "not offered"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

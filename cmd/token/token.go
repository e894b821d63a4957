// Package token implements `mcpauth token`: print the stored access token.
package token

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/flows"
)

// Options are token's flags.
type Options struct {
	F      *cmdutil.Factory
	Server string
	Header bool
	// URL and Method are the request a DPoP proof is made for.
	URL, Method string
	// MinTTL: refresh a token that expires sooner.
	MinTTL time.Duration
}

// NewCmd builds the command; runF replaces Run in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "token [<mcp-url>]",
		Short: "Print a valid access token (for scripts)",
		Long: `Print a valid access token, and nothing else, so it can feed another
program. A token that has expired or expires within 60 seconds is refreshed
first with the stored refresh token (one process at a time: concurrent runs
wait for the first one's refresh and use its result). Never starts a login:
exits 3 when there is no token, it expired with no refresh token, or the
server refused the refresh token.

With --header and -o json it prints one JSON object of header names and
values ({"Authorization":"Bearer ..."}), the output Claude Code's
headersHelper and Codex's http_headers_helper take. Such hosts keep the
headers for a while and do not run the helper again after a 401: --min-ttl
refreshes a token that would expire within that time. A DPoP-bound token
needs a proof per request, which a helper cannot give: use mcpauth proxy
(mcpauth host add) for such a server.`,
		Example: `  curl -H "Authorization: Bearer $(mcpauth token)" http://127.0.0.1:8080/api/ping
  curl -H "$(mcpauth token --header)" http://127.0.0.1:8080/api/ping
  mcpauth token --header -o json --min-ttl 10m --config-dir ~/.config/mcpauth/tokens https://mcp.example.com/mcp`,
		Args: cobra.MaximumNArgs(1),
		RunE: cmdutil.RunE(opts, &opts.Server, runF, Run),
	}
	cmd.Flags().BoolVar(&opts.Header, "header", false, "print an HTTP header line: Authorization: Bearer <token> (DPoP-bound: Authorization: DPoP <token> and a DPoP: <proof> line)")
	cmd.Flags().StringVar(&opts.URL, "url", "", "DPoP: the URL the proof is for (default: the server's /api/ping)")
	cmd.Flags().StringVar(&opts.Method, "method", "GET", "DPoP: the HTTP method the proof is for")
	cmd.Flags().DurationVar(&opts.MinTTL, "min-ttl", 0, "refresh the token first if it expires within this time (e.g. 10m)")
	return cmd
}

// Run prints the token.
func Run(ctx context.Context, opts *Options) error {
	if opts.MinTTL < 0 {
		return clierr.FlagErrorf("--min-ttl must not be negative")
	}
	keeper := opts.F.Keeper()
	keeper.MinTTL = opts.MinTTL
	cred, err := keeper.Fresh(ctx, opts.Server)
	if err != nil {
		return err
	}
	if err := checkPrintable(cred.Token); err != nil {
		return err
	}
	if opts.Header && opts.F.Globals.JSON() {
		return printHelperJSON(opts, cred)
	}
	if opts.Header {
		return printHeaders(opts, cred)
	}
	_, err = fmt.Fprintln(opts.F.IO.Out, cred.Token)
	return err
}

// printHeaders prints the header a request with cred carries, as
// flows.Transport sets it: Bearer, or for a DPoP-bound token DPoP with a
// proof for one request, --method at --url (default GET {base}/api/ping).
// A proof is single use: run token --header again for each request.
func printHeaders(opts *Options, cred creds.Credential) error {
	u := opts.URL
	if u == "" {
		u = strings.TrimRight(cred.BaseURL, "/") + "/api/ping"
	}
	h, err := flows.CredentialHeader(strings.ToUpper(opts.Method), u, cred.Present())
	if err != nil {
		return err
	}
	for _, k := range []string{"Authorization", "DPoP"} {
		if v := h.Get(k); v != "" {
			if _, err := fmt.Fprintf(opts.F.IO.Out, "%s: %s\n", k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// printHelperJSON prints the header as one JSON object of strings, what
// Claude Code's headersHelper and Codex's http_headers_helper read. A
// DPoP-bound token cannot go this way: each request needs its own proof,
// and a host runs its helper once for many requests.
func printHelperJSON(opts *Options, cred creds.Credential) error {
	if cred.DPoP != nil {
		return fmt.Errorf("the token for %s is DPoP-bound: each request needs its own proof, and a host runs a header helper once for many requests; "+
			"let the host run the proxy instead (mcpauth host add <host> %[1]s)", cmp.Or(cred.Server, opts.Server))
	}
	h, err := flows.CredentialHeader(http.MethodGet, cred.BaseURL, cred.Present())
	if err != nil {
		return err
	}
	return json.NewEncoder(opts.F.IO.Out).Encode(map[string]string{"Authorization": h.Get("Authorization")})
}

// checkPrintable refuses a token that is not printable ASCII: an access
// token is made of VSCHARs (RFC 6749 appendix A.12), so anything else is a
// server reaching for the terminal (or the next program's input), and
// token prints the token whole or not at all.
func checkPrintable(token string) error {
	i := strings.IndexFunc(token, func(r rune) bool { return r < 0x20 || r > 0x7e })
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(token[i:])
	return clierr.WithExit(clierr.ExitFailure, fmt.Errorf("the access token holds %U at byte %d, which no access token may (RFC 6749 appendix A.12: printable ASCII only); not printing it", r, i))
}

package doctor

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/internal/launch"
	"github.com/mcpauth/mcpauth/internal/reach"
)

// browserCheck says whether login can open a browser here, with the same
// rules as launch.Opener, and what login does instead when it cannot.
func browserCheck(opts *Options, target string) Check {
	c := Check{ID: "browser"}
	if fields := strings.Fields(opts.Getenv("MCPAUTH_BROWSER")); len(fields) > 0 {
		if _, err := opts.LookPath(fields[0]); err != nil {
			c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("MCPAUTH_BROWSER names %s, which is not an executable on PATH", fields[0]), "set MCPAUTH_BROWSER to a browser command, or unset it"
			return c
		}
		c.Status, c.Detail = Pass, fmt.Sprintf("login opens URLs with MCPAUTH_BROWSER (%s)", fields[0])
		return c
	}
	device := "mcpauth device <mcp-url>"
	if target != "" {
		device = "mcpauth device " + target
	}
	if why := launch.Headless(opts.Getenv, opts.GOOS); why != "" {
		c.Status = Warn
		c.Detail = fmt.Sprintf("no browser will be opened: %s; login prints the URL to open yourself", why)
		c.Fix = "use the device flow, which needs no browser here (" + device + "), or set MCPAUTH_BROWSER to a browser command"
		return c
	}
	if opts.GOOS != "linux" {
		c.Status, c.Detail = Pass, "login opens the system's default browser"
		return c
	}
	for _, p := range []string{"xdg-open", "x-www-browser", "www-browser"} { // as github.com/pkg/browser tries them
		if _, err := opts.LookPath(p); err == nil {
			c.Status, c.Detail = Pass, "login opens the default browser with "+p
			if b := opts.Getenv("BROWSER"); b != "" && p == "xdg-open" {
				c.Detail += " (which honours BROWSER=" + b + ")"
			}
			return c
		}
	}
	c.Status = Warn
	c.Detail = "none of xdg-open, x-www-browser, www-browser is on PATH; login prints the URL to open yourself"
	c.Fix = "install xdg-utils (apt-get install xdg-utils), set MCPAUTH_BROWSER, or use " + device
	return c
}

// proxyCheck reports the proxy variables and whether the target goes
// through one, using the CLI's own proxy rules (loopback always direct).
func proxyCheck(opts *Options, target string) Check {
	c := Check{ID: "proxy", Status: Pass}
	var set []string
	for _, name := range []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"} {
		v := opts.Getenv(name)
		if v == "" {
			v = opts.Getenv(strings.ToLower(name))
		}
		if v != "" {
			set = append(set, name+"="+redactProxy(v))
		}
	}
	if len(set) == 0 {
		c.Detail = "no proxy variables set: connections go direct"
	} else {
		c.Detail = strings.Join(set, " ")
	}
	if target == "" {
		return c
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return c // ParseTarget accepted it; nothing more to say
	}
	proxy, err := reach.Proxy(opts.Getenv)(req)
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("%s; the proxy setting is invalid: %v", c.Detail, err), "fix HTTPS_PROXY / HTTP_PROXY (a URL such as http://proxy.example:3128)"
	case proxy != nil:
		c.Detail += fmt.Sprintf("; %s goes through the proxy %s", req.URL.Host, redactProxy(proxy.String()))
	default:
		c.Detail += fmt.Sprintf("; %s is reached directly", req.URL.Host)
	}
	return c
}

// redactProxy drops a password from a proxy URL: it is a secret.
func redactProxy(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// caCheck checks the CA files the TLS stack and the CLI would read.
func caCheck(opts *Options) Check {
	c := Check{ID: "ca"}
	var used []string
	if f := opts.Getenv("SSL_CERT_FILE"); f != "" {
		if _, err := os.ReadFile(f); err != nil {
			c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("SSL_CERT_FILE is unreadable: %v", err), "point SSL_CERT_FILE at a readable PEM bundle, or unset it"
			return c
		}
		used = append(used, "SSL_CERT_FILE="+f)
	}
	if d := opts.Getenv("SSL_CERT_DIR"); d != "" {
		for _, dir := range filepath.SplitList(d) {
			if _, err := os.ReadDir(dir); err != nil {
				c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("SSL_CERT_DIR holds an unreadable folder: %v", err), "point SSL_CERT_DIR at readable folders of PEM certificates, or unset it"
				return c
			}
		}
		used = append(used, "SSL_CERT_DIR="+d)
	}
	if f := opts.F.Globals.CAFile; f != "" {
		// The client the CLI builds reads and parses it, as every command would.
		if _, err := cmdutil.NewHTTPClient(&cmdutil.Globals{CAFile: f}, nil, opts.Getenv); err != nil {
			c.Status, c.Detail, c.Fix = Fail, err.Error(), "point --ca-file (MCPAUTH_CA_FILE) at a readable PEM file of CA certificates"
			return c
		}
		used = append(used, "--ca-file "+f)
	}
	c.Status = Pass
	if len(used) == 0 {
		c.Detail = "system trust store (no SSL_CERT_FILE, SSL_CERT_DIR or --ca-file)"
	} else {
		c.Detail = "CA certificates from " + strings.Join(used, ", ")
	}
	return c
}

package interop

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// labAccessTTL is the access token lifetime the lab's own AS scripts are
// started with: short, so a refresh comes within the lab's run.
const labAccessTTL = 30 * time.Second

// accessTTLEnv is the AS scripts' variable for labAccessTTL.
var accessTTLEnv = "ACCESS_TTL=" + strconv.Itoa(int(labAccessTTL/time.Second))

// serverFlowsWith runs every column of the servers' table against one AS
// in front of the lab's resource server at mcpURL, in order (each flow
// after login uses the stored credential): the common flows here, the
// AS-specific ones (device, machine, and any override) from own.
func serverFlowsWith(t *testing.T, g *grid, r *gridRow, c *cli, mcpURL, issuer string, as grantCounter, own map[string]func(t *testing.T) outcome) {
	common := map[string]func(t *testing.T) outcome{
		"discover": func(t *testing.T) outcome {
			out, _ := c.must("discover", mcpURL, "-o", "json")
			if !strings.Contains(out, issuer) {
				t.Fatalf("discover names no %s:\n%s", issuer, out)
			}
			return pass("")
		},
		"login": func(t *testing.T) outcome {
			_, stderr := c.must(append([]string{"login", mcpURL, "--timeout", "60s"}, c.loginArgs...)...)
			if !strings.Contains(stderr, "Logged in to "+mcpURL) {
				t.Fatalf("login said:\n%s", stderr)
			}
			if log := c.browserLog(); !strings.Contains(log, "code=") {
				t.Fatalf("the browser never brought a code to the CLI's callback:\n%s", log)
			}
			return pass("")
		},
		"token accepted": func(t *testing.T) outcome {
			tok := c.token(mcpURL)
			if status := initializeStatus(t, mcpURL, tok); status != 200 {
				t.Fatalf("the MCP server answered %d to mcpauth token's token", status)
			}
			if status := initializeStatus(t, mcpURL, tok+"x"); status != 401 {
				t.Fatalf("the MCP server answered %d to a forged token, want 401", status)
			}
			return pass("")
		},
		"ping": func(t *testing.T) outcome {
			out, stderr := c.must("ping", mcpURL)
			if !strings.Contains(out+stderr, "tools/list") {
				t.Fatalf("ping did not check with tools/list:\n%s\n%s", out, stderr)
			}
			return pass("")
		},
		"refresh": func(t *testing.T) outcome { return concurrentRefresh(t, c, mcpURL, as, labAccessTTL) },
		"proxy": func(t *testing.T) outcome {
			tools, who := c.proxySession(mcpURL, "whoami", nil)
			if !strings.Contains(strings.Join(tools, ","), "whoami") || !strings.Contains(who, `"sub":"`) {
				t.Fatalf("through the proxy: tools %v, whoami %q", tools, who)
			}
			return pass("")
		},
		"conformance": func(t *testing.T) outcome { return conformanceReport(t, c, mcpURL) },
	}
	for _, flow := range g.flows {
		fn := own[flow]
		if fn == nil {
			fn = common[flow]
		}
		if fn == nil {
			t.Fatalf("no test for %s", flow)
		}
		g.flow(t, r, flow, func(t *testing.T) outcome {
			c.t = t
			return fn(t)
		})
	}
}

// grantCounter counts the lines of an AS's log that contain a string: its
// refreshLine for each refresh grant it answered.
type grantCounter interface{ count(s string) int }

// concurrentRefresh waits until the stored access token (lifetime ttl) is
// inside the CLI's refresh margin (a quarter of its lifetime,
// flows.RefreshMargin), then starts four mcpauth token processes at once:
// with refresh tokens that rotate on every use they must take turns (the
// CLI's lock), or a reused refresh token revokes the grant. Exactly one
// refreshes; the others find its fresh token under the lock. The AS logs
// each refresh grant it answers (a line "GRANT refresh_token"), which
// proves it happened, and that a fresh token is not refreshed again.
func concurrentRefresh(t *testing.T, c *cli, mcpURL string, as grantCounter, ttl time.Duration) outcome {
	c.token(mcpURL)
	time.Sleep(ttl - flows.RefreshMargin(ttl) + time.Second) // real time: the AS's clock is real
	before := as.count(refreshLine)
	const n = 4
	var wg sync.WaitGroup
	toks := make([]string, n)
	errs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			code, out, stderr := c.run("token", mcpURL)
			toks[i] = strings.TrimSpace(out)
			if code != 0 {
				errs[i] = stderr
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != "" {
			t.Fatalf("process %d of %d: %s", i+1, n, errs[i])
		}
		if toks[i] == "" {
			t.Fatalf("process %d of %d printed no token", i+1, n)
		}
	}
	if got := as.count(refreshLine) - before; got != 1 {
		t.Fatalf("the AS answered %d refresh grants to %d processes, want 1 (one refreshes, the others use its token)", got, n)
	}
	after := c.token(mcpURL)
	if status := initializeStatus(t, mcpURL, after); status != 200 {
		t.Fatalf("after %d concurrent refreshes the MCP server answered %d", n, status)
	}
	return pass("")
}

// deviceLogin is the device cell: mcpauth device (with args), approved in
// the lab's browser, and its token accepted by the MCP server.
func deviceLogin(t *testing.T, d *cli, mcpURL string, args ...string) outcome {
	d.device(mcpURL, args...)
	if status := initializeStatus(t, mcpURL, d.token(mcpURL)); status != 200 {
		t.Fatalf("the MCP server answered %d to the device login's token", status)
	}
	return pass("")
}

// dpopBearerOnly is the DPoP cell where the AS advertises DPoP in front of
// the lab's Bearer-only MCP server (the go-sdk's RequireBearerToken, no
// DPoP challenge): a login with no flag must use Bearer, as the resource
// decides, and ping and token --header work.
func dpopBearerOnly(t *testing.T, d *cli, mcpURL string) outcome {
	d.must("login", mcpURL, "--timeout", "60s")
	if code, out, stderr := d.run("ping", mcpURL); code != 0 {
		t.Fatalf("ping after a login with no flag: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := d.run("token", "--header", mcpURL); code != 0 || !strings.HasPrefix(out, "Authorization: Bearer ") {
		t.Fatalf("token --header: exit %d %q", code, out)
	}
	return pass("the AS advertises DPoP (`dpop_signing_alg_values_supported`) and the MCP server takes only Bearer (no `DPoP` challenge, RFC 9449 §7.1): login, ping, proxy and token use Bearer with no flag, as the resource decides")
}

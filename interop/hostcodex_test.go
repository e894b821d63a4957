package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// Codex CLI: `codex app-server` (the JSON-RPC server its IDE extension
// talks to on stdio) answers `mcpServerStatus/list`, starting each server
// and listing its tools. Its own OAuth tokens go to a file under HOME
// (`mcp_oauth_credentials_store`), never to a keyring of the machine.
func labCodex(t *testing.T, bin string, g *grid) {
	dir, version := tsserver.RequireNodePackage(t, "interop/testdata/codex", "@openai/codex", "Codex CLI")
	h := newHostEnv(t, bin)
	script := filepath.Join(dir, "node_modules", "@openai", "codex", "bin", "codex.js")
	codex := func(t *testing.T, args ...string) string {
		return h.must(t, "node", append(append([]string{script}, args...), "-c", codexFileStore)...)
	}
	r := g.row("Codex CLI", version)
	status := func(t *testing.T, name string) codexServer {
		s := codexStatus(t, h, script, name)
		if _, ok := s.Tools["whoami"]; !ok || s.ToolsError != nil {
			t.Fatalf("mcpServerStatus/list has no whoami for %s: %+v", name, s)
		}
		return s
	}
	list := func(t *testing.T) { status(t, h.entry) }
	g.flow(t, r, "host add", func(t *testing.T) outcome {
		h.hostAdd("codex")
		h.checkEntry(t, codex(t, "mcp", "get", h.entry))
		return pass("`~/.codex/config.toml`: `codex mcp get` shows the command line host add wrote")
	})
	h.connectFlows(g, r, "tools/list", list,
		"`mcpServerStatus/list` of `codex app-server` lists the server's tools (whoami); the server answered `tools/list` with the stored token")
	g.flow(t, r, "helper", func(t *testing.T) outcome {
		appendFile(t, filepath.Join(h.home, ".codex", "config.toml"),
			fmt.Sprintf("\n[mcp_servers.helper]\nurl = %q\nhttp_headers_helper = %q\n", h.mcpURL, h.helperCommand()))
		h.srv.served(t, "tools/list", func() { status(t, "helper") })
		return pass("a `url` entry whose `http_headers_helper` is the `mcpauth token --header -o json` command line itself, with `--config-dir` and `--storage`")
	})
	g.flow(t, r, "own OAuth", func(t *testing.T) outcome {
		codex(t, "mcp", "add", "own", "--url", h.mcpURL, "--oauth-client-registration", "dcr")
		if s := status(t, "own"); s.AuthStatus != "oAuth" {
			t.Fatalf("after codex mcp add, the server's auth status is %q, want oAuth", s.AuthStatus)
		}
		if cimd := codexDefaultClientID(t, h, script); cimd != "https://chatgpt.com/oauth/codex/client.json" {
			t.Fatalf("codex mcp login names client_id %q", cimd)
		}
		return pass("`codex mcp add --url … --oauth-client-registration dcr` registers (RFC 7591) and logs in at once, without a terminal: it opens `$BROWSER` and takes the code on a loopback callback; `mcpServerStatus/list` then shows `authStatus: oAuth` and the tools. Left to choose, it names its client metadata document `https://chatgpt.com/oauth/codex/client.json` as client_id, which an offline lab cannot fetch")
	})
}

// codexFileStore keeps Codex's own OAuth tokens in a file under HOME
// rather than in a keyring the machine may have (`-c` takes it).
const codexFileStore = `mcp_oauth_credentials_store="file"`

// codexServer is one server of mcpServerStatus/list's answer.
type codexServer struct {
	Name       string
	Tools      map[string]json.RawMessage
	ToolsError *string
	AuthStatus string
}

// codexStatus asks codex app-server for mcpServerStatus/list, after the
// initialize handshake, and returns the server called name.
func codexStatus(t *testing.T, h *hostEnv, script, name string) codexServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := nodeCommand(ctx, h.work, []string{script, "app-server", "-c", codexFileStore})
	cmd.Env = h.hostEnviron(h.browserLog)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	send := func(msg string) {
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			t.Fatalf("writing to codex app-server: %v\n%s", err, stderr.String())
		}
	}
	send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"mcpauth-interop","version":"1"}}}`)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int
			Result json.RawMessage
			Error  json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue // a notification
		}
		if msg.Error != nil {
			t.Fatalf("codex app-server answered request %d with %s\n%s", *msg.ID, msg.Error, stderr.String())
		}
		if *msg.ID == 1 {
			send(`{"method":"initialized"}`)
			send(`{"id":2,"method":"mcpServerStatus/list","params":{}}`)
			continue
		}
		var list struct{ Data []codexServer }
		if err := json.Unmarshal(msg.Result, &list); err != nil {
			t.Fatalf("mcpServerStatus/list: %v: %s", err, msg.Result)
		}
		for _, s := range list.Data {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("mcpServerStatus/list has no %s: %s", name, msg.Result)
	}
	t.Fatalf("codex app-server ended without answering mcpServerStatus/list (%v):\n%s", sc.Err(), stderr.String())
	return codexServer{}
}

// codexDefaultClientID is the client_id codex mcp login names when left
// to choose how to register: it reads the authorization URL Codex prints,
// then stops Codex (node and the binary it runs, which would wait for the
// callback).
func codexDefaultClientID(t *testing.T, h *hostEnv, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := nodeCommand(ctx, h.work, []string{script, "mcp", "login", "own", "-c", codexFileStore})
	cmd.Env = append(h.hostEnviron(filepath.Join(t.TempDir(), "browser.log")), "BROWSER=true")
	tsserver.SetProcessGroup(cmd)
	found := make(chan string, 1)
	log, stop := watchLines(&cmd.Stdout, func(line string) {
		if u, err := url.Parse(strings.TrimSpace(line)); err == nil && u.Query().Has("client_id") {
			select {
			case found <- u.Query().Get("client_id"):
			default:
			}
		}
	})
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var clientID string
	select {
	case clientID = <-found:
	case <-exited:
	case <-ctx.Done():
	}
	tsserver.StopProcessGroup(cmd, exited)
	stop()
	if clientID == "" {
		t.Fatalf("codex mcp login printed no authorization URL:\n%s", log.String())
	}
	return clientID
}

// appendFile adds text at the end of the file at path.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

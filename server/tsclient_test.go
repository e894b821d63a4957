package server_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance/approve"
	"github.com/mcpauth/mcpauth/internal/tsserver"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// A client nobody here wrote: the MCP TypeScript SDK's OAuth client
// (testdata/mcp-ts-server/client.mjs) logs in to the reference server and
// calls whoami over Streamable HTTP, once through dynamic registration and
// once identified by a Client ID Metadata Document it hosts (over TLS on
// loopback, with the server trusting the test CA and allowed to fetch from
// loopback). This test is the browser: it approves with the server's own
// pages. With CI=true a missing node or SDK fails it (internal/tsserver).
func TestTypeScriptSDKClient(t *testing.T) {
	dir, _ := tsserver.Require(t)
	const redirect = "http://127.0.0.1:9/callback"
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id":                  "https://" + r.Host + "/client.json",
			"client_name":                "MCP TypeScript SDK client (metadata document)",
			"redirect_uris":              []string{redirect},
			"grant_types":                []string{"authorization_code", "refresh_token"},
			"response_types":             []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	}))
	defer doc.Close()
	roots := x509.NewCertPool()
	roots.AddCert(doc.Certificate())
	env := servertest.New(t, servertest.Options{MetadataDocuments: server.MetadataDocumentConfig{AllowPrivateAddresses: true, RootCAs: roots}})

	for name, metadataURL := range map[string]string{"dynamic registration": "", "metadata document": doc.URL + "/client.json"} {
		t.Run(name, func(t *testing.T) {
			out := runTSClient(t, dir, env, redirect, metadataURL)
			if !strings.Contains(out, "AUTH AUTHORIZED") || !strings.Contains(out, "WHOAMI ") {
				t.Fatalf("the SDK client did not finish:\n%s", out)
			}
			// With a metadata document the SDK records the URL as its client
			// id instead of registering.
			if metadataURL == "" && (!strings.Contains(out, "REGISTERED ") || strings.Contains(out, "REGISTERED https://")) {
				t.Fatalf("the SDK client did not register dynamically:\n%s", out)
			}
			if metadataURL != "" && !strings.Contains(out, "REGISTERED "+metadataURL+"\n") {
				t.Fatalf("the client id is not the metadata document URL %s:\n%s", metadataURL, out)
			}
			if !strings.Contains(out, "TOKENS refresh=yes") {
				t.Errorf("no refresh token for a client that asked for offline_access:\n%s", out)
			}
		})
	}
}

// runTSClient runs client.mjs against env, approving its authorization
// request as the user "ts-client", and returns what it printed.
func runTSClient(t *testing.T, dir string, env *servertest.Env, redirect, metadataURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{filepath.Join(dir, "client.mjs"), env.URL + "/mcp", redirect}
	if metadataURL != "" {
		args = append(args, metadataURL)
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	approver, err := approve.NewFormApprover(env.URL, "ts-client", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(&out, line)
		if u, ok := strings.CutPrefix(line, "AUTHORIZE "); ok {
			back, err := approver.ApproveConsent(ctx, u)
			if err != nil {
				t.Fatalf("approving %s: %v", u, err)
			}
			if _, err := io.WriteString(stdin, back.Query().Get("code")+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	return out.String()
}

package clierr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCancelledSaysWhat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var p Phase
	p.Set("waiting for the browser")
	if err := Cancelled(ctx, "login", &p, errors.New("other")); err.Error() != "other" {
		t.Fatalf("not cancelled: %v", err)
	}
	cancel()
	err := Cancelled(ctx, "login", &p, fmt.Errorf("auth code flow: %w", context.Canceled))
	if err.Error() != "login cancelled while waiting for the browser" || CodeFor(err) != ExitCancelled {
		t.Fatalf("got %q exit %d", err, CodeFor(err))
	}
	// A context that timed out is not a Ctrl-C.
	tctx, tcancel := context.WithTimeout(context.Background(), 0)
	defer tcancel()
	<-tctx.Done()
	if err := Cancelled(tctx, "login", &p, tctx.Err()); CodeFor(err) == ExitCancelled {
		t.Fatalf("deadline reported as cancelled: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, derr := net.Dial("tcp", addr)
	err = Unreachable("http://"+addr+"/api/ping", fmt.Errorf("ping: %w", derr))
	if want := "cannot reach " + addr + " (connection refused)"; err.Error() != want || CodeFor(err) != ExitNetwork {
		t.Fatalf("got %q exit %d, want %q exit 6", err, CodeFor(err), want)
	}
	if err := Unreachable("https://x.test", errors.New("HTTP 500")); err.Error() != "HTTP 500" {
		t.Fatalf("rewrote an answered request: %v", err)
	}
	// A certificate from an unknown CA names --ca-file.
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	defer tlsSrv.Close()
	_, terr := (&http.Client{}).Get(tlsSrv.URL)
	err = Unreachable(tlsSrv.URL, terr)
	if !strings.Contains(err.Error(), "cannot verify the certificate of "+tlsSrv.Listener.Addr().String()) ||
		!strings.Contains(err.Error(), "pass --ca-file") || CodeFor(err) != ExitNetwork {
		t.Fatalf("got %q exit %d", err, CodeFor(err))
	}
}

func TestPortErrorSuggestsAnother(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	err = CheckPort(port)
	if err == nil || CodeFor(err) != ExitUsage ||
		!strings.Contains(err.Error(), fmt.Sprintf("port %d on 127.0.0.1 is already in use", port)) ||
		!strings.Contains(err.Error(), "try --port ") {
		t.Fatalf("got %v (exit %d)", err, CodeFor(err))
	}
	if err := CheckPort(0); err != nil {
		t.Fatal(err)
	}
}

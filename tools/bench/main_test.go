package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/tools/bench/internal/bench"
)

// The hidden flag serves the bare baseline until the context ends: what
// the out-of-process mode runs this binary as.
func TestBaselineServer(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		cmd := newCmd(strings.NewReader(""), w, io.Discard, func(string) string { return "" })
		cmd.SetArgs([]string{bench.BaselineArg})
		done <- cmd.ExecuteContext(ctx)
		w.Close()
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), bench.BaselineBanner)
	if !ok {
		t.Fatalf("banner %q", line)
	}
	resp, err := http.Get(url + "/api/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("baseline answered %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("baseline server: %v", err)
	}
}

// Bad flags are usage errors (exit 2) before anything is built or started.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "sideways"},
		{"--pin", "1"},
		{"--rounds", "0"},
		{"--sqlite-sync", "sometimes"},
		{"--postgres", "mysql://x"},
		{"--scale-pending", "0"},
		{"--scale-pending", "10", "--sample-rate", "0"},
		{"--scale-pending", "10", "--gc-interval", "0s"},
		{"https://mcp.example.com"}, // no --token
		{"--no-such-flag"},
	} {
		cmd := newCmd(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(t.Context())
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}

func TestChartLink(t *testing.T) {
	for _, tc := range []struct{ md, chart, want string }{
		{"BENCHMARKS.md", "BENCHMARKS.svg", "BENCHMARKS.svg"},
		{"out/BENCHMARKS.md", "out/img/chart.svg", "img/chart.svg"},
		{"BENCHMARKS.md", "-", ""},
		{"BENCHMARKS.md", "", ""},
	} {
		if got := chartLink(tc.md, tc.chart); got != tc.want {
			t.Errorf("chartLink(%q, %q) = %q, want %q", tc.md, tc.chart, got, tc.want)
		}
	}
}

// Only runs that start `mcpauth serve` need the binary built.
func TestNeedsMcpauth(t *testing.T) {
	for _, tc := range []struct {
		o    bench.Options
		want bool
	}{
		{bench.Options{}, true},
		{bench.Options{Modes: []bench.Mode{bench.InProcess}}, false},
		{bench.Options{Target: "https://mcp.example.com"}, false},
		{bench.Options{Modes: []bench.Mode{bench.InProcess}, DeviceFlows: []int{10}}, true},
		{bench.Options{Modes: []bench.Mode{bench.InProcess}, ScalePending: []int{10}}, true},
	} {
		if got := needsMcpauth(tc.o); got != tc.want {
			t.Errorf("needsMcpauth(%+v) = %v", tc.o, got)
		}
	}
}

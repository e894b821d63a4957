package serve

import (
	"context"
	"strings"
	"testing"
	"time"
)

// --refresh-reuse-interval is 0 (strict) unless the flag or
// MCPAUTH_REFRESH_REUSE_INTERVAL sets it, and a value past the server's
// bound is refused at start.
func TestRefreshReuseIntervalFlag(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want time.Duration
	}{
		{nil, nil, 0},
		{nil, []string{"--refresh-reuse-interval", "10s"}, 10 * time.Second},
		{map[string]string{"MCPAUTH_REFRESH_REUSE_INTERVAL": "2s"}, nil, 2 * time.Second},
	} {
		if got := parse(t, tt.env, tt.args...).RefreshReuseInterval; got != tt.want {
			t.Errorf("%v %v: %v, want %v", tt.env, tt.args, got, tt.want)
		}
	}
	opts := parse(t, nil, "--addr", "127.0.0.1:0", "--db", ":memory:", "--refresh-reuse-interval", "2m")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Run(ctx, opts); err == nil || !strings.Contains(err.Error(), "refresh reuse interval") {
		t.Fatalf("a 2m interval: Run returned %v, want it refused", err)
	}
}

// --ipv6-prefix is 64 unless the flag or MCPAUTH_IPV6_PREFIX sets it, and
// a prefix the server cannot use is refused at start.
func TestIPv6PrefixFlag(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want int
	}{
		{nil, nil, 64},
		{nil, []string{"--ipv6-prefix", "56"}, 56},
		{map[string]string{"MCPAUTH_IPV6_PREFIX": "128"}, nil, 128},
	} {
		if got := parse(t, tt.env, tt.args...).IPv6Prefix; got != tt.want {
			t.Errorf("%v %v: %v, want %v", tt.env, tt.args, got, tt.want)
		}
	}
	for _, bits := range []string{"16", "129"} {
		opts := parse(t, nil, "--addr", "127.0.0.1:0", "--db", ":memory:", "--ipv6-prefix", bits)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := Run(ctx, opts)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "IPv6 prefix") {
			t.Fatalf("--ipv6-prefix %s: Run returned %v, want it refused", bits, err)
		}
	}
}

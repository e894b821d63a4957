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

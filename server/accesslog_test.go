package server

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// The fast request line must be exactly what slog's own handler writes for
// the same record, in both formats, across times (zones, whole seconds,
// sub-millisecond), durations and statuses.
func TestRequestLineAsSlogWritesIt(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -8*3600)}
	times := []time.Time{
		time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC),
		time.Date(2026, 7, 28, 23, 59, 59, 100_000, time.UTC),
		time.Now(), // carries a monotonic reading, which slog drops
	}
	durations := []time.Duration{0, 1, 999, 1500 * time.Nanosecond, 2*time.Millisecond + 345*time.Microsecond, 3 * time.Second, 26 * time.Hour}
	lines := []struct{ id, method, path string }{
		{"0123456789abcdef", "GET", "/api/ping"},
		{"fedcba9876543210", "POST", "/oauth/token"},
		{"00000000000000aa", "DELETE", "/api/keys/k_1-2.3_4~5"},
	}
	for _, format := range []string{"text", "json"} {
		for _, z := range zones {
			for i, tm := range times {
				for j, d := range durations {
					l := lines[(i+j)%len(lines)]
					status := []int{200, 400, 404, 500}[j%4]
					var fast, viaSlog bytes.Buffer
					h, err := NewLogHandler(&fast, format, slog.LevelInfo)
					if err != nil {
						t.Fatal(err)
					}
					if !h.logRequest(context.Background(), tm.In(z), l.id, l.method, l.path, status, d) {
						t.Fatalf("%s: fast path declined a plain line %+v", format, l)
					}
					ref, _ := NewLogHandler(&viaSlog, format, slog.LevelInfo)
					rec := slog.NewRecord(tm.In(z), slog.LevelInfo, "request", 0)
					rec.AddAttrs(slog.String("request_id", l.id), slog.String("method", l.method), slog.String("path", l.path),
						slog.Int("status", status), slog.Duration("duration", d))
					if err := ref.Handler.Handle(context.Background(), rec); err != nil {
						t.Fatal(err)
					}
					if fast.String() != viaSlog.String() {
						t.Fatalf("%s:\nfast %q\nslog %q", format, fast.String(), viaSlog.String())
					}
				}
			}
		}
	}
}

// Values slog would quote or escape are left to slog; below the level,
// nothing is written.
func TestRequestLineFallsBackToSlog(t *testing.T) {
	var out bytes.Buffer
	h, _ := NewLogHandler(&out, "text", slog.LevelInfo)
	for _, path := range []string{"/a b", "/a=b", `/a"b`, "/a\\b", "/ä", "", "/a\x00", "/%2F", "/<x>"} {
		if h.logRequest(context.Background(), time.Now(), "0123456789abcdef", "GET", path, 200, time.Millisecond) {
			t.Errorf("path %q: fast path took a value slog would quote or escape", path)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("declined lines were written: %q", out.String())
	}
	quiet, _ := NewLogHandler(&out, "json", slog.LevelWarn)
	if !quiet.logRequest(context.Background(), time.Now(), "0123456789abcdef", "GET", "/api/ping", 200, time.Millisecond) || out.Len() != 0 {
		t.Fatalf("below the level: want nothing written and no fallback, got %q", out.String())
	}
}

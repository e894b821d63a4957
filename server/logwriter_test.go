package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/server"
)

func TestLogWriterFlushesOnTimeAndClose(t *testing.T) {
	var out syncbuf.Buffer
	w := server.NewLogWriter(&out, 20*time.Millisecond)
	_, _ = w.Write([]byte("one\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "one\n" {
		if time.Now().After(deadline) {
			t.Fatalf("not flushed by the timer: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _ = w.Write([]byte("two\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Close: %q", got)
	}
	_, _ = w.Write([]byte("three\n")) // after Close: written through
	if got := out.String(); !strings.HasSuffix(got, "three\n") {
		t.Fatalf("write after Close: %q", got)
	}
	_ = w.Close() // twice is fine
}

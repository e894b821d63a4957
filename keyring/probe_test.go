package keyring

import (
	"errors"
	"testing"
)

func TestRoundTripLeavesNothingBehind(t *testing.T) {
	s, mem, _ := openMem(t)
	before := len(mem.snapshot())
	if err := s.RoundTrip(); err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	if after := len(mem.snapshot()); after != before {
		t.Fatalf("RoundTrip left %d keyring items behind", after-before)
	}
}

func TestRoundTripReportsUnavailableKeyring(t *testing.T) {
	s, _, _ := openMem(t)
	s.backend = failingBackend{err: errors.New("no bus")}
	if err := s.RoundTrip(); !errors.Is(err, ErrKeyringUnavailable) {
		t.Fatalf("RoundTrip on a failing keyring: %v, want ErrKeyringUnavailable", err)
	}
}

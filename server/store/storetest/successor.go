package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// wantSuccessor fails the test unless the stored token hash has Successor
// want (nil: none).
func wantSuccessor(t *testing.T, s store.Store, what, hash string, want []byte) {
	t.Helper()
	got, err := s.GetRefreshToken(t.Context(), hash)
	must(t, "GetRefreshToken "+what, err)
	if !bytes.Equal(got.Successor, want) || (got.Successor == nil) != (want == nil) {
		t.Errorf("%s: Successor %q, want %q", what, got.Successor, want)
	}
}

// testRefreshSuccessor: a rotation keeps what it is given on the token it
// spends, a refused rotation keeps nothing and changes nothing, the next
// rotation of the family drops it (nil included), and so does revoking the
// family.
func testRefreshSuccessor(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := createRefresh(t, s, "rt-1", "fam-1")
	wantSuccessor(t, s, "a new token", first.Hash, nil)
	now := base.Add(time.Hour)
	second := successor(first, "rt-2", "jti-2", now)
	kept1 := []byte("sealed pair 2\x00\xff")
	got, err := s.RotateRefreshToken(ctx, first.Hash, second, now, kept1)
	must(t, "RotateRefreshToken", err)
	if !bytes.Equal(got.Successor, kept1) {
		t.Errorf("RotateRefreshToken result: Successor %q, want %q", got.Successor, kept1)
	}
	wantSuccessor(t, s, "the spent token", first.Hash, kept1)
	wantSuccessor(t, s, "the new token", second.Hash, nil)

	// A replay is refused with the record, which names what the winner
	// kept, and its own successor is not kept.
	got, err = s.RotateRefreshToken(ctx, first.Hash, successor(first, "rt-x", "jti-x", now), now, []byte("replay"))
	wantErr(t, "RotateRefreshToken replay", err, store.ErrAlreadyUsed)
	if !bytes.Equal(got.Successor, kept1) {
		t.Errorf("replay record: Successor %q, want the winner's %q", got.Successor, kept1)
	}
	// So is a rotation onto a taken hash: the family's kept one stays.
	createRefresh(t, s, "rt-other", "fam-other")
	_, err = s.RotateRefreshToken(ctx, second.Hash, successor(second, "rt-other", "jti-y", now), now, []byte("refused"))
	wantErr(t, "RotateRefreshToken onto a taken hash", err, store.ErrAlreadyExists)
	wantSuccessor(t, s, "the spent token after refused rotations", first.Hash, kept1)
	wantSuccessor(t, s, "a token whose rotation was refused", second.Hash, nil)

	third := successor(second, "rt-3", "jti-3", now.Add(time.Minute))
	kept2 := []byte("sealed pair 3")
	_, err = s.RotateRefreshToken(ctx, second.Hash, third, now.Add(time.Minute), kept2)
	must(t, "RotateRefreshToken second", err)
	wantSuccessor(t, s, "the first token after the family rotated again", first.Hash, nil)
	wantSuccessor(t, s, "the second token", second.Hash, kept2)

	fourth := successor(third, "rt-4", "jti-4", now.Add(2*time.Minute))
	_, err = s.RotateRefreshToken(ctx, third.Hash, fourth, now.Add(2*time.Minute), nil)
	must(t, "RotateRefreshToken keeping nothing", err)
	wantSuccessor(t, s, "the second token after a rotation that kept nothing", second.Hash, nil)
	wantSuccessor(t, s, "the third token", third.Hash, nil)

	fifth := successor(fourth, "rt-5", "jti-5", now.Add(3*time.Minute))
	_, err = s.RotateRefreshToken(ctx, fourth.Hash, fifth, now.Add(3*time.Minute), []byte("sealed pair 5"))
	must(t, "RotateRefreshToken fourth", err)
	_, err = s.RevokeRefreshFamily(ctx, first.FamilyID)
	must(t, "RevokeRefreshFamily", err)
	wantSuccessor(t, s, "the fourth token of a revoked family", fourth.Hash, nil)
}

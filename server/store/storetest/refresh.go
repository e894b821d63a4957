package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

func normRefresh(r store.RefreshToken) store.RefreshToken {
	r.ExpiresAt, r.CreatedAt, r.TokenExp, r.UsedAt = ms(r.ExpiresAt), ms(r.CreatedAt), ms(r.TokenExp), ms(r.UsedAt)
	return r
}

// newRefresh is the first token of family fam.
func newRefresh(hash, fam string) store.RefreshToken {
	return store.RefreshToken{
		Hash: hash, FamilyID: fam, ClientID: "client-1", UserID: "user-1", Scope: "mcp offline_access",
		Resource: "https://mcp.example/mcp", ExpiresAt: base.Add(30 * 24 * time.Hour), CreatedAt: base,
		TokenID: fam, TokenExp: base.Add(24 * time.Hour),
	}
}

// createRefresh stores the first token of family fam and returns it.
func createRefresh(t *testing.T, s store.Store, hash, fam string) store.RefreshToken {
	t.Helper()
	r := newRefresh(hash, fam)
	must(t, "CreateRefreshToken", s.CreateRefreshToken(t.Context(), r))
	return r
}

// rotate rotates prev at now into a successor with hash and access token
// jti, keeping nothing on prev, and returns the successor.
func rotate(t *testing.T, s store.Store, prev store.RefreshToken, hash, jti string, now time.Time) store.RefreshToken {
	t.Helper()
	next := successor(prev, hash, jti, now)
	_, err := s.RotateRefreshToken(t.Context(), prev.Hash, next, now, nil)
	must(t, "RotateRefreshToken", err)
	return next
}

// successor is the token a rotation at now adds to prev's family.
func successor(prev store.RefreshToken, hash, jti string, now time.Time) store.RefreshToken {
	n := prev
	n.Hash, n.CreatedAt, n.TokenID, n.TokenExp, n.Used, n.UsedAt = hash, now, jti, now.Add(24*time.Hour), false, time.Time{}
	return n
}

func testRefreshTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	r := createRefresh(t, s, "rt-1", "fam-1")
	stored(t, "GetRefreshToken", s.GetRefreshToken, r.Hash, r, normRefresh)

	dup := newRefresh("rt-1", "fam-2")
	wantErr(t, "CreateRefreshToken duplicate hash", s.CreateRefreshToken(ctx, dup), store.ErrAlreadyExists)
	dup = newRefresh("rt-2", "fam-1")
	dup.UserID = "user-2"
	wantErr(t, "CreateRefreshToken duplicate family", s.CreateRefreshToken(ctx, dup), store.ErrAlreadyExists)
	absent(t, "GetRefreshToken of a refused family", s.GetRefreshToken, "rt-2")
	stored(t, "GetRefreshToken after duplicates", s.GetRefreshToken, r.Hash, r, normRefresh)

	absent(t, "GetRefreshToken unknown", s.GetRefreshToken, "no-such-token")
}

func testRotateRefreshToken(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := createRefresh(t, s, "rt-1", "fam-1")
	now := base.Add(time.Hour)
	next := successor(first, "rt-2", "jti-2", now)

	// A successor whose hash is taken changes nothing.
	createRefresh(t, s, "rt-other", "fam-other")
	_, err := s.RotateRefreshToken(ctx, first.Hash, successor(first, "rt-other", "jti-x", now), now, nil)
	wantErr(t, "RotateRefreshToken onto a taken hash", err, store.ErrAlreadyExists)
	stored(t, "token after a refused rotation", s.GetRefreshToken, first.Hash, first, normRefresh)

	spent := first
	spent.Used, spent.UsedAt = true, now
	got, err := s.RotateRefreshToken(ctx, first.Hash, next, now, nil)
	must(t, "RotateRefreshToken", err)
	same(t, "RotateRefreshToken result", got, spent, normRefresh)
	stored(t, "spent token", s.GetRefreshToken, first.Hash, spent, normRefresh)
	stored(t, "successor (family fields inherited)", s.GetRefreshToken, next.Hash, next, normRefresh)

	// A spent token cannot rotate again, and the record says it was spent.
	got, err = s.RotateRefreshToken(ctx, first.Hash, successor(first, "rt-3", "jti-3", now), now.Add(time.Second), nil)
	wantErr(t, "RotateRefreshToken replay", err, store.ErrAlreadyUsed)
	same(t, "RotateRefreshToken replay record", got, spent, normRefresh)
	absent(t, "successor of a replay", s.GetRefreshToken, "rt-3")

	// The successor rotates in turn, within the same family.
	later := now.Add(time.Hour)
	third := successor(next, "rt-3", "jti-3", later)
	_, err = s.RotateRefreshToken(ctx, next.Hash, third, later, nil)
	must(t, "RotateRefreshToken successor", err)
	stored(t, "third token", s.GetRefreshToken, third.Hash, third, normRefresh)

	_, err = s.RotateRefreshToken(ctx, "no-such-token", successor(first, "rt-4", "jti-4", now), now, nil)
	wantErr(t, "RotateRefreshToken unknown", err, store.ErrNotFound)
	absent(t, "successor of an unknown token", s.GetRefreshToken, "rt-4")
}

func testRevokeRefreshFamily(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := createRefresh(t, s, "rt-1", "fam-1")
	now := base.Add(time.Hour)
	second := rotate(t, s, first, "rt-2", "jti-2", now)
	third := rotate(t, s, second, "rt-3", "jti-3", now.Add(time.Minute))
	bystander := createRefresh(t, s, "rt-b", "fam-b")

	revoked, err := s.RevokeRefreshFamily(ctx, "fam-1")
	must(t, "RevokeRefreshFamily", err)
	want := []store.RevokedToken{
		{ID: first.TokenID, ExpiresAt: first.TokenExp}, {ID: second.TokenID, ExpiresAt: second.TokenExp}, {ID: third.TokenID, ExpiresAt: third.TokenExp},
	}
	checkRevokedSet(t, revoked, want)
	for _, r := range want {
		if ok, err := s.IsTokenRevoked(ctx, r.ID); err != nil || !ok {
			t.Errorf("access token %s of the family: IsTokenRevoked = %v, %v; want true", r.ID, ok, err)
		}
	}
	for _, h := range []string{first.Hash, second.Hash, third.Hash} {
		got, err := s.GetRefreshToken(ctx, h)
		must(t, "GetRefreshToken", err)
		if !got.Revoked {
			t.Errorf("refresh token %s: Revoked = false after its family was revoked", h)
		}
	}
	// The live token of a revoked family no longer rotates.
	got, err := s.RotateRefreshToken(ctx, third.Hash, successor(third, "rt-4", "jti-4", now), now.Add(2*time.Minute), nil)
	wantErr(t, "RotateRefreshToken in a revoked family", err, store.ErrAlreadyUsed)
	if !got.Revoked || got.Used {
		t.Errorf("record of a refused rotation in a revoked family: Revoked=%v Used=%v, want true, false", got.Revoked, got.Used)
	}
	if _, err := s.GetRefreshToken(ctx, "rt-4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked family gained a token: %v", err)
	}

	again, err := s.RevokeRefreshFamily(ctx, "fam-1")
	must(t, "RevokeRefreshFamily again", err)
	checkRevokedSet(t, again, want)

	stored(t, "another family", s.GetRefreshToken, bystander.Hash, bystander, normRefresh)
	if ok, _ := s.IsTokenRevoked(ctx, bystander.TokenID); ok {
		t.Error("another family's access token was revoked")
	}
	_, err = s.RevokeRefreshFamily(ctx, "no-such-family")
	wantErr(t, "RevokeRefreshFamily unknown", err, store.ErrNotFound)
}

func checkRevokedSet(t *testing.T, got, want []store.RevokedToken) {
	t.Helper()
	norm := func(l []store.RevokedToken) []string {
		out := make([]string, len(l))
		for i, r := range l {
			out[i] = fmt.Sprintf("%s@%d", r.ID, r.ExpiresAt.UnixMilli())
		}
		slices.Sort(out)
		return out
	}
	if g, w := norm(got), norm(want); !slices.Equal(g, w) {
		t.Errorf("revoked access tokens %q, want %q", g, w)
	}
}

// testConcurrentRotate: of 50 rotations of one token exactly one succeeds;
// the others get ErrAlreadyUsed, add nothing to the family, and find what
// the winner kept in the record, never their own.
func testConcurrentRotate(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 50
	first := createRefresh(t, s, "rt-raced", "fam-raced")
	now := base.Add(time.Minute)
	errs := make([]error, n)
	results := make([]store.RefreshToken, n)
	kept := func(i int) []byte { return []byte(fmt.Sprintf("sealed by %d", i)) }
	race(n, func(i int) {
		results[i], errs[i] = s.RotateRefreshToken(ctx, first.Hash, successor(first, fmt.Sprintf("rt-next-%d", i), fmt.Sprintf("jti-%d", i), now), now, kept(i))
	})
	winner := soleWinner(t, "goroutines rotating the token", errs, store.ErrAlreadyUsed)
	for i, r := range results {
		if i != winner && !r.Used {
			t.Errorf("goroutine %d: refused, but the record is not marked used", i)
		}
	}
	for i, r := range results {
		if !bytes.Equal(r.Successor, kept(winner)) {
			t.Errorf("goroutine %d (winner %d): Successor %q, want the winner's", i, winner, r.Successor)
		}
	}
	for i := range n {
		_, err := s.GetRefreshToken(ctx, fmt.Sprintf("rt-next-%d", i))
		if i == winner {
			must(t, "GetRefreshToken winner's successor", err)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("loser %d's successor: got %v, want ErrNotFound", i, err)
		}
	}
	revoked, err := s.RevokeRefreshFamily(ctx, first.FamilyID)
	must(t, "RevokeRefreshFamily", err)
	checkRevokedSet(t, revoked, []store.RevokedToken{
		{ID: first.TokenID, ExpiresAt: first.TokenExp}, {ID: fmt.Sprintf("jti-%d", winner), ExpiresAt: now.Add(24 * time.Hour)},
	})
}

// testConcurrentRotateRevoke: a rotation racing a revocation either fails
// or issues an access token that the revocation denies, never one that
// escapes it.
func testConcurrentRotateRevoke(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(time.Minute)
	for round := range 20 {
		first := createRefresh(t, s, fmt.Sprintf("rt-%d", round), fmt.Sprintf("fam-%d", round))
		next := successor(first, fmt.Sprintf("rt-%d-next", round), fmt.Sprintf("jti-%d-next", round), now)
		var rotErr, revErr error
		race(2, func(i int) {
			if i == 0 {
				_, rotErr = s.RotateRefreshToken(ctx, first.Hash, next, now, nil)
			} else {
				_, revErr = s.RevokeRefreshFamily(ctx, first.FamilyID)
			}
		})
		must(t, "RevokeRefreshFamily", revErr)
		if rotErr != nil {
			wantErr(t, "rotation that lost to the revocation", rotErr, store.ErrAlreadyUsed)
			continue
		}
		if ok, err := s.IsTokenRevoked(ctx, next.TokenID); err != nil || !ok {
			t.Fatalf("round %d: the access token of a rotation that won escaped the revocation (%v, %v)", round, ok, err)
		}
		got, err := s.GetRefreshToken(ctx, next.Hash)
		must(t, "GetRefreshToken", err)
		if !got.Revoked {
			t.Fatalf("round %d: the successor is not revoked", round)
		}
	}
}

// testRefreshGC: a family goes once past its end and once every access
// token issued in it has expired; "past" is strict.
func testRefreshGC(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(40 * 24 * time.Hour)
	past, future := now.Add(-time.Millisecond), now.Add(time.Millisecond)
	family := func(fam string, expires, lastTokenExp time.Time) {
		r := newRefresh(fam+"-1", fam)
		r.ExpiresAt, r.TokenExp = expires, past
		must(t, "CreateRefreshToken", s.CreateRefreshToken(ctx, r))
		n := successor(r, fam+"-2", fam+"-jti-2", base)
		n.TokenExp = lastTokenExp
		_, err := s.RotateRefreshToken(ctx, r.Hash, n, base, nil)
		must(t, "RotateRefreshToken", err)
	}
	family("gone", past, past)         // 2 tokens + the family
	family("token-live", past, future) // kept: revoking it must still deny that token
	family("at-now", now, past)        // kept: "past" is strict
	family("live", future, past)       // kept
	family("token-at-now", past, now)  // kept
	n, err := s.GC(ctx, now)
	must(t, "GC", err)
	if n != 3 {
		t.Errorf("GC removed %d records, want 3 (two tokens and their family)", n)
	}
	for fam, kept := range map[string]bool{"gone": false, "token-live": true, "at-now": true, "live": true, "token-at-now": true} {
		for _, h := range []string{fam + "-1", fam + "-2"} {
			_, err := s.GetRefreshToken(ctx, h)
			checkKept(t, "refresh token "+h, kept, err)
		}
		_, err := s.RevokeRefreshFamily(ctx, fam)
		checkKept(t, "refresh family "+fam, kept, err)
	}
	// The collected family's id is free again.
	must(t, "CreateRefreshToken reusing a collected family", s.CreateRefreshToken(ctx, newRefresh("gone-again", "gone")))
}

package conformance

import (
	"slices"
	"strings"
	"testing"
)

// Each fault of the fake service must make exactly the named checks fail (or
// warn, for Should checks): proof that these checks can fail at all, and that
// a single misbehaviour is not blamed on unrelated checks.
func TestFaultsAreCaught(t *testing.T) {
	tests := []struct {
		fault string
		want  []string
	}{
		{"prm-no-scopes", []string{"DISC-04", "DISC-05"}},
		{"issuer-slash", []string{"DISC-07"}},
		{"token-error-cache", []string{"DEV-12", "DEV-30", "TOKEN-06"}},
		{"ping-accept-none", []string{"PING-03", "PING-07"}},
		{"authorize-redirect-prefix", []string{"AUTHZ-05", "AUTHZ-07"}},
		{"no-slow-down", []string{"DEV-14", "DEV-15", "DEV-16"}},
		{"device-interval-not-raised", []string{"DEV-15"}},
		{"reuse-no-revoke", []string{"TOKEN-11"}},
		{"code-no-expiry", []string{"TOKEN-18"}},
		{"jwt-no-expiry", []string{"PING-12"}},
		{"challenge-no-scope", []string{"HDR-01", "HDR-02", "HDR-03", "HDR-04", "HDR-05"}},
		{"consent-no-csrf-check", []string{"AUTHZ-24"}},
		{"cookie-not-httponly", []string{"LOGIN-04"}},
		{"naive-return-to", []string{"LOGIN-06"}},
		{"access-token-session", []string{"LOGIN-07"}},
		{"clock-cross-origin", []string{"HDR-08"}},
		{"old-key-valid", []string{"KEY-06"}},
		{"no-frame-headers", []string{"HDR-07"}},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			t.Parallel()
			rep := runFake(t, newFakeService(t, tt.fault), "", Options{Parallel: 8})
			var failed []string
			for _, r := range rep.Results {
				switch r.Verdict {
				case VerdictFail, VerdictWarn:
					failed = append(failed, r.ID)
					if r.Reason == "" {
						t.Errorf("%s failed without a reason", r.ID)
					}
				case VerdictSkip:
					t.Errorf("%s skipped: %s", r.ID, r.Reason)
				}
			}
			slices.Sort(failed)
			if !slices.Equal(failed, tt.want) {
				t.Errorf("failing checks: got %v, want %v", failed, tt.want)
				for _, r := range rep.Results {
					if r.Verdict == VerdictFail || r.Verdict == VerdictWarn {
						t.Logf("%s: %s", r.ID, r.Reason)
					}
				}
			}
			if !rep.Failed() {
				t.Errorf("the run did not fail")
			}
			if tt.fault == "prm-no-scopes" {
				for _, r := range rep.Results {
					if r.ID == "DISC-04" && !strings.Contains(r.Reason, `"scopes_supported" missing`) {
						t.Errorf("DISC-04 reason %q does not name the missing member", r.Reason)
					}
				}
			}
		})
	}
}

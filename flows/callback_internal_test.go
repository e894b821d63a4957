package flows

import (
	"errors"
	"net/url"
	"testing"
)

func TestCheckCallback(t *testing.T) {
	c := callbackWant{State: "s1", Issuer: "https://as.example"}
	tests := []struct {
		name  string
		query string
		check callbackWant
		want  error
		code  string
	}{
		{"ok", "code=c&state=s1", c, nil, "c"},
		{"ok with iss", "code=c&state=s1&iss=https%3A%2F%2Fas.example", c, nil, "c"},
		{"wrong state wins over error", "error=access_denied&state=s2", c, ErrStateMismatch, ""},
		{"missing state", "code=c", c, ErrStateMismatch, ""},
		{"empty expected state", "code=c&state=", callbackWant{}, ErrStateMismatch, ""},
		{"iss differs by a slash", "code=c&state=s1&iss=https%3A%2F%2Fas.example%2F", c, ErrIssuerMismatch, ""},
		{"iss required", "code=c&state=s1", callbackWant{State: "s1", Issuer: "x", RequireIss: true}, ErrIssuerMismatch, ""},
		{"error", "error=access_denied&state=s1", c, ErrAccessDenied, ""},
		{"no code", "state=s1", c, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			code, err := checkCallback(q, tt.check)
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.name == "no code" && !IsCode(err, "invalid_request") {
				t.Fatalf("err = %v, want invalid_request", err)
			}
			if tt.want == nil && tt.name != "no code" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if code != tt.code {
				t.Errorf("code %q, want %q", code, tt.code)
			}
		})
	}
}

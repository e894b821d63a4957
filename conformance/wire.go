package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The suite reads answers with its own types and member by member on
// purpose: they mirror the contract, not any implementation (flows included),
// so a renamed field fails the run.

type oauthError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// tokenResponse200 is what a token request that must succeed wants.
const tokenResponse200 = "HTTP 200 with a token response"

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// object is a JSON object read member by member, so a check can say which
// member is missing or of the wrong type.
type object map[string]json.RawMessage

func decodeObject(r *Response) (object, error) {
	var o object
	if err := json.Unmarshal(r.Body, &o); err != nil || o == nil {
		return nil, Fail("want a JSON object, got %s", r.Snippet())
	}
	return o, nil
}

// okObject is the JSON object of an HTTP 200 answer; want says in the
// failure what was expected ("HTTP 200 with a token response").
func okObject(r *Response, want string) (object, error) {
	if r.Status != 200 {
		return nil, Fail("want %s, got %s", want, r.Snippet())
	}
	return decodeObject(r)
}

func (o object) has(k string) bool { _, ok := o[k]; return ok }

func (o object) str(k string) (string, error) {
	raw, ok := o[k]
	if !ok {
		return "", Fail("member %q missing", k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", Fail("member %q: want a string, got %s", k, compactJSON(raw))
	}
	return s, nil
}

// filled is member k, a string that must not be empty.
func (o object) filled(k string) (string, error) {
	s, err := o.str(k)
	if err == nil && s == "" {
		err = Fail("%s is empty", k)
	}
	return s, err
}

// filledStrs is member k, an array of strings that must not be empty.
func (o object) filledStrs(k string) ([]string, error) {
	s, err := o.strs(k)
	if err == nil && len(s) == 0 {
		err = Fail("%s is empty", k)
	}
	return s, err
}

func (o object) strs(k string) ([]string, error) {
	raw, ok := o[k]
	if !ok {
		return nil, Fail("member %q missing", k)
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, Fail("member %q: want an array of strings, got %s", k, compactJSON(raw))
	}
	return s, nil
}

func (o object) integer(k string) (int64, error) {
	raw, ok := o[k]
	if !ok {
		return 0, Fail("member %q missing", k)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, Fail("member %q: want an integer, got %s", k, compactJSON(raw))
	}
	return n, nil
}

// wantStr checks member k equals want.
func (o object) wantStr(k, want string) error {
	got, err := o.str(k)
	if err != nil {
		return err
	}
	if got != want {
		return Fail("%s: want %q, got %q", k, want, got)
	}
	return nil
}

// wantInt checks member k, an integer, equals want.
func (o object) wantInt(k string, want int64) error {
	got, err := o.integer(k)
	if err == nil && got != want {
		return Fail("%s: want %d, got %d", k, want, got)
	}
	return err
}

// wantSet checks member k holds exactly the values in want, in any order.
func (o object) wantSet(k string, want ...string) error {
	return o.wantSetWith(k, nil, want...)
}

// wantSetWith is wantSet where the members optional may be there too.
func (o object) wantSetWith(k string, optional []string, want ...string) error {
	got, err := o.strs(k)
	if err != nil {
		return err
	}
	got = slices.DeleteFunc(slices.Clone(got), func(s string) bool { return slices.Contains(optional, s) && !slices.Contains(want, s) })
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return Fail("%s: want %q, got %q", k, want, got)
	}
	return nil
}

// wantOAuthError checks an RFC 6749 §5.2 error: the status (0 = any 4xx), a
// JSON body whose error is one of codes and whose error_description, when
// present, is a string.
func wantOAuthError(r *Response, status int, codes ...string) error {
	want := fmt.Sprintf("HTTP %d with error %s", status, strings.Join(codes, " or "))
	if status == 0 {
		want = fmt.Sprintf("HTTP 4xx with error %s", strings.Join(codes, " or "))
	}
	if (status != 0 && r.Status != status) || (status == 0 && (r.Status < 400 || r.Status > 499)) {
		return Fail("want %s, got %s", want, r.Snippet())
	}
	o, err := decodeObject(r)
	if err != nil {
		return Fail("want %s as an RFC 6749 JSON body, got %s", want, r.Snippet())
	}
	code, err := o.str("error")
	if err != nil {
		return Fail("want %s: %v", want, err)
	}
	if o.has("error_description") {
		if _, err := o.str("error_description"); err != nil {
			return err
		}
	}
	if !slices.Contains(codes, code) {
		return Fail("want %s, got error %q (%s)", want, code, r.Snippet())
	}
	return nil
}

// wantTokenResponse checks a successful token response per the contract.
// Only the checks about the token response itself (TOKEN-08, DEV-24) use it;
// the rest read the token with accessToken.
func wantTokenResponse(r *Response) (*tokenResponse, error) {
	o, err := okObject(r, tokenResponse200)
	if err != nil {
		return nil, err
	}
	var t tokenResponse
	if t.AccessToken, err = o.str("access_token"); err != nil {
		return nil, err
	}
	if t.TokenType, err = o.str("token_type"); err != nil {
		return nil, err
	}
	if t.ExpiresIn, err = o.integer("expires_in"); err != nil {
		return nil, err
	}
	if t.AccessToken == "" {
		return nil, Fail("access_token is empty")
	}
	return &t, nil
}

// accessToken returns the access token of a successful token response. It is
// for checks that only need a token, so that a response lacking another member
// (expires_in, say) fails the checks about the response, not every check that
// uses a token.
func accessToken(r *Response) (string, error) {
	o, err := okObject(r, tokenResponse200)
	if err != nil {
		return "", err
	}
	return o.filled("access_token")
}

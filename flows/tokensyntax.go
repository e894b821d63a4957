package flows

import (
	"errors"
	"fmt"
)

// ErrTokenSyntax: a token response carried a token that could not travel
// in an Authorization header.
var ErrTokenSyntax = errors.New("token with a character no Authorization header may carry (a space, a control character or a non-ASCII byte)")

// checkTokenSyntax refuses a token (access or refresh; "" is absent) that
// could not travel as `Authorization: Bearer <token>`: RFC 6749 appendix
// A.12 makes a token printable ASCII (VSCHAR), and a space would end it
// early. Anything else, a CR LF above all, would become extra header lines
// wherever the token is written as a header (token --header, curl -H
// @file). RFC 6750's stricter b64token is not asked for: real servers
// issue tokens outside it (Cloudflare's workers-oauth-provider writes
// "user:grant:secret"), which every Bearer resource takes. The token itself
// is never quoted in the error.
func checkTokenSyntax(tok string) error {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("byte %d of %d is %s: refused: %w", i+1, len(tok), describeByte(c), ErrTokenSyntax)
		}
	}
	return nil
}

// describeByte names a byte a token may not hold without showing the
// token: a control character or space by name, any other by its code.
func describeByte(c byte) string {
	switch {
	case c == '\r':
		return "a carriage return (CR)"
	case c == '\n':
		return "a line feed (LF)"
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("the control character 0x%02X", c)
	case c == ' ':
		return "a space"
	case c >= 0x80:
		return "a non-ASCII byte"
	}
	return fmt.Sprintf("%q", c)
}

package oauthwire_test

import (
	"errors"
	"testing"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

func TestCheckLaunchable(t *testing.T) {
	for _, ok := range []string{"https://as.example/device?user_code=A", "HTTPS://AS.example/x", "http://127.0.0.1:8080/auth/device", "http://[::1]/a", "http://localhost/a"} {
		if err := oauthwire.CheckLaunchable(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-", "--renderer-cmd-prefix=/tmp/x", "/device", "device", "file:///etc/passwd", "javascript:alert(1)",
		"data:text/html,hi", "https:opaque", "https:///nohost", "http://192.0.2.1/device", "https://as.example/\r\nx", " https://as.example/"} {
		if err := oauthwire.CheckLaunchable(bad, false); !errors.Is(err, oauthwire.ErrNotLaunchable) {
			t.Errorf("%q: %v, want ErrNotLaunchable", bad, err)
		}
	}
	if err := oauthwire.CheckLaunchable("http://192.0.2.1/device", true); err != nil {
		t.Errorf("plain http with the override: %v", err)
	}
	if err := oauthwire.CheckLaunchable("file:///etc/passwd", true); err == nil {
		t.Error("file: with the http override")
	}
}

package launch

import "testing"

func TestHeadless(t *testing.T) {
	for _, tt := range []struct {
		env      map[string]string
		goos     string
		headless bool
	}{
		{map[string]string{"DISPLAY": ":0"}, "linux", false},
		{map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, "linux", false},
		{map[string]string{}, "linux", true},
		{map[string]string{}, "darwin", false},
		{map[string]string{"DISPLAY": ":0", "SSH_CONNECTION": "1 2 3 4"}, "linux", true},
		{map[string]string{"SSH_TTY": "/dev/pts/1"}, "darwin", true},
	} {
		if got := Headless(func(k string) string { return tt.env[k] }, tt.goos) != ""; got != tt.headless {
			t.Errorf("Headless(%v, %s) = %v, want %v", tt.env, tt.goos, got, tt.headless)
		}
	}
}

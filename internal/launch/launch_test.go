package launch

import (
	"strings"
	"testing"
)

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

// A system browser that would not open is named, with the end of what it
// said, bounded and printable.
func TestOpenerFailureNamesTheProgram(t *testing.T) {
	for goos, want := range map[string]string{"linux": "xdg-open", "darwin": "open", "windows": "rundll32"} {
		if got := systemOpener(goos); !strings.HasPrefix(got, want) {
			t.Errorf("%s opener %q", goos, got)
		}
	}
	var w tailWriter
	for range 100 {
		w.Write([]byte("xdg-open: no method available for opening the URL\n\x1b[31m"))
	}
	if s := w.String(); len(s) > 300 || !strings.Contains(s, "no method available") || strings.ContainsRune(s, 0x1b) {
		t.Errorf("tail %q", s)
	}
}

// Package launch decides how a URL reaches the user's browser: a command
// the user named, the system's browser, or none (printed only) on an SSH
// session or a Linux without a display.
package launch

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/pkg/browser"
)

// Headless explains why no browser should be launched here, or returns "".
func Headless(getenv func(string) string, goos string) string {
	switch {
	case getenv("SSH_CONNECTION") != "" || getenv("SSH_TTY") != "":
		return "this is an SSH session"
	case goos == "linux" && getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "":
		return "no graphical display (DISPLAY and WAYLAND_DISPLAY are unset)"
	}
	return ""
}

// Opener decides how a URL reaches the user's browser. It returns nil when
// the URL should only be printed, with the reason if there is one:
// noBrowser (--no-browser); else command, or MCPAUTH_BROWSER read through
// getenv (run without a shell, the URL as the last argument); else
// override (tests); else, unless this is an SSH session or a display-less
// Linux (goos), the system's default browser.
func Opener(command string, noBrowser bool, getenv func(string) string, override func(string) error, goos string) (open func(string) error, why string) {
	if noBrowser {
		return nil, ""
	}
	if command == "" {
		command = getenv("MCPAUTH_BROWSER")
	}
	if fields := strings.Fields(command); len(fields) > 0 {
		return func(u string) error {
			cmd := exec.Command(fields[0], append(fields[1:], u)...)
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("starting browser command %q: %w", fields[0], err)
			}
			go func() { _ = cmd.Wait() }()
			return nil
		}, ""
	}
	if override != nil {
		return override, ""
	}
	if why := Headless(getenv, goos); why != "" {
		return nil, why
	}
	return func(u string) error {
		var stderr tailWriter
		browser.Stdout, browser.Stderr = io.Discard, &stderr
		if err := browser.OpenURL(u); err != nil {
			detail := ""
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				detail = ": " + msg
			}
			return fmt.Errorf("%s failed (%v)%s; set MCPAUTH_BROWSER or pass --browser-command to choose the browser", systemOpener(goos), err, detail)
		}
		return nil
	}, ""
}

// systemOpener names the program pkg/browser runs, for error messages.
func systemOpener(goos string) string {
	switch goos {
	case "darwin":
		return "open"
	case "windows":
		return "rundll32 url.dll,FileProtocolHandler"
	}
	return "xdg-open"
}

// tailWriter keeps the last bytes a program wrote: enough to say why it
// failed, bounded whatever it prints, with control characters dropped.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	const keep = 300
	w.b = append(w.b, p...)
	if len(w.b) > keep {
		w.b = w.b[len(w.b)-keep:]
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(w.b))
}

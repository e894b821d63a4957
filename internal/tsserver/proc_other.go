//go:build !unix

package tsserver

import "os/exec"

// SetProcessGroup does nothing here: no process groups.
func SetProcessGroup(*exec.Cmd) {}

// StopProcessGroup kills the process alone.
func StopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Kill()
	<-exited
}

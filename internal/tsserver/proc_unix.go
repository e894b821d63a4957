//go:build unix

package tsserver

import (
	"os/exec"
	"syscall"
	"time"
)

// SetProcessGroup puts node in a process group of its own, so that stopping
// the group also stops anything it started.
func SetProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// StopProcessGroup sends SIGTERM to the group, and SIGKILL if node has not
// exited after 5 s.
func StopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	// Anything node started and left behind goes with the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

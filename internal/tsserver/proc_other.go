//go:build !unix

package tsserver

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func stopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Kill()
	<-exited
}

//go:build !linux

package bench

import (
	"errors"
	"os"
	"os/exec"
)

// PinSupported reports whether --pin works here.
const PinSupported = false

func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU pinning is only supported on Linux")
	}
	return cmd.Start()
}

func pinSelf(cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU pinning is only supported on Linux")
	}
	return nil
}

func interrupt(p *os.Process) error { return p.Kill() }

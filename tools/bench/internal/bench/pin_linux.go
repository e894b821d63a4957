package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// PinSupported reports whether --pin works here.
const PinSupported = true

// cpuSet is the set of cpus; empty means every CPU.
func cpuSet(cpus []int) (*unix.CPUSet, error) {
	var set unix.CPUSet
	if len(cpus) == 0 {
		for c := range runtime.NumCPU() {
			set.Set(c)
		}
		return &set, nil
	}
	for _, c := range cpus {
		if c < 0 || c >= runtime.NumCPU() {
			return nil, fmt.Errorf("no CPU %d (this machine has %d)", c, runtime.NumCPU())
		}
		set.Set(c)
	}
	return &set, nil
}

// startPinned starts cmd with its affinity set to cpus (all when empty):
// the starting thread takes the mask for the fork, so the child inherits it
// from its first instruction, then gets its own back.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	// A bench killed outright takes its servers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if len(cpus) == 0 {
		return cmd.Start()
	}
	set, err := cpuSet(cpus)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err
	}
	if err := unix.SchedSetaffinity(0, set); err != nil {
		return fmt.Errorf("sched_setaffinity: %w", err)
	}
	err = cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// pinSelf moves every thread of this process to cpus (empty: every CPU); threads started
// later inherit the mask of the thread that starts them.
func pinSelf(cpus []int) error {
	set, err := cpuSet(cpus)
	if err != nil {
		return err
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("sched_setaffinity: %w", err)
		}
	}
	return nil
}

func interrupt(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

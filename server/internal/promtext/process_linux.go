package promtext

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of /proc/self/stat's times; Linux fixes it at 100 for
// every architecture Go supports, and the Prometheus client assumes so too.
const userHZ = 100

// ProcessGauges writes the process_* families Prometheus's process
// collector gives, from /proc. A file that cannot be read leaves its
// families out: a scrape never fails for them.
func ProcessGauges(b *bytes.Buffer) {
	if st, err := readStat(); err == nil {
		WriteGauge(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", float64(st.utime+st.stime)/userHZ)
		WriteGauge(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", float64(st.rssPages*uint64(os.Getpagesize())))
		WriteGauge(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", float64(st.vsize))
		if boot, err := bootTime(); err == nil {
			WriteGauge(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", float64(boot)+float64(st.starttime)/userHZ)
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		WriteGauge(b, "process_open_fds", "Number of open file descriptors.", "gauge", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		WriteGauge(b, "process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(lim.Cur))
	}
}

type procStat struct {
	utime, stime, starttime, vsize, rssPages uint64
}

// readStat parses /proc/self/stat (proc(5)). The command name, field 2, is
// in parentheses and may hold spaces or parentheses itself, so fields are
// counted from after its last ')'.
func readStat() (procStat, error) {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(raw))
}

func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("no command name in %q", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, state
	field := func(n int) (uint64, error) {
		if n-3 >= len(f) {
			return 0, fmt.Errorf("/proc/self/stat has no field %d", n)
		}
		return strconv.ParseUint(f[n-3], 10, 64)
	}
	var st procStat
	for _, p := range []struct {
		n   int
		dst *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.starttime}, {23, &st.vsize}, {24, &st.rssPages}} {
		v, err := field(p.n)
		if err != nil {
			return procStat{}, err
		}
		*p.dst = v
	}
	return st, nil
}

// bootTime is the "btime" line of /proc/stat: the boot, in seconds since
// the epoch, from which a process's start time is counted.
func bootTime() (uint64, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/stat has no btime")
}

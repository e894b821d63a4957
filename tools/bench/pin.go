package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpauth/mcpauth/tools/bench/internal/bench"
)

// parsePin reads SERVER:LOAD CPU lists.
func parsePin(s string) (server, load []int, err error) {
	if s == "" {
		return nil, nil, nil
	}
	if !bench.PinSupported {
		return nil, nil, fmt.Errorf("CPU pinning is only supported on Linux")
	}
	sv, ld, ok := strings.Cut(s, ":")
	if !ok {
		return nil, nil, fmt.Errorf("want SERVER:LOAD CPU lists, e.g. 1:0")
	}
	if server, err = cpuList(sv); err != nil {
		return nil, nil, err
	}
	load, err = cpuList(ld)
	return server, load, err
}

func cpuList(s string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("bad CPU number %q", f)
		}
		cpus = append(cpus, c)
	}
	return cpus, nil
}

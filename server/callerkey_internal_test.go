package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/clock"
)

// Nine addresses of one /64, as one host may use, are one caller; another
// /64 is another; IPv4 addresses are counted one by one as before.
func TestCallerKey(t *testing.T) {
	var one64 []string
	for i := range 9 {
		one64 = append(one64, fmt.Sprintf("[2001:db8:1:2::%x]:%d", i+1, 40000+i))
	}
	one64 = append(one64, "[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", "[2001:db8:1:2::9%eth0]:2")
	for _, peer := range one64 {
		if got := callerKey(peer, DefaultIPv6Prefix); got != "2001:db8:1:2::/64" {
			t.Errorf("callerKey(%q) = %q, want 2001:db8:1:2::/64", peer, got)
		}
	}
	for _, tc := range []struct {
		peer   string
		prefix int
		want   string
	}{
		{"[2001:db8:1:3::1]:1", 64, "2001:db8:1:3::/64"},
		{"[2001:db8:1:2::1]:1", 48, "2001:db8:1::/48"},
		{"[2001:db8:1:2::1]:1", 128, "2001:db8:1:2::1/128"},
		{"[::1]:5", 64, "::/64"},
		{"192.0.2.1:5", 64, "192.0.2.1"},
		{"192.0.2.2:5", 64, "192.0.2.2"},
		{"[::ffff:192.0.2.1]:5", 64, "192.0.2.1"}, // IPv4-mapped is IPv4
		{"not an address", 64, "not an address"},
		{"", 64, ""},
	} {
		if got := callerKey(tc.peer, tc.prefix); got != tc.want {
			t.Errorf("callerKey(%q, %d) = %q, want %q", tc.peer, tc.prefix, got, tc.want)
		}
	}
}

// How many metadata document fetches nine addresses of one /64 get on a
// still clock: one budget by default, nine when each address counts.
func TestCallerBudgetPerPrefix(t *testing.T) {
	for _, tc := range []struct{ prefix, want int }{{DefaultIPv6Prefix, 20}, {128, 180}} {
		l := Limits{MetadataFetchPerIP: Limit{Rate: 0.5, Burst: 20}, IPv6Prefix: tc.prefix}.withDefaults()
		lim := newLimiters(l, clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), nil)
		allowed := 0
		for range 100 {
			for i := range 9 {
				if ok, _ := lim.cimdFetch.Allow(lim.caller(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1))); ok {
					allowed++
				}
			}
		}
		if allowed != tc.want {
			t.Errorf("prefix /%d: %d fetches allowed to 9 addresses, want %d", tc.prefix, allowed, tc.want)
		}
	}
}

func TestCheckIPv6Prefix(t *testing.T) {
	for bits, ok := range map[int]bool{31: false, 32: true, 64: true, 128: true, 129: false, -1: false} {
		if err := checkIPv6Prefix(bits); (err == nil) != ok {
			t.Errorf("checkIPv6Prefix(%d) = %v, want ok %v", bits, err, ok)
		}
	}
}

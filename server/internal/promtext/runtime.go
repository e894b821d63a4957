package promtext

import (
	"bytes"
	"runtime"
)

// RuntimeGauges writes the Go runtime's state under the names Prometheus's
// Go collector gives the same quantities, so dashboards built for those
// keep working. ReadMemStats stops the world briefly: once per scrape.
func RuntimeGauges(b *bytes.Buffer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	threads, _ := runtime.ThreadCreateProfile(nil)
	WriteGauge(b, "go_goroutines", "Number of goroutines that currently exist.", "gauge", float64(runtime.NumGoroutine()))
	writeHeader(b, "go_info", "Information about the Go environment.", "gauge")
	writeSeries(b, "go_info", []string{"version"}, []int{0}, labels{runtime.Version()}, "", "", 1)
	WriteGauge(b, "go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", "gauge", float64(ms.Alloc))
	WriteGauge(b, "go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", "counter", float64(ms.TotalAlloc))
	WriteGauge(b, "go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", "gauge", float64(ms.HeapInuse))
	WriteGauge(b, "go_memstats_heap_objects", "Number of currently allocated objects.", "gauge", float64(ms.HeapObjects))
	WriteGauge(b, "go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge", float64(ms.LastGC)/1e9)
	WriteGauge(b, "go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", "gauge", float64(ms.NextGC))
	WriteGauge(b, "go_memstats_sys_bytes", "Number of bytes obtained from system.", "gauge", float64(ms.Sys))
	WriteGauge(b, "go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting.", "gauge", float64(runtime.GOMAXPROCS(0)))
	WriteGauge(b, "go_threads", "Number of OS threads created.", "gauge", float64(threads))
}

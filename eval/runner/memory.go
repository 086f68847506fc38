package runner

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
)

// PeakMemory reports the process's peak resident memory (VmHWM, Linux),
// or the memory the Go runtime obtained from the OS elsewhere.
func PeakMemory() string {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				return strings.Join(strings.Fields(v), " ") + " resident"
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("%d MB from the OS", ms.Sys>>20)
}

// StartCPUProfile starts a CPU profile to path (none when path is
// empty); stop ends it. It is for finding what a run spends its time on
// (the hidden --cpuprofile of stem bench serve and stem kg build).
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

package runner

import (
	"fmt"
	"os"
	"runtime"
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

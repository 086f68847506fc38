package virtuoso

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// orphanEnv makes the test binary start a server and exit without
// stopping it, as a test binary killed at its -timeout does.
const orphanEnv = "STEM_VIRTUOSO_ORPHAN_PIDFILE"

func TestOrphanHelper(t *testing.T) {
	pidFile := os.Getenv(orphanEnv)
	if pidFile == "" {
		t.Skip("helper process for TestServerDiesWithItsParent")
	}
	srv, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(srv.Pid())), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Exit(0) // no Stop
}

// A server whose starter dies without stopping it dies too: no test run
// leaves a virtuoso-t behind.
func TestServerDiesWithItsParent(t *testing.T) {
	SkipUnavailable(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+pidFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		syscallKill(pid) // keep the machine clean even when the test fails
		t.Fatalf("virtuoso-t %d outlived the process that started it", pid)
	}
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

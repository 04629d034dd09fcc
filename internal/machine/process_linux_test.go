//go:build linux

package machine

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// procState is the state letter of /proc/PID/stat ("R", "S", "Z", …).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if f := bytes.Fields(b[i+1:]); i >= 0 && len(f) > 0 {
		return string(f[0])
	}
	return ""
}

// TestServerPIDZombieIsGone: a server that exited but is not yet reaped
// (state Z: its /proc entry stays, with RSS 0 and its final CPU times) is
// reported gone, as one already reaped is — never a process of RSS 0.
func TestServerPIDZombieIsGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	pid := cmd.Process.Pid
	reaped := false
	defer func() {
		if !reaped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	s := NewProcessSampler([]int{pid})
	s.Start()
	if !s.before[0].ok {
		t.Fatalf("a running child (pid %d, state %s) reads as not there", pid, procState(t, pid))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped: the child stays a zombie until Wait.
	for deadline := time.Now().Add(10 * time.Second); procState(t, pid) != "Z"; {
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie (state %q)", pid, procState(t, pid))
		}
		time.Sleep(time.Millisecond)
	}
	if st := readProcStat(pid); st.ok {
		t.Errorf("a zombie reads as a live process: %+v", st)
	}
	out := s.Finish(1)
	if len(out) != 1 || !out[0].Gone || out[0].RSSBytes != 0 {
		t.Fatalf("zombie server reported %+v, want gone", out)
	}
	if err := CheckProcesses([]int{pid}); err == nil {
		t.Errorf("--server-pid %d of a zombie accepted", pid)
	}
	cmd.Wait()
	reaped = true
	if out := s.Finish(1); !out[0].Gone {
		t.Fatalf("reaped server reported %+v, want gone", out)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOtherPlatformsBuild: every GOOS a build tag names compiles, and so do
// platforms brk does not support, where the program refuses to run with
// "brk: <os> is not supported (...)" instead of failing to build. (The
// cross-platform vet of .ci/run covers test files too.)
func TestOtherPlatformsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling takes a while the first time (short)")
	}
	out := filepath.Join(t.TempDir(), "brk")
	for _, goos := range []string{"darwin", "freebsd", "dragonfly", "windows", "openbsd"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command("go", "build", "-o", out, ".")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOOS=%s go build ./cmd/brk: %v\n%s", goos, err, b)
			}
		})
	}
}

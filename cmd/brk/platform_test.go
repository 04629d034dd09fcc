package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// buildTypecheck builds internal/typecheck (for this machine) into a
// temporary directory and returns its path.
func buildTypecheck(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "typecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/brk-bench/brk/internal/typecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build internal/typecheck: %v\n%s", err, out)
	}
	return bin
}

// TestOtherPlatformsBuild: every GOOS a build tag names type-checks, and so
// do platforms brk does not support, where the program refuses to run with
// "brk: <os> is not supported (...)" instead of failing to build. The
// check is internal/typecheck's (the files `go list` picks for the
// platform, type-checked from source, standard library included): from an
// empty build cache it takes seconds a platform, where cross-compiling the
// standard library took minutes for the five. (.ci/run also builds the
// windows binary and vets darwin and freebsd, test files included.)
func TestOtherPlatformsBuild(t *testing.T) {
	t.Parallel()
	check := buildTypecheck(t)
	for _, goos := range []string{"darwin", "freebsd", "dragonfly", "windows", "openbsd"} {
		t.Run(goos, func(t *testing.T) {
			testenv.Parallel(t, testenv.Busy) // CPU work, timing nothing
			if out, err := exec.Command(check, "-goos", goos, ".").CombinedOutput(); err != nil {
				t.Fatalf("typecheck -goos %s ./cmd/brk: %v\n%s", goos, err, out)
			}
		})
	}
}

// TestTypecheckRejects: internal/typecheck fails on a type error in a file
// only one platform compiles, for that platform alone.
func TestTypecheckRejects(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	check := buildTypecheck(t)
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.test/m\n\ngo 1.26\n",
		"m.go":         "package m\n\nimport \"os\"\n\nvar Pid = os.Getpid()\n",
		"m_darwin.go":  "package m\n\nvar Broken int = os.NoSuchThing\n",
		"m_freebsd.go": "package m\n\nvar Fine = 1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for goos, wantErr := range map[string]bool{"darwin": true, "freebsd": false} {
		cmd := exec.Command(check, "-goos", goos, ".")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr || wantErr && !strings.Contains(string(out), "m_darwin.go:3") {
			t.Errorf("GOOS=%s: %v\n%s\nwant an error at m_darwin.go:3: %v", goos, err, out, wantErr)
		}
	}
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLibraryAsAUserModule builds the library as a user's module would: a
// module of its own that requires github.com/brk-bench/brk (replaced by
// this checkout), compiled and run against the built-in fixture.
func TestLibraryAsAUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/user\n\ngo 1.26\n\nrequire github.com/brk-bench/brk v0.0.0\n\nreplace github.com/brk-bench/brk => "+root+"\n")
	write("main.go", `package main

import (
	"context"
	"fmt"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

func main() {
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	defer fx.Close()
	res, err := brk.Run(context.Background(), brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")},
		brk.Plan{Conns: 2, Start: 1, Max: 1, Phase: 200 * time.Millisecond, Threads: 1}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict, *res.LastAccepted)
}
`)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := time.Now()
	run("mod", "tidy")
	if out := run("run", "."); strings.TrimSpace(out) != "done 2" {
		t.Fatalf("the user's program printed %q, want done 2", out)
	}
	t.Logf("built and ran in %v", time.Since(start))
}

package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestReportFile: a report reaches its path only complete, renamed from
// a temporary file beside it; until then (or when dropped) the previous
// report stays, and nothing is left behind.
func TestReportFile(t *testing.T) {
	dir := t.TempDir()
	entries := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return string(b)
	}

	// A new report: absent until committed.
	path := filepath.Join(dir, "r.json")
	f, err := createReport(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if _, err := os.Stat(path); err == nil {
		t.Errorf("the report exists before commit")
	}
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	f.abort() // no-op after commit
	if got := read(path); got != "new" {
		t.Errorf("after commit: %q", got)
	}
	if got := entries(); len(got) != 1 {
		t.Errorf("files left: %q", got)
	}

	// An existing report keeps its content until commit, and its mode.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	f, err = createReport(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	if got := read(path); got != "new" {
		t.Errorf("an uncommitted report replaced the old one: %q", got)
	}
	f.abort()
	if got := read(path); got != "new" || len(entries()) != 1 {
		t.Errorf("after abort: %q, files %q", got, entries())
	}
	f, _ = createReport(path)
	f.Write([]byte("second"))
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); read(path) != "second" || st.Mode().Perm() != 0o640 {
		t.Errorf("after commit: %q, mode %v", read(path), st.Mode())
	}

	// A symbolic link stays one: its target gets the report.
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("r.json", link); err != nil {
		t.Fatal(err)
	}
	f, _ = createReport(link)
	f.Write([]byte("via link"))
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 || read(path) != "via link" {
		t.Errorf("link mode %v, target %q", st.Mode(), read(path))
	}

	// An existing, writable report in a directory brk cannot create
	// files in is rewritten in place, but only at commit.
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	inRO := filepath.Join(ro, "r.json")
	if err := os.WriteFile(inRO, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ro, 0o555)
	defer os.Chmod(ro, 0o755)
	f, err = createReport(inRO)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new report"))
	if got := read(inRO); got != "old" {
		t.Errorf("read-only directory: %q before commit", got)
	}
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(inRO); got != "new report" {
		t.Errorf("read-only directory: %q after commit", got)
	}
	os.Chmod(ro, 0o755)
	// The same in-place mode made directly (as root the directory's mode
	// does not stop the temporary file): dropped, it leaves the old report.
	fh, err := os.OpenFile(inRO, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f = &reportFile{path: inRO, f: fh, buf: &bytes.Buffer{}}
	f.Write([]byte("dropped"))
	f.abort()
	if got := read(inRO); got != "new report" {
		t.Errorf("in place, dropped: %q", got)
	}
	fh, _ = os.OpenFile(inRO, os.O_WRONLY, 0)
	f = &reportFile{path: inRO, f: fh, buf: &bytes.Buffer{}}
	f.Write([]byte("short"))
	if got := read(inRO); got != "new report" {
		t.Errorf("in place, before commit: %q", got)
	}
	if err := f.commit(); err != nil || read(inRO) != "short" {
		t.Errorf("in place, committed: %q %v", read(inRO), err)
	}

	// A device is written in place, never replaced.
	f, err = createReport(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, st.Mode(), err)
	}

	// Refusals name the path, as os.Create's did.
	if _, err := createReport(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	missing := filepath.Join(dir, "no-such-dir", "r.json")
	if _, err := createReport(missing); err == nil || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("a missing directory: %v", err)
	}
}

// TestReportWritersAtomic: cmd/brk creates files only through
// createReport: no os.Create, os.OpenFile or os.WriteFile elsewhere, so
// every report (--json, --report, --csv, brk merge --json) is renamed
// into place complete.
func TestReportWritersAtomic(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "os" && name != "reportfile.go" {
					switch fn.Sel.Name {
					case "Create", "OpenFile", "WriteFile", "CreateTemp":
						t.Errorf("%s: os.%s: a file of cmd/brk is created with createReport", fset.Position(call.Pos()), fn.Sel.Name)
					}
				}
			case *ast.Ident:
				if fn.Name == "createReport" {
					creates++
				}
			}
			return true
		})
	}
	if creates < 5 { // --json and --report (req, conn, rate), ab --json, merge --json, bench --csv
		t.Errorf("%d createReport calls, want one per report writer (5)", creates)
	}
}

// TestKilledRunKeepsReport: a run killed by SIGKILL mid-run (no handler
// can write anything) leaves the previous --json and --report files as
// they were, never a partial or empty one. Before, both were created
// (truncated to 0 bytes) before phase 0.
func TestKilledRunKeepsReport(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	old := "{\"previous\": true}\n"
	for _, p := range []string{jsonPath, htmlPath} {
		if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startBrk(t, nil, fx.URL("/plain"), "--conn", "2", "--threads", "1", "--timeout", "1s", "--phase", "10s", "--max", "3",
		"--quiet", "--json", jsonPath, "--report", htmlPath)
	p.waitFor("brk requests test", 10*time.Second) // the header: flags checked, report files opened
	time.Sleep(300 * time.Millisecond)             // into phase 0
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	for _, path := range []string{jsonPath, htmlPath} {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != old {
			t.Errorf("%s after SIGKILL: %q (%v), want the previous report %q", filepath.Base(path), b, err, old)
		}
	}
	// A completed run replaces them.
	r := runBrk(t, fx.URL("/plain"), "--conn", "2", "--threads", "1", "--timeout", "1s", "--phase", "100ms", "--max", "1",
		"--quiet", "--json", jsonPath, "--report", htmlPath)
	expect(t, r, 0, "Done (2 concurrent requests)")
	if b, _ := os.ReadFile(jsonPath); !strings.Contains(string(b), "\"verdict\": \"done\"") {
		t.Errorf("the completed run's JSON: %.200s", b)
	}
	if b, _ := os.ReadFile(htmlPath); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("the completed run's HTML: %.100s", b)
	}
}

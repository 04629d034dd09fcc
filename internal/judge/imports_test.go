package judge

import (
	"go/build"
	"strings"
	"testing"
)

// The judge does no I/O and depends on no engine package: of the module
// it imports internal/metrics alone (the counts a measurement holds), and
// nothing that reaches a file, a socket or a process (docs/engine.md).
func TestJudgeImports(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/brk-bench/brk/"
	io := map[string]bool{"os": true, "os/exec": true, "os/signal": true, "net": true, "syscall": true,
		"io": true, "io/fs": true, "bufio": true, "golang.org/x/sys/unix": true, "runtime": true}
	for _, imp := range p.Imports {
		switch {
		case io[imp] || strings.HasPrefix(imp, "net/"):
			t.Errorf("the judge imports %s", imp)
		case strings.HasPrefix(imp, module) && imp != module+"internal/metrics":
			t.Errorf("the judge imports %s: only internal/metrics of the module", imp)
		}
	}
}

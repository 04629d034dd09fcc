package metrics

import (
	"go/build"
	"strings"
	"testing"
)

// The measurements read nothing from the box: the readers of /proc,
// getrusage and the cgroup are internal/machine's (a package holds one
// kind of thing).
func TestMetricsReadsNothing(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]bool{"os": true, "os/exec": true, "syscall": true, "io/fs": true, "bufio": true,
		"path/filepath": true, "golang.org/x/sys/unix": true, "runtime": true}
	for _, imp := range p.Imports {
		if reads[imp] || strings.HasPrefix(imp, "net") {
			t.Errorf("internal/metrics imports %s: reading the box is internal/machine's", imp)
		}
	}
}

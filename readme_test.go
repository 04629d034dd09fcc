package brk_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFiles returns README.md and every docs/*.md, in that order, by their
// paths from the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no docs/*.md")
	}
	slices.Sort(names)
	return append([]string{"README.md"}, names...)
}

// TestReadmeLibrarySnippet: every Go snippet of README.md and docs/*.md
// is code of ExampleRun (example_test.go), line for line in order, and
// docs/library.md's is the example's code, so the code the docs show is
// code that go test compiles and runs.
func TestReadmeLibrarySnippet(t *testing.T) {
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src []string
	for _, l := range strings.Split(string(example), "\n") {
		src = append(src, strings.TrimSpace(l))
	}
	library := 0
	for _, name := range docFiles(t) {
		page, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(page), -1) {
			i, n := 0, 0
			for _, l := range strings.Split(b[1], "\n") {
				l = strings.TrimSpace(l)
				if l == "" {
					continue
				}
				for i < len(src) && src[i] != l {
					i++
				}
				if i == len(src) {
					t.Fatalf("%s: Go line %q is not in example_test.go (in this order)", name, l)
				}
				i++
				n++
			}
			if name == "docs/library.md" && n >= 10 {
				library++
			}
		}
	}
	if library == 0 {
		t.Errorf("docs/library.md has no Go block of the example's code (10 lines or more)")
	}
}

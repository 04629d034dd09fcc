package brk_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeLibrarySnippet: the README's library snippet is the code of
// ExampleRun (example_test.go), line for line in order, so the code the
// README shows is code that go test compiles and runs.
func TestReadmeLibrarySnippet(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Library\n\n```go\n")
	snippet, _, closed := strings.Cut(after, "```\n")
	if !ok || !closed {
		t.Fatal("README has no ```go block under ## Library")
	}
	var src []string
	for _, l := range strings.Split(string(example), "\n") {
		src = append(src, strings.TrimSpace(l))
	}
	i, n := 0, 0
	for _, l := range strings.Split(snippet, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		for i < len(src) && src[i] != l {
			i++
		}
		if i == len(src) {
			t.Fatalf("README library line %q is not in example_test.go (in this order)", l)
		}
		i++
		n++
	}
	if n < 10 {
		t.Errorf("README library snippet has %d lines, want the example's code", n)
	}
}

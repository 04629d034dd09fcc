package brk_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// githubAnchor is the anchor GitHub gives a heading: its text lower-cased,
// inline code and emphasis marks dropped, every space a '-', and every
// character but letters, digits, '-' and '_' dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isLetter: a non-ASCII letter GitHub keeps (é); symbols (—, ×, §) go.
func isLetter(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// anchors returns the anchors of a Markdown page's headings (outside code
// blocks), with GitHub's -1, -2 … for repeated ones.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		a := githubAnchor(text)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// withoutCode is a page with its code blocks and inline code blanked, so
// that a link's syntax shown as code is no link.
func withoutCode(page string) string {
	page = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(page, "")
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(page, "")
}

// TestDocsLinks: every relative link of README.md and docs/*.md points to
// a file of the repository, and every #anchor (on its own page or another)
// to a heading of that page by GitHub's anchor rules.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, name := range docFiles(t) {
		page, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(page)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.Join(filepath.Dir(name), file)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				if fi, serr := os.Stat(path); serr == nil && fi.IsDir() && anchor == "" {
					checked++
					continue
				}
				t.Errorf("%s: link %s: no file %s", name, target, path)
				continue
			}
			if anchor != "" && !anchors(string(b))[anchor] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", name, target, path, anchor)
				continue
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("%d links checked in README.md and docs/*.md, want the docs' links", checked)
	}
}

// TestDocsAnchorRules: githubAnchor follows GitHub's rules on the
// headings the docs link to.
func TestDocsAnchorRules(t *testing.T) {
	for heading, want := range map[string]string{
		"Exit codes and the last line":                  "exit-codes-and-the-last-line",
		"HTML report (`--report`)":                      "html-report---report",
		"The fixture contract (`brk/bench/contract`)":   "the-fixture-contract-brkbenchcontract",
		"Flags (requests test)":                         "flags-requests-test",
		"HTTP/2":                                        "http2",
		"brk — find the HTTP load that breaks your SLA": "brk--find-the-http-load-that-breaks-your-sla",
		"JSON report (`--json`), schema 1":              "json-report---json-schema-1",
		"Exit codes: the details":                       "exit-codes-the-details",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
	if a := anchors("# A\n```\n# not a heading\n```\n## A\n"); !a["a"] || !a["a-1"] || a["not-a-heading"] {
		t.Errorf("anchors: %v", a)
	}
}

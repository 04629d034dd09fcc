// Command typecheck type-checks Go packages and everything they import,
// from source, for another platform, without compiling them: it rejects
// what a build for that platform would, short of code generation and
// linking. TestOtherPlatformsBuild (cmd/brk) runs it: from an empty build
// cache it takes seconds where cross-compiling the standard library for a
// platform takes a minute or more.
//
//	typecheck -goos darwin [-goarch amd64] PATTERN...
//
// `go list -deps` (with GOOS, GOARCH and CGO_ENABLED=0) names the files
// the build would compile; cgo is off, so the platform's pure-Go code is
// checked. It exits 1 naming every error, 2 on bad usage.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// listed is the part of `go list -json` typecheck reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	ImportMap  map[string]string
	Error      *struct{ Err string }
}

func main() {
	goos := flag.String("goos", "", "the platform's GOOS (required)")
	goarch := flag.String("goarch", "amd64", "the platform's GOARCH")
	flag.Parse()
	if *goos == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: typecheck -goos GOOS [-goarch GOARCH] PATTERN...")
		os.Exit(2)
	}
	pkgs, err := list(*goos, *goarch, flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "GOOS=%s GOARCH=%s go list: %v\n", *goos, *goarch, err)
		os.Exit(1)
	}
	if n := check(pkgs, *goarch, os.Stderr); n > 0 {
		fmt.Fprintf(os.Stderr, "GOOS=%s GOARCH=%s: %d errors\n", *goos, *goarch, n)
		os.Exit(1)
	}
}

// list returns the packages of patterns and their dependencies for the
// platform, dependencies first.
func list(goos, goarch string, patterns []string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-e", "-json=ImportPath,Dir,GoFiles,ImportMap,Error"}, patterns...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v\n%s", err, stderr.Bytes())
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

// check type-checks pkgs in order, each against the ones before it,
// writes every error to w and returns how many there were.
func check(pkgs []listed, goarch string, w io.Writer) int {
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	errs := 0
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		if p.Error != nil {
			fmt.Fprintf(w, "%s: %s\n", p.ImportPath, p.Error.Err)
			errs++
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				fmt.Fprintln(w, err)
				errs++
				continue
			}
			files = append(files, f)
		}
		conf := types.Config{
			Importer: importer{done, p.ImportMap},
			Sizes:    types.SizesFor("gc", goarch),
			Error: func(err error) {
				fmt.Fprintln(w, err)
				errs++
			},
		}
		done[p.ImportPath], _ = conf.Check(p.ImportPath, fset, files, nil)
	}
	return errs
}

// importer finds an import among the packages checked so far, through
// the importing package's ImportMap (vendored standard-library imports).
type importer struct {
	done      map[string]*types.Package
	importMap map[string]string
}

func (i importer) Import(path string) (*types.Package, error) {
	if mapped, ok := i.importMap[path]; ok {
		path = mapped
	}
	if p := i.done[path]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("%s: not checked before its importer", path)
}

// Command callcount reads one coverage profile (count mode, `go tool
// covdata textfmt`) of a brk run and prints, per response of that run:
//
//   - the calls executed from the engine package's non-test files into
//     other packages of the module: every call expression whose callee is
//     a function or method declared in another module package, or a method
//     of a module-declared interface that a type of another module package
//     implements (sched's o.sess.Parse: exchange.Session, h1/h2.Session),
//     each weighted by the count of the coverage block holding the call;
//   - the module source files with a block run at least half as many times
//     as there were responses (the files one response's walk touches).
//
// scripts/callcount.sh runs it; by hand:
//
//	go run ./scripts/callcount -src DIR -profile cover.txt -responses N [-engine PATH] [-top K]
//
// The first line of its output is "CALLS_PER_RESPONSE FILES"; the top call
// sites and the file list follow. The module is type-checked from source
// (go list -deps -export names its files, and the export data of what it
// imports), with the standard library alone, so that it runs on any commit.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// listed is the part of `go list -json` callcount reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// block is one coverage block: [from, to] in (line, column) of its file.
type block struct {
	l0, c0, l1, c1 int
	count          float64
}

// site is one cross-package call expression of the engine and its count.
type site struct {
	pos    token.Position
	callee string
	count  float64
}

func main() {
	src := flag.String("src", ".", "brk source directory (the module root)")
	profile := flag.String("profile", "", "coverage profile, textfmt (required)")
	responses := flag.Float64("responses", 0, "responses of the run (required)")
	engine := flag.String("engine", "/sched", "engine package: its import path, or the suffix that names it alone")
	top := flag.Int("top", 10, "call sites to list")
	flag.Parse()
	if *profile == "" || *responses <= 0 {
		fmt.Fprintln(os.Stderr, "usage: callcount -src DIR -profile FILE -responses N [-engine PATH] [-top K]")
		os.Exit(2)
	}
	if err := run(*src, *profile, *engine, *responses, *top); err != nil {
		fmt.Fprintln(os.Stderr, "callcount:", err)
		os.Exit(1)
	}
}

func run(src, profile, engine string, responses float64, top int) error {
	modOut, err := exec.Command("go", "-C", src, "list", "-m").Output()
	if err != nil {
		return fmt.Errorf("go list -m: %v", err)
	}
	mod := strings.TrimSpace(string(modOut))
	inMod := func(path string) bool { return path == mod || strings.HasPrefix(path, mod+"/") }

	pkgs, err := list(src, mod)
	if err != nil {
		return err
	}
	// The engine: the one module package whose path is, or ends with, engine.
	var eng *listed
	for _, p := range pkgs {
		if inMod(p.ImportPath) && (p.ImportPath == engine || strings.HasSuffix(p.ImportPath, engine)) {
			if eng != nil {
				return fmt.Errorf("both %s and %s match -engine %s: give its full import path", eng.ImportPath, p.ImportPath, engine)
			}
			eng = p
		}
	}
	if eng == nil {
		return fmt.Errorf("no package of %s matches -engine %s", mod, engine)
	}

	// Type-check the module's packages from source, dependencies first
	// (go list -deps orders them so); everything else comes from export data.
	fset := token.NewFileSet()
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	checked := map[string]*types.Package{}
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p := checked[path]; p != nil {
			return p, nil
		}
		return gc.Import(path)
	})
	var engFiles []*ast.File
	engInfo := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	for _, p := range pkgs {
		if !inMod(p.ImportPath) || len(p.GoFiles) == 0 {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		info := &types.Info{}
		if p == eng {
			info, engFiles = engInfo, files
		}
		conf := types.Config{Importer: imp}
		tp, err := conf.Check(p.ImportPath, fset, files, info)
		if err != nil {
			return fmt.Errorf("type-checking %s: %v", p.ImportPath, err)
		}
		checked[p.ImportPath] = tp
	}

	// short names a module path by its path in the module (the root: its name).
	short := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, mod+"/", ""), mod+".", path.Base(mod)+".")
	}

	// The concrete types of module packages other than the engine: an
	// interface method call is cross-package when one of them implements it.
	var others []*types.Named
	for p, tp := range checked {
		if p == eng.ImportPath {
			continue
		}
		for _, name := range tp.Scope().Names() {
			tn, ok := tp.Scope().Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			if n, ok := tn.Type().(*types.Named); ok && n.TypeParams().Len() == 0 && !types.IsInterface(n) {
				others = append(others, n)
			}
		}
	}
	implementers := func(iface *types.Interface) []string {
		var names []string
		for _, n := range others {
			if types.Implements(n, iface) || types.Implements(types.NewPointer(n), iface) {
				names = append(names, short(n.Obj().Pkg().Path()+"."+n.Obj().Name()))
			}
		}
		sort.Strings(names)
		return names
	}

	// Every call expression of the engine's files into another module package.
	var sites []*site
	for _, f := range engFiles {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn *types.Func
			var recv types.Type // the receiver of a method call
			switch e := ast.Unparen(call.Fun).(type) {
			case *ast.Ident: // F(…), F[T](…) below
				fn, _ = engInfo.Uses[e].(*types.Func)
			case *ast.SelectorExpr:
				if sel := engInfo.Selections[e]; sel != nil { // x.M(…), T.M(x, …)
					fn, _ = sel.Obj().(*types.Func)
					recv = sel.Recv()
				} else { // pkg.F(…)
					fn, _ = engInfo.Uses[e.Sel].(*types.Func)
				}
			case *ast.IndexExpr: // F[T](…), pkg.F[T](…)
				fn = genericFunc(engInfo, e.X)
			case *ast.IndexListExpr:
				fn = genericFunc(engInfo, e.X)
			}
			if fn == nil || fn.Pkg() == nil || !inMod(fn.Pkg().Path()) {
				return true // a conversion, a builtin, a func value, outside the module
			}
			fn = fn.Origin()
			callee := short(fn.FullName())
			if recv != nil && types.IsInterface(recv) {
				impl := implementers(recv.Underlying().(*types.Interface))
				if len(impl) == 0 {
					return true // only the engine's own types implement it
				}
				callee += " → " + strings.Join(impl, ", ")
			} else if fn.Pkg().Path() == eng.ImportPath {
				return true
			}
			sites = append(sites, &site{pos: fset.Position(call.Lparen), callee: callee})
			return true
		})
	}

	blocks, err := readProfile(profile)
	if err != nil {
		return err
	}
	// Each call takes the count of the innermost block holding its "(".
	var total float64
	unmapped := 0
	for _, s := range sites {
		key := eng.ImportPath + "/" + filepath.Base(s.pos.Filename)
		var in *block
		for i := range blocks[key] {
			b := &blocks[key][i]
			if b.contains(s.pos.Line, s.pos.Column) && (in == nil || in.contains(b.l0, b.c0) && in.contains(b.l1, b.c1)) {
				in = b
			}
		}
		if in == nil {
			unmapped++
			continue
		}
		s.count = in.count
		total += in.count
	}
	// The files with a block run at least once per two responses, each
	// with its hottest block's count per response.
	hottest := map[string]float64{}
	var files []string
	for file, bs := range blocks {
		for _, b := range bs {
			if b.count >= 0.5*responses && b.count > hottest[file] {
				if hottest[file] == 0 {
					files = append(files, file)
				}
				hottest[file] = b.count
			}
		}
	}
	sort.Strings(files)

	fmt.Printf("%.2f %d\n", total/responses, len(files))
	// The sites run less than once per 100 responses: setup, teardown, rare
	// paths; their share of the total says how much the dilution matters.
	var rare float64
	for _, s := range sites {
		if s.count < responses/100 {
			rare += s.count
		}
	}
	fmt.Printf("%d call sites in %s into other module packages (%d in no coverage block: counted 0); "+
		"%.3f calls/response from sites run < 0.01/response (setup, teardown, rare paths)\n",
		len(sites), short(eng.ImportPath), unmapped, rare/responses)
	sort.SliceStable(sites, func(i, j int) bool { return sites[i].count > sites[j].count })
	for i, s := range sites {
		if i == top || s.count == 0 {
			break
		}
		rel, _ := filepath.Rel(src, s.pos.Filename)
		fmt.Printf("  %8.3f/response  %s:%d  %s\n", s.count/responses, rel, s.pos.Line, s.callee)
	}
	fmt.Printf("%d files with a block run ≥ 0.5 × responses:\n", len(files))
	for _, f := range files {
		fmt.Printf("  %-32s hottest block %.2f/response\n", short(f), hottest[f]/responses)
	}
	return nil
}

// genericFunc is the function x names in an instantiation x[T].
func genericFunc(info *types.Info, x ast.Expr) *types.Func {
	if s, ok := x.(*ast.SelectorExpr); ok {
		x = s.Sel
	}
	if id, ok := x.(*ast.Ident); ok {
		fn, _ := info.Uses[id].(*types.Func)
		return fn
	}
	return nil
}

// list runs `go list -deps -export -json` on the module's packages.
func list(src, mod string) ([]*listed, error) {
	cmd := exec.Command("go", "-C", src, "list", "-deps", "-export", "-json=ImportPath,Dir,GoFiles,Export", mod+"/...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	var pkgs []*listed
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		p := new(listed)
		if err := dec.Decode(p); err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// readProfile reads a textfmt profile: "importpath/file.go:L0.C0,L1.C1 stmts count".
// A block listed more than once (several processes) sums its counts.
func readProfile(path string) (map[string][]block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	blocks := map[string][]block{}
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if colon < 0 || len(fields) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		var b block
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.l0, &b.c0, &b.l1, &b.c1); err != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		n, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		file := line[:colon]
		if i, ok := seen[line[:colon+1]+fields[0]]; ok {
			blocks[file][i].count += n
			continue
		}
		b.count = n
		seen[line[:colon+1]+fields[0]] = len(blocks[file])
		blocks[file] = append(blocks[file], b)
	}
	return blocks, sc.Err()
}

// contains reports whether (line, col) lies within the block.
func (b *block) contains(line, col int) bool {
	return (line > b.l0 || line == b.l0 && col >= b.c0) && (line < b.l1 || line == b.l1 && col <= b.c1)
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// Command structure prints the figures by which the root package's shape
// is judged: its non-test files, exported names, Sandbox's methods, the
// references that run back up between its files, and its largest
// functions. Run it from the module's root: go run ./tools/structure [DIR].
//
// A file refers to another when it uses an object (a top-level name, a
// method, a field) declared there, as the type checker resolves it for
// the platform it runs on. The files are laid out in one column, in the order the
// greedy heuristic of Eades, Lin and Smyth gives (sinks last, sources
// first, then the file whose out-degree most exceeds its in-degree), so
// that most references point down; those that still point up are the
// arrows back up. The file, name and method counts take every file of the
// package, whatever its build constraint.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	top := flag.Int("top", 10, "how many of the largest functions to list")
	verbose := flag.Bool("v", false, "list each arrow back up")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *top, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "structure:", err)
		os.Exit(1)
	}
}

type fileInfo struct {
	name string
	ast  *ast.File
}

func run(dir string, top int, verbose bool) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	var files []fileInfo
	for _, n := range names {
		if filepath.Ext(n) != ".go" || len(n) > 8 && n[len(n)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, fileInfo{filepath.Base(n), f})
	}
	// Where each top-level name and each method name is declared.
	declared := map[string]map[string]bool{} // name -> files
	methods := map[string]map[string]bool{}  // method name -> files
	exported := map[string]bool{}
	sandboxMethods := map[string]bool{}
	exportedMethods := map[string]bool{}
	type fn struct {
		name  string
		lines int
	}
	var funcs []fn
	add := func(m map[string]map[string]bool, name, file string) {
		if m[name] == nil {
			m[name] = map[string]bool{}
		}
		m[name][file] = true
	}
	for _, f := range files {
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				lines := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1
				if d.Recv == nil {
					add(declared, d.Name.Name, f.name)
					if d.Name.IsExported() {
						exported[d.Name.Name] = true
					}
					funcs = append(funcs, fn{d.Name.Name, lines})
					continue
				}
				add(methods, d.Name.Name, f.name)
				recv := receiverName(d.Recv.List[0].Type)
				if d.Name.IsExported() && ast.IsExported(recv) {
					exportedMethods[recv+"."+d.Name.Name] = true
				}
				if recv == "Sandbox" {
					sandboxMethods[d.Name.Name] = true
				}
				funcs = append(funcs, fn{recv + "." + d.Name.Name, lines})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(declared, s.Name.Name, f.name)
						if s.Name.IsExported() {
							exported[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.Name == "_" {
								continue
							}
							add(declared, id.Name, f.name)
							if id.IsExported() {
								exported[id.Name] = true
							}
						}
					}
				}
			}
		}
	}
	// References between files, resolved by the type checker over the
	// files this platform builds (the others refer by the same names).
	edges, err := references(fset, dir, files)
	if err != nil {
		return err
	}
	for _, f := range files {
		delete(edges[f.name], f.name)
	}
	order := layout(edges)
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	var up []string
	for a, to := range edges {
		for b := range to {
			if pos[b] < pos[a] {
				up = append(up, a+" -> "+b)
			}
		}
	}
	sort.Strings(up)
	sort.Slice(funcs, func(i, j int) bool {
		if funcs[i].lines != funcs[j].lines {
			return funcs[i].lines > funcs[j].lines
		}
		return funcs[i].name < funcs[j].name
	})
	fmt.Printf("non-test files      %d\n", len(files))
	fmt.Printf("exported names      %d (and %d exported methods)\n", len(exported), len(exportedMethods))
	fmt.Printf("Sandbox methods     %d\n", len(sandboxMethods))
	fmt.Printf("arrows back up      %d\n", len(up))
	if verbose {
		for _, u := range up {
			fmt.Printf("  %s\n", u)
		}
	}
	fmt.Printf("largest functions (lines):\n")
	for i := 0; i < top && i < len(funcs); i++ {
		fmt.Printf("  %4d  %s\n", funcs[i].lines, funcs[i].name)
	}
	return nil
}

// references type-checks the package's files for this platform and
// returns, for each file, the files whose declarations it uses.
func references(fset *token.FileSet, dir string, files []fileInfo) (map[string]map[string]bool, error) {
	edges := map[string]map[string]bool{}
	for _, f := range files {
		edges[f.name] = map[string]bool{}
	}
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	var asts []*ast.File
	byName := map[string]*ast.File{}
	for _, f := range files {
		byName[f.name] = f.ast
	}
	for _, n := range append(bp.GoFiles, bp.CgoFiles...) {
		if f := byName[n]; f != nil {
			asts = append(asts, f)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), FakeImportC: true}
	pkg, err := conf.Check(bp.ImportPath, fset, asts, info)
	if err != nil {
		return nil, err
	}
	note := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		from := filepath.Base(fset.Position(at).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			edges[from][to] = true
		}
	}
	for id, obj := range info.Uses {
		note(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		note(sel.Sel.Pos(), s.Obj())
	}
	return edges, nil
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// layout orders the files by the Eades-Lin-Smyth heuristic for a small
// feedback arc set, breaking ties by name so that the figure is stable.
func layout(edges map[string]map[string]bool) []string {
	in := map[string]map[string]bool{}
	left := map[string]bool{}
	for a, to := range edges {
		left[a] = true
		for b := range to {
			if in[b] == nil {
				in[b] = map[string]bool{}
			}
			in[b][a] = true
		}
	}
	deg := func(m map[string]bool) int {
		n := 0
		for x := range m {
			if left[x] {
				n++
			}
		}
		return n
	}
	sorted := func() []string {
		var s []string
		for x := range left {
			s = append(s, x)
		}
		sort.Strings(s)
		return s
	}
	var head, tail []string
	for len(left) > 0 {
		changed := true
		for changed {
			changed = false
			for _, x := range sorted() {
				if deg(edges[x]) == 0 {
					tail = append([]string{x}, tail...)
					delete(left, x)
					changed = true
				} else if deg(in[x]) == 0 {
					head = append(head, x)
					delete(left, x)
					changed = true
				}
			}
		}
		if len(left) == 0 {
			break
		}
		best, bestD := "", 0
		for _, x := range sorted() {
			if d := deg(edges[x]) - deg(in[x]); best == "" || d > bestD {
				best, bestD = x, d
			}
		}
		head = append(head, best)
		delete(left, best)
	}
	return append(head, tail...)
}

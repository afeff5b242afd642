package sbpl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rules is a parsed profile of the SBPL subset that [Build] writes, with
// its parameters substituted, and a reference evaluator of it: the last
// matching rule decides, as in Seatbelt. It exists so that the profile's
// meaning is tested on any OS (and checked before it is handed to
// sandbox-exec); it is not what enforces anything. The zero value denies
// everything.
type Rules struct {
	rules []evalRule
}

type evalRule struct {
	allow   bool
	ops     []string
	filters []*node // nil: matches every argument
}

// node is an S-expression: a list, or an atom (symbol, string or regex).
type node struct {
	list  []*node
	atom  string
	str   bool // a string literal
	regex bool // a #"..." literal
}

// knownOps are the operations the generator uses; Parse refuses any other,
// so a typo cannot reach sandbox-exec.
var knownOps = map[string]bool{
	"default": true, "process-fork": true, "signal": true, "process-info*": true,
	"sysctl-read": true, "mach-lookup": true, "ipc-posix-shm-read-data": true,
	"ipc-posix-shm-read-metadata": true, "ipc-posix-shm*": true, "ipc-posix-sem": true,
	"file-read*": true, "file-read-data": true, "file-read-metadata": true, "file-write*": true,
	"file-write-data": true, "file-lock": true, "file-link": true, "file-clone": true,
	"file-ioctl": true, "process-exec": true, "file-map-executable": true,
	"network-bind": true, "network-outbound": true, "network-inbound": true,
	"system-socket": true, "iokit-open": true,
}

// Parse reads a profile of the generator's subset and substitutes its
// parameters. It refuses unbalanced text, a string it cannot read, an
// unknown operation or filter, and a parameter the profile does not
// define.
func Parse(p Profile) (*Rules, error) {
	params := map[string]string{}
	for _, kv := range p.Params {
		if _, dup := params[kv.Key]; dup {
			return nil, fmt.Errorf("sbpl: parameter %q defined twice", kv.Key)
		}
		params[kv.Key] = kv.Value
	}
	nodes, err := parseSexprs(p.Text)
	if err != nil {
		return nil, err
	}
	r := &Rules{}
	sawVersion := false
	for _, n := range nodes {
		if n.list == nil || len(n.list) == 0 || n.list[0].str {
			return nil, errors.New("sbpl: top-level form is not a rule")
		}
		head := n.list[0].atom
		switch head {
		case "version":
			if len(n.list) != 2 || n.list[1].atom != "1" {
				return nil, errors.New("sbpl: want (version 1)")
			}
			sawVersion = true
			continue
		case "allow", "deny":
		default:
			return nil, fmt.Errorf("sbpl: unknown form %q", head)
		}
		if !sawVersion {
			return nil, errors.New("sbpl: rule before (version 1)")
		}
		er := evalRule{allow: head == "allow"}
		i := 1
		for ; i < len(n.list) && n.list[i].list == nil; i++ {
			op := n.list[i].atom
			if n.list[i].str || !knownOps[op] {
				return nil, fmt.Errorf("sbpl: unknown operation %q", op)
			}
			er.ops = append(er.ops, op)
		}
		if len(er.ops) == 0 {
			return nil, fmt.Errorf("sbpl: %s rule without an operation", head)
		}
		for ; i < len(n.list); i++ {
			f, err := resolveFilter(n.list[i], params)
			if err != nil {
				return nil, err
			}
			er.filters = append(er.filters, f)
		}
		r.rules = append(r.rules, er)
	}
	if !sawVersion {
		return nil, errors.New("sbpl: no (version 1)")
	}
	return r, nil
}

// filterKinds are the filters the generator writes, with how many
// arguments each takes (-1: any number of filters).
var filterKinds = map[string]int{
	"literal": 1, "subpath": 1, "regex": 1, "global-name": 1, "sysctl-name": 1,
	"sysctl-name-prefix": 1, "ipc-posix-name-prefix": 1, "iokit-user-client-class": 1,
	"target": 1, "remote": 2, "local": 2, "require-all": -1, "require-not": 1,
}

// resolveFilter checks a filter and replaces each (param "K") in it with
// K's value.
func resolveFilter(n *node, params map[string]string) (*node, error) {
	if n.list == nil || len(n.list) == 0 {
		return nil, fmt.Errorf("sbpl: filter %q is not a list", n.atom)
	}
	kind := n.list[0].atom
	want, ok := filterKinds[kind]
	if !ok || n.list[0].str {
		return nil, fmt.Errorf("sbpl: unknown filter %q", kind)
	}
	args := n.list[1:]
	if want >= 0 && len(args) != want {
		return nil, fmt.Errorf("sbpl: filter %s takes %d arguments, has %d", kind, want, len(args))
	}
	out := &node{list: []*node{n.list[0]}}
	for _, a := range args {
		switch {
		case kind == "require-all" || kind == "require-not":
			f, err := resolveFilter(a, params)
			if err != nil {
				return nil, err
			}
			out.list = append(out.list, f)
		case a.list != nil:
			if len(a.list) != 2 || a.list[0].atom != "param" || !a.list[1].str {
				return nil, fmt.Errorf("sbpl: filter %s: argument is not (param \"KEY\")", kind)
			}
			v, ok := params[a.list[1].atom]
			if !ok {
				return nil, fmt.Errorf("sbpl: parameter %q is not defined", a.list[1].atom)
			}
			out.list = append(out.list, &node{atom: v, str: true})
		default:
			if kind == "regex" && !a.regex {
				return nil, errors.New("sbpl: regex filter without a #\"...\" literal")
			}
			if a.regex {
				if _, err := regexp.Compile(a.atom); err != nil {
					return nil, fmt.Errorf("sbpl: regex %q: %w", a.atom, err)
				}
			}
			out.list = append(out.list, a)
		}
	}
	return out, nil
}

// Allowed reports whether the profile allows operation op on arg: a path
// for file and Unix-socket operations, a service, sysctl, POSIX IPC or
// IOKit class name for theirs, "HOST:PORT" for IP network operations.
func (r *Rules) Allowed(op, arg string) bool {
	allowed := false
	for _, rule := range r.rules {
		if !rule.matchesOp(op) {
			continue
		}
		if len(rule.filters) == 0 {
			allowed = rule.allow
			continue
		}
		for _, f := range rule.filters {
			if matches(f, arg) {
				allowed = rule.allow
				break
			}
		}
	}
	return allowed
}

func (r evalRule) matchesOp(op string) bool {
	for _, o := range r.ops {
		if o == "default" || o == op {
			return true
		}
		if prefix, ok := strings.CutSuffix(o, "*"); ok && strings.HasPrefix(op, prefix) {
			return true
		}
	}
	return false
}

// matches applies one filter to arg.
func matches(f *node, arg string) bool {
	kind := f.list[0].atom
	args := f.list[1:]
	switch kind {
	case "literal", "global-name", "sysctl-name", "iokit-user-client-class":
		return arg == args[0].atom
	case "subpath":
		return under(arg, args[0].atom)
	case "sysctl-name-prefix", "ipc-posix-name-prefix":
		return strings.HasPrefix(arg, args[0].atom)
	case "regex":
		return regexp.MustCompile(args[0].atom).MatchString(arg)
	case "target":
		return args[0].atom == "same-sandbox" && arg == "same-sandbox"
	case "remote", "local":
		return args[0].atom == "ip" && ipMatches(args[1].atom, arg)
	case "require-all":
		for _, a := range args {
			if !matches(a, arg) {
				return false
			}
		}
		return true
	case "require-not":
		return !matches(args[0], arg)
	}
	return false
}

// ipMatches matches "HOST:PORT" against a pattern whose host is "*" or
// "localhost" (every loopback address) and whose port is "*" or a number.
func ipMatches(pattern, arg string) bool {
	ph, pp, ok1 := cutLast(pattern)
	ah, ap, ok2 := cutLast(arg)
	if !ok1 || !ok2 {
		return false
	}
	hostOK := ph == "*" || (ph == "localhost" && (ah == "localhost" || ah == "127.0.0.1" || ah == "::1" || ah == "[::1]"))
	return hostOK && (pp == "*" || pp == ap)
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// parseSexprs reads the text into its top-level forms; ";" starts a
// comment to the end of the line.
func parseSexprs(text string) ([]*node, error) {
	var stack [][]*node
	var top []*node
	push := func(n *node) {
		if len(stack) == 0 {
			top = append(top, n)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], n)
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			stack = append(stack, []*node{})
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, errors.New("sbpl: unbalanced )")
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(&node{list: l})
			i++
		case c == '"' || (c == '#' && i+1 < len(text) && text[i+1] == '"'):
			regex := c == '#'
			if regex {
				i++
			}
			s, n, err := readString(text[i:], !regex)
			if err != nil {
				return nil, err
			}
			push(&node{atom: s, str: !regex, regex: regex})
			i += n
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n();\"", rune(text[j])) {
				j++
			}
			push(&node{atom: text[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("sbpl: unbalanced (")
	}
	return top, nil
}

// readString reads a string literal at the start of s (which opens with
// a quote) and returns it and its length. With escapes, a backslash takes
// the next character literally; a regex literal has none.
func readString(s string, escapes bool) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && escapes:
			if i+1 >= len(s) {
				return "", 0, errors.New("sbpl: string ends in a backslash")
			}
			i++
			b.WriteByte(s[i])
		case c == '"':
			return b.String(), i + 1, nil
		case c == '\n':
			return "", 0, errors.New("sbpl: newline in a string")
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("sbpl: unterminated string")
}

package ipc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is how a command-line value becomes an argument's JSON.
type kind int

const (
	kindString  kind = iota // the word itself
	kindBool                // true with no value; =true, =false
	kindInt                 // a signed integer
	kindUint                // an unsigned integer
	kindFloat               // a number
	kindStrings             // []string: every occurrence appends
	kindBytes               // []byte: the word's bytes
	kindJSON                // anything else: the word is JSON
)

// field is one argument of a command.
type field struct {
	kind kind
	typ  reflect.Type
}

// argFields lists the arguments of struct type t: its exported fields,
// under their JSON names, in declaration order.
func argFields(t reflect.Type) (map[string]field, []string, error) {
	fields := map[string]field{}
	var order []string
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		if !validName(name) {
			return nil, nil, fmt.Errorf("argument %q (field %s): an argument name is a letter, then letters, digits, _ or -", name, sf.Name)
		}
		if slices.Contains(reservedFlags, name) {
			return nil, nil, fmt.Errorf("argument %q (field %s): --%s is the client's own flag", name, sf.Name, name)
		}
		if _, dup := fields[name]; dup {
			return nil, nil, fmt.Errorf("argument %q named by two fields", name)
		}
		fields[name] = field{kind: kindOf(sf.Type), typ: sf.Type}
		order = append(order, name)
	}
	return fields, order, nil
}

func kindOf(t reflect.Type) kind {
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.String:
			return kindStrings
		case reflect.Uint8:
			return kindBytes
		}
	case reflect.Interface:
		return kindString
	}
	return kindJSON
}

// lookupField finds a flag's argument: by its exact name, else with - and
// _ taken as the same.
func (c *command) lookupField(name string) (string, bool) {
	if _, ok := c.fields[name]; ok {
		return name, true
	}
	norm := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
	for _, n := range c.order {
		if norm(n) == norm(name) {
			return n, true
		}
	}
	return "", false
}

// usageErr is a CodeUsage error about the command's arguments.
func (c *command) usageErr(format string, args ...any) error {
	return Errorf(CodeUsage, format+" (see %s -h)", append(args, c.name)...)
}

// parseArgv turns a command line into the JSON object of the command's
// arguments: --name value, --name=value, --flag for a bool, bare words
// for the positional names in order, everything after -- a bare word.
// --stdin-arg NAME (or the command's StdinArg) puts stdin, when piped and
// NAME is not set otherwise, in NAME. -h and --help are the client's,
// which asks for the usage instead of calling.
func (c *command) parseArgv(argv []string, stdin []byte) (json.RawMessage, error) {
	if len(argv) > MaxArgs {
		return nil, c.usageErr("%d arguments: at most %d", len(argv), MaxArgs)
	}
	vals := map[string]json.RawMessage{}
	lists := map[string][]string{} // repeated arguments, encoded once at the end
	stdinArg := c.stdinArg
	pos := 0
	set := func(name, word string) error {
		f := c.fields[name]
		v, err := jsonValue(f, word)
		if err != nil {
			return c.usageErr("--%s %s: %v", name, quoteShort(word), err)
		}
		if f.kind == kindStrings {
			lists[name] = append(lists[name], word)
			return nil
		}
		if _, dup := vals[name]; dup {
			return c.usageErr("--%s given twice", name)
		}
		vals[name] = v
		return nil
	}
	bare := func(word string) error {
		if pos >= len(c.positional) {
			if len(c.positional) == 0 {
				return c.usageErr("unexpected argument %s: %s takes no positional arguments", quoteShort(word), c.name)
			}
			return c.usageErr("unexpected argument %s: %s takes %d positional (%s)", quoteShort(word), c.name, len(c.positional), strings.Join(c.positional, ", "))
		}
		name := c.positional[pos]
		if c.fields[name].kind != kindStrings {
			pos++
		}
		return set(name, word)
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			for _, w := range argv[i+1:] {
				if err := bare(w); err != nil {
					return nil, err
				}
			}
			i = len(argv)
		case a == "-h" || a == "--help":
			return nil, c.usageErr("-h asks for the usage, not a call")
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			if name == "stdin-arg" {
				if !hasValue {
					if i+1 >= len(argv) {
						return nil, c.usageErr("--stdin-arg needs an argument name")
					}
					i++
					value = argv[i]
				}
				f, ok := c.fields[value]
				if !ok || (f.kind != kindString && f.kind != kindBytes) {
					return nil, c.usageErr("--stdin-arg %s: not a string argument of %s", quoteShort(value), c.name)
				}
				stdinArg = value
				continue
			}
			field, ok := c.lookupField(name)
			if !ok {
				return nil, c.usageErr("unknown flag --%s", shortWord(name))
			}
			if c.fields[field].kind == kindBool && !hasValue {
				value = "true"
			} else if !hasValue {
				if i+1 >= len(argv) {
					return nil, c.usageErr("--%s needs a value", shortWord(name))
				}
				i++
				value = argv[i]
			}
			if err := set(field, value); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-' && !isNumber(a):
			return nil, c.usageErr("%s: flags are --name value, --name=value or --flag", quoteShort(a))
		default:
			if err := bare(a); err != nil {
				return nil, err
			}
		}
	}
	for name, list := range lists {
		vals[name], _ = json.Marshal(list)
	}
	if stdinArg != "" && stdin != nil {
		if _, given := vals[stdinArg]; !given {
			if c.fields[stdinArg].kind == kindBytes {
				vals[stdinArg], _ = json.Marshal(stdin)
			} else {
				if !utf8Valid(stdin) {
					return nil, c.usageErr("--stdin-arg %s: the input is not UTF-8 text", stdinArg)
				}
				vals[stdinArg], _ = json.Marshal(string(stdin))
			}
		}
	}
	out, err := json.Marshal(vals)
	if err != nil {
		return nil, Errorf(CodeInternal, "encoding arguments: %v", err)
	}
	return out, nil
}

// jsonValue is word as the JSON of an argument of f's kind.
func jsonValue(f field, word string) (json.RawMessage, error) {
	switch f.kind {
	case kindString, kindStrings:
		if !utf8Valid([]byte(word)) {
			return nil, fmt.Errorf("not UTF-8 text")
		}
		return json.Marshal(word)
	case kindBytes:
		return json.Marshal([]byte(word))
	case kindBool:
		b, err := strconv.ParseBool(word)
		if err != nil {
			return nil, fmt.Errorf("want true or false")
		}
		return json.Marshal(b)
	case kindInt:
		n, err := strconv.ParseInt(word, 10, f.typ.Bits())
		if err != nil {
			return nil, fmt.Errorf("want an integer of %d bits", f.typ.Bits())
		}
		return json.Marshal(n)
	case kindUint:
		n, err := strconv.ParseUint(word, 10, f.typ.Bits())
		if err != nil {
			return nil, fmt.Errorf("want a non-negative integer of %d bits", f.typ.Bits())
		}
		return json.Marshal(n)
	case kindFloat:
		n, err := strconv.ParseFloat(word, f.typ.Bits())
		if err != nil {
			return nil, fmt.Errorf("want a number")
		}
		return json.Marshal(n)
	}
	if !json.Valid([]byte(word)) {
		return nil, fmt.Errorf("want JSON for %s", f.typ)
	}
	return json.RawMessage(word), nil
}

// MaxArgs bounds the words of one call's command line: ARG_MAX allows
// about 130,000 short ones, and each costs the host memory to decode.
const MaxArgs = 1 << 16

// quoteShort quotes word for an error message, cut to its first 80 bytes:
// an error must not echo a 16 MiB argument back.
func quoteShort(word string) string {
	const max = 80
	if len(word) <= max {
		return strconv.Quote(word)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(word[cut]) {
		cut--
	}
	return strconv.Quote(word[:cut]) + fmt.Sprintf("... (%d bytes)", len(word))
}

// shortWord is word cut like quoteShort, unquoted: a flag's name.
func shortWord(word string) string {
	if len(word) <= 80 {
		return word
	}
	q := quoteShort(word)
	return q[1:strings.LastIndexByte(q, '"')] + q[strings.LastIndexByte(q, '"')+1:]
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func utf8Valid(b []byte) bool { return utf8.Valid(b) }

// decodeArgs decodes a JSON object into args, refusing unknown names.
func decodeArgs(raw json.RawMessage, args any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		return Errorf(CodeUsage, "arguments: %v", err)
	}
	if dec.More() {
		return Errorf(CodeUsage, "arguments: trailing data after the JSON object")
	}
	return nil
}

// usage is the text -h prints.
func (c *command) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s", c.name)
	if len(c.order) > len(c.positional) {
		b.WriteString(" [flags]")
	}
	for _, p := range c.positional {
		if c.fields[p].kind == kindStrings {
			fmt.Fprintf(&b, " [%s...]", strings.ToUpper(p))
		} else {
			fmt.Fprintf(&b, " [%s]", strings.ToUpper(p))
		}
	}
	b.WriteString("\n")
	if c.summary != "" {
		b.WriteString(c.summary + "\n")
	}
	if len(c.order) > 0 {
		b.WriteString("\narguments:\n")
	}
	for _, n := range c.order {
		f := c.fields[n]
		flag := "--" + n
		switch f.kind {
		case kindBool:
		case kindStrings:
			flag += " STRING (repeatable)"
		default:
			flag += " " + typeWord(f)
		}
		var notes []string
		if i := slices.Index(c.positional, n); i >= 0 {
			notes = append(notes, fmt.Sprintf("positional %d", i+1))
		}
		if n == c.stdinArg {
			notes = append(notes, "piped input")
		}
		if len(notes) > 0 {
			flag += "  (" + strings.Join(notes, ", ") + ")"
		}
		b.WriteString("  " + flag + "\n")
	}
	b.WriteString("\n  --stdin-arg NAME  put piped input in argument NAME\n  -h, --help        print this usage\n")
	return b.String()
}

func typeWord(f field) string {
	switch f.kind {
	case kindString, kindBytes:
		return "STRING"
	case kindInt, kindUint:
		return "INT"
	case kindFloat:
		return "NUMBER"
	}
	return "JSON"
}

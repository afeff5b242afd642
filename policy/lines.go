package policy

import (
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keySep joins the parts of a key path in a lineIndex, so that a grant
// path full of dots stays one part. A key holding a NUL itself can only
// confuse line numbers: no such key passes the checks.
const keySep = "\x00"

// lineIndex maps each key path of a document, parts joined by keySep, to
// the line where it first appears.
type lineIndex map[string]int

// indexLines records the line of every key of a document that the decoder
// has already accepted. Tables, dotted keys and inline tables all count; a
// document it cannot parse gives what was read before the error.
func indexLines(data []byte) lineIndex {
	idx := lineIndex{}
	nl := newlinesOf(data)
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = idx.add(nl, nil, e.Key())
		case unstable.KeyValue:
			idx.addKeyValue(nl, table, e)
		}
	}
	return idx
}

// newlines lists the offsets of the line feeds of a document, in order.
type newlines []int

// newlinesOf finds the line feeds of data.
func newlinesOf(data []byte) newlines {
	var nl newlines
	for i, c := range data {
		if c == '\n' {
			nl = append(nl, i)
		}
	}
	return nl
}

// line returns the 1-based line of offset: one more than the number of
// line feeds before it.
func (nl newlines) line(offset uint32) int {
	return sort.SearchInts(nl, int(offset)) + 1
}

// addKeyValue records the key of kv under table and, for an inline table,
// the keys inside it.
func (idx lineIndex) addKeyValue(nl newlines, table []string, kv *unstable.Node) {
	path := idx.add(nl, table, kv.Key())
	v := kv.Value()
	if v == nil || v.Kind != unstable.InlineTable {
		return
	}
	for it := v.Children(); it.Next(); {
		if c := it.Node(); c.Kind == unstable.KeyValue {
			idx.addKeyValue(nl, path, c)
		}
	}
}

// add records the key that it spells, under prefix, and each dotted part
// of it not seen before, at the key's line; it returns the whole path.
func (idx lineIndex) add(nl newlines, prefix []string, it unstable.Iterator) []string {
	path := append([]string(nil), prefix...)
	for it.Next() {
		k := it.Node()
		path = append(path, string(k.Data))
		joined := strings.Join(path, keySep)
		if _, seen := idx[joined]; !seen {
			idx[joined] = nl.line(k.Raw.Offset)
		}
	}
	return path
}

// line returns the line of the key path parts, or 0 if unknown.
func (idx lineIndex) line(parts ...string) int {
	return idx[strings.Join(parts, keySep)]
}

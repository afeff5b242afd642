// Package bytestr carries strings that are bytes (Linux paths, arguments,
// variables) through JSON, which holds only UTF-8 text: encoding/json
// replaces every byte that is not valid UTF-8 with U+FFFD, so a name with
// such a byte (legal on Linux) would come back as another name. Out
// escapes every string of a value that is not valid UTF-8 or holds a NUL
// (a NUL becomes NUL NUL, a byte that is not valid UTF-8 NUL and two hex
// digits); In reverses it. Valid text without a NUL, the usual case, goes
// unchanged, so a document written before escaping reads the same.
package bytestr

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// Escape returns s in the escaped form.
func Escape(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case s[i] == 0:
			b.WriteString("\x00\x00")
		case r == utf8.RuneError && n == 1:
			b.WriteByte(0)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Unescape reverses Escape. An escape cut short or with a digit that
// is not hex is kept as it came.
func Unescape(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != 0 {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == 0 {
			b.WriteByte(0)
			i++
			continue
		}
		if i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(0)
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// mapStrings returns a copy of v with f applied to every string in it:
// struct fields, slice, array and map elements, map keys, through pointers
// and interfaces. Values without strings are returned as they are, shared.
// Unexported fields, which JSON skips too, are not copied.
func mapStrings(v reflect.Value, f func(string) string) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		s := f(v.String())
		if s == v.String() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(s)
		return out
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return v
		}
		e := mapStrings(v.Elem(), f)
		if v.Kind() == reflect.Interface {
			out := reflect.New(v.Type()).Elem()
			out.Set(e)
			return out
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(mapStrings(v.Field(i), f))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(mapStrings(v.Index(i), f))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(mapStrings(v.Index(i), f))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(mapStrings(it.Key(), f), mapStrings(it.Value(), f))
		}
		return out
	}
	return v
}

// Out returns v with every string escaped, to marshal: v itself when no
// string needs it (the usual case, which copies nothing), else a copy; v
// is never changed.
func Out(v any) any {
	if v == nil || !anyString(reflect.ValueOf(v), needsEscape) {
		return v
	}
	return mapStrings(reflect.ValueOf(v), Escape).Interface()
}

// In unescapes, in place, every string of *p, a value just unmarshalled.
func In(p any) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || !anyString(v, hasNUL) {
		return
	}
	e := v.Elem()
	e.Set(mapStrings(e, Unescape))
}

func needsEscape(s string) bool { return !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 }

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// anyString reports whether some string in v (as mapStrings walks it)
// satisfies pred, without copying anything.
func anyString(v reflect.Value, pred func(string) bool) bool {
	switch v.Kind() {
	case reflect.String:
		return pred(v.String())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && anyString(v.Elem(), pred)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && anyString(v.Field(i), pred) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if anyString(v.Index(i), pred) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if anyString(it.Key(), pred) || anyString(it.Value(), pred) {
				return true
			}
		}
	}
	return false
}

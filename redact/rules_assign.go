package redact

import (
	"math"
	"sort"
	"strings"
)

// secretWords make a key, or a value near them, secret (matched in ASCII
// lower case); keyQualifiers make "<qualifier>[_. -]key" one.
var (
	secretWords   = []string{"secret", "passw", "passphrase", "pwd", "token", "credential"}
	keyQualifiers = []string{"api", "access", "private", "auth", "signing", "encryption", "master", "session", "client"}
)

// maxKeyLen bounds how far a key word grows into a key name on each side,
// so a long run of key characters costs linear time.
const maxKeyLen = 128

// maxValueLen is the longest value an assignment can have.
const maxValueLen = 4096

// keyWords returns the secret-ish key words of the text, each grown to
// the whole key name around it (letters, digits, _ - .), sorted and
// without duplicates. It uses strings.Index on the lower-cased text, much
// faster than a case-folding regular expression.
func (sc *scan) keyWords() [][2]int {
	if sc.haveKeys {
		return sc.keys
	}
	sc.haveKeys = true
	text, low := sc.text, sc.lower()
	var hits [][2]int
	addHit := func(s, e int) {
		lo, hi := max(0, s-maxKeyLen), min(len(text), e+maxKeyLen)
		for s > lo && keyByte(text[s-1]) {
			s--
		}
		for e < hi && keyByte(text[e]) {
			e++
		}
		if s == lo && lo > 0 && keyByte(text[s-1]) || e == hi && hi < len(text) && keyByte(text[e]) {
			return // a run too long to be a key name
		}
		hits = append(hits, [2]int{s, e})
	}
	for _, w := range secretWords {
		for off := 0; ; {
			i := strings.Index(low[off:], w)
			if i < 0 {
				break
			}
			addHit(off+i, off+i+len(w))
			off += i + len(w)
		}
	}
	for off := 0; ; {
		i := strings.Index(low[off:], "key")
		if i < 0 {
			break
		}
		k := off + i
		off = k + 3
		q := k
		if q > 0 && strings.IndexByte("_. -", low[q-1]) >= 0 {
			q--
		}
		for _, w := range keyQualifiers {
			if strings.HasSuffix(low[:q], w) {
				addHit(q-len(w), k+3)
				break
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i][0] != hits[j][0] {
			return hits[i][0] < hits[j][0]
		}
		return hits[i][1] < hits[j][1]
	})
	out := hits[:0]
	for _, h := range hits {
		if n := len(out); n > 0 && out[n-1] == h {
			continue
		}
		out = append(out, h)
	}
	sc.keys = out
	return out
}

// keyNotSecret lists key endings and beginnings that name something about
// a secret rather than the secret itself: PASSWORD_FILE, max_tokens,
// token_url, SECRET_NAME.
var (
	keyNotSecretSuffix = []string{"file", "path", "dir", "url", "uri", "endpoint", "name", "length", "len", "count",
		"limit", "size", "type", "expiry", "expires", "expiresin", "ttl", "timeout", "policy", "env", "var", "header",
		"field", "prompt", "hint", "min", "max", "enabled", "required", "format", "mode", "version", "location",
		"store", "provider", "manager", "hash", "algorithm", "alg", "rotation", "created", "updated", "lifetime", "regex", "pattern", "usage"}
	keyNotSecretPrefix = []string{"max", "min", "num", "total", "input", "output", "completion", "prompt", "is", "has", "use", "show", "enable", "disable", "reset", "forgot", "confirm"}
)

// placeholders are values that stand for a secret without being one.
var placeholders = map[string]bool{
	"changeme": true, "change_me": true, "password": true, "secret": true, "token": true, "null": true, "nil": true,
	"none": true, "true": true, "false": true, "undefined": true, "example": true, "redacted": true, "required": true,
	"optional": true, "string": true, "yourpassword": true, "your_password": true, "your-password": true, "placeholder": true,
	"hidden": true, "masked": true, "empty": true, "default": true, "dummy": true, "todo": true, "fixme": true, "tbd": true,
	"xxxxxx": true, "notset": true, "not_set": true, "unset": true, "env": true, "str": true, "bool": true, "int": true,
}

// findAssignments reports the value of every key = value, key: value,
// key := value or key => value whose key names a secret (SECRET=...,
// API_KEY: ..., "password": "...", --token=...). A value that is quoted,
// or whose key starts its line (.env, YAML, INI), needs only to be
// non-trivial; a bare value in the middle of a line must also look like
// a secret (several character classes, or 16 characters or more).
func findAssignments(sc *scan, add func(int, int)) {
	text := sc.text
	seen := 0 // end of the last value examined: keys inside it are not keys
	for _, k := range sc.keyWords() {
		ks, ke := k[0], k[1]
		if ks < seen || !secretKey(text[ks:ke]) || ks > 0 && (text[ks-1] == '/' || text[ks-1] == '\\') {
			continue // not a key, or a file's name: "/etc/passwd": ...
		}
		vs, ve, quoted, ok := assignedValue(text, ke)
		if !ok {
			continue
		}
		seen = ve
		if quoted && ks > 0 && closesLiteral(text, ks, ke, vs) {
			continue // "password=" + pw: the operator ends a string literal
		}
		strong := quoted || lineStart(text, ks)
		if secretValue(text[vs:ve], quoted, strong) {
			add(vs, ve)
		}
	}
}

// closesLiteral reports whether a quote opened just before the key at ks
// is still open after it (the operator follows the key at once) and the
// quote at vs-1, right after the operator, is the one that closes it:
// then key and operator are the text of a string literal, as in
// "password=" + pw, and what follows is code. JSON's "password":"x"
// closes the key's quote before the colon and is a real value.
func closesLiteral(text string, ks, ke, vs int) bool {
	q := text[vs-1]
	if text[ks-1] != q || ke >= len(text) || text[ke] == q {
		return false
	}
	op := text[vs-2]
	return op == '=' || op == ':'
}

// keyByte reports the characters of a key name.
func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// secretKey reports whether a key names a secret value.
func secretKey(key string) bool {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	k := b.String()
	if strings.Contains(k, "tokeniz") || k == "" {
		return false
	}
	for _, s := range keyNotSecretSuffix {
		if strings.HasSuffix(k, s) && k != s {
			return false
		}
	}
	for _, p := range keyNotSecretPrefix {
		if strings.HasPrefix(k, p) && k != p && !strings.HasPrefix(k, p+"secret") {
			return false
		}
	}
	return true
}

// lineStart reports whether only blanks, "export ", "- " or "--" come
// before offset i on its line.
func lineStart(text string, i int) bool {
	j := i
	for j > 0 && text[j-1] != '\n' && i-j < 64 {
		j--
	}
	if j > 0 && text[j-1] != '\n' {
		return false
	}
	pre := strings.TrimSpace(text[j:i])
	pre = strings.TrimPrefix(pre, "export")
	pre = strings.TrimPrefix(pre, "set")
	pre = strings.TrimSpace(strings.TrimPrefix(pre, "-"))
	return pre == "" || pre == `"` || pre == "'"
}

// assignedValue parses the operator and value after a key ending at i:
// optional closing quote, blanks, one of = : := =>, blanks, then a quoted
// string or a bare word. It returns the value's span.
func assignedValue(text string, i int) (vs, ve int, quoted, ok bool) {
	n := len(text)
	if i < n && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	for i < n && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	switch {
	case strings.HasPrefix(text[i:], ":="), strings.HasPrefix(text[i:], "=>"):
		i += 2
	case i < n && (text[i] == '=' || text[i] == ':'):
		if i+1 < n && (text[i+1] == '=' || text[i+1] == ':') {
			return 0, 0, false, false // == comparison, :: path
		}
		i++
	default:
		return 0, 0, false, false
	}
	for i < n && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= n {
		return 0, 0, false, false
	}
	if q := text[i]; q == '"' || q == '\'' || q == '`' {
		j := i + 1
		for j < n && j-i <= maxValueLen && text[j] != q && text[j] != '\n' {
			if text[j] == '\\' && q == '"' && j+1 < n && text[j+1] != '\n' {
				j++
			}
			j++
		}
		if j >= n || text[j] != q {
			return 0, 0, false, false
		}
		return i + 1, j, true, j > i+1
	}
	j := i
	for j < n && j-i <= maxValueLen && !valueStop(text[j]) {
		j++
	}
	return i, j, false, j > i
}

// valueStop ends a bare value.
func valueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ';', '"', '\'', '`', '}', ']', ')', '<', '>', '\\':
		return true
	}
	return false
}

// secretValue reports whether a value is a secret rather than empty, a
// placeholder, a reference to one ($VAR, ${VAR}, {{ .x }}, <your-key>,
// os.environ[...]) or a plain word.
func secretValue(v string, quoted, strong bool) bool {
	if len(v) < 4 || len(v) > 4096 {
		return false
	}
	lower := strings.ToLower(v)
	if placeholders[lower] || strings.Trim(lower, "x*.#-_0") == "" || strings.HasPrefix(v, "[REDACTED") {
		return false
	}
	switch v[0] {
	case '$', '<', '%', '{', '[', '(':
		return false
	}
	if pathLike(v) || strings.HasPrefix(lower, "0x") && len(v) <= 10 {
		return false // a file name or a small hex number
	}
	if strings.HasPrefix(lower, "your") || strings.HasPrefix(lower, "process.env") || strings.HasPrefix(lower, "os.") ||
		strings.Contains(lower, "environ") || strings.Contains(lower, "getenv") || strings.HasPrefix(lower, "env.") {
		return false
	}
	if t := strings.TrimSpace(v); quoted && t != v && (strings.HasPrefix(t, "+") || strings.HasSuffix(t, "+") || strings.HasPrefix(t, ".")) {
		return false // "password=" + pw + "&": between two literals, code
	}
	c := classes(v)
	if !quoted && (strings.ContainsAny(v, "([{") || v[0] == '&' || v[0] == '*' || identifier(v)) {
		return false // a call, an index, a literal, an identifier: code, not a value
	}
	if !strong {
		if dottedIdent(v) {
			return false
		}
		return len(v) >= 8 && (c.count() >= 2 && (c.digit || c.other) || len(v) >= 16 && entropy(v) >= 3.0)
	}
	if dottedIdent(v) && !c.digit {
		return false
	}
	return true
}

// pathLike reports an absolute or relative path (/dev/urandom,
// ~/.netrc, ./key.pem) or a file name with a short extension
// (git-credential-osxkeychain.c, dist.readme-s390.html): names, not
// secrets.
func pathLike(v string) bool {
	if strings.ContainsAny(v, " \t") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
		return true
	}
	dot := strings.LastIndexByte(v, '.')
	if dot <= 0 || dot == len(v)-1 || len(v)-dot-1 > 5 {
		return false
	}
	letter := false
	for _, c := range []byte(v[dot+1:]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
		letter = letter || c >= 'a'
	}
	for _, c := range []byte(v[:dot]) {
		if !(isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '/') {
			return false // p@ss.w0rd is a password, not a file
		}
	}
	return letter || strings.Contains(v, "/")
}

// dottedIdent reports identifiers such as config.password or
// settings.API_KEY: references, not values.
func dottedIdent(v string) bool {
	if !strings.Contains(v, ".") {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// findNearKey reports a high-entropy token that follows a secret-ish word
// on the same line within a short distance, without an assignment
// operator: "--token 9f8e...", "api key is sk9...", "Password - Xy7...".
// The token must be 16 to 512 characters of letters, digits and + / = _ -
// . ~, mix letters and digits, and carry at least 3.5 bits of entropy per
// character (3.0 for 32 or more); UUIDs and hexadecimal hashes after
// commit/sha/hash words are left alone.
func findNearKey(sc *scan, add func(int, int)) {
	text := sc.text
	seen := 0 // end of the last token reported
	for _, k := range sc.keyWords() {
		ke := k[1]
		if k[0] < seen {
			continue
		}
		limit := min(len(text), ke+48)
		if nl := strings.IndexByte(text[ke:limit], '\n'); nl >= 0 {
			limit = ke + nl
		}
		for i := ke; i < limit; {
			if !nearTokenByte(text[i]) {
				i++
				continue
			}
			for i < limit && !isAlnum(text[i]) {
				i++ // a token starts with a letter or digit: not "=", "--"
			}
			j := i
			for j < len(text) && j-i <= 512 && nearTokenByte(text[j]) {
				j++
			}
			if tok := strings.TrimRight(text[i:j], "."); highEntropyToken(tok) && !hashContext(text, i, tok) {
				add(i, i+len(tok))
				seen = i + len(tok)
				break
			}
			i = j
		}
	}
}

func nearTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.' || c == '~'
}

// highEntropyToken reports whether tok looks like a random credential.
func highEntropyToken(tok string) bool {
	if len(tok) < 16 || len(tok) > 512 || uuidLike(tok) {
		return false
	}
	c := classes(tok)
	if !c.digit || !(c.lower || c.upper) {
		return false
	}
	if wordLike(tok) || pathLike(tok) {
		return false
	}
	h := entropy(tok)
	return h >= 3.5 || len(tok) >= 32 && h >= 3.0
}

// identifier reports a bare value that reads as a program's name rather
// than a password: CamelCase words (CuratedCredentials) or snake_case
// (hf_from_file), letters without digits. An all-lower or all-upper word
// (hunter, SECRET) and random mixed case (ZBKUYeIJDmYb) are not.
func identifier(v string) bool {
	c := classes(v)
	if c.digit {
		return false
	}
	for i := 0; i < len(v); i++ {
		if b := v[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_') {
			return false
		}
	}
	if c.lower && c.upper {
		return wordLike(v) // CamelCase words, not random mixed case
	}
	return strings.Contains(strings.Trim(v, "_"), "_")
}

// wordLike reports a token made of words and numbers rather than random
// characters: TestSOCKS5Credential, sbt/1.0/credentials, v2-release-2024.
// In each piece between punctuation, a run of one character class (a
// capital may start a lower-case run) averages four or more characters;
// random tokens switch class every two characters or so.
func wordLike(tok string) bool {
	runs, letters := 0, 0
	prev := byte(0)
	for i := 0; i < len(tok); i++ {
		var cls byte
		switch b := tok[i]; {
		case b >= 'a' && b <= 'z':
			cls = 'a'
		case b >= 'A' && b <= 'Z':
			cls = 'A'
			if i+1 < len(tok) && tok[i+1] >= 'a' && tok[i+1] <= 'z' {
				cls = 'a' // a capital that starts a word
			}
		case b >= '0' && b <= '9':
			cls = '0'
		default:
			prev = 0
			continue
		}
		letters++
		if cls != prev {
			runs++
		}
		prev = cls
	}
	return runs > 0 && float64(letters)/float64(runs) >= 4
}

// hashContext reports a hexadecimal token that a commit/sha/hash/digest
// word on its line introduces: a git object name or a checksum.
func hashContext(text string, at int, tok string) bool {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	j := at
	for j > 0 && text[j-1] != '\n' && at-j < 256 {
		j--
	}
	line := strings.ToLower(text[j:at])
	for _, w := range []string{"commit", "sha", "hash", "digest", "checksum", "revision", "rev ", "object"} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// uuidLike reports the 8-4-4-4-12 hexadecimal form.
func uuidLike(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// entropy returns the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

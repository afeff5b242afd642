package redact

import (
	"math/big"
	"net/netip"
	"strings"
)

// fileTLDs are endings that make user@host.ext a file name or an asset
// reference (icon@2x.png, pkg@1.2/index.js), not an address.
var fileTLDs = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "ico": true, "bmp": true,
	"js": true, "mjs": true, "ts": true, "css": true, "map": true, "json": true, "go": true, "py": true,
	"rs": true, "md": true, "txt": true, "html": true, "lock": true, "tgz": true, "zip": true,
	// host names of a local network, as in ssh key comments (user@laptop.local)
	"local": true, "localdomain": true, "lan": true, "home": true, "internal": true, "localhost": true,
}

// findEmails reports addresses local@domain.tld. It scans for '@' and
// grows the match by hand, which is much faster than a leading character
// class in a regular expression.
func findEmails(sc *scan, add func(int, int)) {
	text := sc.text
	for off := 0; ; {
		k := strings.IndexByte(text[off:], '@')
		if k < 0 {
			return
		}
		at := off + k
		off = at + 1
		s := at
		for s > 0 && emailLocalByte(text[s-1]) {
			s--
		}
		for s < at && (text[s] == '.' || text[s] == '-') {
			s++
		}
		e := at + 1
		for e < len(text) && (isAlnum(text[e]) || text[e] == '.' || text[e] == '-') {
			e++
		}
		for e > at+1 && (text[e-1] == '.' || text[e-1] == '-') {
			e--
		}
		if s == at || e == at+1 || text[at-1] == '.' {
			continue
		}
		if s > 0 && text[s-1] == ':' && userinfo(text, s-1) {
			continue // scheme://user:password@host: the url-password rule's
		}
		domain := text[at+1 : e]
		labels := strings.Split(domain, ".")
		if len(labels) < 2 {
			continue
		}
		ok := true
		for _, l := range labels {
			if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
				ok = false
				break
			}
		}
		tld := strings.ToLower(labels[len(labels)-1])
		if !ok || len(tld) < 2 || !allAlpha(tld) || fileTLDs[tld] {
			continue
		}
		add(s, e)
		off = e
	}
}

// userinfo reports whether the ':' at i follows scheme://user, so what
// comes after it is a URL's password.
func userinfo(text string, i int) bool {
	j := i
	for j > 0 && i-j < 256 && !(text[j-1] == ' ' || text[j-1] == '\n' || text[j-1] == '\t' || text[j-1] == '"' || text[j-1] == '\'') {
		j--
	}
	return strings.Contains(text[j:i], "://")
}

func emailLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func allAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// numberRuns returns the runs of digits with one or two of space, dot,
// dash and brackets between them, and a leading '+' or '(': the raw
// material of cards, phone numbers and IPv4 addresses. Runs glued to a
// letter, digit or '_' on either side are left out. A hand scan, since a
// regular expression starting with a character class tries every byte.
func (sc *scan) numberRuns() [][2]int {
	if sc.haveRuns {
		return sc.runs
	}
	sc.haveRuns = true
	text := sc.text
	n := len(text)
	for i := 0; i < n; i++ {
		if !isDigit(text[i]) {
			continue
		}
		s := i
		if s > 0 && text[s-1] == '(' {
			s--
		}
		if s > 0 && text[s-1] == '+' {
			s--
		}
		e := i
		for {
			for e < n && isDigit(text[e]) {
				e++
			}
			j := e
			for j < n && j-e < 2 && runSep(text[j]) {
				j++
			}
			if j == e || j >= n || !isDigit(text[j]) {
				break
			}
			e = j
		}
		i = e
		// A run glued to a word at either end loses its glued group
		// ("415-555-0100 5x" keeps the number; "v1.2.3.4" goes).
		for e > s && e < n && glued(text[e]) {
			e = lastSep(text, s, e)
		}
		for s < e && s > 0 && glued(text[s-1]) && !afterEscape(text, s) {
			s = firstSepEnd(text, s, e)
		}
		if s < e {
			sc.runs = append(sc.runs, [2]int{s, e})
		}
	}
	return sc.runs
}

func glued(c byte) bool { return isAlnum(c) || c == '_' }

// lastSep returns where the run [s, e) ends once its last group is
// dropped (the separators before it too), or s if it has one group.
func lastSep(text string, s, e int) int {
	j := e
	for j > s && !runSep(text[j-1]) {
		j--
	}
	for j > s && runSep(text[j-1]) {
		j--
	}
	return j
}

// firstSepEnd returns where the run [s, e) starts once its first group
// is dropped, or e if it has one group.
func firstSepEnd(text string, s, e int) int {
	j := s
	for j < e && !runSep(text[j]) {
		j++
	}
	for j < e && runSep(text[j]) {
		j++
	}
	return j
}

func runSep(c byte) bool { return c == ' ' || c == '.' || c == '(' || c == ')' || c == '-' }

// findCards reports payment card numbers: 13 to 19 digits, in one block
// or in groups split by one kind of separator, starting with a known
// issuer prefix and passing the Luhn check.
func findCards(sc *scan, add func(int, int)) {
	text := sc.text
	for _, r := range sc.numberRuns() {
		s, e := r[0], r[1]
		run := text[s:e]
		if run[0] == '+' || run[0] == '(' || strings.ContainsAny(run, "().") {
			continue
		}
		digits, sep, ok := groups(run)
		if !ok || len(digits) < 13 || len(digits) > 19 {
			continue
		}
		if sep != 0 && !cardGrouping(run, sep) {
			continue
		}
		if cardIssuer(digits) && luhn(digits) {
			add(s, e)
		}
	}
}

// groups returns the digits of run and its one separator (0 for none);
// ok is false when separators are mixed or doubled.
func groups(run string) (digits string, sep byte, ok bool) {
	var b strings.Builder
	for i := 0; i < len(run); i++ {
		c := run[i]
		if isDigit(c) {
			b.WriteByte(c)
			continue
		}
		if sep == 0 {
			sep = c
		} else if c != sep {
			return "", 0, false
		}
		if i+1 < len(run) && !isDigit(run[i+1]) {
			return "", 0, false
		}
	}
	return b.String(), sep, true
}

// cardGrouping accepts the printed layouts: 4-4-4-4(-3), 4-6-4 (Diners),
// 4-6-5 (Amex).
func cardGrouping(run string, sep byte) bool {
	var lens []int
	for _, g := range strings.Split(run, string(sep)) {
		lens = append(lens, len(g))
	}
	switch {
	case len(lens) == 3 && lens[0] == 4 && lens[1] == 6 && (lens[2] == 4 || lens[2] == 5):
		return true
	case len(lens) >= 4 && len(lens) <= 5:
		for i, l := range lens {
			if l != 4 && !(i == len(lens)-1 && l >= 1 && l <= 4) {
				return false
			}
		}
		return true
	}
	return false
}

// cardIssuer reports a number that starts like a card of a known network:
// Visa, Mastercard, American Express, Discover, JCB, Diners, UnionPay,
// Maestro.
func cardIssuer(d string) bool {
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	n := len(d)
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011, p2 == 65, p4/10 >= 644 && p4/10 <= 649:
		return n >= 16
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16
	case p2 == 36 || p2 == 38 || p2 == 39 || p4/10 >= 300 && p4/10 <= 305:
		return n >= 14
	case p2 == 62:
		return n >= 16
	case p2 == 50 || p2 >= 56 && p2 <= 69:
		return n >= 12
	}
	return false
}

// luhn reports whether a digit string passes the Luhn checksum.
func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// ibanRe finds IBAN candidates: country, check digits, then 11 to 30
// letters and digits, optionally in groups of four split by one space.
var ibanRe = anchored(`[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?|(?:[A-Z0-9]{4} ){2,7}[A-Z0-9]{1,4})`)

// ibanLengths are the lengths of the IBAN countries (ISO 13616 registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// findIBANs reports IBANs: the candidate is trimmed to its country's
// length (a known country) and must pass the mod-97 checksum.
func findIBANs(sc *scan, add func(int, int)) {
	text := sc.text
	for i := 0; i+4 <= len(text); i++ {
		if !isUpper(text[i]) || !isUpper(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
			continue
		}
		m := ibanRe.FindStringIndex(text[i:min(len(text), i+64)])
		if m == nil {
			continue
		}
		if e, ok := ibanEnd(text, i, i+m[1]); ok {
			add(i, e)
			i = e - 1
		}
	}
}

// ibanEnd returns where the IBAN that starts a candidate [s, e) ends.
func ibanEnd(text string, s, e int) (int, bool) {
	if s > 0 && (isAlnum(text[s-1]) || text[s-1] == '_') && !afterEscape(text, s) {
		return 0, false
	}
	compact := strings.ReplaceAll(text[s:e], " ", "")
	if want, known := ibanLengths[text[s:s+2]]; known {
		if len(compact) < want {
			return 0, false
		}
		compact = compact[:want]
	}
	n, end := 0, s
	for end < e && n < len(compact) {
		if text[end] != ' ' {
			n++
		}
		end++
	}
	if end < len(text) && (isAlnum(text[end]) || text[end] == '_') {
		return 0, false
	}
	return end, mod97(compact)
}

// mod97 reports whether an IBAN (without spaces) passes ISO 7064 mod 97-10.
func mod97(iban string) bool {
	if len(iban) < 15 {
		return false
	}
	r := iban[4:] + iban[:4]
	var num strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case isDigit(c):
			num.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			num.WriteByte(byte('0' + v/10))
			num.WriteByte(byte('0' + v%10))
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(num.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// findPhones reports telephone numbers written the way people write them:
// +CC followed by 7 to 14 more digits (groups allowed), North American
// (NPA) NXX-XXXX, and national numbers with a leading 0 in groups. Bare
// digit strings without '+' are not phone numbers here: they are ids,
// timestamps and counters far more often.
func findPhones(sc *scan, add func(int, int)) {
	text := sc.text
	for _, r := range sc.numberRuns() {
		s := r[0]
		run := text[s:r[1]]
		for len(run) > 0 && (run[len(run)-1] == ')' || run[len(run)-1] == '(') {
			run = run[:len(run)-1]
		}
		if phone(run) {
			add(s, s+len(run))
		}
	}
}

// phone decides whether a number run is a telephone number.
func phone(run string) bool {
	var digits []byte
	var seps []byte
	var groupLens []int
	cur := 0
	for i := 0; i < len(run); i++ {
		c := run[i]
		if isDigit(c) {
			digits = append(digits, c)
			cur++
			continue
		}
		if c == '+' {
			if i != 0 {
				return false
			}
			continue
		}
		if cur > 0 {
			groupLens = append(groupLens, cur)
			cur = 0
		}
		if c != ' ' {
			seps = append(seps, c)
		}
	}
	if cur > 0 {
		groupLens = append(groupLens, cur)
	}
	n := len(digits)
	dots := strings.Count(string(seps), ".")
	if dots > 0 && dots != len(groupLens)-1 {
		return false // dots mixed with other separators: a version or a decimal
	}
	if strings.Count(run, "(") != strings.Count(run, ")") {
		return false
	}
	if run[0] == '+' {
		if n < 8 || n > 15 {
			return false
		}
		return len(groupLens) == 1 && n >= 10 || len(groupLens) >= 2 && groupLens[0] <= 4
	}
	if len(groupLens) < 2 {
		return false
	}
	for _, g := range groupLens {
		if g > 5 {
			return false
		}
	}
	switch {
	case n == 10 && nanp(groupLens, 0) && digits[0] >= '2':
		return true
	case n == 11 && digits[0] == '1' && groupLens[0] == 1 && nanp(groupLens[1:], 0) && digits[1] >= '2':
		return true
	case n >= 10 && n <= 11 && digits[0] == '0' && groupLens[0] >= 2 && groupLens[0] <= 5 && len(groupLens) <= 4 && dots == 0:
		return true
	}
	return false
}

// nanp accepts 3-3-4 groups (area code, exchange, line).
func nanp(g []int, _ int) bool {
	return len(g) == 3 && g[0] == 3 && g[1] == 3 && g[2] == 4
}

// findIPv4 reports dotted quads (each part 0 to 255, no leading zero)
// that ipv4Check accepts. It parses at each digit that starts a number.
func findIPv4(sc *scan, add func(int, int)) {
	text := sc.text
	for _, r := range sc.numberRuns() {
		if strings.IndexByte(text[r[0]:r[1]], '.') < 0 {
			continue
		}
		for i := r[0]; i < r[1]; i++ {
			if !isDigit(text[i]) || i > 0 && isDigit(text[i-1]) {
				continue
			}
			e, ok := quad(text, i)
			if ok && ipv4Check(text, i, e) {
				add(i, e)
				i = e - 1
			}
		}
	}
}

// quad parses a.b.c.d at i and returns its end.
func quad(text string, i int) (int, bool) {
	for part := 0; part < 4; part++ {
		if part > 0 {
			if i >= len(text) || text[i] != '.' {
				return 0, false
			}
			i++
		}
		j, v := i, 0
		for j < len(text) && j-i < 3 && isDigit(text[j]) {
			v = v*10 + int(text[j]-'0')
			j++
		}
		if j == i || v > 255 || j-i > 1 && text[i] == '0' || j < len(text) && isDigit(text[j]) {
			return 0, false
		}
		i = j
	}
	return i, true
}

// ipv4Check refuses quads glued to version-like context (v1.2.3.4,
// 1.2.3.4.5) and the addresses that say nothing about anyone: 0.0.0.0,
// loopback, broadcast and netmasks.
func ipv4Check(text string, s, e int) bool {
	if s > 0 && !afterEscape(text, s) {
		if c := text[s-1]; isAlnum(c) || c == '.' || c == '_' || c == '-' {
			return false
		}
	}
	if e < len(text) {
		c := text[e]
		if isAlnum(c) || c == '_' {
			return false
		}
		if (c == '.' || c == '-') && e+1 < len(text) && isAlnum(text[e+1]) {
			return false
		}
	}
	a, err := netip.ParseAddr(text[s:e])
	if err != nil {
		return false
	}
	return !a.IsUnspecified() && !a.IsLoopback() && !strings.HasPrefix(text[s:e], "255.")
}

// findIPv6 reports IPv6 addresses (with an optional %zone and embedded
// IPv4 tail) other than :: and ::1. It grows a candidate around each
// colon by hand and lets net/netip decide.
func findIPv6(sc *scan, add func(int, int)) {
	text := sc.text
	for off := 0; off < len(text); {
		k := strings.IndexByte(text[off:], ':')
		if k < 0 {
			return
		}
		c := off + k
		s := c
		for s > 0 && ipv6Byte(text[s-1]) {
			s--
		}
		e := c + 1
		for e < len(text) && (ipv6Byte(text[e]) || text[e] == '.' && e+1 < len(text) && isDigit(text[e+1])) {
			e++
		}
		off = e
		cand := text[s:e]
		if strings.Count(cand, ":") < 2 {
			continue
		}
		if s > 0 && (isAlnum(text[s-1]) || text[s-1] == '_') && !afterEscape(text, s) || e < len(text) && (isAlnum(text[e]) || text[e] == '_') {
			continue
		}
		zoneEnd := e
		if e < len(text) && text[e] == '%' {
			zoneEnd = e + 1
			for zoneEnd < len(text) && isAlnum(text[zoneEnd]) {
				zoneEnd++
			}
		}
		a, err := netip.ParseAddr(cand)
		if err != nil || a.IsUnspecified() || a.IsLoopback() || !a.Is6() {
			continue
		}
		if hexDigits(cand) < 4 {
			continue
		}
		if zoneEnd > e+1 {
			e = zoneEnd
		}
		add(s, e)
		off = e
	}
}

func ipv6Byte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':'
}

func hexDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' && s[i] != '.' {
			n++
		}
	}
	return n
}

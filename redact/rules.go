package redact

import (
	"sort"
	"strings"
)

// Rules is the pattern engine: pure Go, no setup, safe for concurrent use.
// Every pattern is an RE2 regular expression (linear time in the input)
// or a hand-written scanner, and most matches are checked further: Luhn
// for payment cards, mod-97 for IBANs, parsing for IP addresses, entropy
// and character classes for tokens.
//
// Every rule stays within one line except the PEM private-key rule, whose
// span runs from the BEGIN line to the END line (or, for a block whose END
// has not arrived, over the key's body lines to the end of the text).
// [NewWriter] relies on that.
//
// The zero value detects nothing; use [NewRules].
type Rules struct {
	rules []rule
}

// RulesOption configures [NewRules]. A nil RulesOption panics when applied.
type RulesOption func(*rulesConfig)

type rulesConfig struct {
	off map[string]bool
}

// WithoutRules turns off the named rules (see [Rules.Names]); unknown
// names are ignored.
func WithoutRules(names ...string) RulesOption {
	return func(c *rulesConfig) {
		for _, n := range names {
			c.off[n] = true
		}
	}
}

// rule is one detector of the engine.
type rule struct {
	name     string
	category string
	find     func(sc *scan, add func(start, end int))
}

// scan is one text being examined, with what several rules share: the
// text in ASCII lower case, the secret-ish key words, the number runs.
type scan struct {
	text      string
	lowerText string
	keys      [][2]int
	runs      [][2]int
	haveLower bool
	haveKeys  bool
	haveRuns  bool
}

func (sc *scan) lower() string {
	if !sc.haveLower {
		sc.lowerText, sc.haveLower = asciiLower(sc.text), true
	}
	return sc.lowerText
}

// asciiLower lowers A-Z only, so offsets stay those of the text.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// NewRules returns the rules engine with every rule on unless turned off.
func NewRules(opts ...RulesOption) *Rules {
	cfg := rulesConfig{off: map[string]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	r := &Rules{}
	for _, ru := range allRules {
		if !cfg.off[ru.name] {
			r.rules = append(r.rules, ru)
		}
	}
	return r
}

// Names returns the names of the rules r runs, sorted.
func (r *Rules) Names() []string {
	var n []string
	for _, ru := range r.rules {
		n = append(n, ru.name)
	}
	sort.Strings(n)
	return n
}

// Detect returns every finding of the rules in text, possibly overlapping,
// each on UTF-8 character boundaries (see [Widen]). It never fails.
//
// It sees through escape sequences and invisible characters (see
// [SeeThrough]): a key cut by a color reset is found whole.
func (r *Rules) Detect(text string) ([]Finding, error) {
	return seeThrough(text, r.detect)
}

func (r *Rules) detect(text string) ([]Finding, error) {
	var out []Finding
	sc := &scan{text: text}
	for _, ru := range r.rules {
		ru.find(sc, func(start, end int) {
			out = append(out, Finding{Start: start, End: end, Category: ru.category, Rule: ru.name})
		})
	}
	return Widen(text, out), nil // never a span Apply would skip
}

// allRules is the engine's rule set, in the order they run.
var allRules = []rule{
	{name: "pem-private-key", category: CategorySecret, find: findPEM},
	{name: "aws-access-key", category: CategorySecret, find: prefixFind(awsAccessPrefixes, false, awsAccessRe, 0, tokenBounded)},
	{name: "aws-secret-key", category: CategorySecret, find: prefixFindIf([]string{"aws"}, true, awsSecretRe, 1, nil, awsSecretNear)},
	{name: "gcp-api-key", category: CategorySecret, find: prefixFind([]string{"AIza"}, false, gcpKeyRe, 0, tokenBounded)},
	{name: "github-token", category: CategorySecret, find: prefixFind([]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false, githubRe, 0, tokenBounded)},
	{name: "gitlab-token", category: CategorySecret, find: prefixFind([]string{"glpat-", "gldt-", "glrt-", "glsoat-", "glptt-", "glft-", "glimt-", "glagent-", "glcbt-"}, false, gitlabRe, 0, tokenBounded)},
	{name: "slack-token", category: CategorySecret, find: prefixFind([]string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xapp-"}, false, slackRe, 0, tokenBounded)},
	{name: "slack-webhook", category: CategorySecret, find: prefixFind([]string{"https://hooks.slack.com/"}, false, slackHookRe, 0, nil)},
	{name: "anthropic-key", category: CategorySecret, find: prefixFind([]string{"sk-ant-"}, false, anthropicRe, 0, tokenBounded)},
	{name: "openai-key", category: CategorySecret, find: prefixFind([]string{"sk-"}, false, openaiRe, 0, openaiCheck)},
	{name: "jwt", category: CategorySecret, find: prefixFind([]string{"eyJ"}, false, jwtRe, 0, tokenBounded)},
	{name: "auth-header", category: CategorySecret, find: prefixFind([]string{"authorization"}, true, authHeaderRe, 1, nil)},
	{name: "url-password", category: CategorySecret, find: findURLPasswords},
	{name: "secret-assignment", category: CategorySecret, find: findAssignments},
	{name: "secret-near-key", category: CategorySecret, find: findNearKey},
	{name: "email", category: CategoryPrivateEmail, find: findEmails},
	{name: "payment-card", category: CategoryAccountNumber, find: findCards},
	{name: "iban", category: CategoryAccountNumber, find: findIBANs},
	{name: "phone", category: CategoryPrivatePhone, find: findPhones},
	{name: "ipv4", category: CategoryIPAddress, find: findIPv4},
	{name: "ipv6", category: CategoryIPAddress, find: findIPv6},
}

// maxTokenLen bounds how far past a prefix an anchored pattern looks.
const maxTokenLen = 4096

// prefixFind returns a finder that looks for each literal prefix (in the
// lower-cased text when fold is set) with strings.Index and matches re,
// anchored, only there: the regular expression runs on candidates, not
// on the whole text. It reports group g of each match that check (if not
// nil) accepts; check sees the whole text and the span.
func prefixFind(prefixes []string, fold bool, re *lazyRegexp, g int, check func(text string, start, end int) bool) func(*scan, func(int, int)) {
	return prefixFindIf(prefixes, fold, re, g, check, nil)
}

// prefixFindIf is [prefixFind] with a cheap test, pre (if not nil), of
// the haystack at each prefix before the regular expression runs there: a
// run of prefixes ("awsawsaws...") then costs a string search each, not a
// match.
func prefixFindIf(prefixes []string, fold bool, re *lazyRegexp, g int, check func(text string, start, end int) bool, pre func(hay string, pos int) bool) func(*scan, func(int, int)) {
	// A token must not be glued to a word before it; checking that first
	// keeps runs like "eyJeyJeyJ..." from costing one match each.
	bounded := check != nil
	return func(sc *scan, add func(int, int)) {
		text, hay := sc.text, sc.text
		if fold {
			hay = sc.lower()
		}
		for _, p := range prefixes {
			for off := 0; ; {
				i := strings.Index(hay[off:], p)
				if i < 0 {
					break
				}
				pos := off + i
				if bounded && pos > 0 && wordByte(text[pos-1]) && !afterEscape(text, pos) {
					off = pos + 1 // glued to a longer word: no token starts here
					continue
				}
				if pre != nil && !pre(hay, pos) {
					off = pos + 1
					continue
				}
				m := re.FindStringSubmatchIndex(re.window(text, pos, maxTokenLen))
				if m == nil {
					off = pos + 1
					continue
				}
				s, e := pos+m[2*g], pos+m[2*g+1]
				if m[2*g] >= 0 && e > s && (check == nil || check(text, s, e)) {
					add(s, e)
				}
				off = pos + max(m[1], 1)
			}
		}
	}
}

// urlPlaceholder reports a URL password that stands for one (TOKEN,
// YOUR_PASSWORD, ${PASS}, <password>, pass, ****) or is not one (CVS's
// :pserver:user@host puts a method where a password would be).
func urlPlaceholder(p string) bool {
	lower := strings.ToLower(p)
	if placeholders[lower] || lower == "pass" || lower == "passwd" || strings.Trim(lower, "x*.") == "" || strings.Contains(p, ":") {
		return true
	}
	switch p[0] {
	case '$', '<', '{', '%', '[':
		return true
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true // an upper-case name: a placeholder in documentation
}

// anchored returns a pattern, compiled on first use, that must match where
// it is applied.
func anchored(re string) *lazyRegexp {
	l := &lazyRegexp{src: `^(?:` + re + `)`}
	lazyRegexps = append(lazyRegexps, l)
	return l
}

// findURLPasswords reports the password of scheme://user:password@host.
func findURLPasswords(sc *scan, add func(int, int)) {
	text := sc.text
	for off := 0; ; {
		i := strings.Index(text[off:], "://")
		if i < 0 {
			return
		}
		start := off + i + 3
		off = start
		end := start
		for end < len(text) && end-start <= 256 && !strings.ContainsRune("/ \t\r\n\"'<>@", rune(text[end])) {
			end++
		}
		if end >= len(text) || text[end] != '@' || end+1 >= len(text) || !isAlnum(text[end+1]) {
			continue
		}
		colon := strings.IndexByte(text[start:end], ':')
		if colon < 0 || colon > 64 {
			continue
		}
		if ps := start + colon + 1; end-ps >= 4 && end-ps <= 128 && !urlPlaceholder(text[ps:end]) {
			add(ps, end)
		}
		off = end
	}
}

// Token patterns of the well-known services, applied only where their
// prefix occurs (see prefixFind). Each runs on a slice of at most maxTokenLen bytes.
var (
	awsAccessPrefixes = []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA", "ASCA"}
	awsAccessRe       = anchored(`[A-Z]{4}[A-Z2-7]{16}`)
	// An AWS secret key is 40 base64 characters; alone it looks like any
	// other blob, so it needs an aws...secret key before it on its line.
	awsSecretRe = anchored(`(?i)aws[a-z0-9_ .-]{0,20}(?:secret|sk)[a-z0-9_ .-]{0,20}["']?[ \t]{0,32}[:=]{1,2}>?[ \t]{0,32}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)
	gcpKeyRe    = anchored(`AIza[0-9A-Za-z_-]{35}`)
	githubRe    = anchored(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`)
	gitlabRe    = anchored(`gl(?:pat|dt|rt|soat|ptt|ft|imt|agent|cbt)-[A-Za-z0-9_-]{20,64}(?:\.[A-Za-z0-9_.-]{2,})?`)
	slackRe     = anchored(`xox[baprs]-[0-9]{6,20}-[A-Za-z0-9-]{6,}|xox[baprs]-[A-Za-z0-9]{10,}(?:-[A-Za-z0-9]{1,64}){0,8}|xapp-[0-9]-[A-Z0-9]{1,32}-[0-9]{1,32}-[a-f0-9]{32,}`)
	slackHookRe = anchored(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}`)
	anthropicRe = anchored(`sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{20,}|sk-ant-[A-Za-z0-9_-]{32,}`)
	openaiRe    = anchored(`sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}|sk-[A-Za-z0-9]{32,}`)
	jwtRe       = anchored(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{0,}`)
	// Authorization: Bearer <token>, Basic <base64>, token <t>.
	authHeaderRe = anchored(`(?i)authorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|basic|token|digest)[ \t]+([A-Za-z0-9._~+/=-]{8,})`)
)

// tokenBounded reports whether the span is not glued to more token
// characters on either side, so "xghp_..." or a longer run is refused.
// awsSecretNear reports whether awsSecretRe can match at pos of the
// lower-cased text: "secret" or "sk" within the 20 bytes it allows after
// "aws", and ':' or '=' within the bytes it allows after that. Text with
// bytes outside ASCII (which case folding may match) always goes on to the
// pattern.
func awsSecretNear(lower string, pos int) bool {
	near := lower[pos+len("aws") : min(len(lower), pos+len("aws")+20+len("secret")+20+1+32+1)]
	for i := 0; i < len(near); i++ {
		if near[i] >= 0x80 {
			return true
		}
	}
	word := near[:min(len(near), 20+len("secret"))]
	return (strings.Contains(word, "sk") || strings.Contains(word, "secret")) && strings.ContainsAny(near, ":=")
}

func tokenBounded(text string, s, e int) bool {
	return (s == 0 || !wordByte(text[s-1]) || afterEscape(text, s)) && (e == len(text) || !wordByte(text[e]))
}

// afterEscape reports whether a terminal escape sequence (CSI: ESC [,
// parameters, a final letter, as in "\x1b[01;31m") ends just before i, so
// the letter before i is the sequence's, not the token's: colored output
// (grep --color, jq -C) must not hide a token.
func afterEscape(text string, i int) bool {
	if i < 3 || text[i-1] < 0x40 || text[i-1] > 0x7e {
		return false
	}
	for j := i - 2; j >= 1 && i-j <= 32; j-- {
		switch c := text[j]; {
		case c == '[' && text[j-1] == 0x1b:
			return true
		case c >= '0' && c <= '9' || c == ';' || c == '?' || c == ':':
		default:
			return false
		}
	}
	return false
}

// wordByte reports letters, digits, '_' and '-': what a token is made of.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// openaiCheck refuses sk- strings that are words rather than keys
// ("sk-learn-..." style names): a key mixes letters and digits.
func openaiCheck(text string, s, e int) bool {
	if !tokenBounded(text, s, e) || strings.HasPrefix(text[s:], "sk-ant-") {
		return false
	}
	c := classes(text[s+3 : e])
	return c.digit && (c.lower || c.upper)
}

// charClasses records which kinds of characters a string has.
type charClasses struct{ lower, upper, digit, other bool }

func classes(s string) charClasses {
	var c charClasses
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'a' && b <= 'z':
			c.lower = true
		case b >= 'A' && b <= 'Z':
			c.upper = true
		case b >= '0' && b <= '9':
			c.digit = true
		default:
			c.other = true
		}
	}
	return c
}

func (c charClasses) count() int {
	n := 0
	for _, b := range []bool{c.lower, c.upper, c.digit, c.other} {
		if b {
			n++
		}
	}
	return n
}

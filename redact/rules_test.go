package redact

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestRulesFind: each rule finds its kind of value, with the expected
// category, and leaves the look-alike next to it alone.
func TestRulesFind(t *testing.T) {
	r := NewRules()
	for _, tc := range []struct {
		rule, in, want string // want: the text after Apply
	}{
		{"email", "write to jane.doe+x@mail.example.org.", "write to [REDACTED:private_email]."},
		{"email", "retina icon@2x.png and pkg@1.2.3", "retina icon@2x.png and pkg@1.2.3"},
		{"email", "ssh-ed25519 AAAA me@laptop.local", "ssh-ed25519 AAAA me@laptop.local"},
		{"phone", "call +1 (415) 555-0132 now", "call [REDACTED:private_phone] now"},
		{"phone", "tel 415.555.0132", "tel [REDACTED:private_phone]"},
		{"phone", "+4915112345678", "[REDACTED:private_phone]"},
		{"phone", "id 4155550132 at 2024-01-15 10:30", "id 4155550132 at 2024-01-15 10:30"},
		{"payment-card", "visa 4012888888881881 ok", "visa [REDACTED:account_number] ok"},
		{"payment-card", "amex 3782-822463-10005", "amex [REDACTED:account_number]"},
		{"payment-card", "luhn fails 4012888888881882", "luhn fails 4012888888881882"},
		{"payment-card", "no issuer 9012888888881881", "no issuer 9012888888881881"},
		{"iban", "IBAN GB29 NWBK 6016 1331 9268 19 due", "IBAN [REDACTED:account_number] due"},
		{"iban", "IBAN GB29NWBK60161331926818 bad", "IBAN GB29NWBK60161331926818 bad"},
		{"ipv4", "from 203.0.113.9:22", "from [REDACTED:ip_address]:22"},
		{"ipv4", "hosts 10.0.0.1 10.0.0.2x", "hosts [REDACTED:ip_address] 10.0.0.2x"},
		{"phone", "ring 415-555-0100 5x", "ring [REDACTED:private_phone] 5x"},
		{"ipv4", "v1.2.3.4 and 1.2.3.4.5 and 127.0.0.1 and 999.1.1.1", "v1.2.3.4 and 1.2.3.4.5 and 127.0.0.1 and 999.1.1.1"},
		{"ipv6", "peer [fe80::1ff:fe23:4567:890a%eth0]", "peer [[REDACTED:ip_address]]"},
		{"ipv6", "std::vector ::1 12:34:56 00:1a:2b:3c:4d:5e", "std::vector ::1 12:34:56 00:1a:2b:3c:4d:5e"},
		{"aws-access-key", "id=AKIAIOSFODNN7EXAMPLE;", "id=[REDACTED:secret];"},
		{"aws-access-key", "XAKIAIOSFODNN7EXAMPLE", "XAKIAIOSFODNN7EXAMPLE"},
		{"github-token", "\x1b[01;31m\x1b[Kghp_16C7e42F292c6912E7710c838347Ae178B4a\x1b[m\x1b[K", "\x1b[01;31m\x1b[K[REDACTED:secret]\x1b[m\x1b[K"},
		{"payment-card", "\x1b[32m4111111111111111\x1b[0m", "\x1b[32m[REDACTED:account_number]\x1b[0m"},
		{"ipv4", "\x1b[1m10.20.30.40\x1b[0m", "\x1b[1m[REDACTED:ip_address]\x1b[0m"},
		{"iban", "\x1b[1mDE89370400440532013000\x1b[0m", "\x1b[1m[REDACTED:account_number]\x1b[0m"},
		{"aws-secret-key", "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key: [REDACTED:secret]"},
		{"gcp-api-key", "key=AIzaSyA-1234567890abcdefghijklmnopqrstu", "key=[REDACTED:secret]"},
		{"github-token", "ghs_abcdefghijklmnopqrstuvwxyz0123456789 x", "[REDACTED:secret] x"},
		{"github-token", "github_pat_11ABCDEFG0123456789abc_" + strings.Repeat("a1B2c", 11) + "d3E4", "[REDACTED:secret]"},
		{"gitlab-token", "glpat-Ab3dEf6hIj9kLm2nOp5q", "[REDACTED:secret]"},
		{"slack-token", "xoxp-1234567890-1234567890-abcdefABCDEF", "[REDACTED:secret]"},
		{"slack-webhook", "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX", "[REDACTED:secret]"},
		{"openai-key", "sk-proj-AbC123dEf456GhI789jKl0", "[REDACTED:secret]"},
		{"openai-key", "scikit-learn sk-learn-tutorials-for-everyone", "scikit-learn sk-learn-tutorials-for-everyone"},
		{"anthropic-key", "sk-ant-api03-" + strings.Repeat("Ab1_", 10), "[REDACTED:secret]"},
		{"jwt", "Bearer-less eyJhbGciOiJub25lIn0.eyJzdWIiOiJib2IifQ. done", "Bearer-less [REDACTED:secret] done"},
		{"auth-header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:secret]"},
		{"url-password", "postgres://app:s3cr3tpw@db:5432/x", "postgres://app:[REDACTED:secret]@db:5432/x"},
		{"url-password", "https://example.com:8443/path@x", "https://example.com:8443/path@x"},
		{"pem-private-key", "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk=\n-----END EC PRIVATE KEY-----\nb", "a\n[REDACTED:secret]\nb"},
		{"pem-private-key", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"pem-private-key", `"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n"`, `"private_key": "[REDACTED:secret]"`},
		{"pem-private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\nAAKCAQEA\nnot base64 here!\n", "[REDACTED:secret]\nnot base64 here!\n"},
		// Issue 15: only known headers right after BEGIN count; a blank line then text ends the block.
		{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n\nstatus: ok\nmore output\n", "[REDACTED:secret]\n\nstatus: ok\nmore output\n"},
		{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\nstatus: ok\n", "[REDACTED:secret]\nstatus: ok\n"},
		{"pem-private-key", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEpAIB\n-----END RSA PRIVATE KEY-----\nok", "[REDACTED:secret]\nok"},
		{"pem-private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED:secret]"},
		// Issue 15: invalid UTF-8 next to a secret widens the span instead of cancelling it.
		{"github-token", "token ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345\x80\n", "token [REDACTED:secret]\x80\n"},
		{"secret-assignment", "password=\x91Zx9Qw8Er7Ty6Ui5Op4\x92 done", "password=[REDACTED:secret] done"},
		{"pem-private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\x80\nok", "[REDACTED:secret]\x80\nok"},
		{"secret-assignment", "SESSION_SECRET=abc123xyz\nNAME=app", "SESSION_SECRET=[REDACTED:secret]\nNAME=app"},
		{"secret-assignment", `cfg := Config{Password: "tr0ub4dor&3"}`, `cfg := Config{Password: "[REDACTED:secret]"}`},
		{"secret-assignment", "  client_secret: 'qwertyuiop'", "  client_secret: '[REDACTED:secret]'"},
		{"secret-assignment", "PASSWORD_MIN_LENGTH=12\nmax_tokens=4096\nsecret: ${SECRET}", "PASSWORD_MIN_LENGTH=12\nmax_tokens=4096\nsecret: ${SECRET}"},
		{"secret-assignment", `if password == "x" {`, `if password == "x" {`},
		{"secret-assignment", `{"user":"bob","password":"hunter22"}`, `{"user":"bob","password":"[REDACTED:secret]"}`},
		{"secret-assignment", `url := "https://x/?password=" + pw + "&a=1"`, `url := "https://x/?password=" + pw + "&a=1"`},
		{"secret-assignment", "PASSWORD=p@ss.w0rd\nKEY_FILE=/etc/ssl/key.pem\nsecret_file: creds.json", "PASSWORD=[REDACTED:secret]\nKEY_FILE=/etc/ssl/key.pem\nsecret_file: creds.json"},
		{"secret-assignment", "token: /dev/urandom and api_key=0x02", "token: /dev/urandom and api_key=0x02"},
		{"secret-assignment", `files := map[string]string{"/etc/passwd": "nobody:x:65534"}`, `files := map[string]string{"/etc/passwd": "nobody:x:65534"}`},
		{"url-password", "ext://:pserver:anon@host and https://USER:TOKEN@host/x and ftp://u:****@h", "ext://:pserver:anon@host and https://USER:TOKEN@host/x and ftp://u:****@h"},
		{"secret-near-key", "export with --api-key Zx9Qw8Er7Ty6Ui5Op4 done", "export with --api-key [REDACTED:secret] done"},
		{"secret-near-key", "the token expired at 2024-01-15T10:30:00Z", "the token expired at 2024-01-15T10:30:00Z"},
		{"secret-near-key", "token refresh fixed in commit 9fceb02d0ae598e95dc970b74dd6f3a6b5c1f2d3", "token refresh fixed in commit 9fceb02d0ae598e95dc970b74dd6f3a6b5c1f2d3"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			found, err := r.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := Apply(tc.in, found); got != tc.want {
				t.Fatalf("Apply(%q)\n  = %q\nwant %q\nfindings %+v", tc.in, got, tc.want, found)
			}
			if tc.in != tc.want && !hasRule(found, tc.rule) {
				t.Fatalf("%q: rule %s did not fire; findings %+v", tc.in, tc.rule, found)
			}
		})
	}
}

func hasRule(fs []Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// TestWithoutRules: a rule turned off finds nothing; Names lists the rest.
func TestWithoutRules(t *testing.T) {
	r := NewRules(WithoutRules("email", "nonesuch"))
	if found, _ := r.Detect("a bob@example.com"); len(found) != 0 {
		t.Fatalf("email rule off, found %+v", found)
	}
	names := r.Names()
	if has(names, "email") || !has(names, "github-token") || len(names) != len(allRules)-1 {
		t.Fatalf("Names = %v", names)
	}
	if found, _ := (&Rules{}).Detect("bob@example.com"); len(found) != 0 {
		t.Fatal("zero Rules detected something")
	}
}

// TestRulesLinear: inputs that make backtracking engines blow up take
// linear time here (every pattern is RE2 or a hand scan).
func TestRulesLinear(t *testing.T) {
	r := NewRules()
	n := 1 << 16
	if testing.Short() {
		n = 1 << 12
	}
	for _, in := range []string{
		strings.Repeat("a", 1<<20),
		strings.Repeat("1 ", n*8),
		strings.Repeat("a@", n*8),
		strings.Repeat(":", 1<<20),
		strings.Repeat("password=", n*2),
		strings.Repeat("-----BEGIN PRIVATE KEY-----", n/2),
		strings.Repeat("eyJ", n*4),
		strings.Repeat("AKIA", n*4),
		strings.Repeat("sk-", n*4),
		strings.Repeat("1.", n*8),
		strings.Repeat("tokentoken", n),
		strings.Repeat("passwordpassword", n),
		strings.Repeat("x", n*8) + "@" + strings.Repeat("y.", n*4),
		strings.Repeat("aws_secret_key=", n),
		strings.Repeat("Authorization: Bearer ", n),
		strings.Repeat("+1 ", n*4),
		strings.Repeat("DE89 ", n*2),
		"-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n", n),
		strings.Repeat("://a:b@", n*2),
		strings.Repeat("api key ", n*2),
		strings.Repeat("a1", n*8),
	} {
		start := time.Now()
		if _, err := r.Detect(in); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d bytes of %q took %v", len(in), in[:12], d)
		} else {
			t.Logf("%d bytes of %q: %v", len(in), in[:12], d)
		}
	}
}

// FuzzRules: Detect never panics, and every finding lies inside the text,
// is not empty, and starts and ends on character boundaries.
func FuzzRules(f *testing.F) {
	text, _ := loadCorpus(f)
	for _, line := range strings.Split(text, "\n")[:60] {
		f.Add(line)
	}
	f.Add("é@é.éé +1 (((555 ::ffff:1.2.3.4%zz AKIAÀ")
	f.Fuzz(func(t *testing.T, in string) {
		found, err := NewRules().Detect(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range found {
			if fi.Start < 0 || fi.End > len(in) || fi.End <= fi.Start || fi.Category == "" || fi.Rule == "" {
				t.Fatalf("bad finding %+v in %q", fi, in)
			}
			if utf8.ValidString(in) && (!utf8.RuneStart(in[fi.Start]) || fi.End < len(in) && !utf8.RuneStart(in[fi.End])) {
				t.Fatalf("finding %+v not on character boundaries in %q", fi, in)
			}
		}
	})
}

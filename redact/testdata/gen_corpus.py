#!/usr/bin/env python3
"""Writes corpus.txt: a labelled corpus for the rules engine's precision and
recall test (corpus_test.go). Every value is fake, made here from a fixed
seed. A labelled span reads ⟦category:value⟧; everything else is text that
must stay. Run: python3 gen_corpus.py > corpus.txt"""
import base64, json, random, string

R = random.Random(15)
A = string.ascii_letters + string.digits
UP = string.ascii_uppercase
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"

def rs(n, alphabet=A):
    return "".join(R.choice(alphabet) for _ in range(n))

def L(cat, v):
    return "⟦%s:%s⟧" % (cat, v)

S = lambda v: L("secret", v)

def luhn_complete(prefix, n):
    d = prefix + "".join(R.choice(string.digits) for _ in range(n - len(prefix) - 1))
    for c in string.digits:
        x = d + c
        s = 0
        for i, ch in enumerate(reversed(x)):
            v = int(ch)
            if i % 2 == 1:
                v *= 2
                if v > 9: v -= 9
            s += v
        if s % 10 == 0:
            return x
def luhn_bad(prefix, n):
    good = luhn_complete(prefix, n)
    return good[:-1] + str((int(good[-1]) + R.randint(1, 9)) % 10)

def group(d, sizes, sep):
    out, i = [], 0
    for s in sizes:
        out.append(d[i:i+s]); i += s
    if i < len(d): out.append(d[i:])
    return sep.join(out)

def iban(cc, bban):
    def num(s):
        return "".join(str(int(c, 36)) for c in s)
    chk = 98 - int(num(bban + cc + "00")) % 97
    return "%s%02d%s" % (cc, chk, bban)

def pem(label, nlines=8, width=64):
    body = "\n".join(base64.b64encode(bytes(R.getrandbits(8) for _ in range(width * 3 // 4))).decode() for _ in range(nlines))
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (label, body, label)

def b64u(obj):
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

def jwt():
    return "%s.%s.%s" % (b64u({"alg": "HS256", "typ": "JWT"}), b64u({"sub": str(R.randint(1, 10**9)), "name": "Test User", "iat": 1516239022 + R.randint(0, 10**7)}), rs(43, A + "-_"))

first = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "zoe"]
last = ["smith", "jones", "nguyen", "garcia", "muller", "rossi", "kowalski", "tanaka", "silva", "okafor"]
doms = ["example.com", "mail.example.org", "corp.example.net", "uni.example.edu", "example.co.uk", "shop.example.io"]
lines = []
P = lines.append

# ---- secrets ---------------------------------------------------------
for _ in range(6):
    P("aws access key id: " + S("AKIA" + rs(16, B32)))
for _ in range(3):
    P("export AWS_ACCESS_KEY_ID=" + S("ASIA" + rs(16, B32)))
for _ in range(5):
    P("aws_secret_access_key = " + S(rs(40, A + "/+")))
P('{"AccessKeyId": "' + S("AKIA" + rs(16, B32)) + '", "SecretAccessKey": "' + S(rs(40, A + "/+")) + '"}')
for _ in range(6):
    P('  "api_key": "' + S("AIza" + rs(35, A + "-_")) + '",')
P("maps url: https://maps.googleapis.com/maps/api/js?key=" + S("AIza" + rs(35, A + "-_")) + "&callback=init")
for _ in range(2):
    key = pem("PRIVATE KEY", 6).replace("\n", "\\n")
    P('{"type": "service_account", "project_id": "demo-123", "private_key_id": "' + S(rs(40, HEX)) + '", "private_key": "' + S(key) + '\\n", "client_email": "' + L("private_email", "svc-%d@demo-123.iam.gserviceaccount.com" % R.randint(1, 99)) + '"}')
for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]:
    for _ in range(2):
        P("token=" + S(p + rs(36)))
for _ in range(3):
    P("git clone https://x-access-token:" + S("ghs_" + rs(36)) + "@github.com/acme/app.git")
for _ in range(3):
    P("GITHUB_TOKEN: " + S("github_pat_" + rs(22) + "_" + rs(59)))
for _ in range(4):
    P("gitlab personal token " + S("glpat-" + rs(20, A + "_-")))
for p in ["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"]:
    P("slack: " + S("%s-%d-%d-%s" % (p, R.randint(10**10, 10**12), R.randint(10**11, 10**13), rs(24))))
for _ in range(3):
    P("webhook = " + S("https://hooks.slack.com/services/T%s/B%s/%s" % (rs(8, UP + string.digits), rs(10, UP + string.digits), rs(24))))
for _ in range(4):
    P("OPENAI_API_KEY=" + S("sk-" + rs(20) + "T3BlbkFJ" + rs(20)))
for _ in range(4):
    P("client = OpenAI(api_key=\"" + S("sk-proj-" + rs(80, A + "_-")) + "\")")
for _ in range(2):
    P("legacy openai key " + S("sk-" + rs(48)))
for _ in range(5):
    P("ANTHROPIC_API_KEY=" + S("sk-ant-api03-" + rs(93, A + "_-") + "AA"))
P("curl https://api.anthropic.com/v1/messages -H \"x-api-key: " + S("sk-ant-api03-" + rs(93, A + "_-") + "AA") + "\"")
for _ in range(5):
    P("Cookie: session=" + S(jwt()) + "; Path=/")
for _ in range(3):
    P("curl -H \"Authorization: Bearer " + S(jwt()) + "\" https://api.example.com/v1/me")
for _ in range(2):
    P("Authorization: Basic " + S(base64.b64encode(("user:" + rs(12)).encode()).decode()))
for label in ["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY"]:
    P("key file follows:\n" + S(pem(label, R.randint(3, 10))))
P("pgp:\n" + S("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + "\n".join(rs(64, A + "+/") for _ in range(5)) + "\n=" + rs(4) + "\n-----END PGP PRIVATE KEY BLOCK-----"))
envkeys = ["SECRET_KEY", "DB_PASSWORD", "API_KEY", "STRIPE_SECRET_KEY", "JWT_SECRET", "REDIS_PASSWORD", "AUTH_TOKEN", "SESSION_SECRET", "SMTP_PASSWORD", "ENCRYPTION_KEY", "PRIVATE_KEY_PASSPHRASE", "CLIENT_SECRET"]
for k in envkeys:
    P(k + "=" + S(rs(R.randint(12, 40), A + "!@#%^&*")))
for k in ["password", "api_key", "client_secret", "access_token", "refresh_token"]:
    P("  " + k + ": " + S(rs(R.randint(16, 32), A)))
for k in ["password", "apiKey", "secret", "accessToken"]:
    P('{"user": "svc", "' + k + '": "' + S(rs(R.randint(10, 30), A + "!#$%")) + '", "retries": 3}')
P("DATABASE_PASSWORD='" + S("correct-horse-battery-" + rs(6)) + "'")
P("export SECRET=\"" + S(rs(24)) + "\"")
P("db.password = " + S(rs(14, A)))
P("password := \"" + S("Pa55w0rd!" + rs(4)) + "\"")
P("mysql -u root --password=" + S(rs(16)) + " app")
P("psql postgres://app:" + S(rs(18)) + "@db.internal:5432/app")
P("redis://:" + S(rs(20)) + "@cache.internal:6379/0")
P("amqp://guest:" + S(rs(12)) + "@rabbit.internal:5672/")
for _ in range(4):
    P("use --token " + S(rs(32, A)) + " for the deploy")
P("your api key is " + S(rs(40, A)) + " keep it safe")
P("Secret: " + S(rs(28, A + "+/")))
P("the private key passphrase - " + S(rs(20, A)))

# ---- personal data ---------------------------------------------------
for _ in range(16):
    f, l, d = R.choice(first), R.choice(last), R.choice(doms)
    P(R.choice(["Contact ", "From: ", "cc ", "mailto:", "Reply to ", ""]) + L("private_email", R.choice([f + "." + l, f + "+news", f[0] + l + str(R.randint(1, 99)), f]) + "@" + d) + R.choice([" today", ".", ", thanks", ""]))
phones = ["+1 415-555-%04d", "(415) 555-%04d", "415-555-%04d", "415.555.%04d", "+44 20 7946 %04d", "+49 30 901820%02d", "020 7946 %04d", "+33 1 42 68 %02d %02d", "+14155550%03d", "+61 2 9374 %04d", "1-800-555-%04d"]
for fmt in phones:
    n = fmt.count("%")
    val = fmt % tuple(R.randint(0, 99) for _ in range(n)) if n > 1 else fmt % R.randint(0, 99 if "%02d" in fmt else 999 if "%03d" in fmt else 9999)
    P("Call me at " + L("private_phone", val) + " after 6pm")
    P("phone: " + L("private_phone", val))
cards = [("4", 16, [4, 4, 4, 4]), ("51", 16, [4, 4, 4, 4]), ("55", 16, [4, 4, 4, 4]), ("2221", 16, [4, 4, 4, 4]), ("34", 15, [4, 6, 5]), ("37", 15, [4, 6, 5]), ("6011", 16, [4, 4, 4, 4]), ("3530", 16, [4, 4, 4, 4]), ("36", 14, [4, 6, 4]), ("62", 16, [4, 4, 4, 4])]
for pre, n, g in cards:
    d = luhn_complete(pre, n)
    P("card: " + L("account_number", d))
    P("Paid with " + L("account_number", group(luhn_complete(pre, n), g, R.choice([" ", "-"]))) + " exp 12/29")
P("test card " + L("account_number", "4111 1111 1111 1111") + " always works")
for cc, bban in [("DE", "370400440532013000"), ("GB", "WEST12345698765432"), ("FR", "20041010050500013M02606"), ("NL", "ABNA0417164300"), ("ES", "21000418450200051332"), ("IT", "X0542811101000000123456"), ("CH", "0483000000000000000001"[:17]), ("BE", "539007547034"), ("PL", "109010140000071219812874"), ("SE", "50000000058398257466")]:
    v = iban(cc, bban)
    P("IBAN: " + L("account_number", v))
    P("transfer to " + L("account_number", " ".join(v[i:i+4] for i in range(0, len(v), 4))) + " by Friday")
for _ in range(8):
    ip = "%d.%d.%d.%d" % (R.choice([10, 172, 192, 203, 198, 34, 52, 8]), R.randint(0, 255), R.randint(0, 255), R.randint(1, 254))
    P(R.choice(["Connection from ", "client_ip=", "server at ", "ssh root@"]) + L("ip_address", ip) + R.choice([" port 22", "", ":8443", " closed"]))
for v in ["2001:db8::8a2e:370:7334", "fe80::1ff:fe23:4567:890a", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2606:4700:4700::1111", "::ffff:c000:0280", "2a00:1450:4001:82b::200e"]:
    P("addr " + L("ip_address", v) + " reachable")
    P("[" + L("ip_address", v) + "]:443 listening")

# ---- look-alikes that must stay ------------------------------------
import uuid
for _ in range(8):
    P("request id " + str(uuid.UUID(int=R.getrandbits(128))) + " completed in %dms" % R.randint(1, 900))
for _ in range(8):
    P("commit " + rs(40, HEX) + " Merge pull request #%d" % R.randint(1, 9999))
for _ in range(4):
    P(rs(7, HEX) + " fix: handle empty token list")
for _ in range(3):
    P("sha256:" + rs(64, HEX) + "  dist/app.tar.gz")
P("image: ghcr.io/acme/app@sha256:" + rs(64, HEX))
for _ in range(3):
    P('<img src="data:image/png;base64,' + base64.b64encode(bytes(R.getrandbits(8) for _ in range(150))).decode() + '">')
P('"integrity": "sha512-' + base64.b64encode(bytes(R.getrandbits(8) for _ in range(64))).decode() + '",')
for v in ["1.2.3", "v2.10.0-rc.1", "10.0.19041.1", "go1.26.0", "Python 3.12.4", "node v20.11.1", "version 4.2.2.1-beta", "libssl.so.3.0.13", "kernel 6.8.0-45-generic"]:
    P("running " + v)
for pre, n in [("4", 16), ("51", 16), ("37", 15), ("6011", 16), ("4", 16), ("55", 16)]:
    P("declined test card " + group(luhn_bad(pre, n), [4, 4, 4, 4] if n == 16 else [4, 6, 5], " "))
for _ in range(4):
    P("order number " + luhn_bad("4", 16) + " shipped")
for _ in range(3):
    P("tracking 1Z%s" % rs(16, UP + string.digits))
P("timestamp 1700000000123 and 1712345678")
P("invoice 9780306406157 (ISBN 978-0-306-40615-7)")
for v in ["DE89370400440532013001", "GB82WEST12345698765431", "FR7630006000011234567890188"]:
    P("bad iban " + v)
P("2024-01-15 10:30:45,123 INFO server started on 0.0.0.0:8080")
P("listening on 127.0.0.1:5432 and [::1]:5432 and [::]:80")
P("netmask 255.255.255.0 broadcast 255.255.255.255")
P("std::vector<int> v; std::map<std::string, int> m; io::Error::new()")
P("elapsed 12:34:56 at 23:59:59.999")
P("MAC 00:1a:2b:3c:4d:5e on eth0")
P("icon@2x.png and logo@3x.webp, lodash@4.17.21, @types/node@20.1.0")
P("npm install react@18.2.0 left-pad@1.3.0")
P("the AKIA prefix marks long-term AWS keys; ASIA marks temporary ones")
P("pip install scikit-learn  # sk-learn is not an api key")
P("see sk-ant- keys in the console; ghp_ tokens are classic PATs")
P('password = os.environ["DB_PASSWORD"]')
P("token = get_token(user)")
P("api_key: ${API_KEY}")
P('password: "<your-password>"')
P("secret: {{ .Values.secret }}")
P("PASSWORD_MIN_LENGTH=8")
P("max_tokens: 4096")
P("TOKEN_TTL=3600")
P("token_url: https://auth.example.com/oauth/token")
P("PASSWORD_FILE=/run/secrets/db_password")
P("secretKeyRef:")
P("  secret_name: app-credentials")
P("tokenizer: o200k_base")
P("Password reset link sent; the token expired after 15 minutes.")
P("Enter password: ********")
P("API_KEY=changeme")
P("password=")
P("if user.password == hashed: return True")
P("color: #ff5733; background: #0a0a0a; margin: 0 auto;")
P("pi = 3.14159265358979 and e = 2.718281828")
P("Coordinates 51.5074, -0.1278 (London)")
P("Call 911 or 112 in an emergency; room 4201; PIN 1234")
P("Version 12.4 released 2023-10-02 with 1500 fixes")
P("Between 10 000 and 20 000 users, 1 234 567 requests")
P("uuid: 550e8400-e29b-41d4-a716-446655440000")
P("Serial: 4C4C4544-0042-3510-8052-B4C04F4E3332")
P("aws s3 cp s3://bucket/key.txt . --region eu-west-1")
P("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(43) + " user@laptop.local")
P("-----BEGIN CERTIFICATE-----\n" + "\n".join(rs(64, A + "+/") for _ in range(3)) + "\n-----END CERTIFICATE-----")
P("-----BEGIN PUBLIC KEY-----\n" + rs(64, A + "+/") + "\n-----END PUBLIC KEY-----")
P("eyJ is how base64 of '{\"' starts")
P("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.")
P("func (k *Key) Token() string { return k.token }")
P("SELECT id, email FROM users WHERE created_at > '2024-01-01';")
P("git remote add origin https://github.com/acme/app.git")
P("https://example.com/search?q=secret+santa&page=2")
P("Total: $1,234.56 (tax 19%)")
P("build 20240115.3 took 00:03:21")
P("0x7ffd5c8a1b2c segfault at 0000000000000010 ip 00007f3a2b1c0d4e")

# found as false positives on source code and /usr/share/doc, kept here
P("\tProtectCredentials: CuratedCredentials,")
P("c := &syscall.Credential{Uid: 0, Gid: 0}")
P("// credentials: see TestSOCKS5Credential and TestProxyCredentials")
P("sbt reads credentials from ~/.sbt/1.0/credentials and ~/.ivy2/.credentials")
P("git clone https://USER:TOKEN@github.com/org/repo.git")
P("token: hf_from_file_placeholder_name")
P('fmt.Fprintf(w, "password=%s\\n", pw)')
P("Token expires_in 3600 and the refresh token rotates; see RFC 6749 section 5.1")

R.shuffle(lines)
print("\n".join(lines))

package hostview

import (
	"testing"
)

func TestCredentialName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"token", true}, {"stored_tokens", true}, {".credentials", true}, {"credentials", true},
		{"credentials.toml", true}, {"auth.json", true}, {"auth.toml", true}, {".netrc", true},
		{"hf_token", true}, {"api-credentials.json", true}, {"my.secret.yaml", true}, {"client_secret.json", true},
		{"db-password.txt", true}, {"server.pem", true}, {"tls.key", true}, {"store.p12", true},
		{"keystore.jks", true}, {"id_ed25519", true}, {"hosts.yml", true}, {"TOKEN", true},
		{"registry.token", true}, {"db.password", true}, {"deploy.secret", true}, {"aws.credentials", true},
		// Code, data and ordinary files keep working.
		{"token.py", false}, {"tokenize.py", false}, {"credentials.rs", false}, {"tokenizer.json", false},
		{"tokenizer_config.json", false}, {"special_tokens_map.json", false}, {"added_tokens.json", false},
		{"config.toml", false}, {"settings.toml", false}, {"env", false}, {"secretstorage", false},
		{"hftoken", true}, {"authtoken", true}, {"db_password.txt", true}, {".env", true},
		{"tokens.go", false}, {"pip.conf", false}, {"README.md", false}, {"keyring", false},
	} {
		if got := CredentialName(tc.name); got != tc.want {
			t.Errorf("CredentialName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzCredentialName(f *testing.F) {
	for _, s := range []string{"token", "a.pem", "tokenizer.json", "", ".", "x..y", "ÄTOKEN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		_ = CredentialName(name) // must not panic
	})
}

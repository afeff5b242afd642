package proxy

import (
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// proxyUser is the one user name that Config.Credential accepts.
const proxyUser = "moat"

// credentialMatches reports whether user and password are proxyUser and
// credential, in time independent of the password's content.
func credentialMatches(user, password, credential string) bool {
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(proxyUser))
	passOK := subtle.ConstantTimeCompare([]byte(password), []byte(credential))
	return userOK&passOK == 1
}

// parseBasic parses a "Basic" authorization value into a user and password.
func parseBasic(v string) (user, password string, ok bool) {
	const prefix = "basic "
	if len(v) < len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// authorized reports whether an HTTP request may use the proxy: always when
// no credential is configured, otherwise when its Proxy-Authorization
// carries the credential.
func (s *Server) authorized(h http.Header) bool {
	if s.cfg.Credential == "" {
		return true
	}
	for _, v := range h.Values("Proxy-Authorization") {
		if user, pass, ok := parseBasic(v); ok && credentialMatches(user, pass, s.cfg.Credential) {
			return true
		}
	}
	return false
}

package hfhub

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 5

// origin is a URL's scheme, host and port, the port made explicit, as a
// browser's same-origin rule compares them. Go's own client compares host
// names only (any port of a host, and its subdomains, get the token); this
// is stricter: another port is another server.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// sendsToken reports whether a request to u may carry the token: only one
// to the hub's own origin (the Endpoint's scheme, host and port). Storage
// the hub redirects to, another host, or another port never gets it.
func (c *Client) sendsToken(u *url.URL) bool {
	if c.Token == "" {
		return false
	}
	ep, err := url.Parse(c.Endpoint)
	if err != nil || ep.Host == "" {
		return false
	}
	return origin(u) == origin(ep)
}

// checkHop refuses a redirect from https to plain http and bounds the
// redirects, hops being the redirects followed before this one.
func checkHop(from, to *url.URL, hops int) error {
	if hops >= maxRedirects {
		return fmt.Errorf("hub redirected more than %d times", maxRedirects)
	}
	if strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(to.Scheme, "https") {
		return fmt.Errorf("refusing the hub's redirect from https to %s (%s)", to.Scheme, to.Redacted())
	}
	if s := strings.ToLower(to.Scheme); s != "https" && s != "http" {
		return fmt.Errorf("refusing the hub's redirect to a %q URL", to.Scheme)
	}
	return nil
}

// checkRedirect is the redirect policy of every request the client makes:
// bounded, never from https to http, and the token only to the hub's own
// origin. A request carries the token only if every URL of its chain so far
// is the hub's origin: once a chain has left, nothing brings the token back.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return errors.New("redirect with no earlier request")
	}
	if err := checkHop(via[len(via)-1].URL, req.URL, len(via)-1); err != nil {
		return err
	}
	keep := c.sendsToken(req.URL)
	for _, v := range via {
		keep = keep && c.sendsToken(v.URL)
	}
	if !keep {
		req.Header.Del("Authorization")
	}
	return nil
}

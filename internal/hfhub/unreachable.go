package hfhub

import (
	"context"
	"errors"
	"fmt"
	"net/url"
)

// ErrUnreachable marks a request that got no answer at all: the hub (or the
// storage it redirected to) could not be reached, as on a machine that is
// offline or cannot resolve the hub's name.
var ErrUnreachable = errors.New("cannot reach the hub")

// unreachableError is a transport failure, told with the place asked and the
// settings that change it.
type unreachableError struct {
	endpoint string // the hub's origin, as HF_ENDPOINT gives it
	host     string // scheme://host of the request that failed
	err      error  // the transport's own error
}

func (e *unreachableError) Error() string {
	where := "the hub at " + e.endpoint
	if e.host != "" && e.host != e.endpoint {
		where = e.host + " (where the hub at " + e.endpoint + " sent the download)"
	}
	return fmt.Sprintf("cannot reach %s (%v): set HF_ENDPOINT to a hub or mirror this machine can reach, or copy the files into the cache (--cache-dir), where they need no network", where, e.err)
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// transportError wraps err, the error of an HTTP request that got no
// response, as an [ErrUnreachable] naming HF_ENDPOINT, unless the request
// was cancelled (an interrupt), which says nothing about the hub. A
// deadline that passed is the hub not answering, and so is unreachable.
func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	inner, host := err, ""
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
		if u, perr := url.Parse(ue.URL); perr == nil {
			host = u.Scheme + "://" + u.Host
		}
	}
	return &unreachableError{endpoint: c.Endpoint, host: host, err: inner}
}

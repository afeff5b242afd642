package proxy

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// interfaceCache returns the host's interface addresses, listing them again
// at most once per ttl: a listing costs a netlink dump, and the proxy checks
// addresses on every new upstream connection.
type interfaceCache struct {
	ttl time.Duration

	mu      sync.Mutex
	fetched time.Time
	list    []netip.Addr
}

func newInterfaceCache(ttl time.Duration) *interfaceCache {
	return &interfaceCache{ttl: ttl}
}

// addrs returns the cached list, refreshing it when it is older than ttl. A
// failed listing keeps the previous list.
func (c *interfaceCache) addrs() []netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.list == nil || now.Sub(c.fetched) >= c.ttl {
		if list, err := interfaceAddrs(); err == nil {
			c.list, c.fetched = list, now
		}
	}
	return c.list
}

// interfaceAddrs lists the addresses of every interface of the host.
func interfaceAddrs() ([]netip.Addr, error) {
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	list := make([]netip.Addr, 0, len(ifas))
	for _, ifa := range ifas {
		var ip net.IP
		switch a := ifa.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			list = append(list, a.Unmap().WithZone(""))
		}
	}
	return list, nil
}

// Package proxy is the policy proxy that moat runs on the host for each
// sandbox whose network policy is neither "deny all" nor absent.
//
// One [Server] speaks three protocols on the same listener, told apart by the
// first byte a client sends (0x05 starts a SOCKS5 greeting, anything else is
// HTTP/1.1):
//
//   - HTTP/1.1 forwarding of absolute-form requests (GET http://host/path),
//     with keep-alive towards the client and one reusable upstream
//     connection per client connection;
//   - HTTP CONNECT tunnels (HTTPS and anything else over TCP);
//   - SOCKS5 CONNECT (RFC 1928), with optional username/password
//     authentication (RFC 1929).
//
// Every request passes the same admission path (admit.go), in this order:
//
//  1. the host is normalized and the policy's Check decides on
//     (protocol, host, port);
//  2. the name is resolved once and every address it resolves to is
//     classified (local.go); a name that resolves to any loopback, private,
//     link-local, CGNAT, metadata, multicast, unspecified or host-own address
//     is refused, unless Config.AllowLocal lists the address or the policy
//     named that IP literal itself (Decision.ExplicitIP);
//  3. the decision is handed to Config.Audit, and a failed write refuses the
//     connection;
//  4. only then is a checked address dialed: never the name, so a DNS answer
//     that changes between the check and the dial cannot redirect it.
//
// The package uses only the standard library; it has no build constraints
// and runs wherever Go's net package does.
package proxy

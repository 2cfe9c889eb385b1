package nodes

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A ReadyCheck is a node's readiness check ([Node.Ready]) parsed: its
// kind and what follows the kind's colon.
type ReadyCheck struct {
	// Kind is tcp, http, exec, file, log, notify or fd.
	Kind string
	// Arg is HOST:PORT, the URL, the command line, the path, the regular
	// expression, the descriptor's number; "" for notify.
	Arg string
}

// ErrBadReady is wrapped by the error of a readiness check that cannot
// be parsed.
var ErrBadReady = errors.New("bad readiness check")

// ReadyKinds are the kinds of readiness check, as the help lists them.
const ReadyKinds = "tcp:ADDRESS:PORT, http:URL, exec:CMD ARGS, file:PATH, log:REGEX, notify, fd:N"

// ParseReady parses a readiness check: tcp:HOST:PORT (a connection is
// accepted), http:URL (a 2xx answer), exec:CMD ARGS (exits 0), file:PATH
// (an absolute path that exists), log:REGEX (a line the node logged since
// its start matches), notify (systemd's READY=1 on the node's own
// $NOTIFY_SOCKET), fd:N (s6's notification-fd: a line written to
// descriptor N, 3 to 1023).
func ParseReady(s string) (ReadyCheck, error) {
	kind, arg, _ := strings.Cut(s, ":")
	c := ReadyCheck{Kind: kind, Arg: arg}
	bad := func(format string, a ...any) (ReadyCheck, error) {
		return ReadyCheck{}, fmt.Errorf("%w %q: %s", ErrBadReady, s, fmt.Sprintf(format, a...))
	}
	switch kind {
	case "notify":
		if arg != "" || strings.Contains(s, ":") {
			return bad("notify takes nothing after it")
		}
	case "tcp":
		if _, _, err := SplitHostPort(arg); err != nil {
			return bad("want tcp:ADDRESS:PORT: %v", err)
		}
	case "http":
		u, err := url.Parse(arg)
		if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
			return bad("want http:http://ADDRESS[:PORT]/PATH (for https: exec:curl -fsS URL)")
		}
		hostport := u.Host
		if u.Port() == "" {
			hostport += ":80"
		}
		if _, _, err := SplitHostPort(hostport); err != nil {
			return bad("%v", err)
		}
	case "exec":
		if len(strings.Fields(arg)) == 0 {
			return bad("want exec:CMD [ARGS]")
		}
	case "file":
		if !filepath.IsAbs(arg) || filepath.Clean(arg) == "/" {
			return bad("want file:/ABSOLUTE/PATH")
		}
	case "fd":
		if n, err := strconv.Atoi(arg); err != nil || n < 3 || n > 1023 {
			return bad("want fd:N, N from 3 to 1023 (0-2 are the standard ones)")
		}
	case "log":
		if arg == "" {
			return bad("want log:REGEX")
		}
		if _, err := regexp.Compile(arg); err != nil {
			return bad("%v", err)
		}
	default:
		return bad("the kinds are %s", ReadyKinds)
	}
	return c, nil
}

// String is the check as given.
func (c ReadyCheck) String() string {
	if c.Kind == "notify" {
		return c.Kind
	}
	return c.Kind + ":" + c.Arg
}

// expandReady expands the readiness check template t for n and checks it.
func expandReady(t string, n Node) (string, error) {
	if t == "" {
		return "", nil
	}
	s, err := Expand(t, n)
	if err != nil {
		return "", err
	}
	if _, err := ParseReady(s); err != nil {
		return "", fmt.Errorf("%s: --ready: %w", n.Name, err)
	}
	return s, nil
}

// orString is a, or b when a is "".
func orString(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// SplitHostPort splits a check's ADDRESS:PORT ("127.0.0.1:80",
// "[::1]:80", "localhost:80"). The address is numeric, or localhost:
// multi links no resolver (see package internal/ready).
func SplitHostPort(s string) (host string, port int, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("%q has no :PORT", s)
	}
	host, ps := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return "", 0, fmt.Errorf("%q: an IPv6 address goes in brackets, [::1]:PORT", s)
	}
	if port, err = strconv.Atoi(ps); err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not 1 to 65535", ps)
	}
	if _, err := netip.ParseAddr(host); err != nil && host != "localhost" {
		return "", 0, fmt.Errorf("%q is not a numeric address or localhost (multi resolves no names)", host)
	}
	return host, port, nil
}

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

// A ReadyCheck is a node's readiness check, parsed once where it is
// given ([ParseReady]); the zero ReadyCheck is none. Its JSON is its text.
type ReadyCheck struct {
	Kind ReadyKind
	// Target is HOST:PORT, the URL, the command line, the path, the
	// regular expression, the descriptor's number; "" for notify.
	Target string
	// Args is an exec check's command line in words ([Words]), each
	// %-letter expanded inside its word.
	Args []string
}

// A ReadyKind is the kind of a readiness check.
type ReadyKind string

// The kinds of readiness check.
const (
	TCP    ReadyKind = "tcp"    // a connection to HOST:PORT is accepted
	HTTP   ReadyKind = "http"   // a GET of the URL answers 2xx
	Exec   ReadyKind = "exec"   // the command exits 0
	File   ReadyKind = "file"   // the absolute path exists
	Log    ReadyKind = "log"    // a line the node logged since its start matches
	Notify ReadyKind = "notify" // READY=1 on the node's own $NOTIFY_SOCKET
	FD     ReadyKind = "fd"     // a line on descriptor N (s6's notification-fd)
)

// Probe reports whether anyone can run a check of kind k again, at any
// time (tcp, http, exec, file): status does, and only those serve as
// liveness checks; the others are what a node says as it starts.
func (k ReadyKind) Probe() bool {
	return k == TCP || k == HTTP || k == Exec || k == File
}

// ErrBadReady is wrapped by the error of a readiness check that cannot
// be parsed.
var ErrBadReady = errors.New("bad readiness check")

// ReadyKinds are the kinds of readiness check, as the help lists them.
const ReadyKinds = "tcp:ADDRESS:PORT, http:URL, exec:CMD ARGS, file:PATH, log:REGEX, notify, fd:N"

// ParseReady parses a readiness check: tcp:HOST:PORT (a connection is
// accepted), http:URL (a 2xx answer; the URL alone says the same), exec:CMD ARGS (exits 0), file:PATH
// (an absolute path that exists), log:REGEX (a line the node logged since
// its start matches), notify (systemd's READY=1 on the node's own
// $NOTIFY_SOCKET), fd:N (s6's notification-fd: a line written to
// descriptor N, 3 to 1023).
func ParseReady(s string) (ReadyCheck, error) {
	if strings.HasPrefix(s, "http://") {
		s = "http:" + s // a URL alone is an http: check
	}
	kind, arg, _ := strings.Cut(s, ":")
	c := ReadyCheck{Kind: ReadyKind(kind), Target: arg}
	bad := func(format string, a ...any) (ReadyCheck, error) {
		return ReadyCheck{}, fmt.Errorf("%w %q: %s", ErrBadReady, s, fmt.Sprintf(format, a...))
	}
	switch c.Kind {
	case Notify:
		if arg != "" || strings.Contains(s, ":") {
			return bad("notify takes nothing after it")
		}
	case TCP:
		if _, _, err := SplitHostPort(arg); err != nil {
			return bad("want tcp:ADDRESS:PORT: %v", err)
		}
	case HTTP:
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
	case Exec:
		args, err := Words(arg)
		if err != nil {
			return bad("%v", err)
		}
		if len(args) == 0 {
			return bad("want exec:CMD [ARGS]")
		}
		c.Args = args
	case File:
		if !filepath.IsAbs(arg) || filepath.Clean(arg) == "/" {
			return bad("want file:/ABSOLUTE/PATH")
		}
	case FD:
		if n, err := strconv.Atoi(arg); err != nil || n < 3 || n > 1023 {
			return bad("want fd:N, N from 3 to 1023 (0-2 are the standard ones)")
		}
	case Log:
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

// String is the check as given; "" for none.
func (c ReadyCheck) String() string {
	if c.Kind == Notify || c.Kind == "" {
		return string(c.Kind)
	}
	return string(c.Kind) + ":" + c.Target
}

// expandWords expands each word of args for n and quotes them again,
// after kind and its colon.
func expandWords(kind, args string, n Node) (string, error) {
	words, err := Words(args)
	if err != nil {
		return "", fmt.Errorf("%w %s:%s: %v", ErrBadReady, kind, args, err)
	}
	for i, w := range words {
		if words[i], err = Expand(w, n); err != nil {
			return "", err
		}
	}
	return kind + ":" + Quote(words), nil
}

// FD is N of an fd:N check, 0 for another kind.
func (c ReadyCheck) FD() int {
	if c.Kind != FD {
		return 0
	}
	n, _ := strconv.Atoi(c.Target) // ParseReady checked it
	return n
}

// MarshalText writes the check as given.
func (c ReadyCheck) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses a check ([ParseReady]); "" is none.
func (c *ReadyCheck) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*c = ReadyCheck{}
		return nil
	}
	v, err := ParseReady(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ExpandReady expands the check template t for n and parses it; "" is
// none, option ("--ready") names it in the error.
func ExpandReady(t string, n Node, option string) (ReadyCheck, error) {
	if t == "" {
		return ReadyCheck{}, nil
	}
	s, err := Expand(t, n)
	if kind, arg, _ := strings.Cut(t, ":"); ReadyKind(kind) == Exec {
		// Word by word: what a letter expands to is one argument.
		s, err = expandWords(kind, arg, n)
	}
	if err != nil {
		return ReadyCheck{}, err
	}
	c, err := ParseReady(s)
	if err != nil {
		return ReadyCheck{}, fmt.Errorf("%s: %s: %w", n.Name, option, err)
	}
	return c, nil
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

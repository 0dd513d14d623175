package natsq

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Scheme starts every address of this backend.
const Scheme = "nats://"

// IsAddr reports whether s names a place or a net on NATS rather than a
// folder.
func IsAddr(s string) bool { return strings.HasPrefix(s, Scheme) }

// Addr is a parsed address: nats://HOST:PORT/NAME for a net (the stream
// NAME), nats://HOST:PORT/NAME/PLACE or nats://HOST:PORT/NAME.PLACE (the
// subject) for one of its places.
type Addr struct {
	Server string // nats://HOST:PORT
	Stream string // NAME
	Place  string // "" for the net itself
}

// String is the address as a user writes it.
func (a Addr) String() string {
	s := a.Server + "/" + a.Stream
	if a.Place != "" {
		s += "/" + a.Place
	}
	return s
}

// Net is the address of a's net, without its place.
func (a Addr) Net() Addr { a.Place = ""; return a }

// Parse parses a nats:// address (see Addr). A port defaults to 4222.
func Parse(s string) (Addr, error) {
	if !IsAddr(s) {
		return Addr{}, fmt.Errorf("%s is not a nats:// address", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Addr{}, fmt.Errorf("%s: %v", s, err)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return Addr{}, fmt.Errorf("%s: a nats:// address has no ? or #: write nats://HOST:PORT/NAME", s)
	}
	if u.Host == "" {
		return Addr{}, fmt.Errorf("%s: no server: write nats://HOST:PORT/NAME", s)
	}
	host := u.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(u.Hostname(), "4222")
	}
	path := strings.Trim(u.Path, "/")
	if path == "" {
		return Addr{}, fmt.Errorf("%s: no stream name: write nats://%s/NAME", s, host)
	}
	a := Addr{Server: Scheme + host}
	if u.User != nil {
		a.Server = Scheme + u.User.String() + "@" + host
	}
	stream, place, ok := strings.Cut(path, "/")
	if !ok {
		stream, place, _ = strings.Cut(path, ".")
	}
	if err := ValidStream(stream); err != nil {
		return Addr{}, fmt.Errorf("%s: %v", s, err)
	}
	if strings.Contains(place, "/") {
		return Addr{}, fmt.Errorf("%s: a place is one name after the stream's (nats://HOST:PORT/NAME/PLACE)", s)
	}
	a.Stream, a.Place = stream, place
	return a, nil
}

// ValidStream says why name cannot name a net's stream: tpipe's streams
// are letters, digits, '-' and '_', as JetStream's bucket names are
// (the net's marks and large jobs live in buckets named after it).
func ValidStream(name string) error {
	if name == "" {
		return errors.New("a stream name is empty")
	}
	if len(name) > 200 {
		return fmt.Errorf("stream name %.20s... is longer than 200 bytes", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%q is not a valid stream name: use letters, digits, - and _", name)
		}
	}
	return nil
}

// subjectToken makes a place's name one token of a subject and a name fit for a
// consumer: letters, digits and '-' stay, '_' is "__", any other byte is
// '_' and two hex digits ("in.failed" is "in_2efailed").
func subjectToken(place string) string {
	var b strings.Builder
	for i := 0; i < len(place); i++ {
		c := place[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-':
			b.WriteByte(c)
		case c == '_':
			b.WriteString("__")
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// untoken is subjectToken's inverse; ok is false for a token token does not make.
func untoken(t string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(t) && t[i+1] == '_' {
			b.WriteByte('_')
			i++
			continue
		}
		if i+2 >= len(t) {
			return "", false
		}
		var x byte
		if _, err := fmt.Sscanf(t[i+1:i+3], "%02x", &x); err != nil {
			return "", false
		}
		b.WriteByte(x)
		i += 2
	}
	return b.String(), true
}

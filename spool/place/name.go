package place

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxName is the longest name ValidName accepts, in bytes: the limit of a
// file name on Linux's file systems.
const MaxName = 255

// ErrBadName is wrapped by every error of ValidName.
var ErrBadName = errors.New("place: bad name")

// NameError is a name that ValidName refuses, and why.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("bad name %q: %s", e.Name, e.Reason)
}

func (e *NameError) Unwrap() error { return ErrBadName }

// ValidName checks a name of a token, a place or a lock, which may come
// from an untrusted writer: it must be a single component of a path that
// cannot reach outside its directory, cannot pass for an option of a
// program it is given to, and prints as itself. It returns a *NameError
// for a name that is empty, longer than MaxName bytes, not UTF-8, or that
// holds a '/', "..", a NUL or another control character, or starts with
// '-' or with '.' (the place's own entries).
func ValidName(name string) error {
	bad := func(reason string) error { return &NameError{Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxName:
		return bad(fmt.Sprintf("longer than %d bytes", MaxName))
	case !utf8.ValidString(name):
		return bad("not UTF-8")
	case strings.Contains(name, ".."):
		return bad(`holds ".."`)
	case name[0] == '-':
		return bad("starts with '-'")
	case name[0] == '.':
		return bad("starts with '.'")
	}
	for _, r := range name {
		switch {
		case r == '/':
			return bad("holds '/'")
		case r == 0:
			return bad("holds NUL")
		case unicode.IsControl(r):
			return bad("holds a control character")
		}
	}
	return nil
}

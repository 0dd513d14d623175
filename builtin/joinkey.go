package builtin

import (
	"bytes"
	"regexp"
	"regexp/syntax"

	"github.com/tpipe/tpipe/record"
)

// joinKey returns join's key function for re, whose one group is the key.
// A group that takes the whole line, as in ^(.*)$, skips the regexp: a
// line holds no newline, so .* matches all of it wherever the anchors are,
// and a pattern that is just that is common enough (a join on whole lines)
// for its cost to matter.
func joinKey(re *regexp.Regexp) func(rec []byte) ([]byte, bool) {
	if wholeLine(re) {
		return func(rec []byte) ([]byte, bool) {
			line := record.TrimEOL(rec)
			if bytes.IndexByte(line, '\n') < 0 {
				return line, true
			}
			return regexpKey(re, rec)
		}
	}
	return func(rec []byte) ([]byte, bool) { return regexpKey(re, rec) }
}

func regexpKey(re *regexp.Regexp, rec []byte) ([]byte, bool) {
	line := record.TrimEOL(rec)
	m := re.FindSubmatchIndex(line)
	if m == nil || m[2] < 0 {
		return nil, false
	}
	return line[m[2]:m[3]], true
}

// wholeLine reports whether re is a group of any characters (.*), with
// at most a ^ before it and a $ after it.
func wholeLine(re *regexp.Regexp) bool {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return false
	}
	subs := []*syntax.Regexp{t}
	if t.Op == syntax.OpConcat {
		subs = t.Sub
	}
	if len(subs) > 0 && (subs[0].Op == syntax.OpBeginLine || subs[0].Op == syntax.OpBeginText) {
		subs = subs[1:]
	}
	if n := len(subs); n > 0 && (subs[n-1].Op == syntax.OpEndLine || subs[n-1].Op == syntax.OpEndText) {
		subs = subs[:n-1]
	}
	if len(subs) != 1 || subs[0].Op != syntax.OpCapture {
		return false
	}
	star := subs[0].Sub[0]
	return star.Op == syntax.OpStar && (star.Sub[0].Op == syntax.OpAnyCharNotNL || star.Sub[0].Op == syntax.OpAnyChar)
}

package builtin

// Carriage returns kept, as gawk keeps them. With RS at its default,
// GoAWK reads records with Go's line scanner, which drops a '\r' before
// each '\n' (and at the very end): a CRLF file edited by awk came out
// LF, and `$2 == "2"` matched on "x,2\r\n" where gawk's does not. GoAWK
// is used as it is, so the builtin works around the scanner:
//
//   - the input port reaches GoAWK through awkCRReader, which doubles
//     each '\r' the scanner would drop, so that dropping one leaves the
//     line as it was;
//   - FILE operands, and files getline reads, GoAWK opens itself: when
//     one holds a '\r' (or cannot be looked at beforehand, a pipe), RS
//     becomes the regular expression "(\n)", the same records read by
//     GoAWK's splitter for expressions, which keeps every byte (and costs
//     about half again as much time, so only then).
//
// Both apply only to a program that leaves RS alone (no RS in its text,
// -v or operands): another RS has another splitter.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// awkRegexRS is RS as a regular expression that splits as "\n" does.
const awkRegexRS = "(\n)"

// awkMentionsRS reports whether the program src or its variables (-v,
// -F: name, value pairs) or operands set or read RS.
func awkMentionsRS(src string, vars, operands []string) bool {
	for i := 0; i < len(vars); i += 2 {
		if vars[i] == "RS" {
			return true
		}
	}
	for _, o := range operands {
		if strings.HasPrefix(o, "RS=") {
			return true
		}
	}
	l := lexer.NewLexer([]byte(src))
	for {
		_, tok, val := l.Scan()
		switch {
		case tok == lexer.EOF || tok == lexer.ILLEGAL:
			return false
		case tok == lexer.NAME && val == "RS":
			return true
		}
	}
}

// awkFilesHoldCR reports whether a FILE operand of names (assignments
// and - aside) may hold a '\r': one does, or one is not a regular file
// that can be read through beforehand. getlineFiles says the program
// reads files by getline, whose names are known only as it runs.
func awkFilesHoldCR(names []string, getlineFiles bool) bool {
	if getlineFiles {
		return true
	}
	buf := make([]byte, 64<<10)
	for _, name := range names {
		if name == "-" || awkIsAssignment(name) {
			continue
		}
		fi, err := os.Stat(name)
		switch {
		case err != nil:
			continue // GoAWK says it cannot open it
		case fi.IsDir():
			continue
		case !fi.Mode().IsRegular():
			return true
		}
		if fileHoldsByte(name, buf, '\r') {
			return true
		}
	}
	return false
}

// fileHoldsByte reports whether the file name holds c, or cannot be read
// through.
func fileHoldsByte(name string, buf []byte, c byte) bool {
	f, err := os.Open(name)
	if err != nil {
		return true
	}
	defer f.Close()
	for {
		n, err := f.Read(buf)
		if bytes.IndexByte(buf[:n], c) >= 0 {
			return true
		}
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			return true
		}
	}
}

// awkCRReader gives GoAWK's line scanner r's bytes with each '\r' that
// ends a line (before '\n', or last of all) doubled: the scanner drops
// one.
type awkCRReader struct {
	r    io.Reader
	in   []byte
	out  []byte // transformed, not yet read
	held bool   // the last byte read was a '\r' whose next is unknown
	err  error
}

func newAwkCRReader(r io.Reader) *awkCRReader {
	return &awkCRReader{r: r, in: make([]byte, 32<<10)}
}

func (c *awkCRReader) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		c.fill()
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// fill reads the next piece of r and transforms it into out.
func (c *awkCRReader) fill() {
	n, err := c.r.Read(c.in)
	data := c.in[:n]
	out := c.out[:0]
	if c.held && (n > 0 || err != nil) {
		out = append(out, '\r')
		if n == 0 || data[0] == '\n' {
			out = append(out, '\r')
		}
		c.held = false
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\r')
		if i < 0 {
			out = append(out, data...)
			break
		}
		out = append(out, data[:i]...)
		data = data[i+1:]
		switch {
		case len(data) > 0:
			out = append(out, '\r')
			if data[0] == '\n' {
				out = append(out, '\r')
			}
		case err != nil:
			out = append(out, '\r', '\r') // last of all
		default:
			c.held = true
		}
	}
	c.out, c.err = out, err
}

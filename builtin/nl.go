package builtin

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "nl",
		Usage: "nl [-p] [-b STYLE] [-h STYLE] [-f STYLE] [-n FORMAT] [-w N] [-s SEP] [-v N] [-i N] [FILE]...",
		Help: "Number the lines of the FILEs. By default non-empty body lines are numbered " +
			"(STYLE a: all, t: non-empty, n: none) right-aligned (FORMAT rn; ln: left, rz: " +
			"zeros) in 6 columns and followed by a TAB. Lines \\:\\:\\:, \\:\\: and \\: start " +
			"a header, body and footer section, and restart the numbering unless -p.",
		New: nlNew,
	})
}

// nlCmd is a parsed nl command line.
type nlCmd struct {
	env     *Env
	styles  [3]byte // numbering style of header, body, footer: 'a', 't' or 'n'
	format  string  // "rn", "ln" or "rz"
	width   int
	sep     string
	start   int64
	incr    int64
	noReset bool // -p
	names   []string
}

// Sections of a logical page, indexes into nlCmd.styles.
const (
	nlHeader = iota
	nlBody
	nlFooter
)

func nlNew(env *Env, args []string) (*Cmd, error) {
	c := &nlCmd{env: env, styles: [3]byte{'n', 't', 'n'}, format: "rn", width: 6, sep: "\t", start: 1, incr: 1}
	names, err := getopt{cmd: "nl", shorts: "pb:h:f:n:w:s:v:i:"}.parse(args, func(o byte, arg string) error {
		switch o {
		case 'p':
			c.noReset = true
		case 'b', 'h', 'f':
			if arg != "a" && arg != "t" && arg != "n" {
				what := map[byte]string{'b': "body", 'h': "header", 'f': "footer"}[o]
				return usagef("nl", "invalid %s numbering style: '%s'", what, arg)
			}
			c.styles[strings.IndexByte("hbf", o)] = arg[0]
		case 'n':
			if arg != "rn" && arg != "ln" && arg != "rz" {
				return usagef("nl", "invalid line numbering format: '%s'", arg)
			}
			c.format = arg
		case 'w':
			w, err := strconv.ParseInt(strings.TrimLeft(arg, " \t\n\v\f\r"), 10, 32)
			switch {
			case err != nil && !errors.Is(err, strconv.ErrRange):
				return usagef("nl", "invalid line number field width: '%s'", arg)
			case err != nil || w < 1:
				return usagef("nl", "invalid line number field width: '%s': Numerical result out of range", arg)
			}
			c.width = int(w)
		case 's':
			c.sep = arg
		case 'v', 'i':
			n, err := strconv.ParseInt(strings.TrimLeft(arg, " \t\n\v\f\r"), 10, 64)
			if err != nil {
				what := "starting line number"
				if o == 'i' {
					what = "line number increment"
				}
				return usagef("nl", "invalid %s: '%s'", what, arg)
			}
			if o == 'v' {
				c.start = n
			} else {
				c.incr = n
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.names = names
	reads, err := env.edgeOperands("nl", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: c.run}, nil
}

// nlState is the numbering state, carried from file to file.
type nlState struct {
	section int
	next    int64 // the next line number
	scratch []byte
}

func (c *nlCmd) run(ctx context.Context, p *buffer.Ports) error {
	names := c.names
	if len(names) == 0 {
		names = []string{"-"}
	}
	st := &nlState{section: nlBody, next: c.start}
	out := p.Out(0)
	failed := false
	for _, name := range names {
		err := c.one(p, out, st, name)
		var rerr *fileError
		switch {
		case errors.As(err, &rerr):
			warnFile(c.env, "nl", quote(name), rerr.err)
			failed = true
		case err != nil:
			return err
		}
	}
	if failed {
		return task.Exit(1)
	}
	return nil
}

// one numbers the lines of one operand. Each file's last line gets a '\n'
// if it lacks one, as in GNU nl.
func (c *nlCmd) one(p *buffer.Ports, out *buffer.Output, st *nlState, name string) error {
	src, err := openOperand(c.env, p, name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer src.Close()
	for {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		line := record.TrimEOL(rec)
		if s, ok := nlDelimiter(line); ok {
			st.section = s
			if !c.noReset {
				st.next = c.start
			}
			if err := out.Write(nlNewline); err != nil {
				return err
			}
			continue
		}
		b := st.scratch[:0]
		switch style := c.styles[st.section]; {
		case style == 'a' || style == 't' && len(line) > 0:
			b = c.appendNumber(b, st.next)
			b = append(b, c.sep...)
			st.next += c.incr
		default:
			for range c.width + len(c.sep) {
				b = append(b, ' ')
			}
		}
		b = append(b, line...)
		b = append(b, '\n')
		st.scratch = b
		write := out.Write
		if strings.Contains(c.sep, "\n") {
			write = out.WriteText // nl -s $'\n': two lines for the next task
		}
		if err := write(b); err != nil {
			return err
		}
	}
}

var nlNewline = []byte{'\n'}

// nlDelimiter reports whether line is a section delimiter, and which
// section it starts.
func nlDelimiter(line []byte) (section int, ok bool) {
	switch string(line) {
	case `\:\:\:`:
		return nlHeader, true
	case `\:\:`:
		return nlBody, true
	case `\:`:
		return nlFooter, true
	}
	return 0, false
}

// appendNumber appends n formatted in the width and format of c.
func (c *nlCmd) appendNumber(b []byte, n int64) []byte {
	var num [24]byte
	digits := strconv.AppendInt(num[:0], n, 10)
	pad := c.width - len(digits)
	switch c.format {
	case "ln":
		b = append(b, digits...)
		for ; pad > 0; pad-- {
			b = append(b, ' ')
		}
	case "rz":
		if digits[0] == '-' {
			b = append(b, '-')
			digits = digits[1:]
		}
		for ; pad > 0; pad-- {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		for ; pad > 0; pad-- {
			b = append(b, ' ')
		}
		b = append(b, digits...)
	}
	return b
}

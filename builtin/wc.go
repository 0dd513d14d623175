package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "wc",
		Usage: "wc [-clmwL] [FILE]...",
		Help: "Count the newlines (-l), words (-w), characters (-m, bytes in the C locale) " +
			"and bytes (-c) of each FILE, and their total when there are several; with no " +
			"option, -l -w -c. -L gives the longest line's width (tabs to multiples of 8). " +
			"Columns are padded as GNU pads them.",
		New: wcNew,
	})
}

// wcCmd is a parsed wc command line.
type wcCmd struct {
	env   *Env
	show  [5]bool // lines, words, chars, bytes, longest line: the order of the columns
	names []string
}

// wcCounts holds one input's counts, in column order.
type wcCounts [5]uint64

var wcLongs = []longOpt{
	{name: "lines", short: 'l'},
	{name: "words", short: 'w'},
	{name: "chars", short: 'm'},
	{name: "bytes", short: 'c'},
	{name: "max-line-length", short: 'L'},
}

func wcNew(env *Env, args []string) (*Cmd, error) {
	w := &wcCmd{env: env}
	names, err := getopt{cmd: "wc", shorts: "lwmcL", longs: wcLongs}.parse(args, func(c byte, _ string) error {
		switch c {
		case 'l':
			w.show[0] = true
		case 'w':
			w.show[1] = true
		case 'm':
			w.show[2] = true
		case 'c':
			w.show[3] = true
		case 'L':
			w.show[4] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if w.show == [5]bool{} {
		w.show = [5]bool{true, true, false, true, false}
	}
	w.names = names
	reads, err := env.edgeOperands("wc", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: w.run}, nil
}

// wcClass tells, for each byte in the C locale, whether it ends a word
// (white space), starts one (a printable character), or neither (another
// control character or a byte past ASCII, which GNU wc 9 lets neither
// start nor end a word).
var wcClass = func() (t [256]uint8) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = wcPrint
	}
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] = wcSpace
	}
	return t
}()

const (
	wcOther uint8 = iota
	wcSpace
	wcPrint
)

func (w *wcCmd) run(ctx context.Context, p *buffer.Ports) error {
	names := w.names
	if len(names) == 0 {
		names = []string{"-"}
	}
	width, kept := w.width(p, names)
	defer func() {
		for _, src := range kept {
			if src != nil {
				src.Close()
			}
		}
	}()
	out := p.Out(0)
	var line, buf []byte
	var total wcCounts
	failed := false
	for i, name := range names {
		var src *operand
		if kept != nil {
			src = kept[i]
		}
		c, err := w.count(ctx, p, name, src, &buf)
		var rerr *fileError
		switch {
		case errors.As(err, &rerr):
			warnFile(w.env, "wc", quote(name), rerr.err)
			failed = true
			if rerr.atOpen {
				continue
			}
		case err != nil:
			return err
		}
		for i := range 4 {
			total[i] += c[i]
		}
		total[4] = max(total[4], c[4])
		label := name
		if len(w.names) == 0 {
			label = ""
		}
		line = w.format(line[:0], c, width, label)
		if err := out.Write(line); err != nil {
			return err
		}
	}
	if len(names) > 1 {
		line = w.format(line[:0], total, width, "total")
		if err := out.Write(line); err != nil {
			return err
		}
	}
	if failed {
		return task.Exit(1)
	}
	return nil
}

// width is GNU's column width: 1 when a single count of a single input is
// printed; otherwise enough digits for the total size of the regular files
// (stdin too, when the runner knows it is one: Env.StdinFile), and at
// least 7 if any input is not a regular file (a pipe, a directory), whose
// size is not known in advance. Files that cannot be opened do
// not count. GNU finds the sizes with stat; tpipe opens the files (through
// Env.Open) and closes the regular ones, to open them again when it counts
// them. Other files stay open, in kept (by operand position), so that a
// pipe is not opened twice.
func (w *wcCmd) width(p *buffer.Ports, names []string) (width int, kept []*operand) {
	shown := 0
	for _, s := range w.show {
		if s {
			shown++
		}
	}
	if len(names) == 1 && shown == 1 {
		return 1, nil
	}
	kept = make([]*operand, len(names))
	minWidth := 1
	var size int64
	for i, name := range names {
		if name == "-" {
			if w.env.StdinFile != nil {
				if fi, ok := w.env.StdinFile(); ok {
					size += fi.Size()
					continue
				}
			}
			minWidth = 7
			continue
		}
		src, err := openOperand(w.env, p, name)
		if err != nil {
			continue
		}
		if n, ok := src.regularSize(); ok {
			size += n
			src.Close()
		} else {
			minWidth = 7
			kept[i] = src
		}
	}
	return max(minWidth, len(strconv.FormatInt(size, 10))), kept
}

// count counts one operand, read from src if it is already open. A file
// that cannot be opened or read is a *fileError; its atOpen tells which,
// as GNU still prints the counts (up to the error) of a file it could
// open. Counting needs no records: the input port is read a buffer at a
// time and a file in large blocks, and the counts are taken on whole
// slices.
func (w *wcCmd) count(ctx context.Context, p *buffer.Ports, name string, src *operand, buf *[]byte) (wcCounts, error) {
	if src == nil {
		var err error
		if src, err = openOperand(w.env, p, name); err != nil {
			return wcCounts{}, &fileError{name: name, err: err, atOpen: true}
		}
		defer src.Close()
	}
	k := wcCounter{words: w.show[1], longest: w.show[4]}
	if in := src.Port(); in != nil {
		for {
			// Bytes, not records: a line of any length is counted in
			// its pieces.
			data, err := in.ReadBytes()
			if err == io.EOF {
				return k.end(), nil
			}
			if err != nil {
				return k.c, err
			}
			k.add(data)
		}
	}
	if *buf == nil {
		*buf = make([]byte, wcBlock)
	}
	for {
		n, err := src.rc.Read(*buf)
		k.add((*buf)[:n])
		if err == io.EOF {
			return k.end(), nil
		}
		if err != nil {
			return k.end(), &fileError{name: name, err: err}
		}
		// Reading a file touches no port, where a cancelled run is
		// noticed.
		if err := ctx.Err(); err != nil {
			return k.c, err
		}
	}
}

// wcBlock is the size of wc's reads of a file.
const wcBlock = 64 << 10

// wcCounter counts a stream given in pieces of any size: a word may run
// from one piece into the next.
type wcCounter struct {
	c       wcCounts
	words   bool
	inWord  bool
	longest bool   // -L
	linePos uint64 // the width of the line so far, for -L
}

func (k *wcCounter) add(data []byte) {
	k.c[0] += uint64(bytes.Count(data, []byte{'\n'}))
	k.c[3] += uint64(len(data))
	if k.longest {
		k.width(data)
	}
	if !k.words {
		return
	}
	n, inWord := k.c[1], k.inWord
	for _, b := range data {
		switch wcClass[b] {
		case wcSpace:
			inWord = false
		case wcPrint:
			if !inWord {
				n++
				inWord = true
			}
		}
	}
	k.c[1], k.inWord = n, inWord
}

// width follows -L's count over data: as GNU wc in the C locale, a
// printable byte is one column, a tab goes to the next multiple of 8,
// '\n', '\r' and '\f' end a line, and other bytes take no room.
func (k *wcCounter) width(data []byte) {
	pos, longest := k.linePos, k.c[4]
	for _, b := range data {
		switch {
		case b == '\n' || b == '\r' || b == '\f':
			longest = max(longest, pos)
			pos = 0
		case b == '\t':
			pos += 8 - pos%8
		case b >= ' ' && b < 0x7f:
			pos++
		}
	}
	k.linePos, k.c[4] = pos, longest
}

// end returns the counts of a finished input: its last line, without a
// '\n', counts for -L too.
func (k *wcCounter) end() wcCounts {
	k.c[4] = max(k.c[4], k.linePos)
	return k.c
}

// format appends one output line: the shown counts right-aligned in width
// columns, separated by spaces, then the label if any.
func (w *wcCmd) format(dst []byte, c wcCounts, width int, label string) []byte {
	c[2] = c[3] // in the C locale a character is a byte
	first := true
	for i, s := range w.show {
		if !s {
			continue
		}
		if !first {
			dst = append(dst, ' ')
		}
		first = false
		var num [20]byte
		digits := strconv.AppendUint(num[:0], c[i], 10)
		for k := len(digits); k < width; k++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, digits...)
	}
	if label != "" {
		dst = append(dst, ' ')
		dst = append(dst, label...)
	}
	return append(dst, '\n')
}

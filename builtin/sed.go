package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/sedlang"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "sed",
		Usage: "sed [-nEsz] [-i[SUFFIX]] [-l N] [-e SCRIPT]... [-f FILE]... [SCRIPT] [FILE]...",
		Help: "Edit a stream of lines with a script, as GNU sed 4.9 does: every command " +
			"but e (s, y, p, P, d, D, n, N, g, G, h, H, x, b, t, T, :, a, i, c, r, R, w, W, " +
			"=, l, q, Q, z, F, { }), addresses N, $, /RE/[IM], \\cREc, FIRST~STEP, ranges " +
			"A,B with B also +N or ~N, 0,/RE/, negated by !; back-references (\\1) in " +
			"patterns. -n prints only what the script prints; -E extended regexes; -s " +
			"separate files; -i[SUFFIX] edits files in place (keeping a backup with " +
			"SUFFIX); -z NUL-separated lines; -l N wraps l. e, s///e, --posix, --debug, " +
			"--follow-symlinks and -f - run the system's sed.",
		New: newSed,
	})
}

var sedLongs = []longOpt{
	{"quiet", 'n', false},
	{"silent", 'n', false},
	{"regexp-extended", 'E', false},
	{"expression", 'e', true},
	{"file", 'f', true},
	{"separate", 's', false},
	{"null-data", 'z', false},
	{"zero-terminated", 'z', false},
	{"line-length", 'l', true},
	{"unbuffered", 'u', false},
	{"binary", 'b', false},
	{"sandbox", 'S', false},
	{"posix", 'P', false},
	{"debug", 'D', false},
	{"follow-symlinks", 'F', false},
	{"help", 'H', false},
	{"version", 'V', false},
}

// sedConfig is a sed command line, parsed.
type sedConfig struct {
	pieces   []sedlang.Piece
	o        sedlang.Options
	separate bool
	inPlace  bool
	suffix   string // -i's backup suffix
	files    []string
}

func newSed(env *Env, args []string) (*Cmd, error) {
	cfg, err := sedOptions(env, args)
	if err != nil {
		return nil, err
	}
	sc, err := sedlang.Parse(cfg.pieces, cfg.o)
	if err != nil {
		var se *sedlang.Error
		switch {
		case errors.As(err, &se) && se.Unsupported:
			return nil, unsupportedf("sed", "%s", se.What)
		case se != nil && se.Panic:
			return nil, &UsageError{Cmd: "sed", Msg: se.Error(), Status: sedPanic}
		}
		return nil, usagef("sed", "%s", err) // GNU's status 1
	}
	if cfg.inPlace && len(cfg.files) == 0 {
		return nil, &UsageError{Cmd: "sed", Msg: "no input files", Status: sedPanic}
	}
	reads, err := env.edgeOperands("sed", cfg.files)
	if err != nil {
		return nil, err
	}
	c := &Cmd{Name: "sed", ReadsInput: readsInput(cfg.files) && !cfg.inPlace, Reads: reads,
		Effects: cfg.inPlace || sc.WritesFiles()}
	if len(cfg.files) == 0 && !sc.Quits() && !sc.UsesFiles() && !sc.Loops() && !cfg.o.NullData {
		// The per-record form, which the fused policy can jam with its
		// neighbours. A script that loops needs the general form, whose
		// context can stop it.
		r := sedlang.NewRun(sc, sedlang.IO{MaxSpace: sedMaxSpace})
		c.Rec = &task.PerRecord{
			Start: func(task.Emit) error { r.Reset(); return nil },
			Each: func(rec []byte, emit task.Emit) error {
				return sedWarn(env, r.Line(rec, emit))
			},
			End: func(emit task.Emit) error { return sedEnd(env, r, emit) },
		}
		return c, nil
	}
	c.Fn = func(ctx context.Context, p *buffer.Ports) error {
		return sedFiles(ctx, env, p, sc, cfg)
	}
	return c, nil
}

// sedPanic is GNU sed's status when it cannot go on (EXIT_PANIC): a file
// it cannot open or write, a -i without files. A script error is 1, as
// for a usage error; a file operand it cannot read, 2.
const sedPanic = 4

// sedOptions parses sed's command line. -i takes its suffix only attached
// (-i.bak, --in-place=.bak), which getopt does not do: it is taken out of
// the line first.
func sedOptions(env *Env, args []string) (*sedConfig, error) {
	cfg := &sedConfig{}
	args, inPlace, suffix := sedInPlace(args)
	cfg.inPlace, cfg.suffix = inPlace, suffix
	exprs := false
	operands, err := getopt{cmd: "sed", shorts: "nErsuzbe:f:l:", longs: sedLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'n':
			cfg.o.Quiet = true
		case 'E', 'r':
			cfg.o.Extended = true
		case 'e':
			cfg.pieces = append(cfg.pieces, sedlang.Piece{Text: arg})
			exprs = true
		case 'f':
			if arg == "-" {
				// The script would come from the pipeline's input.
				return unsupportedf("sed", "-f -")
			}
			text, err := readScript(env, arg)
			if err != nil {
				return &UsageError{Cmd: "sed", Msg: fmt.Sprintf("couldn't open file %s: %s", arg, errText(err)), Status: sedPanic}
			}
			cfg.pieces = append(cfg.pieces, sedlang.Piece{Text: text, File: arg})
			exprs = true
		case 's':
			cfg.separate = true
		case 'z':
			cfg.o.NullData = true
		case 'l':
			cfg.o.LineWrap = cAtoi(arg)
			if cfg.o.LineWrap <= 0 {
				cfg.o.LineWrap = -1 // never wrap
			}
		case 'S':
			cfg.o.Sandbox = true
		case 'u', 'b':
			// Unbuffered: output flows a line at a time anyway when input
			// does. Binary: no text mode to leave on this system.
		case 'P':
			return unsupportedf("sed", "--posix")
		case 'D':
			return unsupportedf("sed", "--debug")
		case 'F':
			return unsupportedf("sed", "--follow-symlinks")
		case 'H':
			return unsupportedf("sed", "--help")
		case 'V':
			return unsupportedf("sed", "--version")
		}
		return nil
	})
	if err != nil {
		return nil, sedUsage(err)
	}
	if !exprs {
		if len(operands) == 0 {
			// GNU prints its whole usage, which only GNU's sed has.
			return nil, &UnsupportedError{Cmd: "sed", What: "sed without a script",
				Usage: &UsageError{Cmd: "sed", Msg: "no script; usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]..."}}
		}
		cfg.pieces = []sedlang.Piece{{Text: operands[0]}}
		operands = operands[1:]
	}
	if cfg.o.LineWrap == 0 {
		// Without -l, GNU's l wraps at COLS less one, where COLS is set
		// above 1 (one column short of a terminal's width), else at 70.
		var environ []string
		if env != nil {
			environ = env.Environ
		}
		if cols, err := strconv.Atoi(environValue(environ, "COLS")); err == nil && cols > 1 {
			cfg.o.LineWrap = cols - 1
		}
	}
	cfg.files = operands
	if cfg.inPlace {
		cfg.separate = true
	}
	return cfg, nil
}

// sedUsage turns a bad command line that GNU sed answers with its whole
// usage text (a missing argument, an ambiguous option) into a fallback,
// so that the system's sed prints it; without one, the first line and a
// hint are what tpipe says. Other errors are returned as they are.
func sedUsage(err error) error {
	var ue *UsageError
	if _, unsup := err.(*UnsupportedError); !unsup && errors.As(err, &ue) && ue.Try {
		return &UnsupportedError{Cmd: "sed", What: "sed's usage text", Usage: ue}
	}
	return err
}

// cAtoi reads a number as C's atoi does, which is how GNU sed reads -l:
// blanks, a sign and the digits that follow, ignoring the rest ("5x" is
// 5); no digits is 0. A number too large to hold is as large as an int
// gets, or as small.
func cAtoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for ; s != "" && '0' <= s[0] && s[0] <= '9'; s = s[1:] {
		if n > (math.MaxInt-9)/10 {
			n = math.MaxInt
			continue
		}
		n = n*10 + int(s[0]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// sedInPlace takes -i[SUFFIX] and --in-place[=SUFFIX] out of args. In a
// cluster, -i takes the rest as its suffix (-ni.bak; -in is a suffix of
// "n"), as GNU's optional argument does; an option that takes an
// argument (-e, -f, -l) ends the look at its cluster and may take the
// next word.
func sedInPlace(args []string) (rest []string, inPlace bool, suffix string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i:]...), inPlace, suffix
		case strings.HasPrefix(a, "--"):
			name, arg, hasArg := strings.Cut(a[2:], "=")
			if name != "" && strings.HasPrefix("in-place", name) {
				inPlace, suffix = true, ""
				if hasArg {
					suffix = arg
				}
				continue
			}
			rest = append(rest, a)
			if !hasArg && name != "" && i+1 < len(args) &&
				(strings.HasPrefix("expression", name) || strings.HasPrefix("line-length", name) ||
					strings.HasPrefix("file", name) && !strings.HasPrefix("follow-symlinks", name)) {
				i++
				rest = append(rest, args[i])
			}
		case len(a) > 1 && a[0] == '-':
			j := 1
			for ; j < len(a); j++ {
				if a[j] == 'i' || strings.IndexByte("efl", a[j]) >= 0 {
					break
				}
			}
			switch {
			case j == len(a):
				rest = append(rest, a)
			case a[j] == 'i':
				inPlace, suffix = true, a[j+1:]
				if j > 1 {
					rest = append(rest, a[:j])
				}
			default:
				rest = append(rest, a)
				if j == len(a)-1 && i+1 < len(args) {
					i++
					rest = append(rest, args[i])
				}
			}
		default:
			rest = append(rest, a)
		}
	}
	return rest, inPlace, suffix
}

// readScript reads a -f file.
func readScript(env *Env, name string) (string, error) {
	rc, err := env.open(name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// sedFiles is sed's general form: FILE operands, files the script reads
// or writes, -s, -i and -z.
func sedFiles(ctx context.Context, env *Env, p *buffer.Ports, sc *sedlang.Script, cfg *sedConfig) error {
	out := task.Emit(p.Out(0).Write)
	sio := sedlang.IO{
		Open:     func(name string) (io.ReadCloser, error) { return env.openStream(p, name) },
		Create:   func(name string) (io.WriteCloser, error) { return env.create(name, false) },
		Stderr:   env.stderr(),
		Stop:     ctx.Err,
		MaxSpace: min(p.MaxRecord(), sedMaxSpace),
	}
	if cfg.inPlace {
		sio.Stdout = out
	}
	r := sedlang.NewRun(sc, sio)
	defer r.Close()
	if err := r.Start(); err != nil {
		fmt.Fprintf(env.stderr(), "sed: %s\n", sedErrText(err))
		return task.Exit(4)
	}
	files := cfg.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	failed := false
	for _, name := range files {
		emit := out
		var edit *inPlaceFile
		if cfg.inPlace {
			var err error
			if edit, err = openInPlace(env, name); err != nil {
				fmt.Fprintf(env.stderr(), "sed: %s\n", err)
				failed = true
				continue
			}
			emit = edit.write
		}
		r.SetFile(name)
		err := sedRead(ctx, env, p, name, cfg.o.NullData, func(rec []byte) error {
			if err := sedWarn(env, r.Line(rec, emit)); err != nil {
				return err
			}
			if r.Done() {
				return errSedQuit
			}
			return nil
		})
		if fe, ok := err.(*fileError); ok {
			shown := fe.name
			if fe.atOpen {
				shown = "can't read " + shown
			}
			warnFile(env, "sed", shown, fe.err)
			failed = true
			err = nil
		}
		if err != nil && err != errSedQuit {
			edit.abort()
			return err
		}
		if cfg.separate {
			if err := sedWarn(env, r.EndFile(emit, cfg.inPlace)); err != nil {
				edit.abort()
				return err
			}
		}
		if err := edit.commit(cfg.suffix); err != nil {
			fmt.Fprintf(env.stderr(), "sed: %s\n", err)
			return task.Exit(4)
		}
		if r.Done() {
			break
		}
	}
	if err := sedEnd(env, r, out); err != nil {
		return err // an error, or q's exit status
	}
	if err := r.Close(); err != nil {
		fmt.Fprintf(env.stderr(), "sed: couldn't close file: %s\n", errText(err))
		return task.Exit(4)
	}
	if failed {
		return task.Exit(2)
	}
	return nil
}

// sedRead calls fn on each line of operand name: newline-ended records,
// or with -z NUL-ended ones, cut from the bytes of the file or port.
func sedRead(ctx context.Context, env *Env, p *buffer.Ports, name string, nul bool, fn func([]byte) error) error {
	if !nul {
		return eachRecord(ctx, env, p, name, fn)
	}
	src, err := openOperand(env, p, name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer src.Close()
	var rd io.Reader = src.rc
	if in := src.Port(); in != nil {
		rd = &portBytes{in: in}
	}
	sc := record.NewScanner(rd, record.NUL, p.MaxRecord())
	for sc.Scan() {
		if err := fn(sc.Record()); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if isErrno(err) {
			return &fileError{name: name, err: err}
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// portBytes reads the records of an input port as one byte stream, for
// sed -z, which cuts it at NUL bytes instead.
type portBytes struct {
	in  *buffer.Input
	buf []byte
}

func (r *portBytes) Read(b []byte) (int, error) {
	for len(r.buf) == 0 {
		data, err := r.in.ReadBytes()
		if err != nil {
			return 0, err
		}
		r.buf = data
	}
	n := copy(b, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// sedMaxSpace is the most a pattern or hold space may hold, as the
// longest record a task holds whole: a script that doubles its hold space
// on every line fails with a message instead of taking all the memory.
const sedMaxSpace = buffer.DefaultMaxRecord

// errSedQuit stops the reading loop after q or Q.
var errSedQuit = errors.New("sed: quit")

// sedWarn prints a script error found while running (GNU's "no previous
// regular expression") and lets the run end normally: it has stopped, and
// its status says so.
func sedWarn(env *Env, err error) error {
	if err == nil {
		return nil // before errors.As, which would cost an allocation a line
	}
	var se *sedlang.Error
	if errors.As(err, &se) {
		fmt.Fprintf(env.stderr(), "sed: %s\n", se)
		return nil
	}
	return err
}

// sedEnd finishes a run and turns the status it asks for into an exit.
func sedEnd(env *Env, r *sedlang.Run, emit task.Emit) error {
	if err := sedWarn(env, r.End(emit)); err != nil {
		return err
	}
	if code := r.Status(); code != 0 {
		return task.Exit(code)
	}
	return nil
}

// sedErrText words an error of Run.Start as GNU does.
func sedErrText(err error) string {
	msg := err.Error()
	if u := errors.Unwrap(err); u != nil {
		msg = strings.TrimSuffix(msg, u.Error()) + errText(u)
	}
	return msg
}

// inPlaceFile is a file sed -i edits. The output goes to a temporary file
// in the same directory, which takes the file's name (rename) once the
// file has been read to its end: until then the file is whole, and it
// stays so if anything fails. A nil *inPlaceFile is valid and does
// nothing, for a run that does not edit in place.
type inPlaceFile struct {
	path string
	tmp  *os.File
	bw   *bufio.Writer
}

// openInPlace starts editing operand name, which must be a regular file.
func openInPlace(env *Env, name string) (*inPlaceFile, error) {
	path := name
	if env != nil && env.Dir != "" && !filepath.IsAbs(name) {
		path = filepath.Join(env.Dir, name)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("can't read %s: %s", name, errText(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("couldn't edit %s: not a regular file", quote(name))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "sed")
	if err != nil {
		return nil, fmt.Errorf("couldn't open temporary file %s: %s", filepath.Join(filepath.Dir(name), "sedXXXXXX"), errText(err))
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("couldn't edit %s: %s", quote(name), errText(err))
	}
	return &inPlaceFile{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 64<<10)}, nil
}

func (f *inPlaceFile) write(rec []byte) error {
	_, err := f.bw.Write(rec)
	return err
}

// commit puts the edited text in the file's place, after keeping the
// original under the backup name suffix makes, if any: each '*' in it is
// the file's name, and a suffix without one is added to the name.
func (f *inPlaceFile) commit(suffix string) error {
	if f == nil {
		return nil
	}
	err := f.bw.Flush()
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && suffix != "" {
		err = os.Rename(f.path, backupName(f.path, suffix))
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("couldn't edit %s: %s", quote(f.path), errText(err))
	}
	return nil
}

// abort drops the edit: the file stays as it was.
func (f *inPlaceFile) abort() {
	if f == nil {
		return
	}
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// backupName is the name sed -i keeps the original of path under.
func backupName(path, suffix string) string {
	if !strings.Contains(suffix, "*") {
		return path + suffix
	}
	dir, base := filepath.Split(path)
	name := strings.ReplaceAll(suffix, "*", base)
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

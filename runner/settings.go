package runner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/internal/sysmem"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/sched"
)

// A Setting is one knob of a Config, set by name from text. The table of
// settings (Settings) is the one place that knows a setting's name, what
// it takes, its default and its help: the tpipe command makes its flags
// from it, the interactive shell's `set` uses it, and --help and
// --explain print from it.
type Setting struct {
	// Name is the flag's name (--name) and the shell's (set name).
	Name string
	// Arg names the value in help ("B", "S"); empty for on|off.
	Arg string
	// Help says in one line what the setting does.
	Help string
	// Values says what the setting takes, for help and errors.
	Values string
	// DefaultIs describes the default in help, when its value alone
	// (Default) would not say enough.
	DefaultIs string
	// No, for an on|off setting that is on by default, names a flag
	// that turns it off ("no-fallback"), besides --name=off.
	No  string
	get func(c *Config) string
	set func(c *Config, v string) error
}

// Get returns the setting's value in c, in the form Set takes.
func (s *Setting) Get(c *Config) string { return s.get(c) }

// Default returns the value of the setting in the zero Config.
func (s *Setting) Default() string { return s.get(&Config{}) }

// DefaultHelp describes the default for help.
func (s *Setting) DefaultHelp() string {
	if s.DefaultIs != "" {
		return s.DefaultIs
	}
	return s.Default()
}

// Set parses v and sets it in c; on error c is unchanged and the error is
// a *SettingError.
func (s *Setting) Set(c *Config, v string) error {
	if err := s.set(c, v); err != nil {
		return &SettingError{Setting: s.Name, Value: v, Want: s.Values, Err: err}
	}
	return nil
}

// IsBool reports whether the setting is on or off.
func (s *Setting) IsBool() bool { return s.Arg == "" }

// SettingError is a value a setting does not take.
type SettingError struct {
	Setting, Value string
	Want           string // what the setting takes
	Err            error  // why, when there is more to say
}

func (e *SettingError) Error() string {
	msg := fmt.Sprintf("%s %s: want %s", e.Setting, e.Value, e.Want)
	var pe *sched.UnknownPolicyError
	var tl *tooLargeError
	switch {
	case errors.As(e.Err, &tl):
		msg = fmt.Sprintf("%s %s: too large: the largest that fits is %s (%s)", e.Setting, e.Value, tl.most, tl.why)
	case errors.As(e.Err, &pe):
		msg = fmt.Sprintf("%s %s: unknown policy (known: %s)", e.Setting, e.Value, strings.Join(sched.PolicyNames(), ", "))
	}
	return msg
}

// tooLargeError is a size past the largest a setting can take.
type tooLargeError struct {
	most string // the largest, as a size: "2147483647", "11G"
	why  string // what sets it
}

func (e *tooLargeError) Error() string { return "too large: at most " + e.most }

// sortMemoryMost words the error of a --sort-memory too large to be a
// number of bytes: too large, and the largest that fits, the memory this
// process may use (the machine's available memory, or its cgroup's
// limit). A size that is a number is judged when a run has tasks that
// spill (checkTaskMemory): a large one does no harm to a run without.
func sortMemoryMost(v string, n int, err error) error {
	l, ok := sysmem.Available()
	switch {
	case errors.Is(err, record.ErrSizeTooLarge) && ok:
		most := l.Bytes &^ (1<<20 - 1) // whole MiB
		return &tooLargeError{most: record.FormatSize(int64(most)), why: "the memory available here, from " + l.From}
	}
	return err
}

func (e *SettingError) Unwrap() error { return e.Err }

var errBadValue = errors.New("bad value")

// Settings is the table of settings, in the order help lists them.
var Settings = []*Setting{
	{
		Name: "policy", Arg: "NAME",
		Help:   "scheduling policy (see policies below)",
		Values: strings.Join(sched.PolicyNames(), ", "),
		get:    func(c *Config) string { return c.Policy.String() },
		set: func(c *Config, v string) error {
			p, err := sched.ParsePolicy(v)
			if err != nil {
				return err
			}
			c.Policy = p
			return nil
		},
	},
	{
		Name: "buffers", Arg: "B",
		Help:      "record buffers; below the bound a warning is printed and stalls are spilled to disk (slower)",
		Values:    "a number of at least 1, or bound",
		DefaultIs: "bound (the sum of queue capacities)",
		get: func(c *Config) string {
			if c.Buffers == 0 {
				return "bound"
			}
			return strconv.Itoa(c.Buffers)
		},
		set: func(c *Config, v string) error {
			if v == "bound" {
				c.Buffers = 0
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errBadValue
			}
			c.Buffers = n
			return nil
		},
	},
	{
		Name: "cap", Arg: "N",
		Help:      "capacity of every queue, in buffers; auto: every queue starts at 2 and the bottleneck's input grows at run time",
		Values:    "a capacity of at least 1, auto, or default",
		DefaultIs: fmt.Sprintf("%d (%s)", defaultCap(), capExceptions()),
		get: func(c *Config) string {
			switch {
			case c.CapAuto:
				return "auto"
			case c.Cap == 0:
				return "default"
			}
			return strconv.Itoa(c.Cap)
		},
		set: func(c *Config, v string) error {
			switch v {
			case "auto":
				c.Cap, c.CapAuto = 0, true
				return nil
			case "default":
				c.Cap, c.CapAuto = 0, false
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errBadValue
			}
			c.Cap, c.CapAuto = n, false
			return nil
		},
	},
	// A buffer's record ends are 32-bit offsets (package buffer).
	sizeSetting("record-size", "bytes per buffer; a longer line travels as a chain of buffers", sched.DefaultRecordSize, math.MaxInt32,
		func(c *Config) *int { return &c.RecordSize }),
	{
		Name: "sort-memory", Arg: "S",
		Help: "bytes each sort, join, tail -n N or -c N and head -n -N or -c -N keeps in memory before it spills to disk (64K, 4M, ...); " +
			"auto: an eighth of the memory available, within [16M, 192M], shared by the job's tasks that spill; sort -S wins for its sort",
		Values:    "a positive size such as 65536, 64K or 4M, or auto",
		DefaultIs: "auto (" + autoSortMemory() + ")",
		get: func(c *Config) string {
			if c.SortMemory == 0 {
				return "auto"
			}
			return record.FormatSize(int64(c.SortMemory))
		},
		set: func(c *Config, v string) error {
			if v == "auto" {
				c.SortMemory = 0
				return nil
			}
			n, err := record.ParseSize(v)
			if err := sortMemoryMost(v, n, err); err != nil {
				return err
			}
			c.SortMemory = n
			return nil
		},
	},
	{
		Name: "replicas", Arg: "N",
		Help: "copies of a stateless per-record stage (cut, tr, rev) that runs them on both cores, its output kept in order; " +
			"auto: as many as CPUs, once the stage measures itself busy",
		Values:    "a number of at least 1 (1: never), or auto",
		DefaultIs: "auto",
		get: func(c *Config) string {
			if c.Replicas == 0 {
				return "auto"
			}
			return strconv.Itoa(c.Replicas)
		},
		set: func(c *Config, v string) error {
			if v == "auto" {
				c.Replicas = 0
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errBadValue
			}
			c.Replicas = n
			return nil
		},
	},
	{
		Name: "fallback", No: "no-fallback",
		Help:   "run the system's program (grep, sed, awk, ...) for a command line a builtin does not implement; off: refuse it",
		Values: "on or off",
		get:    func(c *Config) string { return onOff(!c.NoFallback) },
		set: func(c *Config, v string) error {
			on, err := parseOnOff(v)
			if err == nil {
				c.NoFallback = !on
			}
			return err
		},
	},
	{
		Name:   "stats",
		Help:   "print per-queue and per-task statistics on stderr after each pipeline",
		Values: "on or off",
		get:    func(c *Config) string { return onOff(c.Stats) },
		set: func(c *Config, v string) error {
			on, err := parseOnOff(v)
			if err == nil {
				c.Stats = on
			}
			return err
		},
	},
	{
		// A bare --progress is on; --progress=auto and =off say the rest.
		Name: "progress",
		Help: "a live view of each run on stderr (per task records/s, bytes/s, queue fill, busy share, the bottleneck; an ETA), " +
			"plain lines without a terminal; auto, the default: when stderr is a terminal, nothing of the run writes to a terminal or reads one, and the run lasts over a second",
		Values:    "on, off or auto",
		DefaultIs: "auto",
		get:       func(c *Config) string { return c.Progress.String() },
		set: func(c *Config, v string) error {
			if v == "auto" {
				c.Progress = ProgressAuto
				return nil
			}
			on, err := parseOnOff(v)
			switch {
			case err != nil:
				return err
			case on:
				c.Progress = ProgressOn
			default:
				c.Progress = ProgressOff
			}
			return nil
		},
	},
	{
		Name: "spool", Arg: "DIR",
		Help:      "run on the spool policy, every edge a directory under DIR: a killed run resumes where it stopped, a rerun redoes only what changed (tpipe gc DIR cleans it)",
		Values:    "a directory, or none",
		DefaultIs: "none",
		get: func(c *Config) string {
			if c.Spool == "" {
				return "none"
			}
			return c.Spool
		},
		set: func(c *Config, v string) error {
			switch v {
			case "":
				return errBadValue
			case "none":
				if c.Policy.FolderSetting() == "spool" {
					c.Policy = sched.DefaultPolicy
				}
				c.Spool = ""
				return nil
			}
			c.Spool, c.Policy = v, spoolPolicy
			return nil
		},
	},
	sizeSetting("segment", "bytes of records in each segment (file) of a spooled edge", sched.DefaultSegment, math.MaxInt,
		func(c *Config) *int { return &c.Segment }),
	{
		Name: "fsync", Arg: "on|off",
		Help:   "sync every spooled token and its directory to disk; off is faster, and a power loss may then lose the last tokens (a killed process loses nothing)",
		Values: "on or off",
		get:    func(c *Config) string { return onOff(!c.NoSync) },
		set: func(c *Config, v string) error {
			on, err := parseOnOff(v)
			if err == nil {
				c.NoSync = !on
			}
			return err
		},
	},
	{
		Name: "compress", Arg: "none|s2|zstd",
		Help: "compression of spooled segments: none is the fastest on a local disk; s2 writes about a third of the bytes " +
			"of log lines for CPU time, zstd less still for more (a slow or shared disk, or little room)",
		Values: "none, s2 or zstd",
		get:    func(c *Config) string { return c.Compress.String() },
		set: func(c *Config, v string) error {
			for _, codec := range []recfile.Codec{recfile.None, recfile.S2, recfile.Zstd} {
				if v == codec.String() {
					c.Compress = codec
					return nil
				}
			}
			return errBadValue
		},
	},
}

// autoSortMemory says what --sort-memory auto is on this machine.
func autoSortMemory() string {
	n, _ := builtin.AutoSortMemory()
	return record.FormatSize(int64(n)) + " here"
}

// sizeSetting is a setting that takes a size such as 64K; 0 in the Config
// means def.
func sizeSetting(name, help string, def, most int, field func(*Config) *int) *Setting {
	values := "a positive size such as 65536, 64K or 4M"
	if most < math.MaxInt {
		values = fmt.Sprintf("a size from 1 to %d bytes (2G less one), such as 65536, 64K or 4M", most)
	}
	return &Setting{
		Name: name, Arg: "S",
		Help:   help + " (64K, 4M, ...)",
		Values: values,
		get: func(c *Config) string {
			n := *field(c)
			if n == 0 {
				n = def
			}
			return record.FormatSize(int64(n))
		},
		set: func(c *Config, v string) error {
			n, err := record.ParseSize(v)
			if err != nil {
				return err
			}
			if n > most {
				return &tooLargeError{most: strconv.Itoa(most), why: "2G less one"}
			}
			*field(c) = n
			return nil
		},
	}
}

// parseOnOff reads the value of an on|off setting; flags give true and
// false.
func parseOnOff(v string) (bool, error) {
	switch v {
	case "on", "true":
		return true, nil
	case "off", "false":
		return false, nil
	}
	return false, errBadValue
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// defaultCap is the capacity of a queue under the default policy.
func defaultCap() int { return sched.DefaultPolicy.DefaultCap() }

// capExceptions names the policies whose default capacity differs.
func capExceptions() string {
	var out []string
	for _, p := range sched.Policies() {
		if p.DefaultCap() != defaultCap() {
			out = append(out, fmt.Sprintf("%d under %s", p.DefaultCap(), p))
		}
	}
	return strings.Join(out, ", ")
}

// LookupSetting returns the setting named name.
func LookupSetting(name string) (*Setting, bool) {
	for _, s := range Settings {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// SettingsLine shows every setting of c on one line, as --explain and the
// shell's `set` print them: "policy auto, buffers bound, ...".
func SettingsLine(c *Config) string {
	parts := make([]string, len(Settings))
	for i, s := range Settings {
		parts[i] = s.Name + " " + s.Get(c)
	}
	return strings.Join(parts, ", ")
}

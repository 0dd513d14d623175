package main

import (
	"flag"
	"strconv"

	"github.com/tpipe/tpipe/runner"
)

// bindSettings defines on fs a flag for every setting of the runner's
// table (runner.Settings), bound to cfg, and the flag that turns an on|off
// setting off (--no-fallback) where the table names one. Every command
// form that runs pipelines (tpipe, serve, pmjq and pmjq 1.0's command line)
// binds its settings here, so that they take the same flags. The first
// value a setting refuses is kept in *bad; raw, when not nil, keeps the
// value each setting was given last.
func bindSettings(fs *flag.FlagSet, cfg *runner.Config, bad *error, raw map[string]string) {
	for _, s := range runner.Settings {
		help := s.Help
		if !s.IsBool() {
			help += "; default " + s.DefaultHelp()
		}
		sf := settingFlag{s: s, cfg: cfg, bad: bad, raw: raw}
		fs.Var(sf, s.Name, help)
		if s.No != "" {
			fs.Var(offFlag{sf}, s.No, "the same as --"+s.Name+"=off")
		}
	}
}

// settingFlag is a flag.Value over one setting of the runner's table. A
// value the setting refuses is kept in bad, so that the message is the
// table's ("--cap 0: want ..."), not the flag package's.
type settingFlag struct {
	s   *runner.Setting
	cfg *runner.Config
	bad *error
	raw map[string]string // the value each setting was given last; nil: not kept
}

func (f settingFlag) String() string {
	if f.s == nil {
		return ""
	}
	return f.s.Get(f.cfg)
}

func (f settingFlag) Set(v string) error {
	if f.raw != nil {
		f.raw[f.s.Name] = v
	}
	err := f.s.Set(f.cfg, v)
	if err != nil && *f.bad == nil {
		*f.bad = err
	}
	return err
}

// IsBoolFlag makes an on|off setting a flag without a value (--stats).
func (f settingFlag) IsBoolFlag() bool { return f.s != nil && f.s.IsBool() }

// offFlag is the flag that turns an on|off setting off (--no-fallback).
type offFlag struct{ settingFlag }

func (f offFlag) String() string { return "" }
func (f offFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	return f.settingFlag.Set(strconv.FormatBool(!on))
}

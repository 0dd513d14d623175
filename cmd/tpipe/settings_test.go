package main

import (
	"flag"
	"testing"
)

// TestSettingFlagsEveryForm checks that every setting flag tpipe takes
// (from the table runner.Settings, by bindSettings) is taken by serve,
// pmjq and pmjq 1.0's command line too: the forms once bound the table
// twice and drifted (serve --no-fallback was not defined).
func TestSettingFlagsEveryForm(t *testing.T) {
	var o options
	var bad error
	main := o.flagSet(&bad, nil)
	var names []string
	main.VisitAll(func(fl *flag.Flag) {
		switch fl.Value.(type) {
		case settingFlag, offFlag:
			names = append(names, fl.Name)
		}
	})
	if len(names) == 0 {
		t.Fatal("tpipe binds no setting flags")
	}
	for _, form := range []jobForm{formServe, formPmjq, formPmjq1} {
		var f jobFlags
		fs := f.flagSet(form)
		for _, name := range names {
			if fs.Lookup(name) == nil {
				t.Errorf("tpipe --%s is a setting flag; %s lacks it", name, form.prog())
			}
		}
	}
}

// Fixed bugs: the off flags of on|off settings on the job forms.
func TestServeNoFallback(t *testing.T) {
	for _, form := range []jobForm{formServe, formPmjq} {
		var f jobFlags
		fs := f.flagSet(form)
		if _, err := parseInterspersed(fs, []string{"--no-fallback", "DIR", "cat"}); err != nil {
			t.Errorf("%s --no-fallback: %v", form.prog(), err)
			continue
		}
		if !f.cfg.NoFallback {
			t.Errorf("%s --no-fallback: fallback still on", form.prog())
		}
	}
}

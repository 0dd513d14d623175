package place

import (
	"strings"
	"testing"
)

// Names come from untrusted writers: ValidName must never accept one that
// could leave its directory or pass for an option, and an Owner must
// round-trip through its name.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "..", "a/b", "-x", ".x", "a\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != nil {
			return
		}
		if strings.ContainsAny(name, "/\x00") || strings.Contains(name, "..") || name[0] == '-' || name[0] == '.' || len(name) > MaxName {
			t.Errorf("ValidName accepted %q", name)
		}
	})
}

func FuzzParseOwner(f *testing.F) {
	f.Add("host.example.1a2b3c4d.42.123")
	f.Add("h.0.1.0")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOwner(s)
		if err != nil {
			return
		}
		back, err := ParseOwner(o.String())
		if err != nil || back != o {
			t.Errorf("ParseOwner(%q) = %+v, which reads back as %+v, %v", s, o, back, err)
		}
	})
}

package posixre

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// With Bytes, every byte is a character, as in GNU's C locale: a
// pattern's stray byte matches that byte only, '.' and a bracket take one
// byte, and ranges may end past 0x7f.
func TestBytes(t *testing.T) {
	tests := []struct {
		pat  string
		ere  bool
		text string
		want bool
	}{
		// Fixed bugs: two different stray bytes matched each other.
		{"\xc2\xe7", false, "\xb7\xa1x", false},
		{"x*\xc2\xe7", false, "\xb7\xa1x", false},
		{"\xef\xbf\xbd", false, "\xff", false}, // U+FFFD is its three bytes
		{"\xc2\xe7", false, "a\xc2\xe7", true},
		{"^.x$", false, "\xffx", true},
		{"^.x$", false, "\xc3\xa9x", false}, // two characters before x
		{"^..x$", false, "\xc3\xa9x", true},
		{"^\xc3.x", false, "\xc3\xa9x", true},
		{"^[^a]*$", false, "\x80\xff", true},
		{"[\x80-\xff]", false, "abc", false},
		{"[\x80-\xff]", false, "ab\x90", true},
		{"^[a-\xff]*$", false, "az\xff\x80", true},
		{"^[a-\xfe]*$", false, "az\xff", false},
		{"\xa9+", true, "\xc3\xa9\xa9", true},
		{"^(\xc3\xa9)+$", true, "\xc3\xa9\xc3\xa9", true},
		{"^\xc3\xa9+$", true, "\xc3\xa9\xa9", true},
		{"\\w", false, "\xc3\xa9", false},
		{"^\\W\\W$", false, "\xc3\xa9", true},
		{"\\bx", false, "\xc3x", true},
	}
	for _, tt := range tests {
		syn := Basic
		if tt.ere {
			syn = Extended
		}
		re, err := Compile(tt.pat, syn, Bytes)
		if err != nil {
			t.Errorf("%q: %v", tt.pat, err)
			continue
		}
		if got := re.Match(Encode(nil, []byte(tt.text))); got != tt.want {
			t.Errorf("%q (%s) on %q: %v, want %v", tt.pat, re, tt.text, got, tt.want)
		}
	}
}

// Encode is one-to-one, keeps ASCII, and DecodeOffsets takes the offset
// of each character of the encoding back to the byte it came from.
func TestEncode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 'a', '\n', 0x7f, 0x80, 0xbf, 0xc0, 0xc6, 0xff}), 0, 12).Draw(t, "src")
		enc := Encode(nil, src)
		if HasHigh(src) != (len(enc) != len(src)) {
			t.Fatalf("HasHigh(%q) = %v, encoded %q", src, HasHigh(src), enc)
		}
		var offs, want []int
		for i, c := range src {
			offs = append(offs, len(Encode(nil, src[:i])))
			want = append(want, i)
			if r := []rune(string(Encode(nil, src[i:i+1]))); len(r) != 1 || c >= 0x80 && r[0] != ByteRune(c) || c < 0x80 && r[0] != rune(c) {
				t.Fatalf("byte %#x reads as %q", c, r)
			}
		}
		offs, want = append(offs, len(enc), -1), append(want, len(src), -1)
		// Backwards too, as a group comes after the match that holds it.
		var rev, revWant []int
		for i := len(offs) - 1; i >= 0; i-- {
			rev, revWant = append(rev, offs[i]), append(revWant, want[i])
		}
		DecodeOffsets(enc, offs)
		DecodeOffsets(enc, rev)
		if !slices.Equal(offs, want) || !slices.Equal(rev, revWant) {
			t.Fatalf("DecodeOffsets on %q: %v and %v, want %v and %v", enc, offs, rev, want, revWant)
		}
	})
}

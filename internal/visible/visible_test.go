package visible

import "testing"

func TestControls(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain name.txt", "plain name.txt"},
		{"caf\u00e9 \\ back", "caf\u00e9 \\ back"},
		{"\x1b[31mred", `\x1b[31mred`},
		{"bell\a tab\t nl\n cr\r", `bell\a tab\t nl\n cr\r`},
		{"\x00\x7f\x1f", `\x00\x7f\x1f`},
		{"\b\v\f", `\b\v\f`},
	}
	for _, tt := range tests {
		if got := Controls(tt.in); got != tt.want {
			t.Errorf("Controls(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

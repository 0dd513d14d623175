package video

import (
	"bytes"
	"math"
	"testing"
)

// The generator is deterministic, and writes what its header says.
func TestClipDeterministic(t *testing.T) {
	c := ClipSpec{W: 160, H: 96, Frames: 5, Seed: 3}
	var a, b bytes.Buffer
	if err := c.Write(&a); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one spec differ")
	}
	want := len(c.Header()) + c.Frames*(len("FRAME\n")+c.Layout().FrameSize())
	if a.Len() != want {
		t.Errorf("%d bytes, want %d", a.Len(), want)
	}
	if err := c.Check(bytes.NewReader(a.Bytes())); err != nil {
		t.Errorf("Check of the clip itself: %v", err)
	}
	c.Seed = 4
	var d bytes.Buffer
	if err := c.Write(&d); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes(), d.Bytes()) {
		t.Error("another seed gives the same clip")
	}
}

// The independent meter, on a generated clip, agrees with the shake of
// the path the clip was made from: the clip shakes as much as the spec
// says, and the meter can be trusted on it.
func TestMeterAgreesWithPath(t *testing.T) {
	c := ClipSpec{W: 320, H: 180, Frames: 60, Seed: 1}
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := c.Measure(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := c.TrueShake()
	t.Logf("meter %+v, path %+v", got, want)
	if got.Frames != c.Frames {
		t.Errorf("%d frames measured, want %d", got.Frames, c.Frames)
	}
	if math.Abs(got.Mean-want.Mean) > 0.1*want.Mean+0.1 {
		t.Errorf("meter's mean jitter %.3f px, the path's %.3f px", got.Mean, want.Mean)
	}
	if want.Mean < 0.5*float64(c.H)/jitterDiv {
		t.Errorf("path's jitter %.3f px: the clip hardly shakes", want.Mean)
	}
}

// Each kind of shake is about as strong: a deviation of H/144 pixels on
// each axis, over a long clip.
func TestShakeKinds(t *testing.T) {
	for _, sh := range Shakes {
		c := ClipSpec{W: 640, H: 360, Frames: 3000, Seed: 2, Shake: sh}
		smooth, shaky := c.Path()
		var ss float64
		for i := range shaky {
			dx, dy := shaky[i].X-smooth[i].X, shaky[i].Y-smooth[i].Y
			ss += dx*dx + dy*dy
		}
		sd := math.Sqrt(ss / float64(2*len(shaky)))
		want := float64(c.H) / jitterDiv
		t.Logf("%v: deviation %.2f px, want about %.2f", sh, sd, want)
		if sd < 0.7*want || sd > 1.3*want {
			t.Errorf("%v: deviation %.2f px, want %.2f within 30%%", sh, sd, want)
		}
	}
}

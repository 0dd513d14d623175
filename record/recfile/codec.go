package recfile

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// This file is the only place of tpipe that builds a compressor: every
// spill, edge file and sort run goes through encode and decode.

// Codec is the compression of a file's blocks.
type Codec uint8

const (
	// None stores blocks as they are.
	None Codec = iota
	// S2 is fast and compresses less: for data written once and read once
	// soon after by the same process (sort's runs), where CPU per byte
	// matters more than the ratio.
	S2
	// Zstd at its fastest level: a better ratio for a little more CPU.
	Zstd
	numCodecs
)

func (c Codec) String() string {
	switch c {
	case None:
		return "none"
	case S2:
		return "s2"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Codec(%d)", uint8(c))
}

// zstdCodec is one encoder and one decoder for the whole process, made at
// first use. EncodeAll and DecodeAll may be called concurrently; each
// holds one of GOMAXPROCS internal coders for the call, and neither starts
// a goroutine, so there is nothing to close.
var zstdCodec = sync.OnceValue(func() (z struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
	err error
}) {
	n := runtime.GOMAXPROCS(0)
	z.enc, z.err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(n), zstd.WithLowerEncoderMem(true))
	if z.err != nil {
		return z
	}
	// The cap limit makes DecodeAll stop at the capacity of its
	// destination, which is sized from the block header: a damaged frame
	// cannot make it allocate more than the block claims.
	z.dec, z.err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(n),
		zstd.WithDecoderLowmem(true), zstd.WithDecodeAllCapLimit(true))
	return z
})

// encode appends the compressed form of src to dst.
func encode(c Codec, dst, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append(dst, src...), nil
	case S2:
		n := len(dst)
		dst = grow(dst, s2.MaxEncodedLen(len(src)))
		out := s2.Encode(dst[n:cap(dst)], src)
		return dst[:n+len(out)], nil
	case Zstd:
		z := zstdCodec()
		if z.err != nil {
			return dst, fmt.Errorf("zstd: %w", z.err)
		}
		return z.enc.EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("unknown codec %d", c)
}

// decode appends to dst the raw bytes that src, compressed with c, holds.
// raw is the length the block header promises; anything else is an error.
// It never allocates more than raw bytes.
func decode(c Codec, dst, src []byte, raw int) ([]byte, error) {
	n := len(dst)
	dst = grow(dst, raw)
	switch c {
	case None:
		if len(src) != raw {
			return dst[:n], fmt.Errorf("%d bytes stored for %d", len(src), raw)
		}
		return append(dst[:n], src...), nil
	case S2:
		m, err := s2.DecodedLen(src)
		if err != nil {
			return dst[:n], err
		}
		if m != raw {
			return dst[:n], fmt.Errorf("s2 block of %d bytes, want %d", m, raw)
		}
		out, err := s2.Decode(dst[n:n+raw], src)
		if err != nil {
			return dst[:n], err
		}
		if len(out) != raw || (raw > 0 && &out[0] != &dst[n : n+1][0]) {
			return dst[:n], fmt.Errorf("s2 block decoded to %d bytes, want %d", len(out), raw)
		}
		return dst[:n+raw], nil
	case Zstd:
		z := zstdCodec()
		if z.err != nil {
			return dst[:n], fmt.Errorf("zstd: %w", z.err)
		}
		out, err := z.dec.DecodeAll(src, dst[:n:n+raw])
		if err != nil {
			return dst[:n], err
		}
		if len(out) != n+raw {
			return dst[:n], fmt.Errorf("zstd block decoded to %d bytes, want %d", len(out)-n, raw)
		}
		return out, nil
	}
	return dst[:n], fmt.Errorf("unknown codec %d", c)
}

// grow returns b with room for at least n more bytes.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

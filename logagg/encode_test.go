package logagg

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"strconv"
)

// This file writes aggregated logs for the tests: the layout NewReader reads, built from the
// format's description, so that cases a real cluster rarely writes (compressed blocks, several
// blocks, values in several chunks) are covered too.

// putVLong appends TFile's variable-length encoding of n.
func putVLong(b []byte, n int64) []byte {
	switch {
	case n >= -32 && n < 128:
		return append(b, byte(int8(n)))
	case n >= -20<<8 && n < 20<<8:
		return append(b, byte(int8(n>>8-52)), byte(n))
	case n >= -16<<16 && n < 16<<16:
		return append(b, byte(int8(n>>16-88)), byte(n>>8), byte(n))
	case n >= -8<<24 && n < 8<<24:
		return append(b, byte(int8(n>>24-112)), byte(n>>16), byte(n>>8), byte(n))
	}
	k := 8
	for k > 4 && n>>(8*(k-1)-1) >= -1 && n>>(8*(k-1)-1) <= 0 {
		k--
	}
	b = append(b, byte(int8(k-129)))
	for i := k - 1; i >= 0; i-- {
		b = append(b, byte(n>>(8*i)))
	}
	return b
}

func putString(b []byte, s string) []byte { return append(putVLong(b, int64(len(s))), s...) }

func javaUTFBytes(s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
}

// testLog is one container's log files, in order.
type testLog struct {
	container string
	files     [][2]string // name, content
}

// containerValue is a container record's value.
func containerValue(l testLog) []byte {
	var v []byte
	for _, f := range l.files {
		v = append(v, javaUTFBytes(f[0])...)
		v = append(v, javaUTFBytes(strconv.Itoa(len(f[1])))...)
		v = append(v, f[1]...)
	}
	return v
}

// chunked encodes v in chunks of at most size bytes (size <= 0: one chunk).
func chunked(v []byte, size int) []byte {
	if size <= 0 || len(v) <= size {
		return append(putVLong(nil, int64(len(v))), v...)
	}
	var out []byte
	for len(v) > size {
		out = append(putVLong(out, -int64(size)), v[:size]...)
		v = v[size:]
	}
	return append(putVLong(out, int64(len(v))), v...)
}

type encodeOpts struct {
	codec      string // "none" (default) or "gz"
	perBlock   int    // records per data block (default: all in one)
	chunk      int    // value chunk size (default: one chunk)
	owner      string
	skipHeader bool // no VERSION/ACL/OWNER records
}

// encode writes an aggregated log of logs.
func encode(logs []testLog, o encodeOpts) []byte {
	if o.codec == "" {
		o.codec = "none"
	}
	if o.owner == "" {
		o.owner = "alice"
	}
	type rec struct{ key, val []byte }
	var recs []rec
	if !o.skipHeader {
		recs = append(recs,
			rec{javaUTFBytes(KeyVersion), binary.BigEndian.AppendUint32(nil, 1)},
			rec{javaUTFBytes(KeyACL), append(javaUTFBytes("VIEW_APP"), javaUTFBytes("alice")...)},
			rec{javaUTFBytes(KeyOwner), javaUTFBytes(o.owner)})
	}
	for _, l := range logs {
		recs = append(recs, rec{javaUTFBytes(l.container), containerValue(l)})
	}
	per := o.perBlock
	if per <= 0 {
		per = len(recs) + 1
	}
	file := append([]byte(nil), bcfileMagic...)
	type reg struct{ off, comp, raw int64 }
	compress := func(raw []byte, codec string) []byte {
		if codec != "gz" {
			return raw
		}
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		_, _ = w.Write(raw)
		_ = w.Close()
		return b.Bytes()
	}
	var blocks []reg
	for i := 0; i < len(recs); i += per {
		var raw []byte
		for _, r := range recs[i:min(i+per, len(recs))] {
			raw = putVLong(raw, int64(len(r.key)))
			raw = append(raw, r.key...)
			raw = append(raw, chunked(r.val, o.chunk)...)
		}
		c := compress(raw, o.codec)
		blocks = append(blocks, reg{int64(len(file)), int64(len(c)), int64(len(raw))})
		file = append(file, c...)
	}
	meta := func(raw []byte) reg {
		r := reg{int64(len(file)), int64(len(raw)), int64(len(raw))}
		file = append(file, raw...)
		return r
	}
	var tmeta []byte
	tmeta = binary.BigEndian.AppendUint16(tmeta, 1)
	tmeta = binary.BigEndian.AppendUint16(tmeta, 0)
	tmeta = putVLong(tmeta, int64(len(recs)))
	tmeta = putString(tmeta, "")
	tm := meta(tmeta)
	var di []byte
	di = putString(di, o.codec)
	di = putVLong(di, int64(len(blocks)))
	for _, b := range blocks {
		di = putVLong(putVLong(putVLong(di, b.off), b.comp), b.raw)
	}
	bi := meta(di)
	metaOff := int64(len(file))
	var mi []byte
	mi = putVLong(mi, 2)
	for _, m := range []struct {
		name string
		r    reg
	}{{"BCFile.index", bi}, {"TFile.meta", tm}} {
		mi = putString(mi, "data:"+m.name)
		mi = putString(mi, "none")
		mi = putVLong(putVLong(putVLong(mi, m.r.off), m.r.comp), m.r.raw)
	}
	file = append(file, mi...)
	file = binary.BigEndian.AppendUint64(file, uint64(metaOff))
	file = binary.BigEndian.AppendUint16(file, 1)
	file = binary.BigEndian.AppendUint16(file, 0)
	return append(file, bcfileMagic...)
}

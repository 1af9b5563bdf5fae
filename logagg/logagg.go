// Package logagg reads Hadoop YARN's aggregated container logs: the per-node files that the
// NodeManagers write to the remote log directory (yarn.nodemanager.remote-app-log-dir, on HDFS)
// when log aggregation is on and an application ends, in the format of Hadoop's default
// LogAggregationTFileController.
//
// Such a file is a TFile, itself a BCFile: data blocks of key/value records, then meta blocks
// ("TFile.meta", "TFile.index", "BCFile.index"), the meta index, and a tail of the meta index's
// offset (8 bytes), the BCFile version (2 × 2 bytes) and a 16-byte magic. The records are
// AggregatedLogFormat's: the keys "VERSION", "APPLICATION_ACL" and "APPLICATION_OWNER", then one
// record per container, keyed by its id, whose value is a sequence of (file name, length as
// decimal text, bytes) for each of its log files (stdout, stderr, ...). Keys and strings inside
// values are Java modified UTF-8 with a 2-byte length; integers of the TFile layer are TFile's own
// variable-length encoding; values are written as chunks, each with a length that is negative
// while more follow.
//
// Files of the IndexedFile controller (yarn.log-aggregation.file-formats=IFile) have another
// layout and are refused with ErrIndexedFormat's error. Data blocks compressed with "gz" (zlib)
// are read; "lzo" and "snappy" are refused with a clear error (the default,
// yarn.nodemanager.log-aggregation.compression-type, is "none").
//
// Every read is bounded: the index and meta blocks by Limits, each log file by the length its
// record declares and by the block that holds it; a damaged file ends in a *FormatError naming the
// offset, never in a panic or an unbounded allocation.
package logagg

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// bcfileMagic ends every BCFile (and so every TFile).
var bcfileMagic = []byte{0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50}

// tailSize is the BCFile tail: meta index offset (8), version (4), magic (16).
const tailSize = 8 + 4 + 16

// Record keys of AggregatedLogFormat that are not containers.
const (
	KeyVersion = "VERSION"
	KeyACL     = "APPLICATION_ACL"
	KeyOwner   = "APPLICATION_OWNER"
)

// ErrFormat is matched (errors.Is) by every error about a file's content: not an aggregated log,
// or a damaged one.
var ErrFormat = errors.New("not a readable Hadoop aggregated log")

// ErrIndexedFormat is matched by the error for a file that is not a TFile, as the IndexedFile
// controller's are.
var ErrIndexedFormat = errors.New("not a TFile aggregated log")

// FormatError is a problem with the content of a file at Offset (-1 when no offset applies).
type FormatError struct {
	Offset int64
	Msg    string
	// Err is an underlying error (an unexpected end, ErrIndexedFormat), or nil.
	Err error
}

// Error names the offset and the problem.
func (e *FormatError) Error() string {
	s := e.Msg
	if e.Offset >= 0 {
		s = fmt.Sprintf("at offset %d: %s", e.Offset, e.Msg)
	}
	if e.Err != nil && !errors.Is(e.Err, ErrIndexedFormat) {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrFormat and the underlying error.
func (e *FormatError) Unwrap() []error { return []error{ErrFormat, e.Err} }

func formatErr(off int64, err error, format string, args ...any) error {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// Limits bound what a Reader accepts; zero fields take the defaults.
type Limits struct {
	// MaxIndexBytes bounds the meta index and each meta block read whole (default 4 MiB).
	MaxIndexBytes int64
	// MaxBlocks bounds the number of data blocks (default 1<<20).
	MaxBlocks int
	// MaxKeyBytes bounds a record's key (default 64 KiB, TFile's own maximum).
	MaxKeyBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxIndexBytes <= 0 {
		l.MaxIndexBytes = 4 << 20
	}
	if l.MaxBlocks <= 0 {
		l.MaxBlocks = 1 << 20
	}
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = 64 << 10
	}
	return l
}

// region is a block's place in the file.
type region struct {
	offset, compressed, raw int64
}

// Reader reads one aggregated log file.
type Reader struct {
	r      io.ReaderAt
	size   int64
	lim    Limits
	codec  string
	blocks []region
	// RecordCount is the record count TFile.meta declares (0 without TFile.meta).
	RecordCount int64
}

// NewReader reads the index of the aggregated log file r of size bytes.
func NewReader(r io.ReaderAt, size int64, lim Limits) (*Reader, error) {
	lim = lim.withDefaults()
	if size < tailSize {
		return nil, formatErr(-1, ErrIndexedFormat, "%d bytes is too short for a TFile (its tail alone is %d)", size, tailSize)
	}
	tail := make([]byte, tailSize)
	if _, err := r.ReadAt(tail, size-tailSize); err != nil {
		return nil, fmt.Errorf("reading the tail: %w", err)
	}
	if !bytes.Equal(tail[12:], bcfileMagic) {
		return nil, formatErr(size-16, ErrIndexedFormat, "no BCFile magic at the end of the file: not a TFile; "+
			"the IndexedFile controller (yarn.log-aggregation.file-formats=IFile) writes another format, which is not read")
	}
	metaOff := int64(binary.BigEndian.Uint64(tail[:8]))
	if major := int16(binary.BigEndian.Uint16(tail[8:10])); major != 1 {
		return nil, formatErr(size-20, nil, "BCFile version %d.%d, want 1.x", major, int16(binary.BigEndian.Uint16(tail[10:12])))
	}
	if metaOff < 0 || metaOff >= size-tailSize {
		return nil, formatErr(size-tailSize, nil, "meta index offset %d outside the file (%d bytes)", metaOff, size)
	}
	rd := &Reader{r: r, size: size, lim: lim}
	idxLen := size - tailSize - metaOff
	if idxLen > lim.MaxIndexBytes {
		return nil, formatErr(metaOff, nil, "meta index of %d bytes, over the limit of %d", idxLen, lim.MaxIndexBytes)
	}
	buf := make([]byte, idxLen)
	if _, err := r.ReadAt(buf, metaOff); err != nil {
		return nil, fmt.Errorf("reading the meta index: %w", err)
	}
	metas, err := rd.parseMetaIndex(metaOff, buf)
	if err != nil {
		return nil, err
	}
	bi, ok := metas["BCFile.index"]
	if !ok {
		return nil, formatErr(metaOff, nil, "no BCFile.index meta block")
	}
	data, err := rd.readMeta("BCFile.index", bi, metaOff)
	if err != nil {
		return nil, err
	}
	if err := rd.parseDataIndex(bi.region.offset, data, metaOff); err != nil {
		return nil, err
	}
	if tm, ok := metas["TFile.meta"]; ok {
		b, err := rd.readMeta("TFile.meta", tm, metaOff)
		if err != nil {
			return nil, err
		}
		br := &byteReader{b: b, base: tm.region.offset}
		major, err1 := br.u16()
		_, err2 := br.u16()
		n, err3 := br.vlong()
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		if int16(major) != 1 {
			return nil, formatErr(tm.region.offset, nil, "TFile version %d, want 1", int16(major))
		}
		rd.RecordCount = n
	}
	return rd, nil
}

type metaEntry struct {
	codec  string
	region region
}

func (rd *Reader) parseMetaIndex(off int64, b []byte) (map[string]metaEntry, error) {
	br := &byteReader{b: b, base: off}
	n, err := br.vlong()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1024 {
		return nil, formatErr(off, nil, "meta index of %d entries", n)
	}
	out := make(map[string]metaEntry, n)
	for range n {
		name, err := br.str()
		if err != nil {
			return nil, err
		}
		short, ok := cutPrefix(name, "data:")
		if !ok {
			return nil, formatErr(br.pos(), nil, "meta block name %q without its data: prefix", name)
		}
		codec, err := br.str()
		if err != nil {
			return nil, err
		}
		reg, err := br.region()
		if err != nil {
			return nil, err
		}
		if err := rd.checkRegion(reg, off, br.pos()); err != nil {
			return nil, err
		}
		out[short] = metaEntry{codec: codec, region: reg}
	}
	return out, nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// checkRegion: a block lies before the meta index (limit) and its sizes are sane.
func (rd *Reader) checkRegion(reg region, limit, at int64) error {
	if reg.offset < 0 || reg.compressed < 0 || reg.raw < 0 || reg.offset > limit || reg.compressed > limit-reg.offset {
		return formatErr(at, nil, "block region offset %d, %d bytes (raw %d) outside the file's %d bytes of blocks",
			reg.offset, reg.compressed, reg.raw, limit)
	}
	return nil
}

func (rd *Reader) readMeta(name string, m metaEntry, limit int64) ([]byte, error) {
	if m.region.raw > rd.lim.MaxIndexBytes || m.region.compressed > rd.lim.MaxIndexBytes {
		return nil, formatErr(m.region.offset, nil, "meta block %s of %d bytes, over the limit of %d", name, m.region.raw, rd.lim.MaxIndexBytes)
	}
	r, err := rd.block(m.codec, m.region)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r, m.region.raw+1))
	if err != nil {
		return nil, formatErr(m.region.offset, err, "meta block %s", name)
	}
	if int64(len(b)) != m.region.raw {
		return nil, formatErr(m.region.offset, nil, "meta block %s holds %d bytes, its index says %d", name, len(b), m.region.raw)
	}
	return b, nil
}

func (rd *Reader) parseDataIndex(off int64, b []byte, limit int64) error {
	br := &byteReader{b: b, base: off}
	codec, err := br.str()
	if err != nil {
		return err
	}
	if _, err := decompressor(codec, off); err != nil {
		return err
	}
	n, err := br.vlong()
	if err != nil {
		return err
	}
	if n < 0 || n > int64(rd.lim.MaxBlocks) {
		return formatErr(off, nil, "%d data blocks (the limit is %d)", n, rd.lim.MaxBlocks)
	}
	rd.codec = codec
	rd.blocks = make([]region, 0, min(n, 1024))
	for range n {
		reg, err := br.region()
		if err != nil {
			return err
		}
		if err := rd.checkRegion(reg, limit, br.pos()); err != nil {
			return err
		}
		rd.blocks = append(rd.blocks, reg)
	}
	return nil
}

// Compression is the name of the data blocks' compression ("none", "gz").
func (rd *Reader) Compression() string { return rd.codec }

func decompressor(codec string, off int64) (func(io.Reader) (io.Reader, error), error) {
	switch codec {
	case "none":
		return func(r io.Reader) (io.Reader, error) { return r, nil }, nil
	case "gz":
		return func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }, nil
	}
	return nil, formatErr(off, nil, "blocks compressed with %q, which is not read (only none and gz; "+
		"yarn.nodemanager.log-aggregation.compression-type sets it)", codec)
}

// block returns the decompressed content of a block, bounded by its raw size.
func (rd *Reader) block(codec string, reg region) (io.Reader, error) {
	dec, err := decompressor(codec, reg.offset)
	if err != nil {
		return nil, err
	}
	r, err := dec(io.NewSectionReader(rd.r, reg.offset, reg.compressed))
	if err != nil {
		return nil, formatErr(reg.offset, err, "block of %d bytes", reg.compressed)
	}
	return io.LimitReader(r, reg.raw), nil
}

// Record is one record of the file: Key is a container id or one of KeyVersion, KeyACL,
// KeyOwner; Value reads its value (the chunks joined), up to its end.
type Record struct {
	Key   string
	Value io.Reader
}

// Records calls fn for each record, in file order. What fn leaves unread of a value is skipped.
// fn's error ends the walk and is returned as is.
func (rd *Reader) Records(fn func(Record) error) error {
	for i, reg := range rd.blocks {
		r, err := rd.block(rd.codec, reg)
		if err != nil {
			return err
		}
		cr := &countReader{r: bufio.NewReaderSize(r, 64<<10)}
		for cr.n < reg.raw {
			at := reg.offset + cr.n // of the raw content, for compressed blocks
			klen, err := readVLong(cr)
			if err != nil {
				return formatErr(at, err, "block %d: record key length", i)
			}
			if klen < 0 || klen > int64(rd.lim.MaxKeyBytes) {
				return formatErr(at, nil, "block %d: key of %d bytes (the limit is %d)", i, klen, rd.lim.MaxKeyBytes)
			}
			kb := make([]byte, klen)
			if _, err := io.ReadFull(cr, kb); err != nil {
				return formatErr(at, err, "block %d: record key", i)
			}
			key, err := javaUTF(kb)
			if err != nil {
				return formatErr(at, err, "block %d: record key", i)
			}
			val := &chunkReader{r: cr}
			if err := fn(Record{Key: key, Value: val}); err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, val); err != nil {
				return formatErr(reg.offset+cr.n, err, "block %d: value of %s", i, key)
			}
		}
	}
	return nil
}

// javaUTF decodes DataOutput.writeUTF's form: a 2-byte length, then (modified) UTF-8.
func javaUTF(b []byte) (string, error) {
	if len(b) < 2 {
		return "", io.ErrUnexpectedEOF
	}
	n := int(binary.BigEndian.Uint16(b))
	if n != len(b)-2 {
		return "", fmt.Errorf("string of %d bytes in a key of %d", n, len(b)-2)
	}
	return string(b[2:]), nil
}

// readUTF reads DataOutput.writeUTF's form from r.
func readUTF(r io.Reader) (string, error) {
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", noEOF(err)
	}
	return string(b), nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Log is one log file of a container.
type Log struct {
	// Container is the container id, Name the file's name (stdout, stderr, ...).
	Container, Name string
	// Size is the length the record declares.
	Size int64
	// Body reads the file's bytes, at most Size.
	Body io.Reader
}

// Logs calls fn for each log file of each container, in file order. What fn leaves unread of a
// Body is skipped.
func (rd *Reader) Logs(fn func(Log) error) error {
	return rd.Records(func(rec Record) error {
		switch rec.Key {
		case KeyVersion, KeyACL, KeyOwner:
			return nil
		}
		return ContainerLogs(rec.Key, rec.Value, fn)
	})
}

// Owner reads the APPLICATION_OWNER record ("" when the file has none).
func (rd *Reader) Owner() (string, error) {
	owner := ""
	errStop := errors.New("stop")
	err := rd.Records(func(rec Record) error {
		if rec.Key != KeyOwner {
			return nil
		}
		s, err := readUTF(rec.Value)
		if err != nil {
			return formatErr(-1, noEOF(err), "APPLICATION_OWNER value")
		}
		owner = s
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", err
	}
	return owner, nil
}

// ContainerLogs splits one container record's value into its log files.
func ContainerLogs(container string, v io.Reader, fn func(Log) error) error {
	for {
		name, err := readUTF(v)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return formatErr(-1, err, "container %s: log file name", container)
		}
		ls, err := readUTF(v)
		if err != nil {
			return formatErr(-1, noEOF(err), "container %s, %s: length", container, name)
		}
		n, err := strconv.ParseInt(ls, 10, 64)
		if err != nil || n < 0 {
			return formatErr(-1, nil, "container %s, %s: length %q is not a byte count", container, name, ls)
		}
		body := &io.LimitedReader{R: v, N: n}
		if err := fn(Log{Container: container, Name: name, Size: n, Body: body}); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return formatErr(-1, err, "container %s, %s", container, name)
		}
		if body.N > 0 {
			return formatErr(-1, io.ErrUnexpectedEOF, "container %s, %s: %d of %d bytes missing", container, name, body.N, n)
		}
	}
}

// chunkReader joins a TFile value's chunks: each a vint length, negative while more follow.
type chunkReader struct {
	r      *countReader
	left   int64
	last   bool
	inited bool
	err    error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for c.left == 0 {
		if c.inited && c.last {
			c.err = io.EOF
			return 0, io.EOF
		}
		n, err := readVLong(c.r)
		if err != nil {
			c.err = noEOF(err)
			return 0, c.err
		}
		c.inited = true
		if n >= 0 {
			c.last = true
			c.left = n
		} else {
			if n == -n { // math.MinInt64
				c.err = fmt.Errorf("chunk length %d", n)
				return 0, c.err
			}
			c.left = -n
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err == io.EOF {
		if c.left > 0 {
			c.err = io.ErrUnexpectedEOF
			return n, c.err
		}
		err = nil
	}
	return n, err
}

// countReader counts what it read.
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// readVLong decodes TFile's variable-length integer (org.apache.hadoop.io.file.tfile.Utils): a
// first byte FB >= -32 is the value; FB in [-72,-33] takes 1 more byte, [-104,-73] 2,
// [-120,-105] 3; FB in [-128,-121] is followed by FB+129 (4 to 8) bytes of a big-endian signed
// integer.
func readVLong(r io.ByteReader) (int64, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	fb := int64(int8(b))
	if fb >= -32 {
		return fb, nil
	}
	next := func(k int) (int64, error) {
		var v int64
		for range k {
			b, err := r.ReadByte()
			if err != nil {
				return 0, noEOF(err)
			}
			v = v<<8 | int64(b)
		}
		return v, nil
	}
	switch (fb + 128) / 8 {
	case 7, 8, 9, 10, 11:
		v, err := next(1)
		return (fb+52)<<8 | v, err
	case 3, 4, 5, 6:
		v, err := next(2)
		return (fb+88)<<16 | v, err
	case 1, 2:
		v, err := next(3)
		return (fb+112)<<24 | v, err
	}
	n := int(fb + 129)
	if n < 4 || n > 8 {
		return 0, fmt.Errorf("corrupt variable-length integer (first byte %d)", fb)
	}
	v, err := next(n)
	if err != nil {
		return 0, err
	}
	// Sign-extend the n-byte big-endian value.
	shift := uint(64 - 8*n)
	return v << shift >> shift, nil
}

// byteReader reads TFile's index structures from a buffer, naming file offsets in its errors.
type byteReader struct {
	b    []byte
	i    int
	base int64
}

func (br *byteReader) pos() int64 { return br.base + int64(br.i) }

func (br *byteReader) ReadByte() (byte, error) {
	if br.i >= len(br.b) {
		return 0, io.EOF
	}
	br.i++
	return br.b[br.i-1], nil
}

func (br *byteReader) vlong() (int64, error) {
	at := br.pos()
	v, err := readVLong(br)
	if err != nil {
		return 0, formatErr(at, noEOF(err), "variable-length integer")
	}
	return v, nil
}

func (br *byteReader) u16() (uint16, error) {
	if len(br.b)-br.i < 2 {
		return 0, formatErr(br.pos(), io.ErrUnexpectedEOF, "version")
	}
	v := binary.BigEndian.Uint16(br.b[br.i:])
	br.i += 2
	return v, nil
}

// str reads Utils.writeString's form: a vint length, then UTF-8.
func (br *byteReader) str() (string, error) {
	at := br.pos()
	n, err := br.vlong()
	if err != nil {
		return "", err
	}
	if n < 0 || n > int64(len(br.b)-br.i) {
		return "", formatErr(at, nil, "string of %d bytes with %d left", n, len(br.b)-br.i)
	}
	s := string(br.b[br.i : br.i+int(n)])
	br.i += int(n)
	return s, nil
}

func (br *byteReader) region() (region, error) {
	var reg region
	var err error
	if reg.offset, err = br.vlong(); err != nil {
		return reg, err
	}
	if reg.compressed, err = br.vlong(); err != nil {
		return reg, err
	}
	reg.raw, err = br.vlong()
	return reg, err
}

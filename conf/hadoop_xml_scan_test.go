package conf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The markup that must never end a tag early or count as attributes: a '>' (and quotes) inside
// comments, CDATA, processing instructions, a DOCTYPE's internal subset and quoted values.
const trickyValidXML = `<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!DOCTYPE configuration [
  <!ENTITY e "a > b, ' x=">
  <!-- a comment in the subset: <a b="1" c="2" d="3"> -->
  <!ELEMENT configuration ANY>
  <!ATTLIST property a CDATA "x>y">
]>
<!-- <property x="1" y="2" z="3" w="4"> is only a comment; so is > -->
<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <property name="short.form" value="a &gt; b > c, 'single' quotes" final="true"/>
  <property><name>cdata</name><value><![CDATA[<a x="1" y="2" z="3" w="4"> ]] > ]>]]></value></property>
  <property><name>pi</name><value>x<?pi a="1" b="2" c="3" d="4" > ?>y</value></property>
  <property><name>quotes</name><value>"a" 'b' "c" 'd' "e" x="1" y="2"</value></property>
  <property a='1>' b="'2'"><name>gt</name><value>1 > 0</value></property>
  <xi:include href="other.xml" parse="xml" xpointer="xpointer(/configuration/*)"><xi:fallback/></xi:include>
</configuration>
`

func TestScanXMLTagsAcceptsValidMarkup(t *testing.T) {
	for name, in := range map[string]string{
		"tricky":        trickyValidXML,
		"testdata":      readTestdata(t, "yarn-site.xml"),
		"capacity":      capacitySchedulerXML(50),
		"empty":         "",
		"text only":     "no markup at all",
		"BOM-less bare": "<configuration/>",
	} {
		t.Run(name, func(t *testing.T) {
			assert.Nil(t, scanXMLTags([]byte(in), 4, 256))
		})
	}
	// and the tricky file still parses as before
	props, err := ParseHadoopXML("f.xml", []byte(trickyValidXML))
	require.NoError(t, err)
	got := map[string]string{}
	for _, p := range props {
		got[p.Name] = p.Value
	}
	assert.Equal(t, map[string]string{
		"short.form": "a > b > c, 'single' quotes",
		"cdata":      `<a x="1" y="2" z="3" w="4"> ]] > ]>`,
		"pi":         "xy",
		"quotes":     `"a" 'b' "c" 'd' "e" x="1" y="2"`,
		"gt":         "1 > 0",
	}, got)
}

func TestScanXMLTagsRefuses(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		at     string // the refused tag starts at the last occurrence of this; "" for offset 0
		what   string
		detail string
	}{
		{name: "five attributes", in: `<configuration><property a="1" b="2" c="3" d="4" e="5"/></configuration>`, at: "<property",
			what: "attributes of one element", detail: "<property> has 5 attributes or more"},
		{name: "five namespace declarations", in: `<configuration xmlns:a="u" xmlns:b="u" xmlns:c="u" xmlns:d="u" xmlns:e="u"/>`,
			what: "attributes of one element", detail: "<configuration> has 5 attributes or more"},
		{name: "single quotes count", in: `<a b='1' c='2' d='3' e='4' f='5'>`,
			what: "attributes of one element", detail: "<a> has 5 attributes or more"},
		{name: "after a comment, CDATA, a PI and a DOCTYPE holding many quotes and '>'",
			in: `<!DOCTYPE a [<!ENTITY x "'>'>'"> <!-- "'> --> <x y="1" z="2" w="3" v="4" u="5">]><!--a="1" b="2" c="3" d="4" e="5">--><?p a="1" b="2" c="3" d="4" e="5" >?><a><![CDATA[<b c="1" d="2" e="3" f="4" g="5">]]><b c="1" d="2" e="3" f="4" g="5"/></a>`,
			at: "<b c=", what: "attributes of one element", detail: "<b> has 5 attributes or more"},
		{name: "a long tag", in: "<configuration>\n<property value=\"" + strings.Repeat("v", 300) + "\"/>", at: "<property",
			what: "start tag size", detail: "the start tag of <property> has 257 bytes or more"},
		{name: "a long tag that never ends", in: "<configuration " + strings.Repeat("v", 300), what: "start tag size"},
		{name: "a long element name, cut in the message", in: "<" + strings.Repeat("n", 300) + ">", what: "start tag size",
			detail: "the start tag of <" + strings.Repeat("n", 64) + "…> has 257 bytes or more"},
		{name: "a non-ASCII element name", in: "<é" + strings.Repeat("n", 300) + ">", what: "start tag size",
			detail: "the start tag of an element has 257 bytes or more"},
		{name: "one byte over", in: "<a " + strings.Repeat(" ", 253) + ">", what: "start tag size", detail: "the start tag of <a> has 257 bytes or more"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := scanXMLTags([]byte(tc.in), 4, 256)
			require.NotNil(t, f)
			offset := 0
			if tc.at != "" {
				offset = strings.LastIndex(tc.in, tc.at)
			}
			assert.Equal(t, offset, f.Offset)
			assert.Equal(t, tc.what, f.What)
			if tc.detail != "" {
				assert.Equal(t, tc.detail, f.Detail)
			}
			assert.NotEmpty(t, f.Fix)
		})
	}
	assert.Nil(t, scanXMLTags([]byte("<a "+strings.Repeat(" ", 252)+">"), 4, 256), "a tag of exactly the limit")
	assert.Nil(t, scanXMLTags([]byte(`<a b="1" c="2" d="3" e="4"/>`), 4, 256), "exactly the attribute limit")
}

// Malformed markup stops the scan (encoding/xml fails there with its syntax error), and nothing
// panics or reads outside the data on a truncated construct.
func TestScanXMLTagsMalformed(t *testing.T) {
	many := `<b c="1" d="2" e="3" f="4" g="5">`
	for _, in := range []string{
		"<", "<!", "<!-", "<!--", "<!-- x -", "<!-- -- -->" + many, "<![CDATA", "<![CDATX[" + many, "<![CDATA[ x ]]",
		"<?", "<?pi", "<?pi ?", "<!DOCTYPE", "<!DOCTYPE a [<", "<!DOCTYPE a [<!", "<!DOCTYPE a [<!-- -->", "<!DOCTYPE a '>" + many,
		"</a", `<a b="1`, `<a b="<">` + many, `<a b="1" <c>` + many, "<a", "<a/",
	} {
		assert.Nil(t, scanXMLTags([]byte(in), 4, 256), "%q", in)
	}
}

func TestParseHadoopXMLElementLimits(t *testing.T) {
	cases := []parseErrorCase{
		{name: "1001 attributes", in: xmlHead + "<configuration>\n<property " + manyAttrs(1001) + "/>\n</configuration>", line: 3,
			msg: "attributes of one element: limit of 1000 exceeded (<property> has 1001 attributes or more) (fix: an element of a Hadoop configuration has a few attributes at most"},
		{name: "1001 namespace declarations", in: xmlHead + "<configuration " + strings.ReplaceAll(manyAttrs(1001), "x", "xmlns:x") + "/>", line: 2,
			msg: "attributes of one element: limit of 1000 exceeded (<configuration> has 1001 attributes or more)"},
		{name: "a 2 MiB short-form value", in: xmlHead + "<configuration>\n\n<property name=\"a\" value=\"" + strings.Repeat("v", 2<<20) + "\"/>\n</configuration>", line: 4,
			msg: "start tag size: limit of 1048576 exceeded (the start tag of <property> has 1048577 bytes or more) (fix: a start tag of a Hadoop configuration is well under a kilobyte; write a long value as <value>…</value> text"},
	}
	runParseErrorCases(t, "etc/hadoop/yarn-site.xml", ParseHadoopXML, cases)
	for _, tc := range cases {
		_, err := ParseHadoopXML("f.xml", []byte(tc.in))
		assert.ErrorIs(t, err, ErrLimit, tc.name)
	}
	// within the limits, the same shapes parse
	props, err := ParseHadoopXML("f.xml", []byte(xmlHead+"<configuration "+strings.ReplaceAll(manyAttrs(999), "x", "xmlns:x")+">\n<property "+manyAttrs(998)+
		" name=\"a\" value=\""+strings.Repeat("v", 512<<10)+"\"/>\n</configuration>"))
	require.NoError(t, err)
	require.Len(t, props, 1)
	assert.Len(t, props[0].Value, 512<<10)
}

func TestLoadHadoopElementLimits(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "yarn-site.xml"), xmlConf(`<property a="1" b="2" c="3"><name>x</name><value>1</value></property>`+"\n"+
		"<property><name>deep</name><value><a><b><c/></b></a></value></property>\n"))
	getenv := envMap(nil)
	_, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: getenv, Limits: Limits{MaxXMLAttributes: 2, RaiseHint: "pass --max-xml-attributes"}})
	require.ErrorIs(t, err, ErrLimit)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "attributes of one element", le.What)
	assert.Equal(t, int64(2), le.Limit)
	assert.Equal(t, filepath.Join(dir, "yarn-site.xml")+":3: attributes of one element: limit of 2 exceeded (<property> has 3 attributes or more) (fix: "+
		"an element of a Hadoop configuration has a few attributes at most (name, value and final on a short-form <property>, xmlns:xi and href on <xi:include>), "+
		"and Hadoop's own parser refuses more than 1000; check that this is the right file; to allow more, pass --max-xml-attributes)", err.Error())

	_, err = LoadHadoop(HadoopOptions{Dir: dir, Getenv: getenv, Limits: Limits{MaxXMLTagBytes: 20}})
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "yarn-site.xml:3: start tag size: limit of 20 exceeded (the start tag of <property> has 21 bytes or more)")

	_, err = LoadHadoop(HadoopOptions{Dir: dir, Getenv: getenv, Limits: Limits{MaxXMLDepth: 5}})
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "yarn-site.xml:4: element nesting: limit of 5 exceeded (<c> is nested 6 deep) (fix: flatten the file")

	cfg, err := LoadHadoop(HadoopOptions{Dir: dir, Getenv: getenv, Limits: Limits{MaxXMLAttributes: 3, MaxXMLTagBytes: 40, MaxXMLDepth: 6}})
	require.NoError(t, err, "exactly at every limit")
	assert.Equal(t, "1", cfg.Get("x"))
}

// FuzzScanXMLTags checks the scan against encoding/xml, under small limits: whatever the scan
// accepts, no element that encoding/xml reads is over a limit, and the file parses exactly as
// without the scan; whatever it refuses is a start tag encoding/xml reads over that limit, or
// markup encoding/xml fails on, and the parse fails with an ErrLimit error naming the line.
func FuzzScanXMLTags(f *testing.F) {
	f.Add([]byte(trickyValidXML))
	f.Add([]byte(`<a b="1" c='>' d="3"/>`))
	f.Add([]byte(`<!DOCTYPE a [<!-- > --> <x a="1" b="2" c="3">]><a><![CDATA[<a b="1" c="2" d="3">]]></a>`))
	const maxAttrs, maxTag = 2, 48
	small := Limits{MaxXMLAttributes: maxAttrs, MaxXMLTagBytes: maxTag, MaxXMLDepth: 8}
	off := Limits{MaxXMLAttributes: 1 << 30, MaxXMLTagBytes: 1 << 30, MaxXMLDepth: 8}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimPrefix(data, []byte(utf8BOM)) // the parse scans what follows it
		found := scanXMLTags(data, maxAttrs, maxTag)
		ref := referenceTags(data)
		switch {
		case found == nil:
			for _, e := range ref.elems {
				if e.attrs > maxAttrs || e.size > maxTag {
					t.Fatalf("accepted, but encoding/xml reads the start tag at %d with %d attributes and %d bytes", e.offset, e.attrs, e.size)
				}
			}
		default:
			e, read := ref.at(found.Offset)
			switch {
			case read && found.What == "attributes of one element" && e.attrs > maxAttrs:
			case read && found.What == "start tag size" && e.size > maxTag:
			case !read && ref.failedAt >= 0 && found.Offset >= ref.failedAt:
				// encoding/xml fails before it has read this tag
			default:
				t.Fatalf("refused the tag at %d (%s: %s); encoding/xml read it: %v, %+v, failed at %d", found.Offset, found.What, found.Detail, read, e, ref.failedAt)
			}
		}

		gotWarns := newWarnList(0)
		got, gotErr := parseHadoopXMLIn("f.xml", data, nil, gotWarns, newBudget(small))
		if bytes.HasPrefix(data, []byte(utf8BOM)) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
			return // refused as UTF-16, or a second byte order mark, before the scan
		}
		if found != nil {
			var ce *Error
			if !errors.Is(gotErr, ErrLimit) || !errors.As(gotErr, &ce) || ce.Source.File != "f.xml" || ce.Fix == "" ||
				ce.Source.Line != 1+bytes.Count(data[:found.Offset], []byte("\n")) {
				t.Fatalf("refused, but the parse gives %v", gotErr)
			}
			return
		}
		wantWarns := newWarnList(0)
		want, wantErr := parseHadoopXMLIn("f.xml", data, nil, wantWarns, newBudget(off))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotWarns.warnings(), wantWarns.warnings()) {
			t.Fatalf("accepted, but the parse differs:\n%v %+v\n%v %+v", gotErr, got, wantErr, want)
		}
	})
}

// refTag is a start tag encoding/xml read: its offset, size in bytes and attributes.
type refTag struct{ offset, size, attrs int }

// refTags is what encoding/xml reads of a document: its start tags, in order, until it fails at the
// token starting at failedAt (-1: it read the whole document).
type refTags struct {
	elems    []refTag
	failedAt int
}

func (r refTags) at(offset int) (refTag, bool) {
	for _, e := range r.elems {
		if e.offset == offset {
			return e, true
		}
	}
	return refTag{}, false
}

// referenceTags reads data with encoding/xml as parseHadoopXMLIn does, except that the encodings it
// reads are taken as they are, so offsets stay those of data.
func referenceTags(data []byte) refTags {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if _, err := charsetReader(label, bytes.NewReader(nil)); err != nil {
			return nil, err
		}
		return in, nil
	}
	var r refTags
	for {
		start := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			r.failedAt = -1
			return r
		}
		if err != nil {
			r.failedAt = start
			return r
		}
		if se, ok := tok.(xml.StartElement); ok {
			r.elems = append(r.elems, refTag{offset: start, size: int(dec.InputOffset()) - start, attrs: len(se.Attr)})
		}
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := ReadConfigFile(filepath.Join("testdata/hadoop", name), 0)
	require.NoError(t, err)
	return string(data)
}

package conf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const xmlHead = "<?xml version=\"1.0\"?>\n"

func TestParseHadoopXML(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Property
	}{
		{
			name: "name, value, final, description, source and tag",
			in: xmlHead + `<configuration>
  <property>
    <name> yarn.resource-types </name>
    <value> yarn.io/gpu </value>
    <final>true</final>
    <description>GPUs</description>
    <source>programmatically</source>
    <tag>YARN</tag>
  </property>
</configuration>`,
			want: []Property{{Name: "yarn.resource-types", Value: " yarn.io/gpu ", Raw: " yarn.io/gpu ", Final: true, Source: Source{File: "f.xml", Line: 3}}},
		},
		{
			name: "attribute form",
			in:   xmlHead + "<configuration>\n<property name=\"a\" value=\"1\" final=\"true\"/>\n<property name=\"b\" value=\"2\"></property>\n</configuration>",
			want: []Property{
				{Name: "a", Value: "1", Raw: "1", Final: true, Source: Source{File: "f.xml", Line: 3}},
				{Name: "b", Value: "2", Raw: "2", Source: Source{File: "f.xml", Line: 4}},
			},
		},
		{
			name: "final only when exactly true",
			in:   "<configuration><property><name>a</name><value>1</value><final>TRUE</final></property><property><name>b</name><value>1</value><final>false</final></property></configuration>",
			want: []Property{
				{Name: "a", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 1}},
				{Name: "b", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 1}},
			},
		},
		{
			name: "empty value and missing value are not settings; whitespace value is",
			in:   "<configuration>\n<property><name>a</name><value></value></property>\n<property><name>b</name></property>\n<property><name>c</name><value> </value></property>\n<property><name>d</name><value/></property>\n</configuration>",
			want: []Property{{Name: "c", Value: " ", Raw: " ", Source: Source{File: "f.xml", Line: 4}}},
		},
		{
			name: "entities, CDATA and ${var} kept raw",
			in:   "<configuration><property><name>a</name><value>x &amp; y &lt;z&gt; <![CDATA[<b>]]> ${other}</value></property></configuration>",
			want: []Property{{Name: "a", Value: "x & y <z> <b> ${other}", Raw: "x & y <z> <b> ${other}", Source: Source{File: "f.xml", Line: 1}}},
		},
		{
			name: "same name twice: both returned in order",
			in:   "<configuration>\n<property><name>a</name><value>1</value></property>\n<property><name>a</name><value>2</value></property>\n</configuration>",
			want: []Property{
				{Name: "a", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 2}},
				{Name: "a", Value: "2", Raw: "2", Source: Source{File: "f.xml", Line: 3}},
			},
		},
		{
			name: "comments, processing instructions, doctype, CRLF",
			in:   "<?xml version=\"1.0\"?>\r\n<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\r\n<!DOCTYPE configuration>\r\n<!-- c -->\r\n<configuration>\r\n<property><!-- x --><name>a</name><value>1</value></property>\r\n</configuration>\r\n",
			want: []Property{{Name: "a", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 6}}},
		},
		{
			name: "include with fallback uses the fallback",
			in: xmlHead + `<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <xi:include href="missing.xml">
    <xi:fallback>
      <property><name>from.fallback</name><value>yes</value></property>
    </xi:fallback>
  </xi:include>
</configuration>`,
			want: []Property{{Name: "from.fallback", Value: "yes", Raw: "yes", Source: Source{File: "f.xml", Line: 5}}},
		},
		{
			name: "markup inside a value contributes its text, as in Hadoop",
			in:   "<configuration><property><name>a</name><value>x<b>y</b>z</value></property></configuration>",
			want: []Property{{Name: "a", Value: "xyz", Raw: "xyz", Source: Source{File: "f.xml", Line: 1}}},
		},
		{
			name: "include without href is ignored; plain <include> counts as xi:include",
			in:   "<configuration><include/><include href=\"x.xml\"><fallback/></include><property name=\"a\" value=\"1\"/></configuration>",
			want: []Property{{Name: "a", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 1}}},
		},
		{
			name: "ISO-8859-1",
			in:   "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<configuration><property><name>a</name><value>caf\xe9</value></property></configuration>",
			want: []Property{{Name: "a", Value: "café", Raw: "café", Source: Source{File: "f.xml", Line: 2}}},
		},
		{
			name: "UTF-8 byte order mark",
			in:   "\uFEFF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration><property><name>a</name><value>1</value></property></configuration>",
			want: []Property{{Name: "a", Value: "1", Raw: "1", Source: Source{File: "f.xml", Line: 2}}},
		},
		{
			name: "empty configuration",
			in:   xmlHead + "<configuration/>",
			want: []Property{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHadoopXML("f.xml", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseHadoopXMLWarnings(t *testing.T) {
	in := xmlHead + `<conf>
  <property><value>1</value></property>
  <property><name> </name><value>1</value></property>
  <property><name>x</name><value>1</value><final> true </final></property>
  <property><name>y</name></property>
</conf>`
	res, err := parseHadoopXML("f.xml", []byte(in), nil)
	require.NoError(t, err)
	var msgs []string
	for _, w := range res.warnings {
		msgs = append(msgs, w.String())
	}
	require.Len(t, msgs, 5, strings.Join(msgs, "\n"))
	assert.Contains(t, msgs[0], "f.xml:2: root element is <conf>")
	assert.Contains(t, msgs[1], "f.xml:3: <property> without <name> ignored")
	assert.Contains(t, msgs[2], "f.xml:4: <property> with an empty <name> ignored")
	assert.Contains(t, msgs[3], `f.xml:5: x: <final> is " true ", which Hadoop does not read as true`)
	assert.Contains(t, msgs[4], "f.xml:6: y has no value; Hadoop ignores it")
	for _, m := range msgs {
		assert.Contains(t, m, "fix:")
	}
}

func TestParseHadoopXMLErrors(t *testing.T) {
	runParseErrorCases(t, "etc/hadoop/yarn-site.xml", ParseHadoopXML, []parseErrorCase{
		{name: "unclosed element", in: xmlHead + "<configuration>\n<property>\n<name>a</name>\n</configuration>", line: 5, msg: "malformed XML"},
		{name: "mismatched tag", in: xmlHead + "<configuration>\n<property><name>a</value></property>\n</configuration>", line: 3, msg: "element <name> closed by </value>"},
		{name: "bare ampersand", in: xmlHead + "<configuration>\n\n<property><name>a</name><value>x & y</value></property>\n</configuration>", line: 4, msg: "malformed XML"},
		{name: "unknown entity", in: xmlHead + "<configuration>\n<property><name>a</name><value>&nbsp;</value></property>\n</configuration>", line: 3, msg: "malformed XML"},
		{name: "empty file", in: "", line: 0, msg: "no root element"},
		{name: "text only", in: "not xml at all", line: 1, msg: "text outside the root element"},
		{name: "unsupported encoding", in: "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<configuration/>", line: 1, msg: `unsupported encoding "UTF-16" (fix: save the file as UTF-8`},
		{name: "UTF-16LE with a byte order mark", in: utf16LE("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<configuration/>\n"), line: 1,
			msg: "the file is UTF-16 (it starts with a UTF-16 byte order mark); only UTF-8, ISO-8859-1 and US-ASCII are read (fix: save the file as UTF-8"},
		{name: "UTF-16BE with a byte order mark", in: "\xfe\xff\x00<\x00c\x00/\x00>", line: 1, msg: "the file is UTF-16"},
		{name: "include without fallback", in: xmlHead + "<configuration xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n<xi:include href=\"other.xml\"/>\n</configuration>", line: 3, msg: "Fetch fail on include for 'other.xml' with no fallback"},
		{name: "too deep", in: xmlHead + "<configuration>" + strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100) + "</configuration>", line: 2,
			msg: "element nesting: limit of 64 exceeded (<a> is nested 65 deep) (fix: flatten the file"},
		{name: "two roots", in: "<configuration/>\n<configuration/>", line: 2, msg: "malformed XML"},
		{name: "property name given twice", in: xmlHead + "<configuration>\n<property name=\"yarn.resource-types\" name=\"x\" value=\"yarn.io/gpu\"/>\n</configuration>", line: 3,
			msg: "malformed XML: attribute name given twice in <property>"},
		{name: "attribute given twice among many", in: xmlHead + "<configuration>\n<a " + manyAttrs(40) + " x7=\"again\"/>\n</configuration>", line: 3,
			msg: "attribute x7 given twice in <a>"},
		{name: "namespaced attribute given twice", in: xmlHead + "<configuration xmlns:a=\"u\" xmlns:b=\"u\">\n<property a:n=\"1\" b:n=\"2\"/>\n</configuration>", line: 3,
			msg: "attribute u:n given twice"},
	})
}

// manyAttrs returns n attributes x0="0" x1="1" ...
func manyAttrs(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("x%d=\"%d\"", i, i)
	}
	return strings.Join(parts, " ")
}

// utf16LE encodes ASCII s as UTF-16LE with a byte order mark, as Windows editors save "Unicode".
func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return string(b)
}

func TestCutAtRune(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"ab€", 3, "ab…"},   // € is 3 bytes: not cut inside it
		{"ab€d", 5, "ab€…"}, // exactly after it
		{"€", 1, "…"},
		{"", 0, ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, cutAtRune(tc.s, tc.n), "%q, %d", tc.s, tc.n)
	}
}

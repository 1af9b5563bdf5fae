package conf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ParseHadoopXML parses one Hadoop configuration file the way Hadoop's Configuration does and
// returns its properties in file order, raw (no ${var} expansion), each with name:line of its
// <property> element:
//
//   - <property> holds <name> (trimmed), <value> (kept raw, whitespace included), <final> (final only
//     when the text is exactly "true", as Hadoop compares it), and optionally <source>, <tag> and
//     <description>, which are ignored; the short form <property name="…" value="…" final="true"/>
//     is read too;
//   - a property without <name> is skipped; one without a value, or with an empty <value></value>,
//     is not a setting in Hadoop and is left out (LoadHadoop still honours its <final>);
//   - elements are matched by local name, as Hadoop's StAX parser does, so <xi:include> and
//     <include> are the same; ParseHadoopXML reads no other file, so an include is replaced by its
//     <xi:fallback> content when it has one and is otherwise an error (LoadHadoop follows includes);
//   - malformed XML, or an encoding other than UTF-8, ISO-8859-1 or US-ASCII, is an *Error naming
//     name:line.
func ParseHadoopXML(name string, data []byte) ([]Property, error) {
	res, err := parseHadoopXML(name, data, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Property, 0, len(res.props))
	for _, p := range res.props {
		if p.hasValue {
			out = append(out, p.Property)
		}
	}
	return out, nil
}

// xmlProp is a parsed property; hasValue is false when Hadoop would not set it (no or empty
// <value>), which still matters for <final>.
type xmlProp struct {
	Property
	hasValue bool
}

type xmlResult struct {
	props []xmlProp
	// warnings are the file's warnings when it was parsed on its own (ParseHadoopXML); a load collects
	// them in its shared list instead.
	warnings []Warning
}

// includeFunc resolves an <xi:include href="…"> found at from. found=false means the target does not
// exist (an <xi:fallback> may then apply); an error stops loading.
type includeFunc func(href string, from Source) (res xmlResult, found bool, err error)

// xmlParser holds the state of one file's parse, mirroring Hadoop's Configuration.Parser.
type xmlParser struct {
	name    string
	dec     *xml.Decoder
	include includeFunc
	res     xmlResult
	warns   *warnList
	budget  *budget // nil: no property budget (a single file parsed on its own)
	lim     Limits  // the limits with their defaults: the budget's, or the defaults

	depth    int
	rootSeen bool

	inProp   bool
	propLine int
	pName    *string
	pValue   *string
	pFinal   bool
	finalRaw string
	field    string // child element of <property> whose text is being collected
	text     strings.Builder

	inInclude       bool
	includeHref     string
	includeLine     int
	fallbackAllowed bool
	fallbackEntered bool
}

func parseHadoopXML(name string, data []byte, include includeFunc) (xmlResult, error) {
	warns := newWarnList(0)
	res, err := parseHadoopXMLIn(name, data, include, warns, nil)
	res.warnings = warns.warnings()
	return res, err
}

// parseHadoopXMLIn parses one file of a load: warnings go to warns, properties count against b.
func parseHadoopXMLIn(name string, data []byte, include includeFunc, warns *warnList, b *budget) (xmlResult, error) {
	p := &xmlParser{name: name, include: include, warns: warns, budget: b, lim: Limits{}.withDefaults()}
	if b != nil {
		p.lim = b.lim
	}
	// a UTF-8 byte order mark is allowed (Hadoop's parser skips it); encoding/xml would see text
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return xmlResult{}, &Error{Source: Source{File: name, Line: 1}, Err: errors.New("the file is UTF-16 (it starts with a UTF-16 byte order mark); only UTF-8, ISO-8859-1 and US-ASCII are read"),
			Fix: encodingFix}
	}
	// encoding/xml builds a start tag's attributes before returning it: refuse a hostile one first
	if f := scanXMLTags(data, p.lim.MaxXMLAttributes, p.lim.MaxXMLTagBytes); f != nil {
		line := 1 + bytes.Count(data[:f.Offset], []byte{'\n'})
		return xmlResult{}, limitError(p.lim, Source{File: name, Line: line}, f.What, f.Limit, f.Detail, f.Fix)
	}
	p.dec = xml.NewDecoder(bytes.NewReader(data))
	p.dec.CharsetReader = charsetReader
	for {
		line, _ := p.dec.InputPos()
		tok, err := p.dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return xmlResult{}, p.syntaxError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := p.start(t, line); err != nil {
				return xmlResult{}, err
			}
		case xml.EndElement:
			if err := p.end(t); err != nil {
				return xmlResult{}, err
			}
		case xml.CharData:
			if p.field != "" {
				p.text.Write(t)
			} else if p.depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return xmlResult{}, p.errorAt(line, "text outside the root element", "remove the stray text; a Hadoop configuration file is one <configuration> element")
			}
		}
	}
	if !p.rootSeen {
		return xmlResult{}, p.errorAt(0, "no root element", "write the properties inside <configuration>…</configuration>")
	}
	return p.res, nil
}

// warn records a warning; warnings with the same format in one file fold into the first.
func (p *xmlParser) warn(line int, format string, args ...any) {
	p.warns.addf(format, "", Source{File: p.name, Line: line}, format, args...)
}

// addProps counts n properties against the load's budget.
func (p *xmlParser) addProps(line, n int) error {
	if p.budget == nil {
		return nil
	}
	return p.budget.addProps(Source{File: p.name, Line: line}, n)
}

func (p *xmlParser) errorAt(line int, msg, fix string) error {
	return &Error{Source: Source{File: p.name, Line: line}, Err: errors.New(msg), Fix: fix}
}

func (p *xmlParser) syntaxError(err error) error {
	var se *xml.SyntaxError
	line := 0
	msg := err.Error()
	if errors.As(err, &se) {
		line, msg = se.Line, se.Msg
	} else {
		line, _ = p.dec.InputPos()
	}
	fix := "repair the XML there (close every element, escape '&' as &amp; and '<' as &lt;), then check it with xmllint --noout"
	if errors.Is(err, errEncoding) {
		fix = encodingFix
	}
	return &Error{
		Source: Source{File: p.name, Line: line},
		Err:    fmt.Errorf("malformed XML: %s", msg),
		Fix:    fix,
	}
}

// encodingFix is how to repair a file in an encoding that is not read.
const encodingFix = "save the file as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8), with encoding=\"UTF-8\" or no encoding in its <?xml ...?> declaration"

// errEncoding is the error of charsetReader for an encoding it does not read.
var errEncoding = errors.New("unsupported encoding")

func attr(t xml.StartElement, local string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func (p *xmlParser) start(t xml.StartElement, line int) error {
	p.depth++
	if p.depth > p.lim.MaxXMLDepth {
		return limitError(p.lim, Source{File: p.name, Line: line}, "element nesting", int64(p.lim.MaxXMLDepth),
			fmt.Sprintf("<%s> is nested %d deep", shortened(xmlName(t.Name)), p.depth),
			"flatten the file: <configuration><property><name/><value/></property></configuration>")
	}
	if a, dup := duplicateAttr(t.Attr); dup {
		return p.errorAt(line, fmt.Sprintf("malformed XML: attribute %s given twice in <%s>", xmlName(a), xmlName(t.Name)),
			"keep one of the two; Hadoop's XML parser refuses the whole file (\"Duplicate attribute\")")
	}
	if p.depth == 1 {
		if p.rootSeen {
			return p.errorAt(line, "malformed XML: more than one root element", "keep a single <configuration> element and put every <property> inside it")
		}
		p.rootSeen = true
		if t.Name.Local != "configuration" {
			p.warn(line, "root element is <%s>, not <configuration>; reading its <property> elements anyway (fix: rename it <configuration>)", t.Name.Local)
		}
	}
	if p.field != "" {
		// markup inside <name>/<value>: keep collecting its text, as the text of the field
		return nil
	}
	switch t.Name.Local {
	case "property":
		if p.inProp {
			p.warn(line, "<property> inside <property>; Hadoop starts a new property here (fix: close the outer </property> first)")
		}
		p.inProp, p.propLine = true, line
		p.pName, p.pValue, p.pFinal, p.finalRaw = nil, nil, false, ""
		if v, ok := attr(t, "name"); ok {
			n := v
			p.pName = &n
		}
		if v, ok := attr(t, "value"); ok {
			val := v
			p.pValue = &val
		}
		if v, ok := attr(t, "final"); ok {
			p.pFinal, p.finalRaw = v == "true", v
		}
	case "name", "value", "final", "source", "tag":
		if p.inProp {
			p.field = t.Name.Local
			p.text.Reset()
		}
	case "include":
		href, ok := attr(t, "href")
		if !ok {
			p.warn(line, "<%s> without href ignored (fix: add href=\"file.xml\" or remove it)", xmlName(t.Name))
			return nil
		}
		p.inInclude, p.includeHref, p.includeLine = true, href, line
		p.fallbackAllowed, p.fallbackEntered = false, false
		if p.include == nil {
			p.fallbackAllowed = true
			return nil
		}
		res, found, err := p.include(href, Source{File: p.name, Line: line})
		if err != nil {
			return err
		}
		if !found {
			p.fallbackAllowed = true
			return nil
		}
		if err := p.addProps(line, len(res.props)); err != nil {
			return err
		}
		p.res.props = append(p.res.props, res.props...)
	case "fallback":
		p.fallbackEntered = true
	}
	return nil
}

func (p *xmlParser) end(t xml.EndElement) error {
	p.depth--
	if p.field != "" {
		if t.Name.Local != p.field {
			return nil // end of markup nested inside the field
		}
		txt := p.text.String()
		switch p.field {
		case "name":
			if txt != "" {
				n := strings.TrimSpace(txt)
				p.pName = &n
			}
		case "value":
			if txt != "" {
				v := txt
				p.pValue = &v
			}
		case "final":
			p.pFinal, p.finalRaw = txt == "true", txt
		}
		p.field = ""
		return nil
	}
	switch t.Name.Local {
	case "property":
		if p.inProp {
			if err := p.endProperty(); err != nil {
				return err
			}
		}
		p.inProp = false
	case "include":
		if p.inInclude && p.fallbackAllowed && !p.fallbackEntered {
			fix := "create the included file, fix its href (relative hrefs are resolved against this file's directory), or add an <xi:fallback/>"
			if p.include == nil {
				fix = "load the whole directory with LoadHadoop, which follows includes, or add an <xi:fallback/>"
			}
			return &Error{
				Source: Source{File: p.name, Line: p.includeLine},
				Err:    fmt.Errorf("Fetch fail on include for '%s' with no fallback", p.includeHref),
				Fix:    fix,
			}
		}
		p.inInclude, p.fallbackAllowed, p.fallbackEntered = false, false, false
	}
	return nil
}

func (p *xmlParser) endProperty() error {
	if p.fallbackEntered && !p.fallbackAllowed {
		return nil // fallback of an include that worked
	}
	if p.pName == nil {
		p.warn(p.propLine, "<property> without <name> ignored (fix: add <name>…</name> or remove the property)")
		return nil
	}
	if *p.pName == "" {
		p.warn(p.propLine, "<property> with an empty <name> ignored (fix: name the property or remove it)")
		return nil
	}
	if !p.pFinal && p.finalRaw != "" && strings.EqualFold(strings.TrimSpace(p.finalRaw), "true") {
		p.warn(p.propLine, "%s: <final> is %q, which Hadoop does not read as true (fix: write <final>true</final>)", *p.pName, p.finalRaw)
	}
	prop := xmlProp{Property: Property{Name: *p.pName, Final: p.pFinal, Source: Source{File: p.name, Line: p.propLine}}}
	if p.pValue != nil {
		prop.Raw, prop.Value, prop.hasValue = *p.pValue, *p.pValue, true
	} else {
		p.warn(p.propLine, "%s has no value; Hadoop ignores it (fix: add <value>…</value> or remove the property)", *p.pName)
	}
	if err := p.addProps(p.propLine, 1); err != nil {
		return err
	}
	p.res.props = append(p.res.props, prop)
	return nil
}

// duplicateAttr returns the first attribute name given twice, which XML does not allow but
// encoding/xml accepts (attr would then read the first, silently).
func duplicateAttr(attrs []xml.Attr) (xml.Name, bool) {
	if len(attrs) <= 16 {
		for i := range attrs {
			for j := range i {
				if attrs[i].Name == attrs[j].Name {
					return attrs[i].Name, true
				}
			}
		}
		return xml.Name{}, false
	}
	seen := make(map[xml.Name]bool, len(attrs))
	for _, a := range attrs {
		if seen[a.Name] {
			return a.Name, true
		}
		seen[a.Name] = true
	}
	return xml.Name{}, false
}

func xmlName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	if n.Space == "http://www.w3.org/2001/XInclude" {
		return "xi:" + n.Local
	}
	return n.Space + ":" + n.Local
}

// shortened cuts s to its first 64 bytes (at a rune boundary) for a message.
func shortened(s string) string { return cutAtRune(s, 64) }

// cutAtRune returns s when it has at most n bytes, else its first n bytes or fewer, ending at a
// rune boundary, and "…".
func cutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// charsetReader accepts the encodings Hadoop files are written in besides UTF-8.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii":
		data, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, 0, len(data))
		for _, b := range data {
			buf = utf8.AppendRune(buf, rune(b))
		}
		return bytes.NewReader(buf), nil
	}
	return nil, fmt.Errorf("%w %q", errEncoding, label)
}

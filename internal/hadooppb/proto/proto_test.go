package proto_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

func TestMarshalUnmarshal(t *testing.T) {
	in := &commonpb.RpcSaslProto{
		State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: []byte("t"),
		Auths: []*commonpb.RpcSaslProto_SaslAuth{{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5")}},
	}
	b, err := proto.Marshal(in)
	require.NoError(t, err)
	out := &commonpb.RpcSaslProto{Version: proto.Uint32(7), Auths: []*commonpb.RpcSaslProto_SaslAuth{{Method: proto.String("stale")}}}
	require.NoError(t, proto.Unmarshal(b, out))
	assert.True(t, in.EqualVT(out), "Unmarshal replaces what the message held: %v", out)
	assert.Nil(t, out.Version)
}

func TestRequiredFields(t *testing.T) {
	_, err := proto.Marshal(&commonpb.RpcSaslProto{}) // state is required
	assert.ErrorContains(t, err, "required field state not set")
	err = proto.Unmarshal(nil, &commonpb.RpcSaslProto{})
	assert.ErrorContains(t, err, "required field state not set")
}

func TestCloneOfIsDeep(t *testing.T) {
	in := &commonpb.RpcSaslProto_SaslAuth{Method: proto.String("TOKEN"), Challenge: []byte("abc")}
	c := proto.CloneOf(in)
	*c.Method = "SIMPLE"
	c.Challenge[0] = 'x'
	assert.Equal(t, "TOKEN", in.GetMethod())
	assert.Equal(t, "abc", string(in.GetChallenge()))
	assert.Nil(t, proto.CloneOf[*commonpb.RpcSaslProto_SaslAuth](nil))
}

func TestName(t *testing.T) {
	assert.Equal(t, "RpcRequestHeaderProto", proto.Name(&commonpb.RpcRequestHeaderProto{}))
	assert.Equal(t, "SerializedExceptionProto", proto.Name(&yarnpb.SerializedExceptionProto{}))
}

func TestPointerHelpers(t *testing.T) {
	assert.Equal(t, "s", *proto.String("s"))
	assert.True(t, *proto.Bool(true))
	assert.Equal(t, int32(-1), *proto.Int32(-1))
	assert.Equal(t, int64(1<<40), *proto.Int64(1 << 40))
	assert.Equal(t, uint32(1<<31), *proto.Uint32(1 << 31))
	assert.Equal(t, uint64(1<<63), *proto.Uint64(1 << 63))
	assert.Equal(t, float32(0.5), *proto.Float32(0.5))
}

// Hadoop's SerializedExceptionProto nests its cause (field 4) in itself. A peer that nests it
// millions deep must get neither a stack overflow (which no recover catches) nor a slow decode:
// the subset leaves the cause out, so it is skipped as an unknown field.
func TestDeeplyNestedCauseIsSkipped(t *testing.T) {
	const depth = 3_000_000
	inner := protowire.AppendTag(nil, 3, protowire.BytesType)
	inner = protowire.AppendString(inner, "java.io.IOException")
	// lengths[i] is the length of level i's body; level depth-1 is innermost.
	lengths := make([]int, depth)
	lengths[depth-1] = len(inner)
	for i := depth - 2; i >= 0; i-- {
		l := lengths[i+1]
		lengths[i] = 1 + protowire.SizeVarint(uint64(l)) + l
	}
	b := make([]byte, 0, 16+lengths[0])
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "outer")
	for i := 1; i < depth; i++ {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(lengths[i]))
	}
	b = append(b, inner...)
	t.Logf("%d levels in %d bytes", depth, len(b))

	var m yarnpb.SerializedExceptionProto
	require.NoError(t, proto.Unmarshal(b, &m))
	assert.Equal(t, "outer", m.GetMessage())
	assert.Empty(t, m.GetClassName(), "the inner exception's class is not decoded")
}

// The generated decoder recurses once per nested message and has no depth limit, so no message
// of the subset may contain itself, directly or through others (see TestDeeplyNestedCauseIsSkipped).
func TestNoRecursiveMessages(t *testing.T) {
	fields := map[string][]string{} // message type → message types of its fields
	files, err := filepath.Glob("../*pb/*.pb.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		pkg := af.Name.Name
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				name := pkg + "." + ts.Name.Name
				fields[name] = []string{}
				for _, fl := range st.Fields.List {
					if ref := messageRef(pkg, fl.Type); ref != "" {
						fields[name] = append(fields[name], ref)
					}
				}
			}
		}
	}
	require.Contains(t, fields, "yarnpb.AllocateResponseProto", "the parse found the messages")
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, start := range names {
		seen := map[string]bool{}
		var walk func(n string, path []string)
		walk = func(n string, path []string) {
			for _, next := range fields[n] {
				if next == start {
					t.Errorf("recursive message: %s", strings.Join(append(path, next), " → "))
					continue
				}
				if !seen[next] {
					seen[next] = true
					walk(next, append(path, next))
				}
			}
		}
		walk(start, []string{start})
	}
}

// messageRef names the struct type a field holds (*T or []*T, possibly from another pb package).
func messageRef(pkg string, e ast.Expr) string {
	if at, ok := e.(*ast.ArrayType); ok {
		e = at.Elt
	}
	se, ok := e.(*ast.StarExpr)
	if !ok {
		return ""
	}
	switch x := se.X.(type) {
	case *ast.Ident:
		return pkg + "." + x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && strings.HasSuffix(id.Name, "pb") {
			return id.Name + "." + x.Sel.Name
		}
	}
	return ""
}

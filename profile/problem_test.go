package profile

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

func TestProblemAsError(t *testing.T) {
	p := Problem{Code: CodeAmountInvalid, Severity: SeverityError, Source: conf.Source{File: "f.yaml", Line: 3},
		Key: "external-resource.gpu.amount", Message: "bad", Fix: "fix it"}
	assert.Equal(t, "f.yaml:3: external-resource.gpu.amount: bad (fix: fix it)", p.String())
	err := p.Err()
	var ce *conf.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, p.Source, ce.Source)
	assert.Equal(t, CodeAmountInvalid, ProblemCode(err))
	assert.Equal(t, "", ProblemCode(errors.New("plain")))

	// A -D source already names the key.
	p.Source = conf.Source{Flag: "-D external-resource.gpu.amount"}
	assert.Equal(t, "-D external-resource.gpu.amount: bad (fix: fix it)", p.String())

	joined := joinErrors([]Problem{p, {Code: CodeNoDriverFactory, Severity: SeverityWarning, Message: "w"}, {Code: CodeCPUInvalid, Severity: SeverityError, Message: "e2"}})
	require.Error(t, joined)
	assert.Contains(t, joined.Error(), "bad")
	assert.Contains(t, joined.Error(), "e2")
	assert.NotContains(t, joined.Error(), "w\n")
	assert.Nil(t, joinErrors([]Problem{{Severity: SeverityWarning}}))
	assert.Len(t, Errors([]Problem{p, {Severity: SeverityWarning}}), 1)
	assert.Len(t, Warnings([]Problem{p, {Severity: SeverityWarning}}), 1)
}

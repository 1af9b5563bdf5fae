package yarn

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestDecodeRemoteError(t *testing.T) {
	all := []error{ErrNotFound, ErrForbidden, ErrRESTSubmissionDisabled, ErrUnauthorized, ErrBadRequest, ErrMethodNotAllowed, ErrServer}
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		exception   string
		javaClass   string
		message     string
		is          []error
	}{
		{"captured 404", 404, "application/json", string(loadCapture(t, "error-404-app.json").body),
			"NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException", "app with id: application_1_0001 not found", []error{ErrNotFound}},
		{"captured REST disabled (text in a JSON content type)", 403, "application/json", string(loadCapture(t, "error-403-submit-disabled.json").body),
			"", "", "App submission via REST is disabled.", []error{ErrForbidden, ErrRESTSubmissionDisabled}},
		{"captured Jetty JSON 401", 401, "application/json", string(loadCapture(t, "error-401-anonymous.txt").body),
			"", "", "Authentication required", []error{ErrUnauthorized}},
		{"authorization exception", 401, "application/json",
			`{"RemoteException":{"exception":"AuthorizationException","message":"Unable to obtain user name, user not authenticated","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`,
			"AuthorizationException", "org.apache.hadoop.security.authorize.AuthorizationException", "Unable to obtain user name, user not authenticated", []error{ErrUnauthorized}},
		{"static user forbidden", 403, "application/json",
			`{"RemoteException":{"exception":"ForbiddenException","message":"The default static user cannot carry out this operation.","javaClassName":"org.apache.hadoop.yarn.webapp.ForbiddenException"}}`,
			"ForbiddenException", "org.apache.hadoop.yarn.webapp.ForbiddenException", "The default static user cannot carry out this operation.", []error{ErrForbidden}},
		{"exception name from the class", 400, "application/json",
			`{"RemoteException":{"message":"Could not parse application id x","javaClassName":"org.apache.hadoop.yarn.webapp.BadRequestException"}}`,
			"BadRequestException", "org.apache.hadoop.yarn.webapp.BadRequestException", "Could not parse application id x", []error{ErrBadRequest}},
		{"html pre", 500, "text/html", `<html><body><h2>HTTP ERROR 500</h2><pre>java.lang.NullPointerException &amp; more</pre></body></html>`,
			"", "", "java.lang.NullPointerException & more", []error{ErrServer}},
		{"405", 405, "", "", "", "", "", []error{ErrMethodNotAllowed}},
		{"broken JSON", 502, "application/json", `{"RemoteException":`, "", "", `{"RemoteException":`, []error{ErrServer}},
		{"long text", 503, "text/plain", strings.Repeat("x", 3000), "", "", strings.Repeat("x", 1000) + "…", []error{ErrServer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := DecodeRemoteError(tc.status, tc.contentType, []byte(tc.body))
			require.NotNil(t, e)
			assert.Equal(t, tc.status, e.StatusCode)
			assert.Equal(t, tc.exception, e.Exception)
			assert.Equal(t, tc.javaClass, e.Class)
			assert.Equal(t, tc.message, e.Message)
			for _, s := range all {
				want := false
				for _, w := range tc.is {
					want = want || w == s
				}
				assert.Equal(t, want, errors.Is(e, s), "errors.Is(%v)", s)
			}
		})
	}
	e := &records.RemoteError{StatusCode: 404, Method: "GET", URL: "http://rm/x", Exception: "NotFoundException", Message: "gone"}
	assert.Equal(t, "GET http://rm/x: 404 Not Found: NotFoundException: gone", e.Error())
	assert.Equal(t, "400 Bad Request", (&records.RemoteError{StatusCode: 400}).Error())

	re := &RequestError{Method: "GET", URL: "http://rm/x", Err: &timeoutError{err: errors.New("deadline")}}
	assert.ErrorIs(t, re, ErrTimeout)
	assert.Contains(t, re.Error(), "timed out")
}

func TestIsAuthError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&records.RemoteError{StatusCode: 401}, true},
		{&records.RemoteError{StatusCode: 403}, true},
		{&records.RemoteError{StatusCode: 200, Exception: "AuthenticationException"}, true},
		{fmt.Errorf("login: %w", ErrAuthentication), true},
		{&records.RemoteError{StatusCode: 404}, false},
		{fmt.Errorf("%w: all standby", ErrNoActiveRM), false},
	} {
		assert.Equal(t, tc.want, IsAuthError(tc.err), "%v", tc.err)
	}
}

package shared

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn"
)

// fakeLister answers Apps with apps (or err), in that order, and records the queries.
type fakeLister struct {
	apps    []string
	err     error
	queries []yarn.AppsQuery
}

func (f *fakeLister) Apps(_ context.Context, q yarn.AppsQuery) ([]yarn.App, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return nil, f.err
	}
	out := make([]yarn.App, len(f.apps))
	for i, id := range f.apps {
		out[i] = yarn.App{ID: id}
	}
	return out, nil
}

func ids(apps []yarn.App) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.ID
	}
	return out
}

func TestListApps(t *testing.T) {
	rmOrder := []string{"application_1700000000000_0002", "application_1700000000000_10000",
		"application_1600000000000_20000", "application_1700000000000_9999", "application_1800000000000_0001"}
	newest := []string{"application_1800000000000_0001", "application_1700000000000_10000",
		"application_1700000000000_9999", "application_1700000000000_0002", "application_1600000000000_20000"}
	for _, tc := range []struct {
		name  string
		limit int
		want  []string
	}{
		{"all, newest first", 0, newest},
		{"the newest one", 1, newest[:1]},
		{"the newest three", 3, newest[:3]},
		{"a limit above the count", 9, newest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLister{apps: rmOrder}
			q := yarn.AppsQuery{States: []string{"RUNNING"}, Queue: "q", User: "u", ApplicationTypes: []string{"YARN-ER"}, Limit: 2}
			got, err := ListApps(context.Background(), f, q, tc.limit)
			require.NoError(t, err)
			assert.Equal(t, tc.want, ids(got))
			require.Len(t, f.queries, 1)
			want := q
			want.Limit = 0
			assert.Equal(t, want, f.queries[0], "the filters go to the RM, its limit does not")
		})
	}
}

func TestListAppsError(t *testing.T) {
	boom := errors.New("RM down")
	_, err := ListApps(context.Background(), &fakeLister{err: boom}, yarn.AppsQuery{}, 1)
	assert.ErrorIs(t, err, boom)
}

func TestCompareAppIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"application_1_9999", "application_1_10000", -1},
		{"application_2_1", "application_1_10000", 1},
		{"application_1_0001", "application_1_1", 0},
		{"application_1_1", "application_1_1", 0},
		{"bogus", "application_1_1", -1},
		{"application_x_1", "application_1_1", -1},
		{"a", "b", -1},
	} {
		assert.Equal(t, tc.want, CompareAppIDs(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		assert.Equal(t, -tc.want, CompareAppIDs(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
	}
}

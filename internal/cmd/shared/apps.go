package shared

import (
	"context"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/yarn"
)

// AppLister is the part of the ResourceManager client that lists applications.
type AppLister interface {
	Apps(ctx context.Context, q yarn.AppsQuery) ([]yarn.App, error)
}

// ListApps is the one application query of `app list` and `cluster apps`: the applications that
// match q's filters, newest first (by application id: cluster timestamp, then sequence number),
// at most limit of them (0: all). The limit is applied here, after sorting: the
// ResourceManager's own (q.Limit, which is ignored) keeps whichever applications it happens to
// list first, not the newest.
func ListApps(ctx context.Context, c AppLister, q yarn.AppsQuery, limit int) ([]yarn.App, error) {
	q.Limit = 0
	apps, err := c.Apps(ctx, q)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(apps, func(x, y yarn.App) int { return CompareAppIDs(y.ID, x.ID) })
	if limit > 0 && len(apps) > limit {
		apps = apps[:limit]
	}
	return apps, nil
}

// CompareAppIDs orders application ids application_<cluster timestamp>_<sequence> by cluster
// timestamp, then sequence, both as numbers (_9999 before _10000). Ids of another form sort
// before every well-formed one, among themselves as strings.
func CompareAppIDs(a, b string) int {
	ia, errA := records.ParseApplicationID(a)
	ib, errB := records.ParseApplicationID(b)
	switch {
	case errA == nil && errB == nil:
		return ia.Compare(ib)
	case errA == nil:
		return 1
	case errB == nil:
		return -1
	}
	return strings.Compare(a, b)
}

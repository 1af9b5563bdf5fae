package shared

import (
	"context"
	"slices"

	"github.com/yarn-er/yarn-er/view"
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

// CompareAppIDs orders application ids newest last: view.CompareAppIDs.
func CompareAppIDs(a, b string) int { return view.CompareAppIDs(a, b) }

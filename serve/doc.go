// Package serve is `yarn-er serve` as a library: one watch of the ResourceManager (Watcher) shared
// by every client, and the HTTP handler (NewHandler) that answers from it: the JSON API under
// /api/v1 (the view types the CLI's -o json prints), Prometheus metrics at /metrics, the GPU map at
// /, /healthz and /readyz.
//
// The RM is polled on an interval by one goroutine whatever the number of clients; every answer
// carries the age of its data (the Age and X-Yarner-Data-Time headers). The package never prints:
// it logs through the *slog.Logger it is given.
package serve

// Package serve is `yarn-er serve`: the adapter as a long-running service. One watch of the
// ResourceManager shared by every client, the JSON API of the CLI's -o json views, Prometheus
// metrics, and the GPU map page (package serve does the work; this package wires it to the flags,
// the listener and the signals).
package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/serve"
)

// Options are serve's flags.
type Options struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// Listen is --listen: the address to serve on.
	Listen string
	// Interval is --interval, MaxBackoff --max-backoff.
	Interval   time.Duration
	MaxBackoff time.Duration
	// TokenFile is --token-file: a file holding the bearer token clients must send.
	TokenFile string
	// TLSCert and TLSKey are --listen-tls-cert and --listen-tls-key: serve HTTPS.
	TLSCert, TLSKey string
	// MaxBody is --max-body: the largest POST body, in bytes.
	MaxBody int64
	// Drain is --drain-timeout: how long SIGTERM waits for requests in flight.
	Drain time.Duration
	// MemoryLimit is --memory-limit: the Go runtime's soft memory limit (GOMEMLIMIT's syntax);
	// "0" or "off" sets none.
	MemoryLimit string
	// Commands runs translate and preflight in this process for the POST endpoints (root supplies
	// it: this package imports no other command).
	Commands serve.CommandRunner

	// connArgs are the ResourceManager flags given on the command line, passed on to the
	// preflight runs of POST /api/v1/preflight.
	connArgs func() []string
	// ready, when set (tests), is told the address once the listener is up.
	ready func(addr string)
	// memoryLimitSet reports whether --memory-limit was given.
	memoryLimitSet func() bool
}

// NewCmdServe returns `yarn-er serve`; runF (nil: serveRun) runs it. commands runs yarn-er's
// translate and preflight in this process (nil: the POST endpoints answer 501).
func NewCmdServe(f *cmdutil.Factory, runF func(*Options) error, commands serve.CommandRunner) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}, Commands: commands}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the cluster's GPUs continuously: one RM watch, a JSON API, Prometheus metrics and a GPU map",
		Long: `serve watches the ResourceManager (one poll per --interval, whatever the number of clients;
backing off while it fails; following the active RM of an HA pair) and answers over HTTP:

  /api/v1/cluster/{info,nodes,queues,apps}, /api/v1/apps/{id}   the CLI's -o json views, same bytes
  /api/v1/apps/{id}/why                                         why an application waits (app why)
  POST /api/v1/translate, /api/v1/preflight                     the CLI's -o json on a posted Flink configuration
  /metrics                                                      Prometheus metrics per node, rack, partition, queue
  /                                                             the GPU map (self-contained page)
  /healthz, /readyz, /api/v1/openapi.json

Every answer from the watch says how old its data is (Age and X-Yarner-Data-Time headers).
SIGTERM or SIGINT drains the requests in flight (--drain-timeout) and exits 0. The RM connection
takes the same flags as every cluster command (simple, Kerberos, TLS). docs/serve.md has the
details.`,
		Example: `  yarn-er serve --listen 127.0.0.1:8089 --hadoop-conf /etc/hadoop/conf
  yarn-er serve --listen :8443 --token-file /etc/yarn-er/token --listen-tls-cert cert.pem --listen-tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, serveRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	opts.Conn.LongRunning = true
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:8089", "address to serve HTTP on, host:port")
	fl.DurationVar(&opts.Interval, "interval", 5*time.Second, "time between two polls of the ResourceManager")
	fl.DurationVar(&opts.MaxBackoff, "max-backoff", time.Minute, "longest wait between polls while the ResourceManager fails (the wait doubles from --interval)")
	fl.StringVar(&opts.TokenFile, "token-file", "", "file holding a bearer token every API and metrics request must send (Authorization: Bearer ...)")
	fl.StringVar(&opts.TLSCert, "listen-tls-cert", "", "PEM certificate to serve HTTPS with (--tls-cert is the RM client's certificate)")
	fl.StringVar(&opts.TLSKey, "listen-tls-key", "", "PEM key of --listen-tls-cert")
	fl.Int64Var(&opts.MaxBody, "max-body", 1<<20, "largest POST body in bytes")
	fl.DurationVar(&opts.Drain, "drain-timeout", 4*time.Second, "on SIGTERM, how long to wait for requests in flight")
	fl.StringVar(&opts.MemoryLimit, "memory-limit", defaultMemoryLimit, "soft limit of the Go runtime's memory (GOMEMLIMIT's syntax: 40MiB, 1GiB, bytes): "+
		"the garbage collector works harder near it instead of letting the heap grow; 0 or off for none. Without this flag, GOMEMLIMIT in the environment wins")
	opts.memoryLimitSet = func() bool { return cmd.Flags().Changed("memory-limit") }
	for _, n := range []string{"token-file", "listen-tls-cert", "listen-tls-key"} {
		_ = cmd.MarkFlagFilename(n)
	}
	opts.connArgs = func() []string { return changedConnFlags(cmd.Flags()) }
	return cmd
}

// connFlagNames are the RM connection flags a preflight run inherits from serve (--rm and
// --hadoop-conf are set per run).
var connFlagNames = []string{"user", "do-as", "auth", "principal", "keytab", "krb5-ccache", "krb5-conf", "spnego-principal",
	"tls-ca", "tls-cert", "tls-key", "insecure-skip-tls-verify", "rm-timeout", "rm-failover-timeout", "hadoop-conf"}

// changedConnFlags returns the connection flags set on serve's command line as --name=value.
func changedConnFlags(fs *pflag.FlagSet) []string {
	var out []string
	for _, n := range connFlagNames {
		if fl := fs.Lookup(n); fl != nil && fl.Changed {
			out = append(out, "--"+n+"="+fl.Value.String())
		}
	}
	return out
}

func serveRun(opts *Options) error {
	if opts.Interval <= 0 {
		return cmdutil.Usagef("--interval %v: want a positive duration, e.g. 5s", opts.Interval)
	}
	if opts.MaxBody <= 0 {
		return cmdutil.Usagef("--max-body %d: want a positive number of bytes", opts.MaxBody)
	}
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return cmdutil.Usagef("--listen-tls-cert and --listen-tls-key go together")
	}
	limit, err := parseMemoryLimit(opts.MemoryLimit)
	if err != nil {
		return cmdutil.Usagef("--memory-limit %q: %v", opts.MemoryLimit, err)
	}
	afterPoll := debug.FreeOSMemory
	if _, inEnv := os.LookupEnv("GOMEMLIMIT"); !inEnv || (opts.memoryLimitSet != nil && opts.memoryLimitSet()) {
		prev := debug.SetMemoryLimit(limit)
		defer debug.SetMemoryLimit(prev)
		afterPoll = func() {
			debug.FreeOSMemory()
			debug.SetMemoryLimit(limitFor(limit, liveHeap()))
		}
	}
	token, err := readToken(opts.TokenFile)
	if err != nil {
		return err
	}
	var tlsConf *tls.Config
	if opts.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return cmdutil.Usagef("--listen-tls-cert %s / --listen-tls-key %s: %v", opts.TLSCert, opts.TLSKey, err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	client, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	log := opts.F.Logger().With("component", "serve")
	w, err := serve.NewWatcher(serve.WatchOptions{Client: client, Interval: opts.Interval, MaxBackoff: opts.MaxBackoff,
		PollTimeout: max(opts.Conn.RM.Timeout, opts.Interval), Logger: log,
		// The previous snapshot and the decoding of the new one are garbage now: hand the memory
		// back, so that serve's resident size follows what it keeps, not its peak (a full
		// collection per poll: some 10-50 ms at 50,000 nodes).
		// The limit follows what serve keeps (limitFor).
		AfterPoll: afterPoll})
	if err != nil {
		return err
	}
	var commands serve.CommandRunner
	if opts.Commands != nil {
		extra := opts.connArgs()
		if opts.F.ConfigFile != "" {
			extra = append(extra, "--config="+opts.F.ConfigFile)
		}
		commands = func(ctx context.Context, args []string) serve.CommandResult {
			return opts.Commands(ctx, withServeFlags(args, extra))
		}
	}
	h, err := serve.NewHandler(serve.Options{Watcher: w, Details: client, EncodeJSON: cmdutil.WriteJSON, Token: token,
		Commands: commands, MaxBodyBytes: opts.MaxBody, Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return cmdutil.Usagef("--listen %s: %v", opts.Listen, err)
	}
	// serve ends on SIGTERM or SIGINT by itself: draining, then exit 0.
	give := cmdutil.TakeSignals(opts.Ctx)
	defer give()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 3 * time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, TLSConfig: tlsConf,
		ErrorLog: nil}
	ctx, cancel := context.WithCancel(context.WithoutCancel(opts.Ctx))
	defer cancel()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		_ = w.Run(ctx)
	}()
	serveErr := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			serveErr <- srv.ServeTLS(ln, "", "")
		} else {
			serveErr <- srv.Serve(ln)
		}
	}()
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	log.Info("serving", "address", scheme+"://"+ln.Addr().String(), "rm", strings.Join(client.Addresses(), ","), "interval", opts.Interval)
	fmt.Fprintf(opts.F.IO.ErrOut, "yarn-er serve: listening on %s://%s\n", scheme, ln.Addr())
	if opts.ready != nil {
		opts.ready(ln.Addr().String())
	}
	select {
	case err := <-serveErr:
		cancel()
		<-watchDone
		return fmt.Errorf("serve %s: %w", opts.Listen, err)
	case <-opts.Ctx.Done():
	}
	log.Info("draining", "timeout", opts.Drain)
	dctx, dcancel := context.WithTimeout(context.Background(), opts.Drain)
	defer dcancel()
	err = srv.Shutdown(dctx)
	cancel()
	<-watchDone
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("drain: %w", err)
	}
	fmt.Fprintln(opts.F.IO.ErrOut, "yarn-er serve: stopped")
	return nil
}

// withServeFlags adds serve's own flags to a translate or preflight run: --config, and
// --hadoop-conf unless the request posted its own Hadoop files; for preflight also the
// ResourceManager connection flags (its --rm is serve's RM, set by package serve).
func withServeFlags(args, extra []string) []string {
	posted := false
	for _, a := range args {
		posted = posted || strings.HasPrefix(a, "--hadoop-conf=")
	}
	preflight := len(args) > 0 && args[0] == "preflight"
	out := append([]string(nil), args...)
	for _, e := range extra {
		switch {
		case strings.HasPrefix(e, "--hadoop-conf="):
			if posted {
				continue
			}
		case strings.HasPrefix(e, "--config="):
		case !preflight:
			continue
		}
		out = append(out, e)
	}
	return out
}

// readToken reads the bearer token of --token-file: the file's first line, trimmed. The file must
// not be readable by others.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", cmdutil.Usagef("--token-file: %v", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", cmdutil.Usagef("--token-file %s: readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", cmdutil.Usagef("--token-file: %v", err)
	}
	if len(b) > 4096 {
		return "", cmdutil.Usagef("--token-file %s: longer than 4096 bytes: want one line holding the token", path)
	}
	tok := strings.TrimSpace(string(bytes.SplitN(b, []byte("\n"), 2)[0]))
	if tok == "" {
		return "", cmdutil.Usagef("--token-file %s: empty: want one line holding the token", path)
	}
	return tok, nil
}

// defaultMemoryLimit is --memory-limit's default: about four times what serve keeps at 50,000
// nodes (11 MB, docs/benchmarks.md), room for a poll's new snapshot beside the old one and for
// its garbage; serve raises it when it keeps more (limitFor).
const defaultMemoryLimit = "40MiB"

// parseMemoryLimit parses a size as GOMEMLIMIT does: a number of bytes with an optional unit
// (B, KiB, MiB, GiB, TiB); "0" and "off" are no limit (math.MaxInt64).
func parseMemoryLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return math.MaxInt64, nil
	}
	num := strings.TrimRight(s, "BKMGTi")
	unit := s[len(num):]
	mult := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unit %q: want B, KiB, MiB, GiB or TiB, e.g. 40MiB", unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a number of bytes with an optional unit, e.g. 40MiB, or off")
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("larger than %d bytes", int64(math.MaxInt64))
	}
	if n*mult < 8<<20 {
		return 0, fmt.Errorf("%d bytes is less than the 8MiB the process needs to run; use off for no limit", n*mult)
	}
	return n * mult, nil
}

// limitFor is the memory limit while serve keeps live bytes of heap: the configured limit, or,
// when serve keeps more than that allows a poll to work in (a cluster much larger than 50,000
// nodes), twice what it keeps and 16 MiB, so that the collector does not run all the time.
func limitFor(configured, live int64) int64 {
	floor := 2*live + 16<<20
	if live <= 0 || floor < 0 || configured >= floor {
		return configured
	}
	return floor
}

// liveHeap is the heap the last collection found live (runtime/metrics), 0 when unknown.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64/4))
}

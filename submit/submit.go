// Package submit launches any program on YARN with its GPUs and FPGAs through yarn-er's own Go
// ApplicationMaster, and follows it: the client side of `yarn-er submit` and `yarn-er app`.
//
// A submission goes, in this order, through
//
//  1. the request's own checks and its container vector (Request.Container);
//  2. the live preflight of that vector (package preflight: declared types, calculator, maximum
//     allocation, a node that fits, capacity for N, the RM's caps of the AM attempts and the
//     priority) — a *PreflightError unless Request.Force; its warnings come as steps, with their fix;
//  3. the scheduler addresses from the Hadoop configuration (conf.HadoopConfig.RMSchedulerAddresses);
//  4. POST new-application, and the vector against its maximum-resource-capability;
//  5. staging on HDFS (package stage): the yarn-er binary, the user's files, then the job spec
//     (package jobspec) naming all of them;
//  6. POST /ws/v1/cluster/apps of the AM container `./yarn-er am`, application type YARN-ER.
//
// Nothing is staged before step 5, and a failure in 5 or 6 removes the staging directory: a
// submission that fails leaves nothing on HDFS. Once the application runs, its AM removes the
// staging directory when it ends; Cleanup removes one that an application left behind (an AM that
// never started).
//
// Follow polls the application until it ends; Outcome maps its final status to nil (SUCCEEDED),
// or an *AppError matching ErrAppFailed or ErrAppKilled.
//
// The package never imports the AM side (amrm, am): the job spec is the only contract.
package submit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
)

// Sentinel errors.
var (
	// ErrPreflight matches *PreflightError.
	ErrPreflight = errors.New("preflight found problems")
	// ErrAppFailed: the application ended with final status FAILED.
	ErrAppFailed = errors.New("application failed")
	// ErrAppKilled: the application was killed.
	ErrAppKilled = errors.New("application killed")
)

// PreflightError is a submission the live preflight refused; nothing was submitted or staged.
type PreflightError struct {
	// Report is the preflight's report (its failed checks say what to fix).
	Report *preflight.Report
	// Role is the role whose container was checked; Named says the job has roles.
	Role  string
	Named bool
}

func (e *PreflightError) Error() string {
	who := ""
	if e.Named {
		who = "role " + e.Role + ": "
	}
	return who + e.Report.Verdict() + " (nothing was submitted; fix the failures, or pass --force to submit anyway)"
}

// Is makes errors.Is(err, ErrPreflight) true.
func (e *PreflightError) Is(target error) bool { return target == ErrPreflight }

// AppError is an application that did not succeed.
type AppError struct {
	App *yarn.App
}

func (e *AppError) Error() string {
	msg := fmt.Sprintf("application %s ended %s/%s", e.App.ID, e.App.State, e.App.FinalStatus)
	if d := strings.TrimSpace(e.App.Diagnostics); d != "" {
		msg += ": " + d
	}
	return msg
}

// Is matches ErrAppKilled for KILLED, ErrAppFailed otherwise.
func (e *AppError) Is(target error) bool {
	killed := e.App.FinalStatus == records.FinalKilled || e.App.State == records.AppKilled
	return (target == ErrAppKilled && killed) || (target == ErrAppFailed && !killed)
}

// Outcome maps an ended application to nil when it SUCCEEDED, else an *AppError (ErrAppKilled
// for KILLED, ErrAppFailed for FAILED and any other final status).
func Outcome(app *yarn.App) error {
	if app.FinalStatus == records.FinalSucceeded {
		return nil
	}
	return &AppError{App: app}
}

// Options configure a Client.
type Options struct {
	// YARN is the ResourceManager client. Required.
	YARN *yarn.Client
	// Hadoop is the client's Hadoop configuration: scheduler addresses, fs.defaultFS and resource
	// types. Required to submit.
	Hadoop *conf.HadoopConfig
	// Stage configures the HDFS client; HadoopConf and User default to Hadoop and the YARN
	// client's user. With hadoop.security.authentication = kerberos, staging authenticates with
	// a Kerberos login and the submission carries an HDFS delegation token (renewer
	// yarn.resourcemanager.principal) in the AM's credentials. The login is Stage.Kerberos when
	// set, else the YARN client's, else one made from Login (hdfsLogin decides, once).
	Stage stage.Options
	// Login is the Kerberos login for HDFS when neither Stage.Kerberos nor the YARN client has
	// one (a Kerberized HDFS behind a ResourceManager whose REST API is not Kerberized).
	Login kerberos.Options
	// Getenv reads the environment for Login (KRB5_CONFIG, KRB5CCNAME); default os.Getenv.
	Getenv func(string) string
	// PollPeriod is how often Follow, Kill and Logs ask the RM (default 1s).
	PollPeriod time.Duration
	// RecoveryWait is how long Follow waits for the ResourceManager to know an application
	// again that it knew before: a restarting RM, or one taking over after a failover, serves
	// its REST API before it has recovered the applications from its state store (default
	// DefaultRecoveryWait).
	RecoveryWait time.Duration
	// AggregationWait bounds how long Logs waits for the log aggregation of an ended
	// application (default 2m).
	AggregationWait time.Duration
	// LogFS, when set, opens the file system of the aggregated logs instead of the HDFS of
	// Stage (tests).
	LogFS func(ctx context.Context) (LogFS, error)
	// Executable returns the yarn-er binary to ship when the request names none (default
	// os.Executable).
	Executable func() (string, error)
	// Logger receives debug records. Default: discard.
	Logger *slog.Logger
}

// Client submits and follows yarn-er applications.
type Client struct {
	opts Options
	log  *slog.Logger

	loginOnce sync.Once
	loginErr  error // why there is no Kerberos login for a Kerberized HDFS
}

// New returns a Client.
func New(opts Options) (*Client, error) {
	if opts.YARN == nil {
		return nil, errors.New("submit: no ResourceManager client")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollPeriod <= 0 {
		opts.PollPeriod = time.Second
	}
	if opts.RecoveryWait <= 0 {
		opts.RecoveryWait = DefaultRecoveryWait
	}
	if opts.Executable == nil {
		opts.Executable = os.Executable
	}
	if opts.Stage.HadoopConf == nil {
		opts.Stage.HadoopConf = opts.Hadoop
	}
	if opts.Stage.User == "" {
		opts.Stage.User = opts.YARN.User()
	}
	if opts.Stage.TLS == nil {
		// WebHDFS under dfs.http.policy=HTTPS_ONLY trusts what the ResourceManager's client
		// trusts (--tls-ca, --tls-cert/--tls-key, --insecure-skip-tls-verify).
		opts.Stage.TLS = opts.YARN.TLSConfig()
	}
	if opts.Stage.DoAs == "" {
		// --do-as: the RM's ?doAs= and HDFS's proxy user are the same.
		opts.Stage.DoAs = opts.YARN.DoAs()
	}
	if opts.Stage.Logger == nil {
		opts.Stage.Logger = opts.Logger
	}
	return &Client{opts: opts, log: opts.Logger.With("component", "submit")}, nil
}

// Phase is a step of a submission, reported to the Submit callback.
type Phase string

// Phases, in order.
const (
	PhasePreflight      Phase = "preflight"
	PhaseNewApplication Phase = "new-application"
	PhaseStaging        Phase = "staging"
	PhaseSubmitting     Phase = "submitting"
	PhaseSubmitted      Phase = "submitted"
)

// Step is what Submit reports while it works.
type Step struct {
	Phase Phase
	// AppID is known from PhaseStaging on.
	AppID string
	// Message is a one-line description.
	Message string
	// Upload is the staging progress (PhaseStaging only, nil on its first report).
	Upload *stage.Progress
}

// Submission is a submitted application.
type Submission struct {
	AppID string
	// StagingDir is the staging directory's URL.
	StagingDir string
	// Spec is the job spec the AM runs.
	Spec *jobspec.Spec
	// Preflight is the preflight report (nil with Force).
	Preflight *preflight.Report
	// Staged is the total size of what was staged, in bytes.
	Staged int64
	// StageTime is how long staging took.
	StageTime time.Duration
	// AMBinary is the small ApplicationMaster binary staged for the AM container; "" when the
	// yarn-er binary runs the AM.
	AMBinary string
}

// Submit submits req; see the package documentation for the steps. step (may be nil) is called
// as the submission goes.
func (c *Client) Submit(ctx context.Context, req Request, step func(Step)) (*Submission, error) {
	if step == nil {
		step = func(Step) {}
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	if req.Containers == 0 {
		req.Containers = 1
	}
	if req.MaxAttempts == 0 {
		req.MaxAttempts = DefaultMaxAttempts
	}
	var types *profile.ResourceTypes
	if c.opts.Hadoop != nil {
		types, _ = profile.LoadResourceTypes(c.opts.Hadoop)
	}
	profiles, err := req.Profiles(c.opts.Hadoop, types)
	if err != nil {
		return nil, err
	}
	plan, err := req.Plan(types, profiles)
	if err != nil {
		return nil, err
	}
	vec := plan.Roles[0].Resource
	binary := req.Binary
	if binary == "" {
		if binary, err = c.opts.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find this yarn-er executable to ship: %w (give --yarn-er-binary)", err)
		}
	}
	binItem, err := binaryItem(binary)
	if err != nil {
		return nil, err
	}
	ship, err := c.keytabToShip(req)
	if err != nil {
		return nil, err
	}
	if plan.docker() {
		if interp := DynamicInterpreter(binary); interp != "" {
			step(Step{Phase: PhasePreflight, Message: fmt.Sprintf("warning: the yarn-er binary to ship (%s) is dynamically linked (%s): a Docker image without a compatible C library cannot run yarn-er exec; ship the static build with --yarn-er-binary (docs/install.md)", binary, interp)})
		}
	}
	amBin, skipped, err := amBinary(binary, req.AMBinary)
	if err != nil {
		return nil, err
	}
	if ship != nil && amBin != "" {
		// The small AM binary carries no Kerberos library.
		amBin, skipped = "", "--ship-keytab: the ApplicationMaster logs in with Kerberos, which only the yarn-er binary can"
	}
	if skipped != "" {
		c.log.Info("the ApplicationMaster runs as yarn-er am", "why", skipped)
	}
	for _, it := range append(append([]stage.Item(nil), req.Files...), req.Archives...) {
		if fi, err := os.Stat(it.Local); err != nil || !fi.Mode().IsRegular() {
			return nil, badRequest("--file/--archive", "%s: %v", it.Local, orNotRegular(err))
		}
	}
	sched, err := schedulerAddresses(c.opts.Hadoop)
	if err != nil {
		return nil, fmt.Errorf("the ApplicationMaster would not find the ResourceManager: %w", err)
	}

	out := &Submission{}
	if !req.Force {
		for _, pr := range plan.Roles {
			if err := c.preflight(ctx, req, pr, len(plan.Roles) > 1 || len(req.Roles) > 0, out, step); err != nil {
				return nil, err
			}
		}
	}

	// Kerberos settings first: a missing login or principal must not use up an application id.
	renewer, err := c.tokenRenewer()
	if err != nil {
		return nil, err
	}
	var sc *stage.Client
	if c.opts.Stage.DoAs != "" {
		// A proxy user's rights on HDFS are checked (stage.Dial asks the NameNode as that user)
		// before an application id is used.
		if sc, err = stage.Dial(ctx, c.stageOptions()); err != nil {
			return nil, err
		}
		defer sc.Close()
	}

	step(Step{Phase: PhaseNewApplication, Message: "asking the ResourceManager for an application id"})
	na, err := c.opts.YARN.NewApplication(ctx)
	if err != nil {
		return nil, c.submitError("new application", err)
	}
	out.AppID = na.ID
	if !req.Force {
		for _, pr := range plan.Roles {
			if err := fitsMaximum(pr.Resource, na.MaximumResourceCapability); err != nil {
				if len(req.Roles) > 0 {
					return nil, fmt.Errorf("role %s: %w", pr.Name, err)
				}
				return nil, err
			}
		}
		// The AM's container too: the RM checks it only once everything is staged.
		if err := amFitsMaximum(amResource(req), na.MaximumResourceCapability); err != nil {
			return nil, err
		}
	}

	// The RM first (REST submission disabled, a refused user), then HDFS: an unreachable
	// NameNode uses up the application id, but nothing is submitted or staged.
	if sc == nil {
		if sc, err = stage.Dial(ctx, c.stageOptions()); err != nil {
			return nil, err
		}
		defer sc.Close()
	}
	items := []stage.Item{binItem}
	if amBin != "" {
		items = append(items, stage.Item{Local: amBin, Name: AMBinaryName, Type: records.LocalFile})
	}
	items = append(items, req.Files...)
	items = append(items, req.Archives...)
	items = append(items, ship.items()...)
	step(Step{Phase: PhaseStaging, AppID: na.ID, Message: "staging to " + sc.URL(sc.BaseDir()+"/"+na.ID)})
	start := time.Now()
	dir, files, err := sc.Stage(ctx, na.ID, items, func(p stage.Progress) {
		step(Step{Phase: PhaseStaging, AppID: na.ID, Upload: &p})
	})
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			if err := dir.Remove(context.WithoutCancel(ctx)); err != nil {
				c.log.Warn("could not remove the staging directory", "dir", dir.URL, "err", err)
			}
		}
	}()
	// The keytab and krb5.conf go to the AM's container alone, never to the ranks'.
	var amSecrets []jobspec.LocalFile
	if n := len(ship.items()); n > 0 {
		files, amSecrets = files[:len(files)-n], files[len(files)-n:]
	}
	var amFile *jobspec.LocalFile
	if amBin != "" {
		amFile, files = &files[1], append(files[:1:1], files[2:]...)
		out.AMBinary = amBin
	}
	spec := &jobspec.Spec{
		Version: jobspec.Version, Name: req.appName(), User: sc.User(), SchedulerAddresses: sched,
		Containers: req.Containers, Restarts: req.Restarts, Priority: containerPriority, NodeLabel: req.NodeLabel,
		Resource: quantities(vec), Devices: devices(vec), Command: req.Command, Env: req.Env,
		Binary: files[0], Files: files[1:], StagingDir: dir.URL, StagingNameNodes: sc.NameserviceNameNodes(), KeepStaging: req.KeepStaging,
		HeartbeatMillis: req.HeartbeatMillis, MaxAttempts: int(req.MaxAttempts),
		AttemptFailuresValidityMillis: attemptFailuresValidity(req.AttemptFailuresValidity),
	}
	spec.Profile = req.Profile
	spec.Docker = plan.Roles[0].Docker
	if roles := plan.specRoles(&req); roles != nil {
		spec.Docker = nil // each role has its own
		spec.Roles, spec.Containers, spec.Restarts = roles, plan.Total, 0
		spec.Resource, spec.Devices, spec.Command = nil, nil, nil
	}
	if req.GangTimeout > 0 {
		spec.GangTimeoutMillis = req.GangTimeout.Milliseconds()
	}
	spec.GangTimeoutAction = req.GangTimeoutAction
	spec.Tokens = ship.refresh()
	data, err := spec.Marshal()
	if err != nil {
		// What the request's own checks cannot know before staging (the spec's size); the
		// staging directory is removed.
		return nil, badRequest("", "%v", err)
	}
	specFile, err := dir.Put(ctx, jobspec.FileName, data)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		out.Staged += f.Size
	}
	if amFile != nil {
		out.Staged += amFile.Size
	}
	out.Staged += specFile.Size
	out.StageTime = time.Since(start)

	amc := amContext(req, na.ID, spec, specFile, amFile)
	for _, f := range amSecrets {
		amc.AMContainerSpec.LocalResources[f.Name] = f.Resource()
		out.Staged += f.Size
	}
	if renewer != "" {
		tok, err := sc.DelegationToken(ctx, renewer)
		if err != nil {
			return nil, err
		}
		defer func() {
			if !ok {
				if err := sc.CancelDelegationToken(context.WithoutCancel(ctx), tok); err != nil {
					c.log.Warn("could not cancel the HDFS delegation token", "token", tok, "err", err)
				}
			}
		}()
		addToken(&amc, tok)
		c.log.Debug("the ApplicationMaster gets an HDFS delegation token", "token", tok, "renewer", renewer)
	}

	step(Step{Phase: PhaseSubmitting, AppID: na.ID, Message: "submitting the ApplicationMaster"})
	if err := c.opts.YARN.SubmitApplication(ctx, amc); err != nil {
		// The answer may be lost while the RM has the application (retries exhausted during a
		// failover, say): then it runs, and its staging and token must stay.
		if a, gerr := c.opts.YARN.App(ctx, na.ID); gerr == nil && a != nil && a.ID == na.ID {
			c.log.Warn("the submission's answer was lost, but the ResourceManager has the application", "app", na.ID, "error", err)
		} else {
			return nil, c.submitError("submission of "+na.ID, err)
		}
	}
	if err := c.checkAppUser(ctx, na.ID); err != nil {
		return nil, err
	}
	ok = true
	out.StagingDir, out.Spec = dir.URL, spec
	step(Step{Phase: PhaseSubmitted, AppID: na.ID, Message: "submitted " + na.ID})
	return out, nil
}

// preflightPlacement is the role's spread or pack and racks for the preflight's
// cluster.placement (nil: none, or a role with placement nodes, which the ApplicationMaster
// places itself whatever the ResourceManager allows).
func preflightPlacement(pl *jobspec.Placement) *preflight.Placement {
	switch {
	case pl == nil || len(pl.Nodes) > 0:
		return nil
	case pl.Spread != "":
		return &preflight.Placement{Kind: "spread", Fallback: pl.Fallback, Racks: pl.Racks}
	case pl.Pack != "":
		return &preflight.Placement{Kind: "pack", Fallback: pl.Fallback, Racks: pl.Racks}
	case len(pl.Racks) > 0:
		return &preflight.Placement{Fallback: pl.Fallback, Racks: pl.Racks}
	}
	return nil
}

// preflight runs the live preflight of one role's container (all of them for a job without
// roles); named says to name the role in the warnings and the error.
func (c *Client) preflight(ctx context.Context, req Request, pr PlannedRole, named bool, out *Submission, step func(Step)) error {
	vec := pr.Resource
	who := ""
	if named {
		who = "role " + pr.Name + ": "
	}
	step(Step{Phase: PhasePreflight, Message: who + "checking the cluster for " + vec.String()})
	rep, err := preflight.Run(ctx, preflight.Input{
		Container: &vec, ContainerName: "container", Hadoop: c.opts.Hadoop, Client: c.opts.YARN,
		Containers: pr.Containers, Queue: req.Queue, NodeLabel: req.NodeLabel, MaxAttempts: req.MaxAttempts, Priority: req.Priority,
		// A gang needs all its containers at once; other ranks may run in turns (9 ranks on 8
		// GPUs), which the capacity check only warns of.
		RequireCapacity: pr.GangName != "",
		Placement:       preflightPlacement(pr.Placement),
		Docker:          preflightDocker(pr.Docker),
		Logger:          c.opts.Logger.With("component", "preflight"),
	})
	if err != nil {
		return err
	}
	out.Preflight = rep
	if authErr := rep.AuthError(); authErr != nil {
		if err := c.proxyRefusal(authErr); err != nil {
			return err
		}
		return fmt.Errorf("the ResourceManager refused user %q: %w", c.opts.YARN.User(), authErr)
	}
	if !rep.OK {
		if pr.GangName != "" {
			// A gang larger than the cluster could ever hold is a mistake of the job, not of the
			// cluster: refused as bad input, naming the role.
			for _, ch := range rep.Checks {
				if ch.ID == preflight.IDCapacity && ch.Status == preflight.StatusFail && strings.Contains(ch.Message, "even an empty cluster holds only") {
					return badRequest(pr.field("count"), "gang %s: %s (fix: %s)", pr.GangName, ch.Message, ch.Fix)
				}
			}
		}
		return &PreflightError{Report: rep, Role: pr.Name, Named: named}
	}
	for _, ch := range rep.Checks {
		if ch.Status == preflight.StatusWarn {
			msg := "preflight warning: " + who + ch.ID + ": " + ch.Message
			if ch.Fix != "" {
				msg += " (fix: " + ch.Fix + ")"
			}
			step(Step{Phase: PhasePreflight, Message: msg})
		}
	}
	return nil
}

// addToken puts a token into the AM container's credentials under its service, the alias
// Hadoop's clients use (Credentials.addToken(service, token)).
func addToken(amc *yarn.ApplicationSubmissionContext, tok records.Token) {
	if amc.AMContainerSpec.Credentials == nil {
		amc.AMContainerSpec.Credentials = records.NewCredentials()
	}
	amc.AMContainerSpec.Credentials.AddToken(tok.Service, tok)
}

// binaryItem is the yarn-er binary to stage as jobspec.BinaryName. Not stage.ParseItem: its
// LOCAL#NAME syntax would cut a path with a '#', and its advice is about --file and --archive.
func binaryItem(binary string) (stage.Item, error) {
	fi, err := os.Stat(binary)
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(binary, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	}
	if err != nil {
		return stage.Item{}, badRequest("--yarn-er-binary", "%s: %v: give the yarn-er executable to ship to the containers", binary, err)
	}
	return stage.Item{Local: binary, Name: jobspec.BinaryName, Type: records.LocalFile}, nil
}

func orNotRegular(err error) error {
	if err != nil {
		return err
	}
	return errors.New("not a regular file")
}

// submitError adds what to fix to the RM's refusals.
func (c *Client) submitError(what string, err error) error {
	if perr := c.proxyRefusal(err); perr != nil {
		return fmt.Errorf("%s: %w", what, perr)
	}
	switch {
	case errors.Is(err, yarn.ErrRESTSubmissionDisabled):
		return fmt.Errorf("%s: %w (fix: set yarn.webapp.enable-rest-app-submissions=true in the ResourceManager's yarn-site.xml and restart it)", what, err)
	case errors.Is(err, yarn.ErrMethodNotAllowed):
		return fmt.Errorf("%s: %w (fix: the RM allows only some HTTP methods: add POST and PUT to yarn.resourcemanager.webapp.methods-allowed)", what, err)
	case yarn.IsAuthError(err):
		return fmt.Errorf("%s: the ResourceManager refused the user: %w (fix: submit as a user the cluster accepts: --user, or a Kerberos ticket)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// fitsMaximum checks the vector against new-application's maximum-resource-capability, which is
// what the RM checks container requests against.
func fitsMaximum(v records.Resources, maxCap records.Resources) error {
	if maxCap.Len() == 0 {
		return nil
	}
	var known []string
	for _, e := range maxCap.All() {
		known = append(known, e.Name)
	}
	slices.Sort(known)
	for _, res := range v.All() {
		limit, ok := maxCap.Quantity(res.Name)
		if !ok {
			return badRequest("", "the ResourceManager does not know resource type %q (it knows %s): it would drop it from the requests; ask for a known type or declare it in yarn.resource-types on the cluster",
				res.Name, strings.Join(known, ", "))
		}
		asked := res.Quantity()
		if cmp, err := asked.Cmp(limit); err == nil && cmp > 0 {
			return badRequest("", "each container asks for %s of %s, above the ResourceManager's maximum allocation %s: ask for less, or use NodeManagers with more",
				asked, res.Name, limit)
		}
	}
	return nil
}

// amFitsMaximum checks the ApplicationMaster's container (--am-memory, --am-vcores) against
// new-application's maximum-resource-capability, as the RM does at POST /apps ("Requested more
// memory than configured max").
func amFitsMaximum(am records.Resources, maxCap records.Resources) error {
	for _, c := range []struct{ name, flag string }{{records.MemoryMB, "--am-memory"}, {records.VCores, "--am-vcores"}} {
		limit, ok := maxCap.Quantity(c.name)
		if !ok {
			continue
		}
		asked, _ := am.Quantity(c.name)
		if cmp, err := asked.Cmp(limit); err == nil && cmp > 0 {
			return badRequest(c.flag, "the ApplicationMaster's container asks for %s of %s, above the ResourceManager's maximum allocation %s: ask for less",
				asked, c.name, limit)
		}
	}
	return nil
}

// amResource is the ApplicationMaster's container: --am-memory and --am-vcores, or their defaults.
func amResource(req Request) records.Resources {
	mem, vc := req.AMMemoryMB, req.AMVCores
	if mem == 0 {
		mem = DefaultAMMemoryMB
	}
	if vc == 0 {
		vc = DefaultAMVCores
	}
	return records.NewResources(mem, int64(vc))
}

// AMCommand is the command the AM container runs with the yarn-er binary; AMBinaryCommand with
// the small ApplicationMaster binary.
const (
	AMCommand       = "./" + jobspec.BinaryName + " am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"
	AMBinaryCommand = "./" + AMBinaryName + " am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"
)

// amContext is the REST submission of the AM; amBinary, when set, is the staged small
// ApplicationMaster binary the AM container runs instead of the yarn-er binary.
// attemptFailuresValidity is the attempt-failures-validity-interval of a request's window in ms:
// the default for 0, -1 (every failure counts) for a negative one.
func attemptFailuresValidity(d time.Duration) int64 {
	switch {
	case d == 0:
		return DefaultAttemptFailuresValidity.Milliseconds()
	case d < 0:
		return -1
	}
	return max(d.Milliseconds(), 1)
}

func amContext(req Request, appID string, spec *jobspec.Spec, specFile jobspec.LocalFile, amBinary *jobspec.LocalFile) yarn.ApplicationSubmissionContext {
	// The AM container needs only the binary that runs it and the spec; the containers get
	// the yarn-er binary from the spec.
	resources := map[string]records.LocalResource{jobspec.FileName: specFile.Resource()}
	command := AMCommand
	if amBinary != nil {
		resources[AMBinaryName] = amBinary.Resource()
		command = AMBinaryCommand
	} else {
		resources[jobspec.BinaryName] = spec.Binary.Resource()
	}
	return yarn.ApplicationSubmissionContext{
		ApplicationID: appID, ApplicationName: spec.Name, Queue: req.Queue, Priority: req.Priority,
		ApplicationType: ApplicationType, ApplicationTags: req.Tags, MaxAppAttempts: req.MaxAttempts,
		AttemptFailuresValidityInterval: attemptFailuresValidity(req.AttemptFailuresValidity),
		// A new AM attempt adopts the running ranks (am/ranks.go) instead of starting them again.
		KeepContainersAcrossApplicationAttempts: true,
		Resource:                                amResource(req),
		AMContainerSpec: yarn.ContainerLaunchContext{
			LocalResources: resources,
			Environment:    map[string]string{jobspec.EnvSpecFile: jobspec.FileName},
			Commands:       []string{command},
		},
	}
}

// Cleanup removes the staging directory of an application if it is still on HDFS (its AM
// never ran, or was killed before it could) and reports whether there was one.
func (c *Client) Cleanup(ctx context.Context, appID string) (bool, error) {
	sc, err := stage.Dial(ctx, c.stageOptions())
	if err != nil {
		return false, err
	}
	defer sc.Close()
	d, err := sc.Open(appID)
	if err != nil {
		return false, err
	}
	there, err := d.Exists(ctx)
	if err != nil || !there {
		return false, err
	}
	return true, d.Remove(ctx)
}

// schedulerAddresses returns the host:port of every ResourceManager's scheduler, where the
// ApplicationMaster registers.
func schedulerAddresses(hc *conf.HadoopConfig) ([]string, error) {
	if hc == nil {
		return nil, errors.New("no Hadoop configuration to read yarn.resourcemanager.scheduler.address from (give --hadoop-conf or set HADOOP_CONF_DIR)")
	}
	addrs, err := hc.RMSchedulerAddresses()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.HostPort()
	}
	return out, nil
}

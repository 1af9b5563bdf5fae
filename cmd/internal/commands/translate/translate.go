// Package translate is `yarn-er translate`: the YARN container a Flink TaskManager asks for.
package translate

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/view"
)

// Options are translate's flags.
type Options struct {
	cmdutil.Base
	Flink  cmdutil.FlinkFlags
	Hadoop cmdutil.HadoopFlags
}

// NewCmdTranslate returns `yarn-er translate`; runF (nil: translateRun) runs it.
func NewCmdTranslate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "translate",
		Short: "Show the YARN container a Flink TaskManager asks for",
		Long: `translate reads Flink's configuration the way Flink does and prints the resource vector of one
TaskManager container on YARN: memory-mb (the process size Flink derives from
taskmanager.memory.process.size, .flink.size or task heap + managed memory), vcores
(taskmanager.cpu.cores, else yarn.containers.vcores, else taskmanager.numberOfTaskSlots) and one
entry per external resource (external-resource.<name>.amount under its yarn.config-key), followed by
the external resources as Flink enables them and every warning.

Flink ignores many mistakes with a log line (a missing amount, a blank yarn.config-key); translate
shows them as warnings. What Flink would fail on, or would resolve at random (two resources with the
same yarn.config-key), is an error naming the file and line or the -D flag, with exit status 1.

With a Hadoop configuration (--hadoop-conf, $HADOOP_CONF_DIR or $HADOOP_HOME/etc/hadoop), a resource
type that yarn.resource-types does not declare is a warning: the ResourceManager drops unknown types
from requests.`,
		Example: `  yarn-er translate --flink-conf examples/flink-conf.yaml
  yarn-er translate --flink-conf conf/ -D external-resource.gpu.amount=4 -o json
  yarn-er translate --flink-conf conf/config.yaml --hadoop-conf /etc/hadoop/conf`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, translateRun),
	}
	cmdutil.AddFlinkFlags(cmd, &opts.Flink)
	cmdutil.AddHadoopFlags(cmd, &opts.Hadoop)
	return cmd
}

func translateRun(opts *Options) error {
	res, err := load(opts)
	if err != nil {
		// The warnings were meant for the output, which a failed translation does not print; they
		// often say why it failed (a byte order mark hiding the first key), so they go to the log.
		if res != nil {
			for _, w := range res.view.Warnings {
				opts.F.Logger().Warn(w)
			}
		}
		return err
	}
	return opts.F.Render(res.view, func(w io.Writer) error { return writeTable(w, res) })
}

// result is the view plus what only the table shows: where each value came from, the files read.
type result struct {
	view    view.Translate
	origins map[string]profile.Origin
	files   []string
}

// load loads both configurations and translates. When the translation fails after the
// configurations loaded, the result holds the warnings gathered so far beside the error.
func load(opts *Options) (*result, error) {
	f := opts.F
	// The load warnings are part of the output; logging them too would print each twice.
	opts.Flink.WarningsInOutput = true
	opts.Hadoop.WarningsInOutput = true
	fc, err := f.LoadFlink(&opts.Flink)
	if err != nil {
		return nil, err
	}
	hc, err := f.LoadHadoop(&opts.Hadoop)
	if err != nil {
		return nil, err
	}
	out := &result{view: view.Translate{Warnings: []string{}}, files: fc.Files()}
	for _, w := range fc.Warnings() {
		out.view.Warnings = append(out.view.Warnings, w.String())
	}
	var topts profile.TranslateOptions
	if topts.FlinkVersion, err = opts.Flink.FlinkVersion(fc); err != nil {
		return out, err
	}
	if hc != nil {
		out.files = append(out.files, hc.Files()...)
		for _, w := range hc.Warnings() {
			out.view.Warnings = append(out.view.Warnings, w.String())
		}
		types, problems := profile.LoadResourceTypes(hc)
		out.view.Warnings = append(out.view.Warnings, ProblemStrings(problems)...)
		topts.ResourceTypes = types
	}
	tr, err := profile.Translate(fc, topts)
	if err != nil {
		return out, err
	}
	out.view.Resource = tr.Resource
	out.view.ExternalResources = tr.ExternalResources
	out.origins = tr.Origins
	out.view.Sources = view.TranslateSources(tr.Resource, tr.Origins)
	out.view.Memory = tr.Memory
	out.view.RMRequest = tr.RMRequest
	out.view.Warnings = append(out.view.Warnings, ProblemStrings(tr.Problems)...)
	if profiles, err := profile.LoadResourceProfiles(hc, topts.ResourceTypes); err != nil {
		out.view.Warnings = append(out.view.Warnings, "resource profiles: "+err.Error())
	} else if profiles != nil {
		fit := &view.ProfileFit{File: profiles.Path, Profiles: profiles.Names()}
		if name, ok := profiles.Smallest(tr.Resource); ok {
			fit.Name = name
			fit.Resource, _ = profiles.Get(name)
		}
		out.view.Profile = fit
	}
	return out, nil
}

// ProblemStrings renders problems for the warnings list: "source: key: message (fix: ...) [code]",
// with "error: " in front of the errors found in a configuration that does not stop the command.
func ProblemStrings(problems []profile.Problem) []string {
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		s := p.String() + " [" + p.Code + "]"
		if p.Severity == profile.SeverityError {
			s = "error: " + s
		}
		out = append(out, s)
	}
	return out
}

// table writes the human form: the container, the external resources, the warnings. Every name,
// value and message from the configurations is escaped (cmdutil.Printable): they are files that
// others may write (a cluster's Hadoop configuration, a shared Flink conf directory).
func writeTable(w io.Writer, o *result) error {
	ew := &cmdutil.ErrWriter{W: w}
	p := cmdutil.Printable
	if len(o.files) > 0 {
		ew.Printf("Configuration: %s\n\n", p(strings.Join(o.files, ", ")))
	}
	ew.Printf("TaskManager container on YARN: %s\n", p(o.view.Resource.String()))
	if o.view.Resource.Len() > 0 {
		tw := cmdutil.NewTable(ew)
		for _, r := range o.view.Resource.All() {
			origin := o.origins[r.Name]
			from := "default"
			if origin.Key != "" {
				from = origin.Key
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", p(r.Name), r.Value, p(from), p(origin.Source.String()))
		}
		_ = tw.Flush()
	}
	if m := o.view.Memory; m != nil {
		ew.Printf("\nTaskManager memory (Flink %s, from %s): process %s = flink %s + JVM metaspace %s + JVM overhead %s\n",
			m.FlinkVersion, p(m.DerivedFrom), mib(m.TotalProcess), mib(m.TotalFlink), mib(m.JVMMetaspace), mib(m.JVMOverhead))
		ew.Printf("  flink = framework heap %s + task heap %s + managed %s + network %s + framework off-heap %s + task off-heap %s\n",
			mib(m.FrameworkHeap), mib(m.TaskHeap), mib(m.Managed), mib(m.Network), mib(m.FrameworkOffHeap), mib(m.TaskOffHeap))
	}
	if pf := o.view.Profile; pf != nil {
		if pf.Name != "" {
			ew.Printf("\nSmallest resource profile that holds it: %s %s (%s)\n", p(pf.Name), p(pf.Resource.String()), p(pf.File))
		} else {
			ew.Printf("\nNo resource profile holds it (%s: %s)\n", p(pf.File), p(strings.Join(pf.Profiles, ", ")))
		}
	}
	for _, r := range o.view.RMRequest {
		if r.Units != "" {
			ew.Printf("\nThe ResourceManager reads %s = %d (no unit, as Flink sends it) as %d%s.\n", p(r.Name), r.Sent, r.Value, p(r.Units))
		}
	}
	ew.Printf("\nExternal resources:")
	if len(o.view.ExternalResources) == 0 {
		ew.Printf(" none\n")
	} else {
		ew.Printf("\n")
		tw := cmdutil.NewTable(ew)
		fmt.Fprintf(tw, "  NAME\tAMOUNT\tYARN TYPE\tDRIVER FACTORY\tPARAMS\n")
		for _, er := range o.view.ExternalResources {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", p(er.Name), er.Amount, p(cmdutil.OrDash(er.YarnConfigKey)),
				p(cmdutil.OrDash(er.DriverFactoryClass)), p(cmdutil.OrDash(formatParams(er.Params))))
		}
		_ = tw.Flush()
	}
	if len(o.view.Warnings) == 0 {
		ew.Printf("\nNo warnings.\n")
	} else {
		ew.Printf("\nWarnings (%d):\n", len(o.view.Warnings))
		for _, s := range o.view.Warnings {
			ew.Printf("  - %s\n", p(s))
		}
	}
	return ew.Err
}

// mib renders bytes in MiB with up to three decimals ("1372.8m").
func mib(b int64) string {
	s := strconv.FormatFloat(float64(b)/(1<<20), 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "m"
}

// formatParams renders driver parameters as "k=v, k=v" sorted by key.
func formatParams(params map[string]string) string {
	keys := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + params[k]
	}
	return strings.Join(parts, ", ")
}

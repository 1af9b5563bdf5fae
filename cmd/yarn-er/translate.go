package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/profile"
)

// translateOutput is what `yarn-er translate` prints. Its JSON shape is public:
// {"resource": {...}, "externalResources": [...], "warnings": [...]}, plus (additions) "memory", the
// TaskManager's memory as Flink derives it, and "rmRequest", the external resources as the
// ResourceManager reads them (with a Hadoop configuration).
type translateOutput struct {
	Resource          profile.Vector             `json:"resource"`
	ExternalResources []profile.ExternalResource `json:"externalResources"`
	Warnings          []string                   `json:"warnings"`
	Memory            *profile.TaskManagerMemory `json:"memory,omitempty"`
	RMRequest         []profile.RMResource       `json:"rmRequest,omitempty"`

	origins map[string]profile.Origin
	files   []string
}

func newTranslateCmd(a *app) *cobra.Command {
	var (
		flink  flinkFlags
		hadoop hadoopFlags
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := runTranslate(a, &flink, &hadoop)
			if err != nil {
				return err
			}
			return a.render(out, out.table)
		},
	}
	addFlinkFlags(cmd, &flink)
	addHadoopFlags(cmd, &hadoop)
	return cmd
}

// runTranslate loads both configurations and translates.
func runTranslate(a *app, flink *flinkFlags, hadoop *hadoopFlags) (*translateOutput, error) {
	fc, err := flink.load(a)
	if err != nil {
		return nil, err
	}
	hc, err := hadoop.load(a)
	if err != nil {
		return nil, err
	}
	out := &translateOutput{Warnings: []string{}, files: fc.Files()}
	for _, w := range fc.Warnings() {
		out.Warnings = append(out.Warnings, w.String())
	}
	var opts profile.TranslateOptions
	if opts.FlinkVersion, err = flink.flinkVersion(fc); err != nil {
		return nil, err
	}
	if hc != nil {
		out.files = append(out.files, hc.Files()...)
		for _, w := range hc.Warnings() {
			out.Warnings = append(out.Warnings, w.String())
		}
		types, problems := profile.LoadResourceTypes(hc)
		out.Warnings = append(out.Warnings, problemStrings(problems)...)
		opts.ResourceTypes = types
	}
	tr, err := profile.Translate(fc, opts)
	if err != nil {
		return nil, err
	}
	out.Resource = tr.Resource
	out.ExternalResources = tr.ExternalResources
	out.origins = tr.Origins
	out.Memory = tr.Memory
	out.RMRequest = tr.RMRequest
	out.Warnings = append(out.Warnings, problemStrings(tr.Problems)...)
	return out, nil
}

// problemStrings renders problems for the warnings list: "source: key: message (fix: ...) [code]",
// with "error: " in front of the errors found in a configuration that does not stop the command.
func problemStrings(problems []profile.Problem) []string {
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

// table writes the human form: the container, the external resources, the warnings.
func (o *translateOutput) table(w io.Writer) error {
	ew := &errWriter{w: w}
	if len(o.files) > 0 {
		ew.printf("Configuration: %s\n\n", strings.Join(o.files, ", "))
	}
	ew.printf("TaskManager container on YARN: %s\n", o.Resource.String())
	if o.Resource.Len() > 0 {
		tw := newTable(ew)
		for _, r := range o.Resource.Resources() {
			origin := o.origins[r.Name]
			from := "default"
			if origin.Key != "" {
				from = origin.Key
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", r.Name, r.Value, from, origin.Source.String())
		}
		_ = tw.Flush()
	}
	if m := o.Memory; m != nil {
		ew.printf("\nTaskManager memory (Flink %s, from %s): process %s = flink %s + JVM metaspace %s + JVM overhead %s\n",
			m.FlinkVersion, m.DerivedFrom, mib(m.TotalProcess), mib(m.TotalFlink), mib(m.JVMMetaspace), mib(m.JVMOverhead))
		ew.printf("  flink = framework heap %s + task heap %s + managed %s + network %s + framework off-heap %s + task off-heap %s\n",
			mib(m.FrameworkHeap), mib(m.TaskHeap), mib(m.Managed), mib(m.Network), mib(m.FrameworkOffHeap), mib(m.TaskOffHeap))
	}
	for _, r := range o.RMRequest {
		if r.Units != "" {
			ew.printf("\nThe ResourceManager reads %s = %d (no unit, as Flink sends it) as %d%s.\n", r.Name, r.Sent, r.Value, r.Units)
		}
	}
	ew.printf("\nExternal resources:")
	if len(o.ExternalResources) == 0 {
		ew.printf(" none\n")
	} else {
		ew.printf("\n")
		tw := newTable(ew)
		fmt.Fprintf(tw, "  NAME\tAMOUNT\tYARN TYPE\tDRIVER FACTORY\tPARAMS\n")
		for _, er := range o.ExternalResources {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", er.Name, er.Amount, orDash(er.YarnConfigKey),
				orDash(er.DriverFactoryClass), orDash(formatParams(er.Params)))
		}
		_ = tw.Flush()
	}
	if len(o.Warnings) == 0 {
		ew.printf("\nNo warnings.\n")
	} else {
		ew.printf("\nWarnings (%d):\n", len(o.Warnings))
		for _, s := range o.Warnings {
			ew.printf("  - %s\n", s)
		}
	}
	return ew.err
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

// errWriter remembers the first write error so that table code can print without checking each call.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

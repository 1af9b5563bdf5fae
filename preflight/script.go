package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
)

// Flink's GPU driver and its discovery script.
const (
	// GPUDriverFactory is the driver factory of Flink's GPU plugin, which runs a discovery script.
	GPUDriverFactory = "org.apache.flink.externalresource.gpu.GPUDriverFactory"
	// DefaultDiscoveryScript is the script Flink's GPU driver runs when discovery-script.path is
	// not set, relative to $FLINK_HOME.
	DefaultDiscoveryScript = "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"

	paramScriptPath = "discovery-script.path"
	paramScriptArgs = "discovery-script.args"

	// flinkScriptName is the name of Flink's shipped script; flinkCommonScript the file it sources
	// from its own directory.
	flinkScriptName   = "nvidia-gpu-discovery.sh"
	flinkCommonScript = "gpu-discovery-common.sh"
)

// scriptKind tells which program a discovery script is.
type scriptKind int

const (
	kindUnknown scriptKind = iota // not found or not checked
	kindFlink                     // Flink's nvidia-gpu-discovery.sh
	kindYarnEr                    // yarn-er, run as discover through a link or under a discover name
	kindCustom                    // anything else
)

func (k scriptKind) String() string {
	switch k {
	case kindFlink:
		return "Flink's " + flinkScriptName
	case kindYarnEr:
		return "yarn-er discover"
	case kindCustom:
		return "a custom script"
	}
	return "unknown"
}

// scriptUse is one external resource that runs a discovery script.
type scriptUse struct {
	er      profile.ExternalResource
	path    string // as configured (or the default)
	source  string // where the path (or, for the default, the driver factory) is configured
	argsSrc string
	args    string
	hasArgs bool
	kind    scriptKind
}

// discoveryFacts are the discovery scripts of the external resources, inspected once for the
// checks of flink.discovery-script and flink.coordination-args.
type discoveryFacts struct {
	// uses are the resources whose driver is Flink's GPU driver or that configure a script path,
	// each with the program its script was recognised as.
	uses []scriptUse
	// none, when there are no uses, is the reason both checks skip.
	none string
	// script holds flink.discovery-script's entries, found while the scripts were inspected.
	script results
}

// discoveryScripts finds and inspects the discovery scripts on first use.
func (f *facts) discoveryScripts() *discoveryFacts {
	if f.scripts != nil {
		return f.scripts
	}
	d := &discoveryFacts{script: results{id: IDDiscoveryScript}}
	f.scripts = d
	for _, er := range f.tr.ExternalResources {
		prefix := profile.ExternalResourcePrefix + er.Name + "." + profile.SuffixParamPrefix
		pathVal, hasPath := f.in.Flink.Lookup(prefix + paramScriptPath)
		if strings.TrimSpace(er.DriverFactoryClass) != GPUDriverFactory && !hasPath {
			continue
		}
		u := scriptUse{er: er, path: DefaultDiscoveryScript}
		if hasPath {
			u.path, u.source = pathVal.Value, pathVal.Source.String()
		} else if v, ok := f.in.Flink.Lookup(profile.ExternalResourcePrefix + er.Name + "." + profile.SuffixDriverFactoryClass); ok {
			u.source = v.Source.String()
		}
		if v, ok := f.in.Flink.Lookup(prefix + paramScriptArgs); ok {
			u.args, u.hasArgs, u.argsSrc = v.Value, true, v.Source.String()
		}
		d.uses = append(d.uses, u)
	}
	if len(d.uses) == 0 {
		d.none = "no resource uses Flink's GPU driver (" + GPUDriverFactory + ") or sets param." + paramScriptPath
	}
	for i := range d.uses {
		f.checkScript(&d.script, &d.uses[i])
	}
	return d
}

// discoveryScriptCheck reports flink.discovery-script: each resource's discovery script exists
// and is executable.
func (f *facts) discoveryScriptCheck(_ context.Context, out *results) {
	if !f.needsFlink(out) {
		return
	}
	d := f.discoveryScripts()
	if d.none != "" {
		out.skip("%s", d.none)
		return
	}
	out.entries = append(out.entries, d.script.entries...)
}

// coordinationArgsCheck reports flink.coordination-args: the script understands the arguments
// Flink passes it.
func (f *facts) coordinationArgsCheck(_ context.Context, out *results) {
	if !f.needsFlink(out) {
		return
	}
	d := f.discoveryScripts()
	if d.none != "" {
		out.skip("%s", d.none)
		return
	}
	for i := range d.uses {
		f.checkArgs(out, &d.uses[i])
	}
}

// checkScript checks that the script exists, is a regular file (or a link to one) and is
// executable, and recognises which program it is.
func (f *facts) checkScript(out *results, u *scriptUse) {
	name := u.er.Name
	key := profile.ExternalResourcePrefix + name + "." + profile.SuffixParamPrefix + paramScriptPath
	if strings.TrimSpace(u.path) == "" {
		out.fail(u.source, fmt.Sprintf("remove %s to use Flink's default script, or set it to the script's path", key),
			"%s: GPU discovery script ('%s') is not configured: Flink's GPU driver fails and the TaskManager gets no %s information", name, u.path, name)
		return
	}
	shipped := !filepath.IsAbs(u.path)
	full := u.path
	if shipped {
		if f.in.FlinkHome == "" {
			u.kind = kindByName(filepath.Base(u.path), f.in.Discover)
			out.skip("%s: %s is relative to $FLINK_HOME, which is not known (set FLINK_HOME)", name, u.path)
			return
		}
		full = filepath.Join(f.in.FlinkHome, u.path)
	}
	where := full
	if shipped && f.in.FlinkHomeOrigin != "" {
		where = fmt.Sprintf("%s (FLINK_HOME from %s)", full, f.in.FlinkHomeOrigin)
	}
	// An absolute path is looked up on this host; the TaskManagers need it on every NodeManager.
	problem := func(fix, format string, args ...any) {
		if shipped {
			out.fail(u.source, fix, format, args...)
			return
		}
		out.warn(u.source, fix+"; an absolute path must exist on every NodeManager host",
			format+" (checked on this host only)", args...)
	}

	lfi, err := os.Lstat(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			u.kind = kindByName(filepath.Base(full), f.in.Discover)
			problem(fmt.Sprintf("install Flink's GPU plugin (opt/flink-external-resource-gpu-*.jar and its scripts into %s), link yarn-er there (ln -sf $(command -v yarn-er) %s), or set %s",
				filepath.Dir(DefaultDiscoveryScript), DefaultDiscoveryScript, key),
				"%s: the discovery script %s does not exist: Flink's GPU driver fails (FileNotFoundException) and the TaskManager gets no %s information", name, where, name)
			return
		}
		problem("make the script and its directory readable", "%s: cannot read the discovery script %s: %v", name, where, err)
		return
	}
	target := full
	fi := lfi
	if lfi.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(full)
		if err != nil {
			problem("point the link at an existing executable", "%s: the discovery script %s is a broken link: %v", name, where, err)
			return
		}
		target = resolved
		if fi, err = os.Stat(resolved); err != nil {
			problem("point the link at an existing executable", "%s: cannot read %s (the target of %s): %v", name, resolved, where, err)
			return
		}
	}
	if !fi.Mode().IsRegular() {
		problem("point it at an executable file", "%s: the discovery script %s is not a regular file (%s)", name, where, fi.Mode().Type())
		return
	}
	u.kind = f.scriptKind(full, target)
	if u.kind == kindYarnEr && !slices.Contains(f.in.Discover.Names, filepath.Base(full)) && len(f.in.Discover.Names) > 0 {
		problem(fmt.Sprintf("name the link %s (or one of %s) so that yarn-er runs as discover", flinkScriptName, strings.Join(f.in.Discover.Names, ", ")),
			"%s: %s runs yarn-er under the name %q, as which it is the yarn-er command line, not discover: discovery fails and the TaskManager gets no %s information",
			name, where, filepath.Base(full), name)
		return
	}
	if fi.Mode().Perm()&0o111 == 0 {
		problem(fmt.Sprintf("chmod +x %s", target), "%s: The discovery script %s is not executable (mode %s): Flink's GPU driver fails and the TaskManager gets no %s information",
			name, where, fi.Mode().Perm(), name)
		return
	}
	if u.kind == kindFlink {
		if needsCommon(target) {
			common := filepath.Join(filepath.Dir(full), flinkCommonScript)
			if _, err := os.Stat(common); err != nil {
				problem(fmt.Sprintf("copy %s from Flink's plugins/external-resource-gpu/ next to the script", flinkCommonScript),
					"%s: %s sources %s from its own directory, but %s is missing: the script fails", name, where, flinkCommonScript, common)
				return
			}
		}
	}
	desc := u.kind.String()
	if target != full {
		desc += ", a link to " + target
	}
	out.pass(u.source, "%s: %s (%s) is executable", name, where, desc)
}

// kindByName guesses the script's program from its name alone (when the file cannot be read).
func kindByName(base string, d DiscoverCommand) scriptKind {
	switch {
	case base == flinkScriptName:
		return kindFlink
	case slices.Contains(d.Names, base):
		return kindYarnEr
	}
	return kindCustom
}

// scriptKind recognises the program of an existing script: yarn-er when the resolved file is the
// running yarn-er binary or is named yarn-er, Flink's script by its name, else custom.
func (f *facts) scriptKind(full, target string) scriptKind {
	d := f.in.Discover
	if filepath.Base(target) == "yarn-er" {
		return kindYarnEr
	}
	if d.Executable != "" {
		if exe, err := filepath.EvalSymlinks(d.Executable); err == nil {
			if exe == target {
				return kindYarnEr
			}
			a, errA := os.Stat(exe)
			b, errB := os.Stat(target)
			if errA == nil && errB == nil && os.SameFile(a, b) {
				return kindYarnEr
			}
		}
	}
	if filepath.Base(full) == flinkScriptName || filepath.Base(target) == flinkScriptName {
		return kindFlink
	}
	return kindCustom
}

// needsCommon reports whether a script mentions gpu-discovery-common.sh (Flink's sources it).
func needsCommon(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return bytes.Contains(head, []byte(flinkCommonScript))
}

// checkArgs runs flink.coordination-args for one script.
func (f *facts) checkArgs(out *results, u *scriptUse) {
	name := u.er.Name
	key := profile.ExternalResourcePrefix + name + "." + profile.SuffixParamPrefix + paramScriptArgs
	words := SplitScriptArgs(u.args)
	src := u.argsSrc
	if u.kind == kindUnknown {
		u.kind = kindByName(filepath.Base(u.path), f.in.Discover)
	}
	switch u.kind {
	case kindFlink:
		findings := CheckFlinkScriptArgs(words)
		for _, f := range findings {
			out.warn(src, f.Fix, "%s: %s: %s", name, key, f.Message)
		}
		if len(findings) == 0 {
			out.pass(src, "%s: arguments %q understood by Flink's script (%s)", name, u.args, coordinationMode(words))
		}
	case kindYarnEr:
		if f.in.Discover.ValidateArgs == nil {
			out.skip("%s: yarn-er discover's options are not known here", name)
			return
		}
		args := words
		if !u.hasArgs {
			args = []string{"null"} // what Flink passes when discovery-script.args is not set
		}
		if err := f.in.Discover.ValidateArgs(args); err != nil {
			fix := fmt.Sprintf("set %s to options of yarn-er discover (yarn-er discover --help)", key)
			if slices.Contains(words, "--enable-coordination") {
				fix = fmt.Sprintf("write --enable-coordination-mode in %s", key)
			}
			out.fail(src, fix, "%s: %s %q: yarn-er discover refuses them (%v), so discovery fails and the TaskManager gets no %s information",
				name, key, u.args, err, name)
			return
		}
		out.pass(src, "%s: arguments %q understood by yarn-er discover (%s)", name, u.args, coordinationMode(words))
	default:
		if slices.Contains(words, "--enable-coordination") {
			out.warn(src, fmt.Sprintf("write --enable-coordination-mode in %s if your script follows Flink's", key),
				"%s: %s has --enable-coordination, the spelling of Flink's documentation that Flink's script ignores (it wants --enable-coordination-mode)", name, key)
			return
		}
		out.skip("%s: %s is a custom script; its arguments are not known", name, u.path)
	}
}

// coordinationMode says whether script arguments turn coordination on, for the pass messages.
func coordinationMode(words []string) string {
	if slices.Contains(words, optCoordinationMode) {
		return "coordination on"
	}
	return "coordination off"
}

// Options of Flink's nvidia-gpu-discovery.sh.
const (
	optCoordinationMode = "--enable-coordination-mode"
	optCoordinationFile = "--coordination-file"
)

// ArgFinding is one problem with the arguments of a discovery script.
type ArgFinding struct {
	Message string
	Fix     string
}

// SplitScriptArgs splits discovery-script.args the way Flink runs the script (Runtime.exec of one
// string, i.e. Java's StringTokenizer): at spaces, tabs, newlines, carriage returns and form feeds,
// with no quoting.
func SplitScriptArgs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\f':
			return true
		}
		return false
	})
}

// CheckFlinkScriptArgs checks arguments for Flink's nvidia-gpu-discovery.sh, which knows
// --enable-coordination-mode and --coordination-file <path> and silently ignores everything else
// (the literal "null" is what Flink passes when the args are not set).
func CheckFlinkScriptArgs(words []string) []ArgFinding {
	var out []ArgFinding
	hasMode, fileAt := false, -1
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch w {
		case optCoordinationMode:
			hasMode = true
		case optCoordinationFile:
			if i+1 >= len(words) {
				out = append(out, ArgFinding{
					Message: "--coordination-file has no path after it, so the script uses an empty file name",
					Fix:     "write --coordination-file /path/to/file, or remove it to use /var/tmp/flink-gpu-coordination",
				})
				continue
			}
			fileAt = i
			i++
		case "null":
			if len(words) == 1 {
				continue
			}
			fallthrough
		default:
			f := ArgFinding{
				Message: fmt.Sprintf("%q is not an option of Flink's script, which ignores it silently", w),
				Fix:     "remove it; Flink's script knows only --enable-coordination-mode and --coordination-file <path>",
			}
			switch {
			case w == "--enable-coordination" || w == "--enable-coordination=true":
				f.Message = fmt.Sprintf("%q is the spelling of Flink's documentation, which Flink's script ignores: coordination is silently off and TaskManagers on one host may be handed the same GPUs", w)
				f.Fix = "write --enable-coordination-mode"
			case strings.HasPrefix(w, optCoordinationFile+"="):
				f.Message = fmt.Sprintf("%q: the script wants the path as a separate word, so it ignores this and uses /var/tmp/flink-gpu-coordination", w)
				f.Fix = "write --coordination-file " + strings.TrimPrefix(w, optCoordinationFile+"=")
			}
			out = append(out, f)
		}
	}
	if fileAt >= 0 && !hasMode {
		out = append(out, ArgFinding{
			Message: "--coordination-file has no effect without --enable-coordination-mode: coordination is off",
			Fix:     "add --enable-coordination-mode",
		})
	}
	return out
}

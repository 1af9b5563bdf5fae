package preflight

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/profile"
)

const (
	// gpuFactoryEntry is the class file of Flink's GPU driver factory inside its plugin jar.
	gpuFactoryEntry = "org/apache/flink/externalresource/gpu/GPUDriverFactory.class"
	// driverFactoryService is the ServiceLoader file through which Flink's PluginManager finds
	// external resource driver factories.
	driverFactoryService = "META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory"
	// gpuPluginDir is where Flink's distribution keeps the GPU plugin.
	gpuPluginDir = "plugins/external-resource-gpu"
	// maxJarsScanned bounds the jars opened while looking for the plugin.
	maxJarsScanned = 200
)

// pluginJarCheck reports flink.gpu-plugin-jar: for every resource whose driver factory is Flink's
// GPU driver, a jar holding GPUDriverFactory (and its ServiceLoader entry) must be in a
// subdirectory of $FLINK_HOME/plugins/, the only place Flink's PluginManager loads driver
// factories from. Without it the TaskManager logs "Could not find factory class …" and runs
// without GPU information, although YARN gives it the GPUs.
func (f *facts) pluginJarCheck(_ context.Context, out *results) {
	if !f.needsFlink(out) {
		return
	}
	var users []string
	src := ""
	for _, er := range f.tr.ExternalResources {
		if strings.TrimSpace(er.DriverFactoryClass) != GPUDriverFactory {
			continue
		}
		users = append(users, er.Name)
		if src == "" {
			if v, ok := f.in.Flink.Lookup(profile.ExternalResourcePrefix + er.Name + "." + profile.SuffixDriverFactoryClass); ok {
				src = v.Source.String()
			}
		}
	}
	if len(users) == 0 {
		out.skip("no resource uses Flink's GPU driver (%s)", GPUDriverFactory)
		return
	}
	if f.in.FlinkHome == "" {
		out.skip("%s: Flink's plugins/ directory is relative to $FLINK_HOME, which is not known (set FLINK_HOME)", strings.Join(users, ", "))
		return
	}
	names := strings.Join(users, ", ")
	plugins := filepath.Join(f.in.FlinkHome, "plugins")
	found, scanErr := findGPUPlugin(plugins, true)
	if found != "" {
		out.pass(src, "%s: Flink's GPU driver is installed as a plugin (%s)", names, found)
		return
	}
	fix := fmt.Sprintf("put flink-external-resource-gpu-<flink version>.jar (from Flink's opt/ or Maven Central, org.apache.flink:flink-external-resource-gpu) into %s, the directory of the discovery scripts",
		filepath.Join(f.in.FlinkHome, gpuPluginDir))
	why := fmt.Sprintf("the TaskManagers cannot load %s (Flink logs \"Could not find factory class %s\") and run without %s information, although YARN gives them the devices", GPUDriverFactory, GPUDriverFactory, names)
	// A jar in the wrong place: plugins/ itself, lib/ or opt/.
	for _, dir := range []string{plugins, filepath.Join(f.in.FlinkHome, "lib"), filepath.Join(f.in.FlinkHome, "opt")} {
		if misplaced, _ := findGPUPlugin(dir, false); misplaced != "" {
			out.fail(src, fix+" (move it there: Flink loads driver factories only from subdirectories of plugins/)",
				"%s: Flink's GPU driver jar %s is not in a subdirectory of %s: %s", names, misplaced, plugins, why)
			return
		}
	}
	detail := ""
	if scanErr != nil {
		detail = fmt.Sprintf(" (%v)", scanErr)
	}
	out.fail(src, fix, "%s: no jar in a subdirectory of %s holds %s%s: %s", names, plugins, GPUDriverFactory, detail, why)
}

// findGPUPlugin returns the first jar holding Flink's GPU driver factory: in the subdirectories of
// dir when sub is set (how Flink's PluginManager looks), else directly in dir.
func findGPUPlugin(dir string, sub bool) (string, error) {
	var jars []string
	if sub {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			m, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.jar"))
			jars = append(jars, m...)
		}
	} else {
		jars, _ = filepath.Glob(filepath.Join(dir, "*.jar"))
	}
	slices.Sort(jars)
	// Flink's own name first, then any other jar (a shaded or renamed build).
	slices.SortStableFunc(jars, func(a, b string) int {
		ka := !strings.HasPrefix(filepath.Base(a), "flink-external-resource-gpu")
		kb := !strings.HasPrefix(filepath.Base(b), "flink-external-resource-gpu")
		switch {
		case ka == kb:
			return 0
		case !ka:
			return -1
		}
		return 1
	})
	var lastErr error
	for i, j := range jars {
		if i >= maxJarsScanned {
			break
		}
		ok, err := holdsGPUFactory(j)
		if ok {
			return j, nil
		}
		if err != nil {
			lastErr = err
		}
	}
	return "", lastErr
}

// holdsGPUFactory reports whether the jar has GPUDriverFactory and names it in its ServiceLoader
// file.
func holdsGPUFactory(path string) (bool, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	hasClass, hasService := false, false
	for _, f := range zr.File {
		switch f.Name {
		case gpuFactoryEntry:
			hasClass = true
		case driverFactoryService:
			rc, err := f.Open()
			if err != nil {
				return false, fmt.Errorf("%s: %w", path, err)
			}
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				line, _, _ := strings.Cut(sc.Text(), "#")
				if strings.TrimSpace(line) == GPUDriverFactory {
					hasService = true
				}
			}
			rc.Close()
		}
	}
	return hasClass && hasService, nil
}

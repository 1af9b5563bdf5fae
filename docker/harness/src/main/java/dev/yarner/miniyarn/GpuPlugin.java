package dev.yarner.miniyarn;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --gpu-plugin}: the NodeManagers find their GPUs through YARN's own GPU plugin
 * ({@code yarn.nodemanager.resource-plugins=yarn.io/gpu}) instead of a configured count: the
 * plugin runs a fake {@code nvidia-smi -x -q} (written here, answering in the XML the real one
 * prints and Hadoop's GpuDeviceInformationParser reads), and each NodeManager advertises what it
 * reports.
 *
 * <p>What this mode cannot do here: the plugin assigns GPUs to containers (and isolates them with
 * the cgroups devices controller) only under LinuxContainerExecutor, whose setuid
 * {@code container-executor} is built from Hadoop's native sources and is not on Maven Central.
 * Under the harness's DefaultContainerExecutor the NodeManagers advertise and schedule the
 * plugin's GPUs, no container is given particular ones, and the NodeManager's GPU endpoint
 * ({@code /ws/v1/node/resources/yarn.io%2Fgpu}) answers that LinuxContainerExecutor is not
 * configured. All NodeManagers share the one fake {@code nvidia-smi} (one JVM, one environment),
 * so they report the same GPUs; each node's containers still find their own in the fake host tree
 * ({@link FakeGpuHosts}).
 */
final class GpuPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(GpuPlugin.class);
  static final String PLUGINS = "yarn.nodemanager.resource-plugins";
  static final String DISCOVERY = "yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables";
  static final String ALLOWED = "yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices";
  static final String COUNT = "yarn.nodemanager.resource-type.yarn.io/gpu";

  private GpuPlugin() {
  }

  /**
   * Writes the fake nvidia-smi of this many GPUs (the conf dir's count) and turns the plugin on in
   * c, the configured count dropped (the plugin's discovery sets it).
   */
  static void apply(Configuration c, Path stateDir, int gpus) throws IOException {
    if (gpus < 1 || gpus > 64) {
      throw new IOException(COUNT + " = " + gpus + ": --gpu-plugin makes 1 to 64 GPUs");
    }
    Path dir = Files.createDirectories(stateDir.resolve("gpu-plugin"));
    Path xml = dir.resolve("nvidia-smi.xml");
    Files.writeString(xml, xml(gpus), StandardCharsets.UTF_8);
    Path smi = dir.resolve("nvidia-smi");
    String script = "#!/bin/sh\n"
        + "# The mini-YARN's fake nvidia-smi for YARN's GPU plugin (docker/mini-yarn start --gpu-plugin):\n"
        + "# -x -q prints the device XML; anything else fails as the real one does on bad options.\n"
        + "case \"$*\" in\n"
        + "  '-x -q'|'-q -x') exec cat '" + xml.toString().replace("'", "'\\''") + "' ;;\n"
        + "  *) echo \"nvidia-smi (fake): unsupported arguments: $*\" >&2; exit 2 ;;\n"
        + "esac\n";
    Files.writeString(smi, script, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
    c.set(PLUGINS, "yarn.io/gpu");
    c.set(DISCOVERY, smi.toString());
    c.set(ALLOWED, "auto");
    c.unset(COUNT);
    LOG.info("GPU plugin: NodeManagers discover {} GPU(s) with {}", gpus, smi);
  }

  /** The XML of nvidia-smi -x -q for n GPUs, the fields Hadoop's parser reads. */
  static String xml(int n) {
    StringBuilder b = new StringBuilder();
    b.append("<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v11.dtd\">\n");
    b.append("<nvidia_smi_log>\n  <driver_version>550.54.15</driver_version>\n");
    b.append("  <attached_gpus>").append(n).append("</attached_gpus>\n");
    for (int i = 0; i < n; i++) {
      b.append(String.format("  <gpu id=\"00000000:%02X:00.0\">%n", 0x18 + i));
      b.append("    <product_name>NVIDIA H200</product_name>\n");
      b.append(String.format("    <uuid>GPU-9a5c0000-0000-0000-0000-%012d</uuid>%n", i));
      b.append("    <minor_number>").append(i).append("</minor_number>\n");
      b.append("    <fb_memory_usage><total>143771 MiB</total><used>0 MiB</used><free>143771 MiB</free></fb_memory_usage>\n");
      b.append("    <bar1_memory_usage><total>262144 MiB</total><used>1 MiB</used><free>262143 MiB</free></bar1_memory_usage>\n");
      b.append("    <utilization><gpu_util>0 %</gpu_util><memory_util>0 %</memory_util></utilization>\n");
      b.append("    <temperature><gpu_temp>30 C</gpu_temp><gpu_temp_max_threshold>95 C</gpu_temp_max_threshold>"
          + "<gpu_temp_slow_threshold>92 C</gpu_temp_slow_threshold></temperature>\n");
      b.append("  </gpu>\n");
    }
    b.append("</nvidia_smi_log>\n");
    return b.toString();
  }
}

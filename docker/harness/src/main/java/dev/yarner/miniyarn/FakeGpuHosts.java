package dev.yarner.miniyarn;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * A fake GPU host per NodeManager, so that the YARN containers of each NodeManager find that
 * node's GPUs the way yarn-er's discovery finds them on a real host, without any {@code --env}.
 *
 * <p>All NodeManagers of the mini-YARN run in one JVM, on one host, with one process
 * environment. A real NodeManager hands its containers the variables of
 * {@code yarn.nodemanager.env-whitelist} from its own environment (the multi-host topology does
 * exactly that); here the one environment holds templates that name the node through
 * {@code $NM_PORT}, which the NodeManager exports first in every container's launch script and
 * the shell expands there:
 *
 * <pre>
 * YARN_ER_HOST_ROOT=STATE/gpu-hosts/$NM_PORT/root
 * YARN_ER_COORDINATION_FILE=STATE/gpu-hosts/$NM_PORT/coordination
 * </pre>
 *
 * <p>{@code docker/mini-yarn} sets both in the harness's environment; this class adds them to
 * the whitelist (a container's own {@code --env} still wins, as with any whitelisted variable)
 * and, once the NodeManagers run, writes for each one a tree of as many NVIDIA GPUs as it
 * advertises: the procfs information files and {@code /dev} nodes yarn-er reads below
 * {@code YARN_ER_HOST_ROOT}. GPU {@code i} of NodeManager {@code n} has the UUID
 * {@code GPU-<n as 8 hex digits>-0000-0000-0000-<i as 12 digits>}. The tree also holds as many
 * Intel FPGAs as the node advertises {@code yarn.io/fpga}, as the DFL driver shows them in sysfs.
 */
final class FakeGpuHosts {
  /** Where yarn-er's discovery reads the host's devices (its --host-root). */
  static final String HOST_ROOT_VAR = "YARN_ER_HOST_ROOT";
  /** The file discover and exec coordinate through (their --coordination-file). */
  static final String COORDINATION_VAR = "YARN_ER_COORDINATION_FILE";
  /** The container variable that tells the NodeManagers apart. */
  static final String NODE_VAR = "NM_PORT";
  static final String GPU = "yarn.io/gpu";
  static final String FPGA = "yarn.io/fpga";

  private final String rootTemplate;
  private final String coordinationTemplate;

  private FakeGpuHosts(String rootTemplate, String coordinationTemplate) {
    this.rootTemplate = rootTemplate;
    this.coordinationTemplate = coordinationTemplate;
  }

  /**
   * The fake hosts the environment asks for, or null (with the reason in {@code why}) when it
   * does not: both variables set, each naming the node through {@code $NM_PORT}, and no other
   * shell expansion in them.
   */
  static FakeGpuHosts fromEnvironment(Map<String, String> env, StringBuilder why) {
    String root = env.get(HOST_ROOT_VAR);
    String coord = env.get(COORDINATION_VAR);
    if (root == null || root.isEmpty() || coord == null || coord.isEmpty()) {
      why.append(HOST_ROOT_VAR).append(" and ").append(COORDINATION_VAR)
          .append(" are not both set (docker/mini-yarn sets them)");
      return null;
    }
    for (String t : new String[] {root, coord}) {
      String rest = t.replace("$" + NODE_VAR, "");
      if (rest.equals(t) || !rest.startsWith("/") || rest.matches(".*[$`\"\\\\].*")) {
        why.append("'").append(t).append("' is not an absolute path naming the node by $")
            .append(NODE_VAR).append(" (and nothing else the shell would expand)");
        return null;
      }
    }
    return new FakeGpuHosts(root, coord);
  }

  /**
   * Adds the two variables to {@code yarn.nodemanager.env-whitelist} (the configured list, or
   * Hadoop's default), so that every NodeManager passes them on to its containers.
   */
  static void whitelist(Configuration c) {
    String current = c.get(YarnConfiguration.NM_ENV_WHITELIST,
        YarnConfiguration.DEFAULT_NM_ENV_WHITELIST);
    Set<String> names = new LinkedHashSet<>();
    for (String n : current.split(",")) {
      if (!n.trim().isEmpty()) {
        names.add(n.trim());
      }
    }
    names.add(HOST_ROOT_VAR);
    names.add(COORDINATION_VAR);
    c.set(YarnConfiguration.NM_ENV_WHITELIST, String.join(",", names));
  }

  /** One NodeManager's fake host, as endpoints.json reports it. */
  record Node(long gpus, long fpgas, Path root, Path coordinationFile) {}

  /**
   * Writes the fake host of the NodeManager with this index and port: a fresh tree with as many
   * GPUs as {@code total} holds {@code yarn.io/gpu}, and the coordination file's directory.
   */
  Node make(int index, int port, Resource total) throws IOException {
    long gpus = 0;
    long fpgas = 0;
    for (ResourceInformation ri : total.getResources()) {
      if (GPU.equals(ri.getName())) {
        gpus = ri.getValue();
      } else if (FPGA.equals(ri.getName())) {
        fpgas = ri.getValue();
      }
    }
    if (gpus < 0 || gpus > 256 || fpgas < 0 || fpgas > 64) {
      throw new IOException("NodeManager " + index + " advertises " + gpus + " " + GPU + " and "
          + fpgas + " " + FPGA + ": the fake host makes 0 to 256 GPUs and 0 to 64 FPGAs");
    }
    Path root = Path.of(expand(rootTemplate, port));
    Path coord = Path.of(expand(coordinationTemplate, port));
    MiniYarnHarness.deleteTree(root);
    Files.createDirectories(root.resolve("dev"));
    Files.createDirectories(coord.getParent());
    for (int i = 0; i < gpus; i++) {
      String bus = busId(i);
      Path info = root.resolve("proc/driver/nvidia/gpus/" + bus + "/information");
      Files.createDirectories(info.getParent());
      Files.writeString(info, information("NVIDIA H200", uuid(index, i), bus, i),
          StandardCharsets.UTF_8);
      Files.writeString(root.resolve("dev/nvidia" + i), "");
    }
    Files.writeString(root.resolve("dev/nvidiactl"), "");
    for (int j = 0; j < fpgas; j++) {
      writeDflFpga(root, index, j);
    }
    return new Node(gpus, fpgas, root, coord);
  }

  /**
   * FPGA {@code j} as the upstream Intel DFL driver shows it (the layout yarn-er's discovery and
   * Intel's device plugin read): {@code /sys/class/fpga_region/region<j>} linking into its PCI
   * device, an FME with the interface id and one port, {@code dfl-port.<j>}, with its AFU id, and
   * the device nodes. Port ids are per host, so every node has {@code dfl-port.0}, ...
   */
  private static void writeDflFpga(Path root, int node, int j) throws IOException {
    String bdf = String.format("0000:%02x:00.0", 0x5e + j);
    String region = "region" + j;
    Path dev = root.resolve("sys/devices/pci0000:" + bdf.substring(5, 7) + "/" + bdf + "/fpga_region/" + region);
    Path compat = dev.resolve("dfl-fme." + j + "/dfl-fme-region." + j + "/fpga_region/region" + (100 + j) + "/compat_id");
    Files.createDirectories(compat.getParent());
    Files.writeString(compat, String.format("ce48969398f05f33946d5607%08x%n", node), StandardCharsets.UTF_8);
    Path port = dev.resolve("dfl-port." + j);
    Files.createDirectories(port);
    Files.writeString(port.resolve("afu_id"), String.format("d8424dc4a4a3c413f89e4336%04x%04x%n", node, j),
        StandardCharsets.UTF_8);
    Files.writeString(port.resolve("dev"), "510:" + j + "\n", StandardCharsets.UTF_8);
    Path cls = root.resolve("sys/class/fpga_region/" + region);
    Files.createDirectories(cls.getParent());
    Files.createSymbolicLink(cls, cls.getParent().relativize(dev));
    Files.writeString(root.resolve("dev/dfl-fme." + j), "");
    Files.writeString(root.resolve("dev/dfl-port." + j), "");
  }

  static String expand(String template, int port) {
    return template.replace("$" + NODE_VAR, Integer.toString(port));
  }

  /** The UUID of GPU i of NodeManager n. */
  static String uuid(int n, int i) {
    return String.format("GPU-%08x-0000-0000-0000-%012d", n, i);
  }

  /** The PCI address of GPU i. */
  static String busId(int i) {
    return String.format("0000:%02x:00.0", 0x10 + i);
  }

  /** A driver information file as /proc/driver/nvidia/gpus/BUS/information holds it. */
  static String information(String model, String uuid, String bus, int minor) {
    return "Model: \t\t " + model + "\n"
        + "IRQ:   \t\t " + (100 + minor) + "\n"
        + "GPU UUID: \t " + uuid + "\n"
        + "Video BIOS: \t 96.00.89.00.01\n"
        + "Bus Type: \t PCIe\n"
        + "DMA Size: \t 52 bits\n"
        + "DMA Mask: \t 0xfffffffffffff\n"
        + "Bus Location: \t " + bus + "\n"
        + "Device Minor: \t " + minor + "\n"
        + "GPU Excluded:\t No\n";
  }
}

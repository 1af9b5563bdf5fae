package dev.yarner.miniyarn;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.ConfigurationException;
import org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor;
import org.apache.hadoop.yarn.server.nodemanager.executor.ContainerStartContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code docker/mini-yarn start --isolate-node N}: NodeManager N isolates its containers' GPUs the
 * way LinuxContainerExecutor with the GPU module does on a real node (the devices cgroup denies
 * every GPU the container was not given), built from what the harness can do without root or the
 * setuid container-executor: each of its containers gets a fake GPU host of its own, in which the
 * driver still lists every GPU of the node ({@code /proc/driver/nvidia/gpus}) but only the device
 * nodes of the GPUs the container was given exist ({@code /dev/nvidia<minor>}, plus
 * {@code /dev/nvidiactl}), so opening any other fails as a denied open would. The GPUs are given
 * as the NodeManager's GPU resource handler gives them: as many as the container's
 * {@code yarn.io/gpu}, the lowest free minors of the node, held until the container ends.
 *
 * <p>Every NodeManager runs this executor (they share one configuration); on the others it is
 * DefaultContainerExecutor unchanged. The container's {@code YARN_ER_HOST_ROOT} names its own tree
 * instead of the node's, unless the container set the variable itself (a test's own tree wins, as
 * any whitelisted variable a container sets does).
 */
public final class IsolatingExecutor extends DefaultContainerExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(IsolatingExecutor.class);

  /** The isolating node, once the NodeManagers run (null before: nothing is isolated). */
  private static volatile Node node;

  /** The isolating node: its port, its fake host, where its containers' trees go, its GPUs. */
  private record Node(int port, Path root, Path containers, int gpus, String template,
      Map<String, int[]> held, Map<String, Path> pending) {}

  /**
   * Makes the NodeManager on this port isolate its containers' GPUs, from its fake host below
   * root ({@code gpus} GPUs, minors 0..gpus-1); template is the harness's YARN_ER_HOST_ROOT value.
   */
  static void isolate(int port, Path root, int gpus, String template) throws IOException {
    Path containers = root.resolveSibling("containers");
    MiniYarnHarness.deleteTree(containers);
    Files.createDirectories(containers);
    node = new Node(port, root, containers, gpus, template, new HashMap<>(), new ConcurrentHashMap<>());
    LOG.info("NodeManager on port {} isolates its containers' GPUs: {} GPU(s), per-container trees in {}",
        port, gpus, containers);
  }

  @Override
  public void writeLaunchEnv(OutputStream out, Map<String, String> environment,
      Map<org.apache.hadoop.fs.Path, List<String>> resources, List<String> command,
      org.apache.hadoop.fs.Path logDir, String user, LinkedHashSet<String> nmVars) throws IOException {
    super.writeLaunchEnv(out, isolatedEnv(environment), resources, command, logDir, user, nmVars);
  }

  @Override
  public void writeLaunchEnv(OutputStream out, Map<String, String> environment,
      Map<org.apache.hadoop.fs.Path, List<String>> resources, List<String> command,
      org.apache.hadoop.fs.Path logDir, String user, String outFilename,
      LinkedHashSet<String> nmVars) throws IOException {
    super.writeLaunchEnv(out, isolatedEnv(environment), resources, command, logDir, user,
        outFilename, nmVars);
  }

  /**
   * The environment of a container of the isolating node, its YARN_ER_HOST_ROOT naming its own
   * tree (which launchContainer writes); any other container's unchanged.
   */
  private static Map<String, String> isolatedEnv(Map<String, String> env) {
    Node n = node;
    if (n == null || env == null || !Integer.toString(n.port()).equals(env.get("NM_PORT"))) {
      return env;
    }
    String id = env.get("CONTAINER_ID");
    String own = env.get(FakeGpuHosts.HOST_ROOT_VAR);
    if (id == null || (own != null && !own.equals(n.template()))) {
      return env; // the container chose its own tree
    }
    Path tree = n.containers().resolve(id).resolve("root");
    n.pending().put(id, tree);
    Map<String, String> out = new LinkedHashMap<>(env);
    out.put(FakeGpuHosts.HOST_ROOT_VAR, tree.toString());
    return out;
  }

  @Override
  public int launchContainer(ContainerStartContext ctx) throws IOException, ConfigurationException {
    Node n = node;
    String id = ctx.getContainer().getContainerId().toString();
    Path tree = n == null ? null : n.pending().remove(id);
    if (tree == null) {
      return super.launchContainer(ctx);
    }
    int[] minors = take(n, id, gpus(ctx.getContainer().getResource()));
    try {
      writeTree(n, tree, minors);
      LOG.info("container {}: GPU minor(s) {} of {} (isolated)", id, java.util.Arrays.toString(minors),
          n.gpus());
      return super.launchContainer(ctx);
    } finally {
      synchronized (n.held()) {
        n.held().remove(id);
      }
      MiniYarnHarness.deleteTree(tree.getParent());
    }
  }

  private static long gpus(Resource r) {
    try {
      return r.getResourceValue(FakeGpuHosts.GPU);
    } catch (RuntimeException e) { // no such resource type
      return 0;
    }
  }

  /** The lowest free minors of the node, as many as asked (fewer when fewer are free). */
  private static int[] take(Node n, String id, long want) {
    synchronized (n.held()) {
      boolean[] used = new boolean[n.gpus()];
      for (int[] ms : n.held().values()) {
        for (int m : ms) {
          used[m] = true;
        }
      }
      List<Integer> got = new ArrayList<>();
      for (int m = 0; m < n.gpus() && got.size() < want; m++) {
        if (!used[m]) {
          got.add(m);
        }
      }
      int[] out = got.stream().mapToInt(Integer::intValue).toArray();
      n.held().put(id, out);
      return out;
    }
  }

  /**
   * The container's fake host: the node's procfs (every GPU listed, as the driver lists them to
   * a cgroup-isolated container) and only the given GPUs' device nodes.
   */
  private static void writeTree(Node n, Path tree, int[] minors) throws IOException {
    MiniYarnHarness.deleteTree(tree);
    Path proc = n.root().resolve("proc");
    if (Files.isDirectory(proc)) {
      try (Stream<Path> s = Files.walk(proc)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          Path to = tree.resolve(n.root().relativize(p).toString());
          if (Files.isDirectory(p)) {
            Files.createDirectories(to);
          } else if (Files.isRegularFile(p)) {
            Files.copy(p, to);
          }
        }
      }
    }
    Path dev = Files.createDirectories(tree.resolve("dev"));
    Files.writeString(dev.resolve("nvidiactl"), "", StandardCharsets.UTF_8);
    for (int m : minors) {
      Files.writeString(dev.resolve("nvidia" + m), "", StandardCharsets.UTF_8);
    }
  }
}

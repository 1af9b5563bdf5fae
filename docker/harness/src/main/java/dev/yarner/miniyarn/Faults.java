package dev.yarner.miniyarn;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.api.protocolrecords.UnRegisterNodeManagerRequest;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.LocalDirsHandlerService;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.ResourceView;
import org.apache.hadoop.yarn.server.nodemanager.webapp.WebServer;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.security.ApplicationACLsManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fault verbs of {@code docker/mini-yarn} ({@code stop-nm}, {@code start-nm},
 * {@code kill-am}), carried out inside the harness on the running cluster.
 *
 * <p>The channel is a directory of the state dir, {@code control/}, which only the cluster's
 * user can write: the script writes a request {@code ID.req} (one line: the verb and its
 * arguments), this class runs it and answers with {@code ID.res}: a first line {@code ok} or
 * {@code error}, then what it did and how long the cluster took to be whole again. Requests run
 * one at a time, in the order of their names.
 */
final class Faults implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Faults.class);
  /** How long a verb waits for the cluster to be whole again. */
  private static final long WAIT_MS = 120_000;

  /** What the verbs need of the harness. */
  interface Harness {
    MiniYARNCluster yarn();

    /** Whether the cluster was started with --recovery (restart-rm needs it). */
    boolean recovery();

    /** Whether the cluster was started with --ha: two ResourceManagers (failover needs it). */
    boolean ha();

    /** --ha: the ZooKeeper of the leader election and the state store; null without --ha. */
    ElectionZooKeeper zooKeeper();

    /** --ha: the znode of the election's lock. */
    String electionLock();

    /** Whether the NodeManagers serve their web apps (Hadoop 3.5+). */
    boolean nodeManagerWeb();

    /**
     * --ha: the fixed addresses of ResourceManager id that another process holds now, as
     * "key=host:port"; empty when it could bind them all.
     */
    List<String> takenAddresses(String id);

    /** Rewrites endpoints.json after a NodeManager came back. */
    void republish() throws IOException;

    /**
     * Called after a NodeManager stopped or started, or the active ResourceManager changed: the
     * web apps of a JVM share one GuiceFilter pipeline, which must be the active RM's (on Hadoop
     * 3.3 and older a NodeManager's web app that stops takes the RM's REST API down with it; under
     * --ha the RMs' own filters run in it).
     */
    void nodeManagersChanged() throws ReflectiveOperationException;

    /** Whether the cluster is stopping: no more requests are taken. */
    boolean stopping();
  }

  private final Harness h;
  private final Path dir;
  /** The configuration and id of each stopped NodeManager, by index. */
  private final Map<Integer, Stopped> stopped = new HashMap<>();

  /**
   * A stopped NodeManager: its id and configuration, and its ports, held (bound, not listening:
   * a connection to them is refused as to a node that is gone) so that no other program's bind(0)
   * or outgoing connection takes them before start-nm brings it back on them.
   */
  private record Stopped(NodeId id, Configuration conf, List<java.nio.channels.SocketChannel> held) {}

  /**
   * Binds each port (on every address) without listening; a port that cannot be is left out (and
   * logged).
   */
  private static List<java.nio.channels.SocketChannel> hold(int... ports) {
    List<java.nio.channels.SocketChannel> out = new ArrayList<>();
    for (int port : ports) {
      if (port <= 0) {
        continue;
      }
      try {
        java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open();
        try {
          // With SO_REUSEADDR, as the NodeManager's own connections may linger on the port
          // (TIME_WAIT); the kernel still gives a bound port to no bind(0) nor outgoing connection.
          ch.setOption(java.net.StandardSocketOptions.SO_REUSEADDR, true);
          ch.bind(new java.net.InetSocketAddress(port));
          out.add(ch);
        } catch (IOException e) {
          ch.close();
          LOG.warn("stop-nm: could not hold port {} for the NodeManager's return: {}", port, e.toString());
        }
      } catch (IOException e) {
        LOG.warn("stop-nm: no socket to hold port {}: {}", port, e.toString());
      }
    }
    return out;
  }

  /** A verb's answer: ok or not, and the message for the user. */
  record Answer(boolean ok, String message) {}

  Faults(Harness h, Path stateDir) {
    this.h = h;
    this.dir = stateDir.resolve("control");
  }

  /** Creates the control directory (owner only) and starts serving it in a daemon thread. */
  void start() throws IOException {
    MiniYarnHarness.deleteTree(dir);
    Files.createDirectories(dir);
    dir.toFile().setReadable(false, false);
    dir.toFile().setWritable(false, false);
    dir.toFile().setExecutable(false, false);
    dir.toFile().setReadable(true, true);
    dir.toFile().setWritable(true, true);
    dir.toFile().setExecutable(true, true);
    Thread t = new Thread(this, "mini-yarn-faults");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void run() {
    while (!h.stopping()) {
      try {
        for (Path req : requests()) {
          serve(req);
        }
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      } catch (IOException | RuntimeException e) {
        LOG.warn("fault control: {}", e.toString(), e);
      }
    }
  }

  private List<Path> requests() throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.req")) {
      s.forEach(out::add);
    }
    out.sort(Comparator.comparing(Path::toString));
    return out;
  }

  private void serve(Path req) throws IOException {
    String name = req.getFileName().toString();
    String id = name.substring(0, name.length() - ".req".length());
    String line;
    try {
      line = Files.readString(req, StandardCharsets.UTF_8).trim();
    } finally {
      Files.deleteIfExists(req);
    }
    LOG.info("fault control: {}", line);
    Answer a;
    try {
      a = handle(line.isEmpty() ? new String[0] : line.split("\\s+"));
    } catch (Exception e) {
      LOG.warn("fault control: {} failed: {}", line, e.toString(), e);
      a = new Answer(false, line + ": " + e);
    }
    LOG.info("fault control: {}: {}", a.ok() ? "ok" : "error", a.message());
    Path tmp = dir.resolve(id + ".res.tmp");
    Files.writeString(tmp, (a.ok() ? "ok" : "error") + "\n" + a.message() + "\n", StandardCharsets.UTF_8);
    Files.move(tmp, dir.resolve(id + ".res"), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** Runs one verb: "stop-nm N", "start-nm N", "kill-am APP_ID" or "restart-rm". */
  Answer handle(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("restart-rm")) {
      return restartRM();
    }
    if (args.length == 1 && args[0].equals("failover")) {
      return failover();
    }
    if (args.length != 2) {
      return new Answer(false, "want one of: stop-nm N, start-nm N, kill-am APP_ID, restart-rm, failover");
    }
    return switch (args[0]) {
      case "stop-nm" -> stopNodeManager(index(args[1]));
      case "start-nm" -> startNodeManager(index(args[1]));
      case "kill-am" -> killAM(args[1]);
      default -> new Answer(false, "unknown verb " + args[0] + ": want stop-nm, start-nm, kill-am or restart-rm");
    };
  }

  private int index(String s) {
    int n = nodeManagerCount();
    int i;
    try {
      i = Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("node " + s + ": want a NodeManager index, 0 to " + (n - 1));
    }
    if (i < 0 || i >= n) {
      throw new IllegalArgumentException("node " + i + ": the cluster has NodeManagers 0 to " + (n - 1));
    }
    return i;
  }

  private int nodeManagerCount() {
    try {
      return ((NodeManager[]) nodeManagersField().get(h.yarn())).length;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("MiniYARNCluster.nodeManagers: " + e, e);
    }
  }

  private static Field nodeManagersField() throws NoSuchFieldException {
    Field f = MiniYARNCluster.class.getDeclaredField("nodeManagers");
    f.setAccessible(true);
    return f;
  }

  /**
   * Stops NodeManager i as a node that goes away: its containers end, and it leaves the cluster
   * (the ResourceManager takes its containers as lost and no longer schedules on it).
   */
  private synchronized Answer stopNodeManager(int i) throws Exception {
    if (stopped.containsKey(i)) {
      return new Answer(false, "NodeManager " + i + " is stopped already (start-nm --node " + i + ")");
    }
    NodeManager nm = h.yarn().getNodeManager(i);
    NodeId id = nm.getNMContext().getNodeId();
    int containers = nm.getNMContext().getContainers().size();
    Configuration conf = new Configuration(nm.getConfig());
    // It comes back on the same web port too, so that endpoints.json stays true.
    int http = nm.getNMContext().getHttpPort();
    if (http > 0) {
      conf.set(YarnConfiguration.NM_WEBAPP_ADDRESS, id.getHost() + ":" + http);
    } else {
      conf.set(YarnConfiguration.NM_WEBAPP_ADDRESS, id.getHost() + ":0");
    }
    long t0 = System.nanoTime();
    // Its web server first, and the RM's REST API back at once (Hadoop 3.3 and older: stopping a
    // web app resets the one GuiceFilter pipeline of the JVM), then the rest of it.
    for (org.apache.hadoop.service.Service svc : nm.getServices()) {
      if (svc instanceof WebServer) {
        svc.stop();
        h.nodeManagersChanged();
      }
    }
    nm.stop();
    stopped.put(i, new Stopped(id, conf, hold(id.getPort(), http)));
    h.nodeManagersChanged();
    // A NodeManager that stops says so to the ResourceManager (NodeStatusUpdaterImpl unregisters
    // over RPC); MiniYARNCluster's in-process NodeManagers drop that call, which would leave the
    // node RUNNING until its liveness expires (10 minutes). Say it for them: the RM then has the
    // node SHUTDOWN and its containers lost, as on a real cluster.
    h.yarn().getResourceManager().getResourceTrackerService()
        .unRegisterNodeManager(UnRegisterNodeManagerRequest.newInstance(id));
    NodeState st = await("NodeManager " + i + " (" + id + ") to leave the ResourceManager's RUNNING nodes",
        () -> {
          RMNode n = rmNode(id);
          return n == null || n.getState() != NodeState.RUNNING ? Optional.of(n == null ? NodeState.SHUTDOWN : n.getState())
              : Optional.empty();
        });
    return new Answer(true, String.format(
        "stopped NodeManager %d (%s) with %d container(s); the ResourceManager has it %s after %d ms",
        i, id, containers, st, ms(t0)));
  }

  /** Starts NodeManager i again, as the same node (same id, dirs and fake GPU host). */
  private synchronized Answer startNodeManager(int i) throws Exception {
    Stopped s = stopped.get(i);
    if (s == null) {
      return new Answer(false, "NodeManager " + i + " is running (stop-nm --node " + i + " first)");
    }
    ResourceManager rm = h.yarn().getResourceManager();
    Configuration c = new YarnConfiguration(s.conf());
    String host = s.id().getHost();
    c.set(YarnConfiguration.NM_ADDRESS, host + ":" + s.id().getPort());
    c.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, host + ":0");
    c.set(YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS, host + ":0");
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
        rm.getConfig().get(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS));
    long t0 = System.nanoTime();
    for (java.nio.channels.SocketChannel ch : s.held()) {
      ch.close();
    }
    NodeManager nm = new ReturningNodeManager(h.nodeManagerWeb());
    nm.init(c);
    nm.start();
    ((NodeManager[]) nodeManagersField().get(h.yarn()))[i] = nm;
    stopped.remove(i);
    h.nodeManagersChanged();
    await("NodeManager " + i + " (" + s.id() + ") to be RUNNING again", () -> {
      RMNode n = rmNode(s.id());
      return n != null && n.getState() == NodeState.RUNNING ? Optional.of(n) : Optional.empty();
    });
    h.republish();
    return new Answer(true, String.format(
        "started NodeManager %d (%s) again; RUNNING at the ResourceManager after %d ms", i, s.id(), ms(t0)));
  }

  /**
   * SIGKILL to the process tree of the application's current ApplicationMaster container; then
   * waits for the next attempt's AM to register, or the application to end.
   */
  private Answer killAM(String appIdText) throws Exception {
    ApplicationId appId;
    try {
      appId = ApplicationId.fromString(appIdText);
    } catch (IllegalArgumentException e) {
      return new Answer(false, "'" + appIdText + "' is no application id (application_<timestamp>_<n>)");
    }
    ResourceManager rm = h.yarn().getResourceManager();
    RMApp app = rm.getRMContext().getRMApps().get(appId);
    if (app == null) {
      return new Answer(false, "the ResourceManager knows no application " + appId);
    }
    if (app.isAppFinalStateStored()) {
      return new Answer(false, appId + " has ended (" + app.getState() + ")");
    }
    RMAppAttempt attempt = app.getCurrentAppAttempt();
    Container am = attempt == null ? null : attempt.getMasterContainer();
    if (am == null) {
      return new Answer(false, appId + " has no ApplicationMaster container yet");
    }
    NodeManager nm = nodeManagerOf(am.getNodeId());
    if (nm == null) {
      return new Answer(false, "the AM container " + am.getId() + " is on " + am.getNodeId()
          + ", which is not running");
    }
    String pid = nm.getNMContext().getContainerExecutor().getProcessId(am.getId());
    if (pid == null) {
      return new Answer(false, "the AM container " + am.getId() + " has no process yet");
    }
    Optional<ProcessHandle> ph = ProcessHandle.of(Long.parseLong(pid.trim()));
    if (ph.isEmpty()) {
      return new Answer(false, "the AM container's process " + pid + " is gone already");
    }
    List<ProcessHandle> tree = new ArrayList<>();
    ph.get().descendants().forEach(tree::add);
    tree.add(ph.get());
    long t0 = System.nanoTime();
    for (ProcessHandle p : tree) {
      p.destroyForcibly(); // SIGKILL
    }
    ApplicationAttemptId killed = attempt.getAppAttemptId();
    String outcome = await("the next attempt of " + appId + " to register, or the application to end", () -> {
      if (app.isAppFinalStateStored()) {
        return Optional.of("the application ended " + app.getState() + "/" + app.getFinalApplicationStatus()
            + " (no attempt left)");
      }
      RMAppAttempt cur = app.getCurrentAppAttempt();
      if (cur != null && !cur.getAppAttemptId().equals(killed)
          && cur.getAppAttemptState() == RMAppAttemptState.RUNNING) {
        return Optional.of("attempt " + cur.getAppAttemptId().getAttemptId() + " registered");
      }
      return Optional.empty();
    });
    return new Answer(true, String.format("killed the ApplicationMaster of %s (attempt %d, container %s, %d"
        + " process(es) from pid %s); %s after %d ms", appId, killed.getAttemptId(), am.getId(), tree.size(),
        pid.trim(), outcome, ms(t0)));
  }

  /**
   * A work-preserving restart of the ResourceManager: stopped, then a new one started from the
   * same configuration and ports, which recovers the applications from its state store while the
   * NodeManagers resync with it and report the containers still running. Under --ha the active
   * one restarts as on a real HA cluster: its elector leaves the election as it stops, the other
   * RM wins it and takes over (recovering the applications), and the restarted one comes back
   * standby.
   */
  private synchronized Answer restartRM() throws Exception {
    if (!h.recovery()) {
      return new Answer(false, "the cluster was started without --recovery: its ResourceManager keeps no state"
          + " and listens on ephemeral ports (docker/mini-yarn start --recovery)");
    }
    int index = h.ha() ? activeIndex() : 0;
    if (index < 0) {
      return new Answer(false, "no ResourceManager is active");
    }
    int apps = h.yarn().getResourceManager(index).getRMContext().getRMApps().size();
    ElectionZooKeeper.Lock before = h.ha() ? h.zooKeeper().lock(h.electionLock()) : null;
    long t0 = System.nanoTime();
    h.yarn().restartResourceManager(index);
    h.nodeManagersChanged();
    if (!h.ha()) {
      String whole = awaitWhole("the restarted ResourceManager", apps);
      return new Answer(true, "restarted the ResourceManager (work-preserving); " + whole + " after " + ms(t0) + " ms");
    }
    String from = MiniYarnHarness.RM_IDS[index];
    ElectionZooKeeper.Lock lock = await("the election after " + from + " restarted",
        () -> elected().filter(l -> before == null || l.session() != before.session()));
    long electedMs = ms(t0);
    h.nodeManagersChanged();
    String whole = awaitWhole("ResourceManager " + lock.rmId(), apps);
    String outcome = lock.rmId().equals(from)
        ? from + " " + lockText(lock) + " won the election again"
        : lock.rmId() + " " + lockText(lock) + " won the election while it restarted and " + from
            + " came back standby";
    return new Answer(true, "restarted the ResourceManager " + from + " (work-preserving); " + outcome
        + " after " + electedMs + " ms; " + whole + " after " + ms(t0) + " ms");
  }

  /**
   * A failover of an --ha cluster as a real failure makes one: ZooKeeper expires the session of
   * the active ResourceManager's elector (as it does when the RM's host stops answering, a pause
   * or a partition, for the session timeout). Its election lock goes with the session, the
   * standby's elector, which watches the lock, takes it and makes its RM active (recovering the
   * applications from the state store and fencing the former active out of it); the former
   * active learns that its session expired, rejoins the election and, the lock being taken,
   * becomes standby (or earlier, when its next write to the fenced store fails). The NodeManagers and AMs fail over to the new active RM. Nothing here
   * transitions an RM: the electors do.
   */
  private synchronized Answer failover() throws Exception {
    if (!h.ha()) {
      return new Answer(false, "the cluster has one ResourceManager: start it with --ha for a failover");
    }
    int from = activeIndex();
    if (from < 0) {
      return new Answer(false, "no ResourceManager is active");
    }
    String fromId = MiniYarnHarness.RM_IDS[from];
    ElectionZooKeeper.Lock before = h.zooKeeper().lock(h.electionLock());
    if (before == null || !before.rmId().equals(fromId)) {
      return new Answer(false, fromId + " is active but the election lock " + h.electionLock() + " is held by "
          + (before == null ? "nobody" : before) + ": wait for the election to settle");
    }
    for (String id : MiniYarnHarness.RM_IDS) {
      List<String> taken = id.equals(fromId) ? List.of() : h.takenAddresses(id);
      if (!taken.isEmpty()) {
        return new Answer(false, "standby " + id + " could not become active: another process holds "
            + String.join(", ", taken) + " (a port of the cluster's own taken while " + id + " stood by)");
      }
    }
    int apps = h.yarn().getResourceManager(from).getRMContext().getRMApps().size();
    long t0 = System.nanoTime();
    h.zooKeeper().expire(before.session());
    // The standby's watch fires at once; should the former active win the lock back (it rejoins
    // once it learns of the expiry), expire its new session too: another round.
    ElectionZooKeeper.Lock after = null;
    long expired = before.session();
    int rounds = 1;
    for (; ; rounds++) {
      long gone = expired;
      after = await("an RM to win the election after " + fromId + "'s ZooKeeper session expired",
          () -> won(gone));
      if (!after.rmId().equals(fromId) || rounds == 3) {
        break;
      }
      LOG.warn("failover: {} won the election again ({}); expiring its session once more", fromId, after);
      expired = after.session();
      h.zooKeeper().expire(expired);
    }
    if (after.rmId().equals(fromId)) {
      return new Answer(false, fromId + " won the election back " + rounds + " times after its session expired");
    }
    long activeMs = ms(t0);
    String toId = after.rmId();
    // The former active RM learns that its session expired when its client reconnects (ZooKeeper's
    // client waits up to a second before it tries): until then it still takes itself for active.
    await(fromId + " to become standby", () -> elected().filter(l -> l.rmId().equals(toId)));
    long standbyMs = ms(t0);
    h.nodeManagersChanged();
    String whole = awaitWhole("ResourceManager " + toId, apps);
    return new Answer(true, "failed over from " + fromId + " to " + toId + " by election: ZooKeeper expired "
        + fromId + "'s session 0x" + Long.toHexString(before.session()) + ", " + toId + " (session 0x"
        + Long.toHexString(after.session()) + ") took the lock " + h.electionLock() + " and was active after "
        + activeMs + " ms" + (rounds > 1 ? " (" + rounds + " rounds)" : "") + ", " + fromId + " standby after "
        + standbyMs + " ms; " + whole + " after " + ms(t0) + " ms");
  }

  /**
   * The election's winner once its RM is active: the lock's holder, with a session other than
   * gone, whose RM says ACTIVE; else empty.
   */
  private Optional<ElectionZooKeeper.Lock> won(long gone) {
    ElectionZooKeeper.Lock lock = currentLock();
    if (lock == null || lock.session() == gone) {
      return Optional.empty();
    }
    for (int i = 0; i < MiniYarnHarness.RM_IDS.length; i++) {
      if (MiniYarnHarness.RM_IDS[i].equals(lock.rmId()) && haState(i) == HAServiceProtocol.HAServiceState.ACTIVE) {
        return Optional.of(lock);
      }
    }
    return Optional.empty();
  }

  private ElectionZooKeeper.Lock currentLock() {
    try {
      return h.zooKeeper().lock(h.electionLock());
    } catch (IOException e) {
      LOG.warn("reading the election lock: {}", e.toString());
      return null;
    }
  }

  /** The index of the active ResourceManager, -1 for none; does not wait, unlike MiniYARNCluster's. */
  private int activeIndex() {
    for (int i = 0; i < MiniYarnHarness.RM_IDS.length; i++) {
      if (haState(i) == HAServiceProtocol.HAServiceState.ACTIVE) {
        return i;
      }
    }
    return -1;
  }

  private HAServiceProtocol.HAServiceState haState(int i) {
    ResourceManager rm = h.yarn().getResourceManager(i);
    return rm == null ? null : rm.getRMContext().getHAServiceState();
  }

  /**
   * The election's outcome once it settled: the lock's holder, when that RM is the only active one
   * and every other RM is standby; else empty.
   */
  private Optional<ElectionZooKeeper.Lock> elected() {
    ElectionZooKeeper.Lock lock = currentLock();
    if (lock == null) {
      return Optional.empty();
    }
    for (int i = 0; i < MiniYarnHarness.RM_IDS.length; i++) {
      HAServiceProtocol.HAServiceState want = MiniYarnHarness.RM_IDS[i].equals(lock.rmId())
          ? HAServiceProtocol.HAServiceState.ACTIVE : HAServiceProtocol.HAServiceState.STANDBY;
      if (haState(i) != want) {
        return Optional.empty();
      }
    }
    return Optional.of(lock);
  }

  private static String lockText(ElectionZooKeeper.Lock l) {
    return "(session 0x" + Long.toHexString(l.session()) + ")";
  }

  /**
   * Waits until the active ResourceManager runs, has every NodeManager that is not stopped
   * RUNNING and knows the apps applications it had before, and says so.
   */
  private String awaitWhole(String what, int apps) throws Exception {
    int want = nodeManagerCount() - stopped.size();
    return await(what + " to be active with every running NodeManager RUNNING", () -> {
      ResourceManager rm = h.yarn().getResourceManager();
      if (rm == null || rm.getServiceState() != org.apache.hadoop.service.Service.STATE.STARTED) {
        return Optional.empty();
      }
      long running = rm.getRMContext().getRMNodes().values().stream()
          .filter(n -> n.getState() == NodeState.RUNNING).count();
      return running >= want ? Optional.of(running + " NodeManager(s) RUNNING, "
          + rm.getRMContext().getRMApps().size() + " of " + apps + " application(s) recovered") : Optional.empty();
    });
  }

  private NodeManager nodeManagerOf(NodeId id) {
    for (int i = 0; i < nodeManagerCount(); i++) {
      if (stopped.containsKey(i)) {
        continue;
      }
      NodeManager nm = h.yarn().getNodeManager(i);
      if (nm != null && id.equals(nm.getNMContext().getNodeId())) {
        return nm;
      }
    }
    return null;
  }

  private RMNode rmNode(NodeId id) {
    ResourceManager rm = h.yarn().getResourceManager();
    return rm.getRMContext().getRMNodes().get(id);
  }

  private static <T> T await(String what, Supplier<Optional<T>> check) throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    while (true) {
      Optional<T> v = check.get();
      if (v.isPresent()) {
        return v.get();
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("gave up waiting " + WAIT_MS / 1000 + " s for " + what);
      }
      Thread.sleep(50);
    }
  }

  private static long ms(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /**
   * A NodeManager that comes back: it registers with the ResourceManager over RPC (the cluster's
   * own NodeManagers call it in-process), logs in as the harness does (not from a keytab), and
   * serves no web app where the NodeManagers of this Hadoop line serve none.
   */
  static final class ReturningNodeManager extends NodeManager {
    private final boolean web;

    ReturningNodeManager(boolean web) {
      this.web = web;
    }

    @Override
    protected void doSecureLogin() {
      // The harness JVM is logged in already, as MiniYARNCluster's NodeManagers assume.
    }

    @Override
    protected WebServer createWebServer(Context ctx, ResourceView view, ApplicationACLsManager acls,
        LocalDirsHandlerService dirs) {
      if (web) {
        return super.createWebServer(ctx, view, acls, dirs);
      }
      return new WebServer(ctx, view, acls, dirs) {
        @Override
        protected void serviceStart() {
          // Hadoop 3.4 and older: one GuiceFilter per JVM; a second web app would take the RM's.
        }

        @Override
        protected void serviceStop() {
          // Nothing was started.
        }
      };
    }
  }
}

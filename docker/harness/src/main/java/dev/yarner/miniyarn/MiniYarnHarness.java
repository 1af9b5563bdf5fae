package dev.yarner.miniyarn;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ShutdownHookManager;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one ResourceManager, two NodeManagers, one NameNode and one DataNode in this JVM,
 * configured from the Hadoop XML files of a conf directory, and publishes their addresses.
 *
 * <p>Usage: {@code MiniYarnHarness --conf DIR --state DIR [--node-managers N] [--watch-pid PID]}.
 * The working directory must be the state directory: MiniYARNCluster keeps its files under
 * {@code ./target/}. Once every daemon is up, the harness writes {@code hadoop-conf/} (a client
 * configuration with the real ports), {@code env.sh} and, last and atomically,
 * {@code endpoints.json} into the state directory. SIGTERM (or the end of the watched process)
 * stops everything and removes {@code endpoints.json}.
 */
public final class MiniYarnHarness {
  static {
    // log4j.properties reads the root level from this property; set it before any logger.
    if (System.getProperty("mini.yarn.log.level") == null) {
      System.setProperty("mini.yarn.log.level", "INFO");
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(MiniYarnHarness.class);

  /** Files of a conf directory that the daemons read; the client conf gets a copy of each. */
  private static final String[] CONF_FILES = {
    "core-site.xml", "hdfs-site.xml", "yarn-site.xml", "capacity-scheduler.xml",
    "resource-types.xml", "node-resources.xml"
  };

  private static final String ENDPOINTS = "endpoints.json";
  /**
   * Opt-in node labels (a key of the conf dir's yarn-site.xml, with yarn.node-labels.enabled):
   * "label=index[,label(exclusive=false)=index...]" puts each label on the NodeManager of that
   * index (0-based) once the cluster runs.
   */
  private static final String NODE_LABELS = "mini.yarn.node-labels";
  private static final long READY_TIMEOUT_MS = 180_000;

  private final Path confDir;
  private final Path stateDir;
  private final int nodeManagers;
  private final long watchPid;
  /** --recovery: a ResourceManager that restarts work-preserving on fixed ports (restart-rm). */
  private final boolean recovery;
  /**
   * --ha: two ResourceManagers (rm0 active, rm1 standby) with automatic failover through an
   * embedded ZooKeeper, which also holds their state store (failover).
   */
  private final boolean ha;
  /** --kerberos: the KDC and the secure settings; null without. */
  private final Secure secure;
  /**
   * --hdfs-ha: HDFS is an HA nameservice (HDFS_NAMESERVICE) of two NameNodes, nn0 standby and
   * nn1 active, and fs.defaultFS names the nameservice, as on most production clusters.
   */
  private final boolean hdfsHa;
  /** The nameservice of --hdfs-ha. */
  static final String HDFS_NAMESERVICE = "mini-ns";
  /** The NameNodes of --hdfs-ha's nameservice, in dfs.ha.namenodes order; nn0 stays standby. */
  static final String[] HDFS_NAMENODES = {"nn0", "nn1"};
  /** --gpu-plugin: the NodeManagers discover GPUs with YARN's GPU plugin. */
  private final boolean gpuPlugin;
  /** --isolate-node N: the NodeManager that isolates its containers' GPUs; -1 for none. */
  private final int isolateNode;
  /** The RM service keys that get a per-rm-id value under --ha. */
  private static final String[] RM_SERVICE_KEYS = {YarnConfiguration.RM_ADDRESS,
    YarnConfiguration.RM_SCHEDULER_ADDRESS, YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
    YarnConfiguration.RM_ADMIN_ADDRESS, YarnConfiguration.RM_WEBAPP_ADDRESS};
  /** The rm-ids of --ha. */
  static final String[] RM_IDS = {"rm0", "rm1"};
  /** yarn.resourcemanager.cluster-id of --ha: the election's znode below the base path. */
  private static final String HA_CLUSTER_ID = "mini-yarn";
  private final long startedAt = System.currentTimeMillis();
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private volatile boolean ready;
  private boolean stopping; // guarded by this

  private volatile MiniDFSCluster dfs;
  private volatile MiniYARNCluster yarn;
  /** --ha: the ResourceManagers' ZooKeeper (leader election and state store); null without. */
  private volatile ElectionZooKeeper zk;
  /** --ha: the znode of the leader election's lock. */
  private String electionLock;
  /** The fake GPU host of each NodeManager, by index; empty when the environment asks for none. */
  private final List<FakeGpuHosts.Node> gpuHosts = new ArrayList<>();
  private boolean nmWeb = true;
  /** Hadoop 3.3 and older: RM and NodeManager web apps share GuiceFilter's static pipeline. */
  private boolean guiceShared;

  private MiniYarnHarness(Path confDir, Path stateDir, int nodeManagers, long watchPid,
      boolean recovery, boolean ha, Secure secure, boolean gpuPlugin, int isolateNode, boolean hdfsHa) {
    this.hdfsHa = hdfsHa;
    this.isolateNode = isolateNode;
    this.confDir = confDir;
    this.secure = secure;
    this.gpuPlugin = gpuPlugin;
    this.stateDir = stateDir;
    this.nodeManagers = nodeManagers;
    this.watchPid = watchPid;
    this.recovery = recovery || ha;
    this.ha = ha;
  }

  /**
   * Entry point; exits 0 after a clean stop, 1 when the cluster could not start, 2 on bad usage.
   *
   * @param args command line, see the class comment
   */
  public static void main(String[] args) {
    Path conf = null;
    Path state = null;
    int nms = 2;
    long watch = -1;
    boolean recovery = false;
    boolean ha = false;
    boolean hdfsHa = false;
    boolean kerberos = false;
    boolean https = false;
    boolean gpuPlugin = false;
    int isolate = -1;
    String protection = null;
    int tokenLifetime = 0;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--conf" -> conf = Path.of(args[++i]).toAbsolutePath().normalize();
          case "--state" -> state = Path.of(args[++i]).toAbsolutePath().normalize();
          case "--node-managers" -> nms = Integer.parseInt(args[++i]);
          case "--watch-pid" -> watch = Long.parseLong(args[++i]);
          case "--recovery" -> recovery = true;
          case "--ha" -> ha = true;
          case "--hdfs-ha" -> hdfsHa = true;
          case "--kerberos" -> kerberos = true;
          case "--gpu-plugin" -> gpuPlugin = true;
          case "--isolate-node" -> isolate = Integer.parseInt(args[++i]);
          case "--https" -> https = true;
          case "--rpc-protection" -> protection = Secure.checkProtection(args[++i]);
          case "--token-lifetime" -> tokenLifetime = Secure.checkTokenLifetime(args[++i]);
          default -> throw new IllegalArgumentException("unknown argument " + a);
        }
      }
      if (conf == null || state == null) {
        throw new IllegalArgumentException("--conf DIR and --state DIR are required");
      }
      if (!Files.isDirectory(conf)) {
        throw new IllegalArgumentException("conf dir " + conf + " does not exist");
      }
      if ((https || protection != null || tokenLifetime > 0) && !kerberos) {
        throw new IllegalArgumentException("--https, --rpc-protection and --token-lifetime need --kerberos");
      }
      if (kerberos && (recovery || ha)) {
        throw new IllegalArgumentException(
            "--kerberos does not combine with --recovery or --ha yet");
      }
      if (nms < 1) {
        throw new IllegalArgumentException("--node-managers must be at least 1");
      }
      if (isolate < -1 || isolate >= nms) {
        throw new IllegalArgumentException("--isolate-node " + isolate + ": want a NodeManager index, 0 to "
            + (nms - 1));
      }
    } catch (RuntimeException e) {
      System.err.println("mini-yarn harness: " + e.getMessage());
      System.err.println("usage: MiniYarnHarness --conf DIR --state DIR"
          + " [--node-managers N] [--watch-pid PID] [--recovery] [--ha] [--hdfs-ha]"
          + " [--kerberos [--rpc-protection P] [--https] [--token-lifetime SECONDS]] [--gpu-plugin]"
          + " [--isolate-node N]");
      System.exit(2);
      return;
    }
    Secure secure = kerberos ? new Secure(state,
        protection == null ? "authentication" : protection, https, tokenLifetime) : null;
    MiniYarnHarness h = new MiniYarnHarness(conf, state, nms, watch, recovery, ha, secure, gpuPlugin,
        isolate, hdfsHa);
    try {
      h.run();
      System.exit(0);
    } catch (Throwable t) {
      LOG.error("mini-YARN failed: {}", t.toString(), t);
      System.err.println("mini-yarn harness: FAILED: " + t);
      h.shutdown();
      System.exit(1);
    }
  }

  private void run() throws Exception {
    Files.createDirectories(stateDir);
    Path cwd = Path.of("").toAbsolutePath();
    if (!cwd.equals(stateDir)) {
      LOG.warn("working directory {} is not the state dir {}; MiniYARNCluster writes to {}/target",
          cwd, stateDir, cwd);
    }
    Files.deleteIfExists(stateDir.resolve(ENDPOINTS));

    // Every Configuration created from here on (in this thread and in the threads it starts)
    // finds the conf dir's *-site.xml, capacity-scheduler.xml, resource-types.xml and
    // node-resources.xml on its class path, exactly as the daemons of a real cluster do.
    if (secure != null) {
      // Java's replay cache refuses two SPNEGO authenticators of one second from one client.
      System.setProperty("sun.security.krb5.rcache", "none");
      secure.start();
    }
    // With --kerberos, a copy of the conf dir with the security keys in its core-site.xml.
    Path daemonConf = confDir;
    if (secure != null || gpuPlugin || hdfsHa) {
      daemonConf = writeDaemonConf();
    }
    ClassLoader confLoader = new ConfClassLoader(
        daemonConf.toUri().toURL(), MiniYarnHarness.class.getClassLoader());
    Thread.currentThread().setContextClassLoader(confLoader);
    for (String f : CONF_FILES) {
      URL u = confLoader.getResource(f);
      LOG.info("conf file {}: {}", f, u == null ? "(absent)" : u);
    }

    // SIGTERM/SIGINT once ready: an orderly stop in the main thread, then exit 0. Before that
    // (or on any other way out of the JVM) the shutdown hook stops what has been started.
    for (String sig : new String[] {"TERM", "INT"}) {
      try {
        sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> {
          LOG.info("SIG{} received", sig);
          if (ready) {
            stopRequested.countDown();
          } else {
            System.exit(128 + s.getNumber());
          }
        });
      } catch (IllegalArgumentException e) {
        LOG.info("SIG{} not handled ({}): the shutdown hook stops the cluster", sig,
            e.getMessage());
      }
    }
    ShutdownHookManager.get().addShutdownHook(this::shutdown, 1000, 90, TimeUnit.SECONDS);

    LOG.info("Hadoop {} ({}), Java {}, conf {}, state {}", VersionInfo.getVersion(),
        VersionInfo.getRevision(), System.getProperty("java.version"), confDir, stateDir);

    long t0 = System.nanoTime();
    new HdfsConfiguration(); // registers hdfs-default.xml and hdfs-site.xml as defaults
    Configuration base = new YarnConfiguration();
    base.set("hadoop.tmp.dir", stateDir.resolve("tmp").toString());
    // The RM's node-label and node-attribute stores default to file:///tmp/hadoop-yarn-<user>/,
    // not below hadoop.tmp.dir, and MiniYARNCluster moves them only from Hadoop 3.5 on: two
    // clusters starting at once on 3.2-3.4 then wrote the same mirror file ("chmod: cannot access
    // '/tmp/hadoop-yarn-root/node-attribute/nodeattribute.mirror.writing'", seen in CI). Each
    // cluster's go below its state dir, unless its configuration names them.
    for (String[] store : new String[][] {{"yarn.node-labels.fs-store.root-dir", "node-labels"},
        {"yarn.node-attribute.fs-store.root-dir", "node-attribute"}}) {
      if (base.getTrimmed(store[0], "").isEmpty()) {
        base.set(store[0], stateDir.resolve("tmp").resolve(store[1]).toUri().toString());
      }
    }
    if (secure != null) {
      secure.apply(base);
      secure.login(base);
    }

    startDfs(base);
    long tDfs = System.nanoTime();
    String hdfsUri = hdfsHa ? "hdfs://" + HDFS_NAMESERVICE : "hdfs://127.0.0.1:" + dfs.getNameNodePort();
    if (hdfsHa) {
      // The daemons' own Configurations (a NodeManager's localizer) read the nameservice from
      // their class path's hdfs-site.xml, as on a real cluster: written now that the NameNodes
      // have their ports, before YARN starts.
      Map<String, String> keys = hdfsHaKeys();
      keys.forEach(base::set);
      Path daemonHdfs = stateDir.resolve("daemon-conf").resolve("hdfs-site.xml");
      Map<String, String> hdfsSite = readXml("hdfs-site.xml");
      hdfsSite.putAll(keys);
      writeXml(daemonHdfs, hdfsSite);
    }
    base.set("fs.defaultFS", hdfsUri);

    startYarn(base);
    applyNodeLabels(yarn.getResourceManager().getConfig());
    long tYarn = System.nanoTime();

    ResourceManager rm = yarn.getResourceManager();
    Configuration rmConf = rm.getConfig();
    String rmWeb = hostPort(rmConf.get(webKey()));
    waitForRest(rmWeb);
    long tReady = System.nanoTime();

    Map<String, String> addrs = new LinkedHashMap<>();
    addrs.put(YarnConfiguration.RM_ADDRESS, hostPort(rmConf.get(YarnConfiguration.RM_ADDRESS)));
    addrs.put(YarnConfiguration.RM_SCHEDULER_ADDRESS,
        hostPort(rmConf.get(YarnConfiguration.RM_SCHEDULER_ADDRESS)));
    addrs.put(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
        hostPort(rmConf.get(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS)));
    addrs.put(YarnConfiguration.RM_ADMIN_ADDRESS,
        hostPort(rmConf.get(YarnConfiguration.RM_ADMIN_ADDRESS)));
    addrs.put(webKey(), rmWeb);
    if (ha) {
      addrs.putAll(haClientKeys());
    }

    // Publish, unless a stop began meanwhile: endpoints.json must never outlive the cluster.
    synchronized (this) {
      if (stopping) {
        LOG.warn("stopped while starting: not publishing endpoints");
        return;
      }
      Path hadoopConf = writeClientConf(hdfsUri, addrs);
      writeEnv(hadoopConf, rmWebAddresses(rmWeb), hdfsUri);
      long dfsMs = ms(tDfs - t0);
      long yarnMs = ms(tYarn - tDfs);
      long readyMs = ms(tReady - t0);
      writeEndpoints(rm, addrs, hdfsUri, hadoopConf, dfsMs, yarnMs, readyMs);
      new Faults(new Faults.Harness() {
        @Override
        public MiniYARNCluster yarn() {
          return yarn;
        }

        @Override
        public boolean recovery() {
          return recovery;
        }

        @Override
        public boolean ha() {
          return ha;
        }

        @Override
        public ElectionZooKeeper zooKeeper() {
          return zk;
        }

        @Override
        public String electionLock() {
          return electionLock;
        }

        @Override
        public boolean nodeManagerWeb() {
          return nmWeb;
        }

        @Override
        public List<String> takenAddresses(String id) {
          return MiniYarnHarness.this.takenAddresses(id);
        }

        @Override
        public void republish() throws IOException {
          synchronized (MiniYarnHarness.this) {
            if (!stopping) {
              writeEndpoints(rm, addrs, hdfsUri, hadoopConf, dfsMs, yarnMs, readyMs);
            }
          }
        }

        @Override
        public void nodeManagersChanged() throws ReflectiveOperationException {
          if (guiceShared) {
            restoreRmGuicePipeline();
          } else if (ha) {
            pinRmGuicePipelines();
          }
        }

        @Override
        public boolean stopping() {
          synchronized (MiniYarnHarness.this) {
            return stopping;
          }
        }
      }, stateDir).start();
      ready = true;
    }
    LOG.info("mini-YARN READY in {} ms (HDFS {} ms, YARN {} ms): RM web http://{}, HDFS {}",
        ms(tReady - t0), ms(tDfs - t0), ms(tYarn - tDfs), rmWeb, hdfsUri);
    System.err.println("mini-yarn harness: ready, RM http://" + rmWeb + ", HDFS " + hdfsUri);

    if (watchPid > 0) {
      Thread w = new Thread(this::watch, "mini-yarn-watch-" + watchPid);
      w.setDaemon(true);
      w.start();
    }
    stopRequested.await();
    shutdown();
  }

  /**
   * Writes the daemons' conf dir, {@code STATE/daemon-conf}: the conf dir's files, with the secure
   * mode's keys added to core-site.xml (which every Configuration reads) and its ssl-*.xml beside
   * them, and under --gpu-plugin node-resources.xml without the GPU count (the plugin discovers
   * it), and under --hdfs-ha hdfs-site.xml with the nameservice once HDFS runs. Every
   * Configuration the daemons make for themselves (a NodeManager's localizer, the node
   * resources ResourceUtils reads) must see these, as on a real cluster where all share the files.
   */
  private Path writeDaemonConf() throws IOException {
    Path out = stateDir.resolve("daemon-conf");
    deleteTree(out);
    Files.createDirectories(out);
    try (var files = Files.list(confDir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          Files.copy(f, out.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    if (secure != null) {
      Map<String, String> core = readXml("core-site.xml");
      core.putAll(secure.coreKeys());
      writeXml(out.resolve("core-site.xml"), core);
      for (Path f : secure.sslFiles()) {
        if (Files.isRegularFile(f)) {
          Files.copy(f, out.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    if (gpuPlugin) {
      Map<String, String> nodeResources = readXml("node-resources.xml");
      nodeResources.remove(GpuPlugin.COUNT);
      writeXml(out.resolve("node-resources.xml"), nodeResources);
    }
    return out;
  }

  /**
   * The https address clients use for NameNode nn (0 without --hdfs-ha) under --https
   * (dfs.http.policy=HTTPS_ONLY): localhost:port, the name its certificate holds; "" without
   * --https.
   */
  private String nameNodeHttpsAddress(int nn) {
    InetSocketAddress a = dfs.getNameNode(nn).getHttpsAddress();
    if (secure == null || !secure.https() || a == null) {
      return "";
    }
    return "localhost:" + a.getPort();
  }

  /** The RM's web address key clients use: the https one under yarn.http.policy=HTTPS_ONLY. */
  private String webKey() {
    return secure != null && secure.https() ? YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS
        : YarnConfiguration.RM_WEBAPP_ADDRESS;
  }

  /** http:// or https://, as YARN's web endpoints are served. */
  private String scheme() {
    return secure != null && secure.https() ? "https://" : "http://";
  }

  /**
   * The address clients dial for a daemon's "127.0.0.1:port": with Kerberos "localhost:port",
   * the host name in the principals and the certificate (as clients of a real cluster use host
   * names, not addresses).
   */
  private String clientAddr(String hostPort) {
    if (secure == null || hostPort == null) {
      return hostPort;
    }
    int i = hostPort.lastIndexOf(':');
    return "localhost" + hostPort.substring(i);
  }

  /** The user whose applications the cluster expects: the Kerberos user, else the JVM's. */
  private static String jvmUser() throws IOException {
    return UserGroupInformation.getCurrentUser().getShortUserName();
  }

  private String yarnUser() throws IOException {
    return secure != null ? Secure.USER : jvmUser();
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /** Stops the cluster when the watched process (e.g. a test binary) is gone. */
  private void watch() {
    while (true) {
      boolean alive = ProcessHandle.of(watchPid).map(ProcessHandle::isAlive).orElse(false);
      if (!alive) {
        LOG.warn("watched process {} is gone: stopping mini-YARN", watchPid);
        stopRequested.countDown();
        return;
      }
      try {
        Thread.sleep(2000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void startDfs(Configuration base) throws IOException {
    Configuration c = new HdfsConfiguration(base);
    Path dfsDir = stateDir.resolve("dfs");
    // Builder(conf, dir) sets hdfs.minidfs.basedir itself; Hadoop 3.3 and older refuse a
    // configuration that already has it ("MiniDFSCluster base directory already defined").
    LOG.info("starting MiniDFSCluster ({}, 1 DataNode) in {}",
        hdfsHa ? "HA nameservice " + HDFS_NAMESERVICE + " of 2 NameNodes" : "1 NameNode", dfsDir);
    MiniDFSCluster.Builder b = new MiniDFSCluster.Builder(c, dfsDir.toFile())
        .numDataNodes(1)
        .format(true)
        .checkDataNodeAddrConfig(false)
        .waitSafeMode(true);
    if (hdfsHa) {
      MiniDFSNNTopology.NSConf ns = new MiniDFSNNTopology.NSConf(HDFS_NAMESERVICE);
      for (String nn : HDFS_NAMENODES) {
        ns.addNN(new MiniDFSNNTopology.NNConf(nn));
      }
      b.nnTopology(new MiniDFSNNTopology().addNameservice(ns));
    } else {
      b.nameNodePort(0).nameNodeHttpPort(0);
    }
    dfs = b.build();
    if (hdfsHa) {
      // Both NameNodes start as standbys; the second becomes active, so that a client that takes
      // the first NameNode of dfs.ha.namenodes meets a standby first.
      dfs.transitionToActive(1);
    }
    dfs.waitClusterUp();
    dfs.waitActive();
    DistributedFileSystem fs = dfs.getFileSystem(hdfsHa ? 1 : 0);
    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    while (fs.isInSafeMode()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("HDFS still in safe mode");
      }
      sleep(200);
    }
    // The directories that YARN applications expect, like on a fresh real cluster.
    String user = yarnUser();
    org.apache.hadoop.fs.Path tmp = new org.apache.hadoop.fs.Path("/tmp");
    fs.mkdirs(tmp);
    fs.setPermission(tmp, new FsPermission((short) 01777));
    fs.mkdirs(new org.apache.hadoop.fs.Path("/user/" + user));
    if (secure != null) {
      // The Kerberos users' homes, theirs (the NameNode's login is the superuser).
      for (String u : new String[] {Secure.USER, Secure.OTHER_USER}) {
        org.apache.hadoop.fs.Path home = new org.apache.hadoop.fs.Path("/user/" + u);
        fs.mkdirs(home, new FsPermission((short) 0755));
        fs.setOwner(home, u, null);
      }
    }
    LOG.info("HDFS is up: {} (user {})", hdfsHa ? "hdfs://" + HDFS_NAMESERVICE + ", active NameNode "
        + HDFS_NAMENODES[1] : "hdfs://127.0.0.1:" + dfs.getNameNodePort(), user);
  }

  /**
   * --hdfs-ha: what a client needs to reach the nameservice (Hadoop's keys, as a real cluster's
   * hdfs-site.xml has them): its NameNodes' RPC and web addresses and the failover proxy.
   */
  private Map<String, String> hdfsHaKeys() {
    Map<String, String> k = new LinkedHashMap<>();
    k.put("dfs.nameservices", HDFS_NAMESERVICE);
    k.put("dfs.ha.namenodes." + HDFS_NAMESERVICE, String.join(",", HDFS_NAMENODES));
    for (int i = 0; i < HDFS_NAMENODES.length; i++) {
      putNameNodeKeys(k, i, "." + HDFS_NAMESERVICE + "." + HDFS_NAMENODES[i]);
    }
    k.put("dfs.client.failover.proxy.provider." + HDFS_NAMESERVICE,
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
    return k;
  }

  /**
   * NameNode i's client addresses: dfs.namenode.rpc-address, -http-address and (under --https)
   * -https-address, each key with suffix (".<nameservice>.<namenode>" under --hdfs-ha, else "").
   */
  private void putNameNodeKeys(Map<String, String> k, int i, String suffix) {
    k.put("dfs.namenode.rpc-address" + suffix,
        "127.0.0.1:" + dfs.getNameNode(i).getNameNodeAddress().getPort());
    // Under --https (dfs.http.policy=HTTPS_ONLY) a NameNode serves no http.
    InetSocketAddress http = dfs.getNameNode(i).getHttpAddress();
    if (http != null) {
      k.put("dfs.namenode.http-address" + suffix, "127.0.0.1:" + http.getPort());
    }
    String https = nameNodeHttpsAddress(i);
    if (!https.isEmpty()) {
      k.put("dfs.namenode.https-address" + suffix, https);
    }
  }

  private void startYarn(Configuration base) throws Exception {
    YarnConfiguration c = new YarnConfiguration(base);
    // MiniYARNCluster overrides yarn.nodemanager.resource.memory-mb with this key (4096 in
    // yarn-default.xml); unless the conf dir sets it, carry yarn.nodemanager.resource.memory-mb
    // over so that yarn-site.xml stays the one truth.
    String nmMem = c.get(YarnConfiguration.NM_PMEM_MB);
    String miniKey = "yarn.minicluster." + YarnConfiguration.NM_PMEM_MB;
    if (nmMem != null && !setOutsideDefaults(c, miniKey)) {
      c.set(miniKey, nmMem);
    }
    // Node resources (node-resources.xml) and resource types are static in a JVM: load them
    // from this configuration, not from whatever an earlier class touched.
    ResourceUtils.resetResourceTypes(c);
    ResourceUtils.resetNodeResources();

    // Hadoop 3.4 and older (Jersey 1 + Guice): the web apps of the RM and the NMs in one JVM
    // share one static GuiceFilter and the last one wins, so the RM's REST API answers 404.
    // There, run the NodeManagers without their web servers.
    nmWeb = !VersionInfo.getVersion().matches("3\\.[0-4]\\..*");
    if (!nmWeb) {
      LOG.warn("Hadoop {}: NodeManager web servers off (one GuiceFilter per JVM)",
          VersionInfo.getVersion());
    }
    // Every fixed port at once, each held open until all are chosen, so that no two are the same.
    java.util.Deque<Integer> ports = freePorts(
        recovery ? RM_SERVICE_KEYS.length * (ha ? RM_IDS.length : 1) : 0);
    if (recovery) {
      restartable(c, ports);
    }
    if (ha) {
      highlyAvailable(c, ports);
    }
    if (gpuPlugin) {
      // The count the conf dir gives (the daemons' copy no longer has it), else 4.
      String n = readXml("node-resources.xml").get(GpuPlugin.COUNT);
      GpuPlugin.apply(c, stateDir, n == null ? 4 : Integer.parseInt(n.trim()));
    }
    StringBuilder why = new StringBuilder();
    FakeGpuHosts hosts = FakeGpuHosts.fromEnvironment(System.getenv(), why);
    if (hosts != null) {
      FakeGpuHosts.whitelist(c);
    } else {
      LOG.warn("no fake GPU hosts for the NodeManagers' containers: {}", why);
    }
    if (isolateNode >= 0) {
      if (hosts == null) {
        throw new IOException("--isolate-node needs the fake GPU hosts: " + why);
      }
      c.set(YarnConfiguration.NM_CONTAINER_EXECUTOR, IsolatingExecutor.class.getName());
    }
    LOG.info("starting MiniYARNCluster (1 ResourceManager, {} NodeManagers)", nodeManagers);
    yarn = ha ? new MiniYARNCluster("cluster", RM_IDS.length, nodeManagers, 1, 1)
        : newMiniYarn(nodeManagers, nmWeb);
    yarn.init(c);
    yarn.start();
    if (guiceShared) {
      restoreRmGuicePipeline();
    } else if (ha) {
      pinRmGuicePipelines();
    }

    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    while (true) {
      int running = 0;
      for (RMNode n : yarn.getResourceManager().getRMContext().getRMNodes().values()) {
        if (n.getState() == NodeState.RUNNING) {
          running++;
        }
      }
      if (running >= nodeManagers) {
        break;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("only " + running + " of " + nodeManagers
            + " NodeManagers are RUNNING");
      }
      sleep(100);
    }
    Resource total = yarn.getResourceManager().getResourceScheduler().getClusterResource();
    LOG.info("YARN is up: cluster resource {}", total);
    if (hosts != null) {
      makeGpuHosts(hosts);
    }
    if (isolateNode >= 0) {
      FakeGpuHosts.Node h = gpuHosts.get(isolateNode);
      IsolatingExecutor.isolate(yarn.getNodeManager(isolateNode).getNMContext().getNodeId().getPort(),
          h.root(), (int) h.gpus(), System.getenv(FakeGpuHosts.HOST_ROOT_VAR));
    }
  }

  /**
   * --recovery: the ResourceManager keeps its state in a file-system store below the state dir and
   * recovers work-preserving when restart-rm restarts it, on the same fixed ports (chosen free
   * now), which the NodeManagers and every client reach over RPC as on a real cluster.
   * MiniYARNCluster's in-process NodeManagers would keep calling the stopped RM object.
   */
  private void restartable(Configuration c, java.util.Deque<Integer> ports) throws IOException {
    c.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    c.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    c.set(YarnConfiguration.RM_STORE,
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore");
    Path store = stateDir.resolve("rm-state");
    Files.createDirectories(store);
    c.set(YarnConfiguration.FS_RM_STATE_STORE_URI, store.toUri().toString());
    // The NodeManagers reconnect to a restarted RM every 500 ms, not every 30 s (their default).
    c.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 500);
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    String host = MiniYARNCluster.getHostname();
    for (String key : RM_SERVICE_KEYS) {
      c.set(key, host + ":" + ports.remove());
    }
    // With fixed ports MiniYARNCluster takes the NodeManagers' addresses from the configuration
    // too, whose defaults (8040, 8042, 8048) two NodeManagers would share.
    for (String key : new String[] {YarnConfiguration.NM_ADDRESS, YarnConfiguration.NM_LOCALIZER_ADDRESS,
        YarnConfiguration.NM_WEBAPP_ADDRESS, YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS}) {
      c.set(key, host + ":0");
    }
    LOG.info("recovery: RM state in {}, fixed RM ports {}", store, c.get(YarnConfiguration.RM_ADDRESS));
  }

  /**
   * --ha: two ResourceManagers, rm0 and rm1, each on fixed ports of its own (per-rm-id keys), with
   * automatic failover as on a real HA cluster: an embedded ZooKeeper (ElectionZooKeeper) holds
   * their leader election (the embedded elector, ActiveStandbyElectorBasedElectorService, of each
   * RM) and their state store (ZKRMStateStore, which fences a former active RM out of the store).
   * MiniYARNCluster makes rm0 active when it starts (a forced transition; its elector, which
   * joined the election first, holds the lock); from then on only the election changes the active
   * RM. The plain keys name rm0, the first active one.
   */
  private void highlyAvailable(Configuration c, java.util.Deque<Integer> ports) throws IOException {
    if (VersionInfo.getVersion().matches("3\\.[0-4]\\..*")) {
      throw new IllegalArgumentException("--ha needs Hadoop 3.5+ here: on " + VersionInfo.getVersion()
          + " the two ResourceManagers' web apps would share one Guice pipeline in this JVM");
    }
    long t0 = System.nanoTime();
    zk = ElectionZooKeeper.start(stateDir.resolve("zk"));
    c.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    c.set(YarnConfiguration.RM_HA_IDS, String.join(",", RM_IDS));
    c.set(YarnConfiguration.RM_CLUSTER_ID, HA_CLUSTER_ID);
    c.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, true);
    c.setBoolean(YarnConfiguration.AUTO_FAILOVER_EMBEDDED, true);
    // The store's Curator reads hadoop.zk.address; the embedded elector still reads
    // yarn.resourcemanager.zk-address (the older name), which Hadoop 3.5 maps to nothing.
    c.set(org.apache.hadoop.fs.CommonConfigurationKeys.ZK_ADDRESS, zk.connectString());
    c.set(YarnConfiguration.RM_ZK_ADDRESS, zk.connectString());
    // The ZooKeeper sessions of each RM's elector and store keep Hadoop's default timeout, 10 s
    // (within the embedded server's 2 to 20 s): a loaded machine's pauses expire none of them;
    // failover expires one on purpose.
    c.set(YarnConfiguration.RM_STORE,
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore");
    electionLock = c.get(YarnConfiguration.AUTO_FAILOVER_ZK_BASE_PATH,
        YarnConfiguration.DEFAULT_AUTO_FAILOVER_ZK_BASE_PATH) + "/" + HA_CLUSTER_ID + "/"
        + ElectionZooKeeper.LOCK;
    String host = MiniYARNCluster.getHostname();
    for (String key : RM_SERVICE_KEYS) {
      for (String id : RM_IDS) {
        String v = id.equals(RM_IDS[0]) ? c.get(key) : host + ":" + ports.remove();
        c.set(key + "." + id, v);
      }
    }
    // The NodeManagers and the AMs fail over between the two every 200 ms at first.
    c.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, 200);
    c.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_MAX_MS, 1000);
    LOG.info("HA: ResourceManagers {} ({} active first), automatic failover through ZooKeeper {}"
        + " (lock {}, started in {} ms), state store in ZooKeeper", String.join(",", RM_IDS), RM_IDS[0],
        zk.connectString(), electionLock, ms(System.nanoTime() - t0));
  }

  /**
   * The fixed addresses of ResourceManager id (an rm-id of --ha) that something else holds now,
   * of the services an RM opens only once active (clients', AMs' and NodeManagers' RPC): a standby
   * listens on none of them and must be able to bind each when it becomes active. (A standby
   * serves its admin RPC and web app already.)
   */
  private List<String> takenAddresses(String id) {
    List<String> out = new ArrayList<>();
    Configuration c = yarn.getConfig();
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS}) {
      String v = c.get(key + "." + id);
      if (v == null) {
        continue;
      }
      InetSocketAddress a = NetUtils.createSocketAddr(v);
      try (java.net.ServerSocket ss = new java.net.ServerSocket()) {
        ss.setReuseAddress(true);
        ss.bind(a);
      } catch (IOException e) {
        out.add(key + "." + id + "=" + v);
      }
    }
    return out;
  }

  /** The client configuration keys of --ha: the set and each ResourceManager's addresses. */
  private Map<String, String> haClientKeys() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(YarnConfiguration.RM_HA_ENABLED, "true");
    m.put(YarnConfiguration.RM_HA_IDS, String.join(",", RM_IDS));
    m.put(YarnConfiguration.RM_CLUSTER_ID, HA_CLUSTER_ID);
    m.put(YarnConfiguration.AUTO_FAILOVER_ENABLED, "true");
    m.put(YarnConfiguration.AUTO_FAILOVER_EMBEDDED, "true");
    m.put(org.apache.hadoop.fs.CommonConfigurationKeys.ZK_ADDRESS, zk.connectString());
    m.put(YarnConfiguration.RM_ZK_ADDRESS, zk.connectString());
    Configuration c = yarn.getConfig();
    for (String id : RM_IDS) {
      for (String key : RM_SERVICE_KEYS) {
        m.put(key + "." + id, hostPort(c.get(key + "." + id)));
      }
    }
    return m;
  }

  /** The web addresses of the ResourceManagers (one without --ha), active first at start. */
  private List<String> rmWebAddresses(String rmWeb) {
    List<String> out = new ArrayList<>();
    out.add(rmWeb);
    if (ha) {
      Configuration c = yarn.getConfig();
      for (String id : RM_IDS) {
        String a = hostPort(c.get(YarnConfiguration.RM_WEBAPP_ADDRESS + "." + id));
        if (!out.contains(a)) {
          out.add(a);
        }
      }
    }
    return out;
  }

  /**
   * n free ports, all distinct (each socket stays open until every port is chosen), from outside
   * the kernel's ephemeral range. These ports are fixed for the cluster's life, but free while an
   * RM restarts or stands by; a port the kernel may hand out to any bind(0) or outgoing connection
   * on the machine (another cluster's NodeManager, say) would be taken then, and the RM could not
   * come back: a standby rm0 failed to become active with "Address already in use" and clients
   * found another cluster's IPC server on its address.
   */
  static java.util.Deque<Integer> freePorts(int n) throws IOException {
    int[] range = fixedPortRange(ephemeralRange());
    java.util.Deque<Integer> out = new java.util.ArrayDeque<>();
    List<java.net.ServerSocket> open = new ArrayList<>();
    java.util.Random random = new java.util.Random();
    int span = range[1] - range[0] + 1;
    try {
      for (int tries = 0; out.size() < n; tries++) {
        if (tries > 50 * n + 1000) {
          throw new IOException("no " + n + " free ports in " + range[0] + "-" + range[1]
              + " (outside the ephemeral range of net.ipv4.ip_local_port_range)");
        }
        int port = range[0] + random.nextInt(span);
        if (out.contains(port)) {
          continue;
        }
        java.net.ServerSocket ss = new java.net.ServerSocket();
        try {
          ss.setReuseAddress(true);
          ss.bind(new java.net.InetSocketAddress(port));
        } catch (IOException busy) {
          ss.close();
          continue;
        }
        open.add(ss);
        out.add(port);
      }
    } finally {
      for (java.net.ServerSocket ss : open) {
        ss.close();
      }
    }
    return out;
  }

  /** Linux's ephemeral port range (net.ipv4.ip_local_port_range), or its default where unreadable. */
  static int[] ephemeralRange() {
    try {
      String[] f = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      int lo = Integer.parseInt(f[0]);
      int hi = Integer.parseInt(f[1]);
      if (lo > 0 && hi <= 65535 && lo <= hi) {
        return new int[] {lo, hi};
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or an odd value: the default below
    }
    return new int[] {32768, 60999};
  }

  /**
   * The larger stretch of unprivileged ports that the ephemeral range leaves out: from 10000
   * (above well-known services) up to 19999 at most, below the ports yarn-er's ApplicationMaster
   * gives its ranks (am.PortBase 20000 to 32767), which share the host; else above the range.
   */
  static int[] fixedPortRange(int[] ephemeral) {
    int belowLo = 10000;
    int belowHi = Math.min(ephemeral[0] - 1, 19999);
    int aboveLo = Math.max(ephemeral[1] + 1, 10000);
    int aboveHi = 65535;
    int below = belowHi - belowLo + 1;
    int above = aboveHi - aboveLo + 1;
    if (below <= 0 && above <= 0) {
      return new int[] {1024, 65535}; // the whole range is ephemeral: nothing better to do
    }
    return below >= above ? new int[] {belowLo, belowHi} : new int[] {aboveLo, aboveHi};
  }

  /**
   * Writes each NodeManager's fake GPU host (as many GPUs as the ResourceManager says it has),
   * where the whitelisted templates send its containers.
   */
  private void makeGpuHosts(FakeGpuHosts hosts) throws IOException {
    Map<NodeId, RMNode> nodes = yarn.getResourceManager().getRMContext().getRMNodes();
    for (int i = 0; i < nodeManagers; i++) {
      NodeId id = yarn.getNodeManager(i).getNMContext().getNodeId();
      RMNode n = nodes.get(id);
      if (n == null) {
        throw new IOException("NodeManager " + i + " (" + id + ") is not known to the RM");
      }
      FakeGpuHosts.Node h = hosts.make(i, id.getPort(), n.getTotalCapability());
      gpuHosts.add(h);
      LOG.info("NodeManager {} ({}): fake host of {} GPU(s) and {} FPGA(s) in {}, coordination file {}",
          i, id, h.gpus(), h.fpgas(), h.root(), h.coordinationFile());
    }
  }

  /**
   * Adds the labels of mini.yarn.node-labels to the cluster (exclusive unless the item says
   * "(exclusive=false)"), puts each on its NodeManager, as yarn rmadmin -addToClusterNodeLabels
   * and -replaceLabelsOnNode do, then reloads capacity-scheduler.xml (yarn rmadmin
   * -refreshQueues) so that the queues' label capacities apply. Nothing without the key.
   */
  private void applyNodeLabels(Configuration conf) throws Exception {
    String spec = conf.getTrimmed(NODE_LABELS, "");
    if (spec.isEmpty()) {
      return;
    }
    if (!conf.getBoolean(YarnConfiguration.NODE_LABELS_ENABLED, false)) {
      throw new IllegalArgumentException(NODE_LABELS + " needs "
          + YarnConfiguration.NODE_LABELS_ENABLED + "=true");
    }
    List<NodeLabel> labels = new ArrayList<>();
    Map<NodeId, Set<String>> onNodes = new LinkedHashMap<>();
    for (String item : spec.split(",")) {
      item = item.trim();
      int eq = item.lastIndexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(NODE_LABELS + ": \"" + item
            + "\" is not label=index");
      }
      String name = item.substring(0, eq).trim();
      int index = Integer.parseInt(item.substring(eq + 1).trim());
      boolean exclusive = true;
      String nonExclusive = "(exclusive=false)";
      if (name.endsWith(nonExclusive)) {
        name = name.substring(0, name.length() - nonExclusive.length()).trim();
        exclusive = false;
      }
      if (index < 0 || index >= nodeManagers) {
        throw new IllegalArgumentException(NODE_LABELS + ": no NodeManager " + index);
      }
      labels.add(NodeLabel.newInstance(name, exclusive));
      NodeId id = yarn.getNodeManager(index).getNMContext().getNodeId();
      onNodes.computeIfAbsent(id, k -> new TreeSet<>()).add(name);
    }
    ResourceManager rm = yarn.getResourceManager();
    RMNodeLabelsManager mgr = rm.getRMContext().getNodeLabelManager();
    mgr.addToCluserNodeLabels(labels);
    mgr.replaceLabelsOnNode(onNodes);
    rm.getRMContext().getRMAdminService().refreshQueues(RefreshQueuesRequest.newInstance());
    LOG.info("node labels {} on {}", labels, onNodes);
  }

  /** Whether a key comes from somewhere else than Hadoop's *-default.xml files. */
  private static boolean setOutsideDefaults(Configuration c, String key) {
    String[] sources = c.getPropertySources(key);
    if (sources == null) {
      return false;
    }
    for (String src : sources) {
      if (!src.endsWith("-default.xml")) {
        return true;
      }
    }
    return false;
  }

  /** Waits until the RM's REST API answers and lists every NodeManager as RUNNING. */
  private void waitForRest(String rmWeb) throws IOException {
    String user = URLEncoder.encode(jvmUser(), StandardCharsets.UTF_8);
    URL url = secure != null
        ? URI.create(scheme() + clientAddr(rmWeb) + "/ws/v1/cluster/nodes?states=RUNNING").toURL()
        : URI.create("http://" + rmWeb + "/ws/v1/cluster/nodes?states=RUNNING&user.name="
            + user).toURL();
    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    String last = "";
    while (System.currentTimeMillis() < deadline) {
      if (secure != null) {
        try {
          Object[] got = secure.get(url);
          int n = count((String) got[1], "\"state\":\"RUNNING\"");
          if (n >= nodeManagers) {
            return;
          }
          last = "HTTP " + got[0] + ", " + n + " RUNNING nodes over REST (SPNEGO)";
        } catch (IOException e) {
          last = e.toString();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", e);
        }
        sleep(200);
        continue;
      }
      try {
        HttpURLConnection conn = (HttpURLConnection) url.openConnection();
        conn.setRequestProperty("Accept", "application/json");
        conn.setConnectTimeout(2000);
        conn.setReadTimeout(5000);
        int code = conn.getResponseCode();
        if (code == 200) {
          try (InputStream in = conn.getInputStream()) {
            String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int n = count(body, "\"state\":\"RUNNING\"");
            if (n >= nodeManagers) {
              return;
            }
            last = n + " RUNNING nodes over REST";
          }
        } else {
          last = "HTTP " + code;
        }
        conn.disconnect();
      } catch (IOException e) {
        last = e.toString();
      }
      sleep(200);
    }
    throw new IOException("RM REST API at " + url + " not ready: " + last);
  }

  private static int count(String s, String sub) {
    int n = 0;
    for (int i = s.indexOf(sub); i >= 0; i = s.indexOf(sub, i + sub.length())) {
      n++;
    }
    return n;
  }

  /**
   * Writes {@code hadoop-conf/}: the conf dir's files with the real addresses, for clients
   * ({@code yarn-er --hadoop-conf}, the Go HDFS client, {@code HADOOP_CONF_DIR}).
   */
  private Path writeClientConf(String hdfsUri, Map<String, String> yarnAddrs)
      throws IOException {
    Path out = stateDir.resolve("hadoop-conf");
    Path tmp = stateDir.resolve("hadoop-conf.tmp");
    deleteTree(tmp);
    Files.createDirectories(tmp);

    Map<String, Map<String, String>> secureKeys = secure != null ? secure.clientKeys()
        : Map.of();
    Map<String, String> core = readXml("core-site.xml");
    core.put("fs.defaultFS", hdfsUri);
    core.putAll(secureKeys.getOrDefault("core-site.xml", Map.of()));
    writeXml(tmp.resolve("core-site.xml"), core);

    Map<String, String> hdfs = readXml("hdfs-site.xml");
    if (hdfsHa) {
      hdfs.putAll(hdfsHaKeys());
    } else {
      putNameNodeKeys(hdfs, 0, "");
    }
    hdfs.putAll(secureKeys.getOrDefault("hdfs-site.xml", Map.of()));
    writeXml(tmp.resolve("hdfs-site.xml"), hdfs);

    Map<String, String> yarnSite = readXml("yarn-site.xml");
    yarnSite.put(YarnConfiguration.RM_HOSTNAME, secure != null ? "localhost" : "127.0.0.1");
    for (Map.Entry<String, String> e : yarnAddrs.entrySet()) {
      yarnSite.put(e.getKey(), clientAddr(e.getValue()));
    }
    yarnSite.putAll(secureKeys.getOrDefault("yarn-site.xml", Map.of()));
    writeXml(tmp.resolve("yarn-site.xml"), yarnSite);
    if (secure != null && secure.https()) {
      // What Java clients (Flink's, Hadoop's own) read to trust the cluster's CA.
      Path sslClient = secure.sslConfDir().resolve("ssl-client.xml");
      Files.copy(sslClient, tmp.resolve("ssl-client.xml"), StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(tmp.resolve("ssl-client.xml"),
          java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }

    for (String f : new String[] {"capacity-scheduler.xml", "resource-types.xml",
        "node-resources.xml", "resource-profiles.json"}) {
      Path src = confDir.resolve(f);
      if (Files.isRegularFile(src)) {
        Files.copy(src, tmp.resolve(f), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    deleteTree(out);
    Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
    return out;
  }

  /** Properties of one file of the conf dir, sorted by name; empty when it is absent. */
  private Map<String, String> readXml(String name) {
    Map<String, String> m = new TreeMap<>();
    Path p = confDir.resolve(name);
    if (!Files.isRegularFile(p)) {
      return m;
    }
    Configuration c = new Configuration(false);
    c.addResource(new org.apache.hadoop.fs.Path(p.toUri()));
    for (Map.Entry<String, String> e : c) {
      m.put(e.getKey(), e.getValue());
    }
    return m;
  }

  static void writeXml(Path file, Map<String, String> props) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    b.append("<!-- Written by the yarn-er mini-YARN harness; the addresses are this run's. -->\n");
    b.append("<configuration>\n");
    for (Map.Entry<String, String> e : props.entrySet()) {
      b.append("  <property>\n    <name>").append(xml(e.getKey())).append("</name>\n")
          .append("    <value>").append(xml(e.getValue())).append("</value>\n  </property>\n");
    }
    b.append("</configuration>\n");
    Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
  }

  private static String xml(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  private void writeEnv(Path hadoopConf, List<String> rmWebs, String hdfsUri) throws IOException {
    List<String> urls = new ArrayList<>();
    for (String w : rmWebs) {
      urls.add(scheme() + clientAddr(w));
    }
    String s = "export HADOOP_CONF_DIR=" + sh(hadoopConf.toString()) + "\n"
        + "export YARN_CONF_DIR=" + sh(hadoopConf.toString()) + "\n"
        + "export YARN_ER_MINIYARN_STATE=" + sh(stateDir.toString()) + "\n"
        + "export YARN_ER_RM=" + sh(String.join(",", urls)) + "\n"
        + "export YARN_ER_HDFS=" + sh(hdfsUri) + "\n";
    if (secure != null) {
      for (Map.Entry<String, String> e : secure.env().entrySet()) {
        s += "export " + e.getKey() + "=" + sh(e.getValue()) + "\n";
      }
    }
    atomicWrite(stateDir.resolve("env.sh"), s);
  }

  private static String sh(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  private void writeEndpoints(ResourceManager rm, Map<String, String> addrs, String hdfsUri,
      Path hadoopConf, long dfsMs, long yarnMs, long readyMs) throws IOException {
    Json j = new Json();
    j.field("hadoopVersion", VersionInfo.getVersion());
    j.field("rmWebAddress", scheme() + clientAddr(addrs.get(webKey())));
    j.key("rmWebAddresses").append("[");
    int w = 0;
    for (String a : rmWebAddresses(addrs.get(webKey()))) {
      j.append(w++ == 0 ? "" : ",").append(Json.quote(scheme() + clientAddr(a)));
    }
    j.append("]").comma();
    if (ha) {
      j.field("haRmIds", String.join(",", RM_IDS));
      j.field("zooKeeper", zk.connectString());
      j.field("haElectionLock", electionLock);
    }
    j.field("rmAddress", addrs.get(YarnConfiguration.RM_ADDRESS));
    j.field("rmSchedulerAddress", addrs.get(YarnConfiguration.RM_SCHEDULER_ADDRESS));
    j.field("rmResourceTrackerAddress", addrs.get(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS));
    j.field("rmAdminAddress", addrs.get(YarnConfiguration.RM_ADMIN_ADDRESS));
    j.key("nodeManagers").append("[");
    for (int i = 0; i < nodeManagers; i++) {
      NodeManager nm = yarn.getNodeManager(i);
      NodeId id = nm.getNMContext().getNodeId();
      Json n = new Json();
      n.field("id", id.toString());
      n.field("address", ip(id.getHost()) + ":" + id.getPort());
      n.field("httpAddress",
          nmWeb ? ip(id.getHost()) + ":" + nm.getNMContext().getHttpPort() : "");
      if (i < gpuHosts.size()) {
        FakeGpuHosts.Node h = gpuHosts.get(i);
        n.number("gpus", h.gpus());
        n.number("fpgas", h.fpgas());
        n.field("gpuHostRoot", h.root().toString());
        n.field("coordinationFile", h.coordinationFile().toString());
      }
      if (i == isolateNode) {
        n.key("isolatesGpus").append("true").comma();
      }
      j.append(i == 0 ? "" : ",").append(n.end());
    }
    j.append("]").comma();
    j.field("hdfsUri", hdfsUri);
    InetSocketAddress nnHttp = dfs.getNameNode(hdfsHa ? 1 : 0).getHttpAddress();
    j.field("namenodeHttpAddress", nnHttp == null ? "" : "127.0.0.1:" + nnHttp.getPort());
    j.field("namenodeHttpsAddress", nameNodeHttpsAddress(hdfsHa ? 1 : 0));
    if (hdfsHa) {
      j.field("hdfsNameservice", HDFS_NAMESERVICE);
      j.field("hdfsStandbyNameNode", "127.0.0.1:" + dfs.getNameNode(0).getNameNodeAddress().getPort());
      j.field("hdfsActiveNameNode", "127.0.0.1:" + dfs.getNameNode(1).getNameNodeAddress().getPort());
    }
    j.field("hadoopConfDir", hadoopConf.toString());
    j.field("confSource", confDir.toString());
    j.field("stateDir", stateDir.toString());
    j.field("clusterLog", stateDir.resolve("cluster.log").toString());
    j.field("user", yarnUser());
    if (secure != null) {
      j.key("secure").append("{");
      int f = 0;
      for (Map.Entry<String, String> e : secure.endpointFields().entrySet()) {
        j.append(f++ == 0 ? "" : ",").append(Json.quote(e.getKey())).append(":")
            .append(Json.quote(e.getValue()));
      }
      j.append("}").comma();
    }
    j.key("resourceTypes").append("[");
    Set<String> types = new TreeSet<>();
    for (ResourceInformation ri : ResourceUtils.getResourceTypesArray()) {
      types.add(ri.getName());
    }
    int k = 0;
    for (String t : types) {
      j.append(k++ == 0 ? "" : ",").append(Json.quote(t));
    }
    j.append("]").comma();
    j.key("clusterResource").append("{");
    Resource total = rm.getResourceScheduler().getClusterResource();
    k = 0;
    for (ResourceInformation ri : total.getResources()) {
      j.append(k++ == 0 ? "" : ",").append(Json.quote(ri.getName())).append(":")
          .append(Long.toString(ri.getValue()));
    }
    j.append("}").comma();
    j.number("pid", ProcessHandle.current().pid());
    j.field("startedAt", Instant.ofEpochMilli(startedAt).toString());
    j.number("hdfsStartMillis", dfsMs);
    j.number("yarnStartMillis", yarnMs);
    j.number("readyMillis", readyMs);
    atomicWrite(stateDir.resolve(ENDPOINTS), j.end() + "\n");
  }

  /** "localhost:1234" or "0.0.0.0:1234" as "127.0.0.1:1234" (the address clients dial). */
  private static String hostPort(String configured) {
    InetSocketAddress a = NetUtils.createSocketAddr(configured);
    return ip(a.getHostString()) + ":" + a.getPort();
  }

  private static String ip(String host) {
    try {
      InetAddress a = InetAddress.getByName(host);
      if (a.isAnyLocalAddress() || a.isLoopbackAddress()) {
        return "127.0.0.1";
      }
      return a.getHostAddress();
    } catch (IOException e) {
      return host;
    }
  }

  private static void atomicWrite(Path file, String content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, content, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    List<Path> all = new ArrayList<>();
    try (var s = Files.walk(p)) {
      s.forEach(all::add);
    }
    for (int i = all.size() - 1; i >= 0; i--) {
      Files.deleteIfExists(all.get(i));
    }
  }

  /**
   * The daemons' context class loader: the conf dir's files before the class path's. The
   * unshaded hadoop-minicluster (Hadoop 3.4 and older) brings hadoop-yarn-server-tests' own
   * capacity-scheduler.xml (the DefaultResourceCalculator), which parent-first lookup would
   * find ahead of the conf dir's.
   */
  static final class ConfClassLoader extends URLClassLoader {
    ConfClassLoader(URL confDir, ClassLoader parent) {
      super(new URL[] {confDir}, parent);
    }

    @Override
    public URL getResource(String name) {
      URL u = findResource(name);
      return u != null ? u : super.getResource(name);
    }

    @Override
    public java.util.Enumeration<URL> getResources(String name) throws IOException {
      List<URL> all = new ArrayList<>(java.util.Collections.list(findResources(name)));
      ClassLoader parent = getParent();
      if (parent != null) {
        all.addAll(java.util.Collections.list(parent.getResources(name)));
      }
      return java.util.Collections.enumeration(all);
    }
  }

  /**
   * A MiniYARNCluster with or without NodeManager web servers. The constructor that takes the
   * choice is Hadoop 3.4+; older lines always start them.
   */
  private MiniYARNCluster newMiniYarn(int nms, boolean web) throws ReflectiveOperationException {
    try {
      return MiniYARNCluster.class
          .getConstructor(String.class, int.class, int.class, int.class, boolean.class)
          .newInstance("cluster", nms, 1, 1, web);
    } catch (NoSuchMethodException e) {
      guiceShared = true;
      return new MiniYARNCluster("cluster", nms, 1, 1);
    }
  }

  /**
   * Hadoop 3.3 and older start every NodeManager's web server, and each web app's Guice injector
   * makes itself the one static pipeline of {@code GuiceFilter}, the filter Jetty runs in every
   * web server of the JVM: the last NodeManager's wins and the RM's REST API answers 404. This
   * puts the RM's own pipeline back (so the NodeManagers' web servers then serve nothing useful,
   * and are reported without an HTTP address, as on 3.4). Reflection: Guice is shaded on 3.5.
   */
  private void restoreRmGuicePipeline() throws ReflectiveOperationException {
    activeRmGuicePipeline();
    nmWeb = false;
    LOG.warn("Hadoop {}: the RM's Guice pipeline restored over the NodeManagers' (one"
        + " GuiceFilter per JVM); NodeManager web servers serve nothing", VersionInfo.getVersion());
  }

  /**
   * --ha: gives the GuiceFilter that Jetty runs for each ResourceManager's web server that RM's
   * own pipeline. Jetty makes that filter from its class name, so it runs the JVM's one static
   * pipeline, the last RM's to start (or restart): both RMs' requests would then go through that
   * RM's filters, among them RMWebAppFilter, which redirects a standby's requests to the active
   * RM, judged by the wrong RM's HA state. Hadoop 3.5 (Jersey 2) only; --ha refuses older lines.
   */
  private void pinRmGuicePipelines() throws ReflectiveOperationException {
    for (int i = 0; i < RM_IDS.length; i++) {
      ResourceManager rm = yarn.getResourceManager(i);
      if (rm == null) {
        continue;
      }
      Object webApp = field(rm, "webApp");
      Object pipeline = field(field(webApp, "guiceFilter"), "injectedPipeline");
      Object http = webApp.getClass().getMethod("httpServer").invoke(webApp);
      Object ctx = http.getClass().getMethod("getWebAppContext").invoke(http);
      Object handler = ctx.getClass().getMethod("getServletHandler").invoke(ctx);
      Object[] holders = (Object[]) handler.getClass().getMethod("getFilters").invoke(handler);
      int pinned = 0;
      for (Object holder : holders) {
        Object filter = holder.getClass().getMethod("getFilter").invoke(holder);
        if (filter == null) {
          continue;
        }
        for (Class<?> c = filter.getClass(); c != null; c = c.getSuperclass()) {
          if (c.getName().endsWith(".GuiceFilter")) {
            java.lang.reflect.Field f = c.getDeclaredField("injectedPipeline");
            f.setAccessible(true);
            f.set(filter, pipeline);
            pinned++;
            break;
          }
        }
      }
      LOG.info("HA: {} web server runs its own Guice pipeline ({} filter(s))", RM_IDS[i], pinned);
    }
  }

  /** Makes the active ResourceManager's Guice pipeline the JVM's one (restoreRmGuicePipeline). */
  private void activeRmGuicePipeline() throws ReflectiveOperationException {
    Object webApp = field(yarn.getResourceManager(), "webApp");
    Object rmFilter = field(webApp, "guiceFilter");
    Object pipeline = field(rmFilter, "injectedPipeline");
    Class<?> gf = rmFilter.getClass();
    while (!gf.getName().endsWith(".GuiceFilter")) {
      gf = gf.getSuperclass();
    }
    java.lang.reflect.Field stat = gf.getDeclaredField("pipeline");
    stat.setAccessible(true);
    stat.set(null, pipeline);
  }

  /** The value of the field called name of o (declared by its class or a superclass). */
  private static Object field(Object o, String name) throws ReflectiveOperationException {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      try {
        java.lang.reflect.Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        Object v = f.get(o);
        if (v == null) {
          throw new IllegalStateException(c.getName() + "." + name + " is null");
        }
        return v;
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(o.getClass().getName() + "." + name);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Stops YARN, then HDFS; safe to call more than once and from the shutdown hook. */
  private synchronized void shutdown() {
    if (stopping) {
      return;
    }
    stopping = true;
    long t0 = System.nanoTime();
    LOG.info("mini-YARN stopping");
    try {
      Files.deleteIfExists(stateDir.resolve(ENDPOINTS));
      Files.deleteIfExists(stateDir.resolve("env.sh"));
    } catch (IOException e) {
      LOG.warn("could not remove endpoints: {}", e.toString());
    }
    if (yarn != null) {
      stopNodeManagersInParallel();
      try {
        yarn.stop(); // the RM; the NodeManagers are stopped already (stop is idempotent)
      } catch (RuntimeException e) {
        LOG.warn("stopping YARN: {}", e.toString(), e);
      }
    }
    if (zk != null) {
      try {
        zk.close(); // after the ResourceManagers, which would otherwise wait to reconnect
      } catch (RuntimeException e) {
        LOG.warn("stopping ZooKeeper: {}", e.toString(), e);
      }
    }
    if (dfs != null) {
      try {
        dfs.shutdown();
      } catch (IllegalStateException e) {
        // In the JVM's shutdown hook, MiniDFSCluster cannot unregister its own hooks; the
        // daemons are stopped by then.
        LOG.info("HDFS stopped during JVM shutdown ({})", e.getMessage());
      } catch (RuntimeException e) {
        LOG.warn("stopping HDFS: {}", e.toString(), e);
      }
    }
    if (secure != null) {
      secure.stop();
    }
    LOG.info("mini-YARN STOPPED in {} ms", ms(System.nanoTime() - t0));
  }

  /**
   * Stops the NodeManagers side by side: each one waits for its containers and, when it ran
   * applications, up to 10 s for its log handler's pending deletions; one after the other
   * that is 10+ s per node.
   */
  private void stopNodeManagersInParallel() {
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < nodeManagers; i++) {
      NodeManager nm = yarn.getNodeManager(i);
      if (nm == null) {
        continue;
      }
      Thread t = new Thread(() -> {
        try {
          nm.stop();
        } catch (RuntimeException e) {
          LOG.warn("stopping NodeManager: {}", e.toString(), e);
        }
      }, "mini-yarn-stop-nm-" + i);
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      try {
        t.join(TimeUnit.MINUTES.toMillis(1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** A minimal JSON object writer: enough for endpoints.json, no dependency. */
  private static final class Json {
    private final StringBuilder b = new StringBuilder("{");

    Json key(String k) {
      b.append(quote(k)).append(':');
      return this;
    }

    Json field(String k, String v) {
      return key(k).append(quote(v)).comma();
    }

    Json number(String k, long v) {
      return key(k).append(Long.toString(v)).comma();
    }

    Json append(String raw) {
      b.append(raw);
      return this;
    }

    Json comma() {
      b.append(',');
      return this;
    }

    String end() {
      if (b.charAt(b.length() - 1) == ',') {
        b.setLength(b.length() - 1);
      }
      return b.append('}').toString();
    }

    static String quote(String s) {
      StringBuilder q = new StringBuilder("\"");
      for (char c : s.toCharArray()) {
        switch (c) {
          case '"' -> q.append("\\\"");
          case '\\' -> q.append("\\\\");
          case '\n' -> q.append("\\n");
          case '\r' -> q.append("\\r");
          case '\t' -> q.append("\\t");
          default -> {
            if (c < 0x20) {
              q.append(String.format("\\u%04x", (int) c));
            } else {
              q.append(c);
            }
          }
        }
      }
      return q.append('"').toString();
    }
  }
}

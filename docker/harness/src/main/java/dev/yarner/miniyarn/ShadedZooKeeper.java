package dev.yarner.miniyarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.hadoop.shaded.org.apache.zookeeper.server.DataNode;
import org.apache.hadoop.shaded.org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.hadoop.shaded.org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.hadoop.yarn.proto.YarnServerResourceManagerServiceProtos.ActiveRMInfoProto;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ElectionZooKeeper} on the ZooKeeper server classes that Hadoop 3.5's
 * hadoop-client-minicluster carries (relocated below org.apache.hadoop.shaded, ZooKeeper 3.8 as
 * Hadoop 3.5.0 depends on): the same server the ResourceManagers' relocated ZooKeeper and Curator
 * clients speak to on a real cluster. Left out of the builds for Hadoop 3.4 and older
 * (harness/pom.xml, profile hadoop-jersey1), where --ha is refused.
 */
final class ShadedZooKeeper implements ElectionZooKeeper {
  private static final Logger LOG = LoggerFactory.getLogger(ShadedZooKeeper.class);
  /**
   * ZooKeeper's tick: sessions may last 2 to 20 ticks (2 to 20 s), which holds the
   * ResourceManagers' session timeout (yarn.resourcemanager.zk-timeout-ms, 10 s by default).
   */
  static final int TICK_MS = 1000;

  private final ZooKeeperServer server;
  private final ServerCnxnFactory factory;

  private ShadedZooKeeper(ZooKeeperServer server, ServerCnxnFactory factory) {
    this.server = server;
    this.factory = factory;
  }

  /** Called by {@link ElectionZooKeeper#start} (by name). */
  static ElectionZooKeeper start(Path dir) throws IOException {
    // Read once, when the first four-letter word comes in: set before the server starts.
    if (System.getProperty("zookeeper.4lw.commands.whitelist") == null) {
      System.setProperty("zookeeper.4lw.commands.whitelist", "srvr,ruok,dump");
    }
    // No log4j MBean of ZooKeeper's: the harness logs through reload4j, configured already.
    System.setProperty("zookeeper.jmx.log4j.disable", "true");
    MiniYarnHarness.deleteTree(dir);
    Files.createDirectories(dir);
    ZooKeeperServer zks = new ZooKeeperServer(dir.toFile(), dir.toFile(), TICK_MS);
    ServerCnxnFactory f = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 100);
    try {
      f.startup(zks);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      f.shutdown();
      throw new IOException("interrupted while ZooKeeper started", e);
    }
    ShadedZooKeeper z = new ShadedZooKeeper(zks, f);
    LOG.info("ZooKeeper {} is up: {} (data in {})", org.apache.hadoop.shaded.org.apache.zookeeper.Version
        .getFullVersion(), z.connectString(), dir);
    return z;
  }

  @Override
  public String connectString() {
    return "127.0.0.1:" + factory.getLocalPort();
  }

  @Override
  public Lock lock(String path) throws IOException {
    DataNode n = server.getZKDatabase().getDataTree().getNode(path);
    if (n == null) {
      return null;
    }
    byte[] data;
    long owner;
    synchronized (n) {
      data = n.getData();
      owner = n.stat.getEphemeralOwner();
    }
    String rmId = data == null ? "" : ActiveRMInfoProto.parseFrom(data).getRmId();
    return new Lock(rmId, owner);
  }

  @Override
  public void expire(long session) {
    server.expire(session);
  }

  @Override
  public void close() {
    factory.shutdown();
    server.shutdown();
    LOG.info("ZooKeeper stopped");
  }
}

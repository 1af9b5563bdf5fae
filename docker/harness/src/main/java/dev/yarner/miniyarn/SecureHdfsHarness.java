package dev.yarner.miniyarn;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kerberized HDFS for yarn-er's integration tests: Hadoop's MiniKdc (realm EXAMPLE.COM on an
 * ephemeral localhost port) and a MiniDFSCluster (1 NameNode, 1 DataNode) with
 * {@code hadoop.security.authentication=kerberos}, block access tokens, SASL data transfer
 * protection {@code authentication} and {@code ignore.secure.ports.for.testing=true} (no
 * privileged ports, so no root).
 *
 * <p>Usage: {@code SecureHdfsHarness --state DIR [--watch-pid PID] [--rpc-protection P]}, P the
 * value of {@code hadoop.rpc.protection} (default {@code authentication}). It writes into the state
 * directory: {@code krb5.conf}, {@code user.keytab} (principal {@code alice@EXAMPLE.COM}, whose
 * home {@code /user/alice} exists), {@code hdfs.keytab} (the services' keys),
 * {@code hadoop-conf/core-site.xml} and {@code hdfs-site.xml} (what a client needs), and last
 * {@code endpoints.json}. SIGTERM, or the end of the watched process, stops everything and removes
 * {@code endpoints.json}.
 */
public final class SecureHdfsHarness {
  private static final Logger LOG = LoggerFactory.getLogger(SecureHdfsHarness.class);
  private static final String USER = "alice";
  private static final String ENDPOINTS = "endpoints.json";

  private final Path state;
  private final long watchPid;
  private final String rpcProtection;
  private final CountDownLatch stop = new CountDownLatch(1);
  private MiniKdc kdc;
  private MiniDFSCluster dfs;

  private SecureHdfsHarness(Path state, long watchPid, String rpcProtection) {
    this.state = state;
    this.watchPid = watchPid;
    this.rpcProtection = rpcProtection;
  }

  /**
   * Starts the KDC and the Kerberized HDFS, then waits for SIGTERM.
   *
   * @param args command line, see the class comment
   */
  public static void main(String[] args) {
    Path state = null;
    long watch = 0;
    String protection = "authentication";
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--state" -> state = Path.of(args[++i]).toAbsolutePath().normalize();
          case "--watch-pid" -> watch = Long.parseLong(args[++i]);
          case "--rpc-protection" -> protection = args[++i];
          default -> throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
      if (state == null) {
        throw new IllegalArgumentException("--state DIR is required");
      }
    } catch (RuntimeException e) {
      System.err.println("usage: SecureHdfsHarness --state DIR [--watch-pid PID] [--rpc-protection P]: "
          + e.getMessage());
      System.exit(2);
    }
    SecureHdfsHarness h = new SecureHdfsHarness(state, watch, protection);
    Runtime.getRuntime().addShutdownHook(new Thread(h::shutdown, "secure-hdfs-shutdown"));
    try {
      h.run();
    } catch (Throwable t) {
      LOG.error("secure HDFS failed", t);
      h.shutdown();
      System.exit(1);
    }
    System.exit(0);
  }

  private void run() throws Exception {
    Files.createDirectories(state);
    Files.deleteIfExists(state.resolve(ENDPOINTS));
    Path kdcDir = Files.createDirectories(state.resolve("kdc"));
    Properties kconf = MiniKdc.createConf();
    kconf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "localhost");
    kdc = new MiniKdc(kconf, kdcDir.toFile());
    kdc.start();
    String realm = kdc.getRealm();
    LOG.info("MiniKdc realm {} on {}:{}", realm, kdc.getHost(), kdc.getPort());
    Path krb5 = state.resolve("krb5.conf");
    Files.copy(kdc.getKrb5conf().toPath(), krb5, StandardCopyOption.REPLACE_EXISTING);
    System.setProperty("java.security.krb5.conf", krb5.toString());

    File hdfsKeytab = state.resolve("hdfs.keytab").toFile();
    File userKeytab = state.resolve("user.keytab").toFile();
    kdc.createPrincipal(hdfsKeytab, "hdfs/localhost", "HTTP/localhost");
    kdc.createPrincipal(userKeytab, USER);
    for (File f : new File[] {hdfsKeytab, userKeytab}) {
      Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-------"));
    }
    String hdfsPrincipal = "hdfs/localhost@" + realm;
    String httpPrincipal = "HTTP/localhost@" + realm;

    Configuration c = new HdfsConfiguration();
    c.set("hadoop.security.authentication", "kerberos");
    c.set("hadoop.rpc.protection", rpcProtection);
    c.setBoolean("dfs.block.access.token.enable", true);
    c.set("dfs.namenode.kerberos.principal", hdfsPrincipal);
    c.set("dfs.namenode.keytab.file", hdfsKeytab.getAbsolutePath());
    c.set("dfs.datanode.kerberos.principal", hdfsPrincipal);
    c.set("dfs.datanode.keytab.file", hdfsKeytab.getAbsolutePath());
    c.set("dfs.web.authentication.kerberos.principal", httpPrincipal);
    c.set("dfs.web.authentication.kerberos.keytab", hdfsKeytab.getAbsolutePath());
    c.set("dfs.data.transfer.protection", "authentication");
    c.setBoolean("ignore.secure.ports.for.testing", true);
    c.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    UserGroupInformation.setConfiguration(c);

    Path dfsDir = state.resolve("dfs");
    LOG.info("starting a Kerberized MiniDFSCluster in {}", dfsDir);
    dfs = new MiniDFSCluster.Builder(c, dfsDir.toFile()).numDataNodes(1).build();
    dfs.waitActive();
    int nnPort = dfs.getNameNodePort();
    String hdfsUri = "hdfs://localhost:" + nnPort;

    // The user's home, created by the NameNode's own principal (the superuser).
    UserGroupInformation admin = UserGroupInformation.loginUserFromKeytabAndReturnUGI(hdfsPrincipal, hdfsKeytab.getAbsolutePath());
    admin.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
      try (FileSystem fs = FileSystem.newInstance(java.net.URI.create(hdfsUri), c)) {
        org.apache.hadoop.fs.Path home = new org.apache.hadoop.fs.Path("/user/" + USER);
        fs.mkdirs(home, new FsPermission((short) 0755));
        fs.setOwner(home, USER, null);
      }
      return null;
    });

    Path hadoopConf = Files.createDirectories(state.resolve("hadoop-conf"));
    Map<String, String> core = new LinkedHashMap<>();
    core.put("fs.defaultFS", hdfsUri);
    core.put("hadoop.security.authentication", "kerberos");
    core.put("hadoop.rpc.protection", rpcProtection);
    writeXml(hadoopConf.resolve("core-site.xml"), core);
    Map<String, String> hdfsSite = new LinkedHashMap<>();
    hdfsSite.put("dfs.namenode.kerberos.principal", "hdfs/_HOST@" + realm);
    hdfsSite.put("dfs.data.transfer.protection", "authentication");
    writeXml(hadoopConf.resolve("hdfs-site.xml"), hdfsSite);

    StringBuilder j = new StringBuilder("{\n");
    field(j, "realm", realm, false);
    field(j, "kdc", kdc.getHost() + ":" + kdc.getPort(), false);
    field(j, "krb5Conf", krb5.toString(), false);
    field(j, "principal", USER + "@" + realm, false);
    field(j, "keytab", userKeytab.getAbsolutePath(), false);
    field(j, "nameNodePrincipal", hdfsPrincipal, false);
    field(j, "hdfsUri", hdfsUri, false);
    field(j, "nameNodeAddress", "127.0.0.1:" + nnPort, false);
    field(j, "hadoopConf", hadoopConf.toString(), true);
    j.append("}\n");
    Path tmp = state.resolve(ENDPOINTS + ".tmp");
    Files.writeString(tmp, j.toString(), StandardCharsets.UTF_8);
    Files.move(tmp, state.resolve(ENDPOINTS), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    LOG.info("secure HDFS ready at {}", hdfsUri);

    if (watchPid > 0) {
      ProcessHandle.of(watchPid).ifPresentOrElse(
          p -> p.onExit().thenRun(stop::countDown), stop::countDown);
    }
    stop.await();
  }

  private static void field(StringBuilder j, String k, String v, boolean last) {
    j.append("  \"").append(k).append("\": \"")
        .append(v.replace("\\", "\\\\").replace("\"", "\\\"")).append('"').append(last ? "\n" : ",\n");
  }

  private static void writeXml(Path file, Map<String, String> props) throws IOException {
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (Map.Entry<String, String> e : props.entrySet()) {
      b.append("  <property><name>").append(e.getKey()).append("</name><value>")
          .append(e.getValue()).append("</value></property>\n");
    }
    b.append("</configuration>\n");
    Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
  }

  private synchronized void shutdown() {
    stop.countDown();
    try {
      Files.deleteIfExists(state.resolve(ENDPOINTS));
    } catch (IOException e) {
      LOG.warn("could not remove endpoints: {}", e.toString());
    }
    if (dfs != null) {
      quietly("MiniDFSCluster shutdown", dfs::shutdown);
      dfs = null;
    }
    if (kdc != null) {
      quietly("MiniKdc stop", kdc::stop);
      kdc = null;
    }
  }

  /** Runs one step of the shutdown, logging what it throws, so that the steps after it still run. */
  private static void quietly(String what, Runnable step) {
    try {
      step.run();
    } catch (Throwable t) {
      LOG.warn("{}: {}", what, t.toString());
    }
  }
}

package dev.yarner.miniyarn;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.PrivilegedExceptionAction;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.KerberosAuthenticator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The secure mode of the mini-YARN ({@code --kerberos [--rpc-protection P] [--https]}): Hadoop's
 * MiniKdc, and the settings that Kerberize every daemon of the harness (ResourceManager,
 * NodeManagers, NameNode, DataNode), put SPNEGO on their web endpoints and, with {@code --https},
 * serve the web endpoints of YARN (yarn.http.policy) and of HDFS (dfs.http.policy: the NameNode's
 * and the DataNode's, WebHDFS) over TLS only with a CA generated here.
 *
 * <p>All daemons share one service principal, {@code hadoop/localhost}, and the web endpoints
 * {@code HTTP/localhost} (one keytab, {@code services.keytab}). MiniYARNCluster's daemons skip
 * their own keytab login, so the harness JVM logs in as the service principal before it starts
 * anything. Clients reach the daemons as {@code localhost}, the name in the principals and the
 * certificate, as a real cluster's clients use its host names.
 *
 * <p>Users: {@code alice} (the one yarn-er uses: {@code user.keytab}) with proxy-user rights
 * (hadoop.proxyuser.alice.*: she may act as {@code bob}), and {@code bob} ({@code bob.keytab}),
 * who has none. Their HDFS homes exist.
 *
 * <p>Containers run under DefaultContainerExecutor, as the harness's own operating-system user:
 * LinuxContainerExecutor needs the setuid {@code container-executor} binary (built from Hadoop's
 * native sources, not on Maven Central), root-owned configuration and one operating-system user
 * per YARN user.
 */
final class Secure {
  private static final Logger LOG = LoggerFactory.getLogger(Secure.class);

  /** The YARN user of the secure mode: the principal yarn-er logs in with. */
  static final String USER = "alice";
  /** A second user, without proxy-user rights. */
  static final String OTHER_USER = "bob";
  private static final String SERVICE = "hadoop/localhost";
  private static final String HTTP = "HTTP/localhost";

  private final Path dir;
  private final String rpcProtection;
  private final boolean https;
  /** The HDFS delegation tokens' maximum lifetime in seconds (0: Hadoop's, 7 days). */
  private final int tokenLifetime;
  private MiniKdc kdc;
  private String realm;
  private Path krb5;
  private Path serviceKeytab;
  private Path userKeytab;
  private Path otherKeytab;
  private Path sslConfDir;
  private Path caPem;
  private Path trustStore;
  private String storePassword;
  private SSLSocketFactory sslFactory;

  Secure(Path stateDir, String rpcProtection, boolean https, int tokenLifetime) {
    this.dir = stateDir;
    this.rpcProtection = rpcProtection;
    this.https = https;
    this.tokenLifetime = tokenLifetime;
  }

  /**
   * Checks a {@code --token-lifetime} value: the HDFS delegation tokens' maximum lifetime in
   * seconds (their renewal interval is half of it), at least 20.
   */
  static int checkTokenLifetime(String s) {
    int n;
    try {
      n = Integer.parseInt(s);
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 20) {
      throw new IllegalArgumentException("--token-lifetime takes whole seconds, at least 20, not " + s);
    }
    return n;
  }

  /**
   * The delegation tokens' renewal interval in ms for a lifetime: half of it, so that a token is
   * renewed once before it reaches its maximum lifetime, and the ResourceManager's renewal (at 90%
   * of the interval) has seconds to spare on a loaded machine.
   */
  private long renewIntervalMillis() {
    return tokenLifetime * 1000L / 2;
  }

  /** Checks a {@code --rpc-protection} value. */
  static String checkProtection(String p) {
    return switch (p) {
      case "authentication", "integrity", "privacy" -> p;
      default -> throw new IllegalArgumentException("--rpc-protection must be authentication,"
          + " integrity or privacy, not " + p);
    };
  }

  /** The directory of ssl-server.xml and ssl-client.xml, for the daemons' class path. */
  Path sslConfDir() {
    return dir.resolve("ssl-conf");
  }

  boolean https() {
    return https;
  }

  String realm() {
    return realm;
  }

  /**
   * Starts the KDC and writes krb5.conf, the keytabs and (with --https) the CA, the keystores and
   * ssl-server.xml/ssl-client.xml.
   */
  void start() throws Exception {
    Path kdcDir = Files.createDirectories(dir.resolve("kdc"));
    Properties kconf = MiniKdc.createConf();
    kconf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "localhost");
    // Tickets that outlive any test; a short maximum lifetime is the tokens' business, not the
    // tickets'.
    kconf.setProperty(MiniKdc.MAX_TICKET_LIFETIME, Long.toString(TimeUnit.DAYS.toMillis(1)));
    kdc = new MiniKdc(kconf, kdcDir.toFile());
    kdc.start();
    realm = kdc.getRealm();
    krb5 = dir.resolve("krb5.conf");
    Files.copy(kdc.getKrb5conf().toPath(), krb5, StandardCopyOption.REPLACE_EXISTING);
    System.setProperty("java.security.krb5.conf", krb5.toString());
    LOG.info("MiniKdc realm {} on {}:{}, krb5.conf {}", realm, kdc.getHost(), kdc.getPort(), krb5);

    serviceKeytab = dir.resolve("services.keytab");
    userKeytab = dir.resolve("user.keytab");
    otherKeytab = dir.resolve("bob.keytab");
    for (Path p : new Path[] {serviceKeytab, userKeytab, otherKeytab}) {
      Files.deleteIfExists(p);
    }
    kdc.createPrincipal(serviceKeytab.toFile(), SERVICE, HTTP);
    kdc.createPrincipal(userKeytab.toFile(), USER);
    kdc.createPrincipal(otherKeytab.toFile(), OTHER_USER);
    for (Path p : new Path[] {serviceKeytab, userKeytab, otherKeytab}) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
    }
    Path ssl = Files.createDirectories(sslConfDir());
    if (https) {
      makeTls(ssl);
    }
  }

  /** The service principal's full name. */
  private String service() {
    return SERVICE + "@" + realm;
  }

  /** Sets the daemons' security keys on the harness's base configuration. */
  void apply(Configuration c) {
    for (Map.Entry<String, String> e : daemonKeys().entrySet()) {
      c.set(e.getKey(), e.getValue());
    }
  }

  /** The ssl-server.xml and ssl-client.xml to put beside the daemons' configuration (--https). */
  Path[] sslFiles() {
    return new Path[] {sslConfDir().resolve("ssl-server.xml"), sslConfDir().resolve("ssl-client.xml")};
  }

  /** The daemons' security keys, for their core-site.xml. */
  Map<String, String> coreKeys() {
    return daemonKeys();
  }

  /** The daemons' security keys. */
  private Map<String, String> daemonKeys() {
    Configuration c = new Configuration(false);
    String keytab = serviceKeytab.toString();
    c.set("hadoop.security.authentication", "kerberos");
    c.setBoolean("hadoop.security.authorization", true);
    c.set("hadoop.rpc.protection", rpcProtection);
    // Hadoop's client retries a failed SASL negotiation (a replayed authenticator, say).
    c.setInt("ipc.client.connect.max.retries.on.sasl", 10);
    // Proxy users: alice may act as anybody (bob) from anywhere, for HDFS, the RM's RPC and the
    // RM's web services (doAs).
    c.set("hadoop.proxyuser." + USER + ".hosts", "*");
    c.set("hadoop.proxyuser." + USER + ".groups", "*");
    c.set("hadoop.proxyuser." + USER + ".users", "*");
    c.set("yarn.resourcemanager.proxyuser." + USER + ".hosts", "*");
    c.set("yarn.resourcemanager.proxyuser." + USER + ".groups", "*");
    c.set("yarn.resourcemanager.proxyuser." + USER + ".users", "*");

    // HDFS
    c.setBoolean("dfs.block.access.token.enable", true);
    c.set("dfs.namenode.kerberos.principal", service());
    c.set("dfs.namenode.keytab.file", keytab);
    c.set("dfs.datanode.kerberos.principal", service());
    c.set("dfs.datanode.keytab.file", keytab);
    c.set("dfs.web.authentication.kerberos.principal", HTTP + "@" + realm);
    c.set("dfs.web.authentication.kerberos.keytab", keytab);
    c.set("dfs.data.transfer.protection", rpcProtection);
    c.setBoolean("ignore.secure.ports.for.testing", true);
    if (tokenLifetime > 0) {
      // Short-lived HDFS delegation tokens, for jobs that outlive them (submit --ship-keytab).
      c.setLong("dfs.namenode.delegation.token.max-lifetime", tokenLifetime * 1000L);
      c.setLong("dfs.namenode.delegation.token.renew-interval", renewIntervalMillis());
      // The ResourceManager fetches fresh tokens for the NodeManagers' own use (log aggregation,
      // localization) when the application's expire: it acts for the user as a proxy user.
      c.setBoolean("yarn.resourcemanager.proxy-user-privileges.enabled", true);
      c.set("hadoop.proxyuser.hadoop.hosts", "*");
      c.set("hadoop.proxyuser.hadoop.groups", "*");
      c.set("hadoop.proxyuser.hadoop.users", "*");
    }

    // YARN
    c.set("yarn.resourcemanager.principal", service());
    c.set("yarn.resourcemanager.keytab", keytab);
    c.set("yarn.nodemanager.principal", service());
    c.set("yarn.nodemanager.keytab", keytab);
    c.set("yarn.resourcemanager.webapp.spnego-principal", HTTP + "@" + realm);
    c.set("yarn.resourcemanager.webapp.spnego-keytab-file", keytab);
    c.set("yarn.nodemanager.webapp.spnego-principal", HTTP + "@" + realm);
    c.set("yarn.nodemanager.webapp.spnego-keytab-file", keytab);
    c.setBoolean("yarn.resourcemanager.webapp.delegation-token-auth-filter.enabled", true);

    // SPNEGO on every web endpoint of the JVM.
    c.set("hadoop.http.filter.initializers",
        "org.apache.hadoop.security.AuthenticationFilterInitializer");
    c.set("hadoop.http.authentication.type", "kerberos");
    c.set("hadoop.http.authentication.kerberos.principal", HTTP + "@" + realm);
    c.set("hadoop.http.authentication.kerberos.keytab", keytab);
    c.setBoolean("hadoop.http.authentication.simple.anonymous.allowed", false);

    if (https) {
      c.set("yarn.http.policy", "HTTPS_ONLY");
      // HDFS's web endpoints too (WebHDFS of the NameNode and the DataNode), with the same key
      // store, on ephemeral ports of localhost (the name in the certificate); their fixed default
      // ports would collide between clusters.
      c.set("dfs.http.policy", "HTTPS_ONLY");
      c.set("dfs.namenode.https-address", "localhost:0");
      c.set("dfs.datanode.https.address", "localhost:0");
      c.set("dfs.https.server.keystore.resource", "ssl-server.xml");
      c.set("dfs.client.https.keystore.resource", "ssl-client.xml");
      c.set("hadoop.ssl.server.conf", "ssl-server.xml");
      c.set("hadoop.ssl.client.conf", "ssl-client.xml");
      c.setBoolean("hadoop.ssl.require.client.cert", false);
      c.set("hadoop.ssl.hostname.verifier", "DEFAULT");
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : c) {
      m.put(e.getKey(), e.getValue());
    }
    return m;
  }

  /** Logs the harness JVM in as the service principal (MiniYARNCluster's daemons do not). */
  void login(Configuration c) throws IOException {
    UserGroupInformation.setConfiguration(c);
    UserGroupInformation.loginUserFromKeytab(service(), serviceKeytab.toString());
    LOG.info("logged in as {} (Kerberos), hadoop.rpc.protection={}, https={}",
        UserGroupInformation.getLoginUser().getUserName(), rpcProtection, https);
  }

  /** The keys a client of the secure cluster needs beside the addresses, per file. */
  Map<String, Map<String, String>> clientKeys() {
    Map<String, String> core = new LinkedHashMap<>();
    core.put("hadoop.security.authentication", "kerberos");
    core.put("hadoop.security.authorization", "true");
    core.put("hadoop.rpc.protection", rpcProtection);
    core.put("hadoop.http.authentication.type", "kerberos");
    Map<String, String> hdfs = new LinkedHashMap<>();
    hdfs.put("dfs.namenode.kerberos.principal", "hadoop/_HOST@" + realm);
    hdfs.put("dfs.datanode.kerberos.principal", "hadoop/_HOST@" + realm);
    hdfs.put("dfs.data.transfer.protection", rpcProtection);
    hdfs.put("dfs.block.access.token.enable", "true");
    if (https) {
      // The NameNode's https address is the harness's to add (its port is known once it runs).
      hdfs.put("dfs.http.policy", "HTTPS_ONLY");
      hdfs.put("dfs.client.https.keystore.resource", "ssl-client.xml");
    }
    if (tokenLifetime > 0) {
      hdfs.put("dfs.namenode.delegation.token.max-lifetime", Long.toString(tokenLifetime * 1000L));
      hdfs.put("dfs.namenode.delegation.token.renew-interval", Long.toString(renewIntervalMillis()));
    }
    Map<String, String> yarnSite = new LinkedHashMap<>();
    yarnSite.put("yarn.resourcemanager.principal", "hadoop/_HOST@" + realm);
    yarnSite.put("yarn.nodemanager.principal", "hadoop/_HOST@" + realm);
    yarnSite.put("yarn.resourcemanager.webapp.spnego-principal", "HTTP/_HOST@" + realm);
    if (https) {
      yarnSite.put("yarn.http.policy", "HTTPS_ONLY");
    }
    Map<String, Map<String, String>> m = new LinkedHashMap<>();
    m.put("core-site.xml", core);
    m.put("hdfs-site.xml", hdfs);
    m.put("yarn-site.xml", yarnSite);
    return m;
  }

  /** The exports env.sh adds: everything yarn-er needs to use the secure cluster with no flags. */
  Map<String, String> env() {
    Map<String, String> e = new LinkedHashMap<>();
    e.put("KRB5_CONFIG", krb5.toString());
    e.put("YARN_ER_KEYTAB", userKeytab.toString());
    e.put("YARN_ER_PRINCIPAL", USER + "@" + realm);
    if (https) {
      e.put("YARN_ER_TLS_CA", caPem.toString());
    }
    return e;
  }

  /** The secure mode's fields of endpoints.json. */
  Map<String, String> endpointFields() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("realm", realm);
    f.put("kdc", kdc.getHost() + ":" + kdc.getPort());
    f.put("krb5Conf", krb5.toString());
    f.put("principal", USER + "@" + realm);
    f.put("keytab", userKeytab.toString());
    f.put("otherPrincipal", OTHER_USER + "@" + realm);
    f.put("otherKeytab", otherKeytab.toString());
    f.put("servicePrincipal", service());
    f.put("rpcProtection", rpcProtection);
    f.put("tokenLifetimeSeconds", Integer.toString(tokenLifetime));
    f.put("tlsCa", https ? caPem.toString() : "");
    return f;
  }

  /**
   * GETs a URL of the cluster's web services as the service principal, with SPNEGO and (for
   * https) the generated CA; returns the status code and the body.
   */
  Object[] get(URL url) throws IOException, InterruptedException {
    AuthenticatedURL.Token token = new AuthenticatedURL.Token();
    AuthenticatedURL au = new AuthenticatedURL(new KerberosAuthenticator(), conn -> {
      if (conn instanceof HttpsURLConnection s && sslFactory != null) {
        s.setSSLSocketFactory(sslFactory);
      }
      conn.setConnectTimeout(2000);
      conn.setReadTimeout(5000);
      return conn;
    });
    return UserGroupInformation.getLoginUser().doAs(
        (PrivilegedExceptionAction<Object[]>) () -> {
          HttpURLConnection conn = au.openConnection(url, token);
          conn.setRequestProperty("Accept", "application/json");
          int code = conn.getResponseCode();
          String body = "";
          if (code == 200) {
            try (InputStream in = conn.getInputStream()) {
              body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
          }
          conn.disconnect();
          return new Object[] {code, body};
        });
  }

  /**
   * --https: a CA, a server key pair for localhost and 127.0.0.1 signed by it (PKCS#12 key store),
   * a trust store with the CA, the CA as PEM for clients, and ssl-server.xml/ssl-client.xml. Made
   * with the JDK's keytool.
   */
  private void makeTls(Path ssl) throws Exception {
    byte[] pw = new byte[18];
    new SecureRandom().nextBytes(pw);
    storePassword = HexFormat.of().formatHex(pw);
    Path ca = ssl.resolve("ca.p12");
    Path server = ssl.resolve("server.p12");
    trustStore = ssl.resolve("truststore.p12");
    caPem = dir.resolve("ca.pem");
    Path csr = ssl.resolve("server.csr");
    Path cert = ssl.resolve("server.pem");
    for (Path p : new Path[] {ca, server, trustStore, caPem, csr, cert}) {
      Files.deleteIfExists(p);
    }
    keytool("-genkeypair", "-alias", "ca", "-dname", "CN=yarn-er mini-YARN CA", "-keyalg", "RSA",
        "-keysize", "2048", "-validity", "30", "-ext", "bc:c", "-keystore", ca.toString(),
        "-storetype", "PKCS12", "-storepass", storePassword);
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-storepass",
        storePassword, "-file", caPem.toString());
    keytool("-genkeypair", "-alias", "server", "-dname", "CN=localhost", "-keyalg", "RSA",
        "-keysize", "2048", "-validity", "30", "-keystore", server.toString(), "-storetype",
        "PKCS12", "-storepass", storePassword);
    keytool("-certreq", "-alias", "server", "-keystore", server.toString(), "-storepass",
        storePassword, "-file", csr.toString());
    keytool("-gencert", "-alias", "ca", "-keystore", ca.toString(), "-storepass", storePassword,
        "-infile", csr.toString(), "-outfile", cert.toString(), "-rfc", "-validity", "30",
        "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-ext", "KU=digitalSignature,keyEncipherment",
        "-ext", "EKU=serverAuth");
    keytool("-importcert", "-alias", "ca", "-file", caPem.toString(), "-keystore",
        server.toString(), "-storepass", storePassword, "-noprompt");
    keytool("-importcert", "-alias", "server", "-file", cert.toString(), "-keystore",
        server.toString(), "-storepass", storePassword, "-noprompt");
    keytool("-importcert", "-alias", "ca", "-file", caPem.toString(), "-keystore",
        trustStore.toString(), "-storetype", "PKCS12", "-storepass", storePassword, "-noprompt");
    Files.deleteIfExists(csr);

    Map<String, String> sv = new LinkedHashMap<>();
    sv.put("ssl.server.keystore.location", server.toString());
    sv.put("ssl.server.keystore.password", storePassword);
    sv.put("ssl.server.keystore.keypassword", storePassword);
    sv.put("ssl.server.keystore.type", "pkcs12");
    sv.put("ssl.server.truststore.location", trustStore.toString());
    sv.put("ssl.server.truststore.password", storePassword);
    sv.put("ssl.server.truststore.type", "pkcs12");
    MiniYarnHarness.writeXml(ssl.resolve("ssl-server.xml"), sv);
    Map<String, String> cl = new LinkedHashMap<>();
    cl.put("ssl.client.truststore.location", trustStore.toString());
    cl.put("ssl.client.truststore.password", storePassword);
    cl.put("ssl.client.truststore.type", "pkcs12");
    MiniYarnHarness.writeXml(ssl.resolve("ssl-client.xml"), cl);
    for (Path p : new Path[] {ca, server, trustStore, cert, ssl.resolve("ssl-server.xml"),
        ssl.resolve("ssl-client.xml")}) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
    }

    KeyStore ts = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(trustStore)) {
      ts.load(in, storePassword.toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(
        TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ts);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    sslFactory = ctx.getSocketFactory();
    LOG.info("TLS: CA {} (server certificate for localhost and 127.0.0.1)", caPem);
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    Path bin = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> cmd = new ArrayList<>();
    cmd.add(bin.toString());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      // The command line holds the store password: name only the step.
      throw new IOException("keytool " + args[0] + " failed: " + out.strip());
    }
  }

  /** Stops the KDC. */
  void stop() {
    if (kdc != null) {
      try {
        kdc.stop();
      } catch (Throwable t) {
        LOG.warn("MiniKdc stop: {}", t.toString());
      }
      kdc = null;
    }
  }
}

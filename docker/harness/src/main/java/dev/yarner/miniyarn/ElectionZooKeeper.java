package dev.yarner.miniyarn;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;

/**
 * The ZooKeeper of --ha: a one-server ensemble in the harness's JVM that the ResourceManagers'
 * embedded leader electors and their ZooKeeper state store use, as {@code TestRMFailover} of
 * Hadoop's own tests does with ZooKeeper's server classes. The fault verbs read the election lock
 * from it and end a session in it.
 *
 * <p>Its one implementation, {@code ShadedZooKeeper}, is compiled for the Hadoop lines whose
 * minicluster artifact carries ZooKeeper relocated (Hadoop 3.5+, the ZooKeeper that Hadoop itself
 * depends on); {@link #start} loads it by name so that the other lines' builds, which leave it out,
 * still compile.
 */
interface ElectionZooKeeper extends AutoCloseable {
  /** The znode of the embedded elector's lock: base path, cluster id, then this name. */
  String LOCK = "ActiveStandbyElectorLock";

  /** Who holds an election lock: the holder's rm-id and its ZooKeeper session. */
  record Lock(String rmId, long session) {
    @Override
    public String toString() {
      return rmId + " (session 0x" + Long.toHexString(session) + ")";
    }
  }

  /** host:port for hadoop.zk.address. */
  String connectString();

  /** The holder of the election lock at path, or null when nobody holds it. */
  Lock lock(String path) throws IOException;

  /**
   * Ends a session as ZooKeeper does when its client stops answering for the session timeout:
   * the session's ephemeral znodes go, watchers are told, and the client learns that its session
   * expired when it reconnects.
   */
  void expire(long session);

  /** Stops the server. */
  @Override
  void close();

  /**
   * Starts a standalone ZooKeeper server on 127.0.0.1 (an ephemeral port) with its data in dir,
   * the four-letter words srvr, ruok and dump enabled (for tests that ask ZooKeeper itself).
   */
  static ElectionZooKeeper start(Path dir) throws IOException {
    Class<?> impl;
    try {
      impl = Class.forName("dev.yarner.miniyarn.ShadedZooKeeper");
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("this harness build has no embedded ZooKeeper (it is built for"
          + " Hadoop 3.5+, whose minicluster carries ZooKeeper's server)", e);
    }
    try {
      return (ElectionZooKeeper) impl.getDeclaredMethod("start", Path.class).invoke(null, dir);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("starting ZooKeeper: " + e.getCause(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("ShadedZooKeeper.start: " + e, e);
    }
  }
}
